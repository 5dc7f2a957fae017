#include "kernels/cuda/register_cuda_kernels.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/sim/gpu_kernel_list.h"

namespace dflow {

absl::Status RegisterCudaKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaMathKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaNnKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaArrayKernels(registry));
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    if (registry->Entries(spec.op, "GPU").empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "RegisterCudaKernels: '", spec.op, "' is in gpu_kernel_list.h but has no CUDA kernel"));
    }
  }
  // Copies between devices: the generic _Send/_Recv over CudaCopier.
  return RegisterAcceleratorSendRecvKernels(registry, "GPU");
}

}  // namespace dflow
