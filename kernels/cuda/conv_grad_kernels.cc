// CUDA kernels: Conv2DBackpropInput/Filter, MaxPoolGrad, AvgPoolGrad (work in progress).
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {

absl::Status RegisterCudaConvGradKernels(KernelRegistry* registry) { return absl::OkStatus(); }

}  // namespace dflow::cuda
