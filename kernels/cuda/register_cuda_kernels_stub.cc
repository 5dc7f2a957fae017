// register_cuda_kernels.h for builds without the CUDA toolkit.
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow {

absl::Status RegisterCudaKernels(KernelRegistry*) {
  return absl::UnimplementedError("dflow was built without CUDA: no CUDA kernels");
}

}  // namespace dflow
