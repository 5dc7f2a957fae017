// Device code of conv_grad_launchers.h (work in progress).
#include "kernels/cuda/conv_grad_launchers.h"

namespace dflow::cuda {}  // namespace dflow::cuda
