// CUDA kernels: resource variables and the dense optimizer updates (work in progress).
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {

absl::Status RegisterCudaResourceKernels(KernelRegistry* registry) { return absl::OkStatus(); }

}  // namespace dflow::cuda
