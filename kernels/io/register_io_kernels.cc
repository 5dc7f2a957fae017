#include "kernels/io/register_io_kernels.h"

#include "graph/status_macros.h"

namespace dflow {

absl::Status RegisterIoKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterCheckpointKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterStringKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterVariableKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterResourceVariableKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterParseExampleKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterApplyKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterApplyMatMulKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSparseApplyKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScatterKernels(registry));
  return absl::OkStatus();
}

}  // namespace dflow
