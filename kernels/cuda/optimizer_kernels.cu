// Device code of optimizer_launchers.h (work in progress).
#include "kernels/cuda/optimizer_launchers.h"

namespace dflow::cuda {}  // namespace dflow::cuda
