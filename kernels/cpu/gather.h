// GatherIntoOutput: rows of `params` along `axis` picked by `indices`, written to the
// kernel's output 0 as params.shape[:axis] + indices.shape + params.shape[axis+1:] (TF's
// GatherV2 with batch_dims 0). Shared by GatherV2/Gather (gather_ops.cc) and
// ResourceGather (kernels/io/resource_variable_ops.cc).
#ifndef DFLOW_KERNELS_CPU_GATHER_H_
#define DFLOW_KERNELS_CPU_GATHER_H_

#include "absl/status/status.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {

// Every index is checked before anything is copied: INVALID_ARGUMENT in TF's words
// ("indices[1] = 7 is not in [0, 3)") for the first bad one. REQUIRES: 0 <= axis < rank.
absl::Status GatherIntoOutput(OpKernelContext* ctx, const Tensor& params, const Tensor& indices,
                              int axis);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_GATHER_H_
