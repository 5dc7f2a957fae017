// Device code of train_launchers.h (work in progress).
#include "kernels/cuda/train_launchers.h"

namespace dflow::cuda {}  // namespace dflow::cuda
