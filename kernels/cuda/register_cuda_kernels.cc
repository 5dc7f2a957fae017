#include "kernels/cuda/register_cuda_kernels.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/control_flow_ops.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/sim/gpu_kernel_list.h"

namespace dflow {

absl::Status RegisterCudaKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaMathKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaNnKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaImageKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaArrayKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaTrainKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaConvGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaResourceKernels(registry));
  DFLOW_RETURN_IF_ERROR(cuda::RegisterCudaHostComputedKernels(registry));
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    if (registry->Entries(spec.op, "GPU").empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "RegisterCudaKernels: '", spec.op, "' is in gpu_kernel_list.h but has no CUDA kernel"));
    }
  }
  // And the other way: no CUDA kernel outside the table (simulated GPUs would not have it,
  // and placement on them would no longer predict placement here).
  for (const std::string& op : registry->OpsWithKernels()) {
    if (FindGpuKernelSpec(op) == nullptr && !registry->Entries(op, "GPU").empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "RegisterCudaKernels: '", op, "' has a CUDA kernel but is not in gpu_kernel_list.h"));
    }
  }
  // Control flow: the routing kernels every device shares (they never touch bytes).
  DFLOW_RETURN_IF_ERROR(RegisterAcceleratorControlFlowKernels(registry, "GPU"));
  // Copies between devices: the generic _Send/_Recv over CudaCopier.
  return RegisterAcceleratorSendRecvKernels(registry, "GPU");
}

}  // namespace dflow
