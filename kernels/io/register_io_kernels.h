// The checkpoint and variable kernels' one entry point (explicit registration).
#ifndef DFLOW_KERNELS_IO_REGISTER_IO_KERNELS_H_
#define DFLOW_KERNELS_IO_REGISTER_IO_KERNELS_H_

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// Registers every kernel of kernels/io into `registry` (CPU kernels).
absl::Status RegisterIoKernels(KernelRegistry* registry);

// The groups RegisterIoKernels is made of.
absl::Status RegisterCheckpointKernels(KernelRegistry* registry);  // checkpoint_ops.cc
absl::Status RegisterStringKernels(KernelRegistry* registry);      // string_ops.cc
absl::Status RegisterVariableKernels(KernelRegistry* registry);    // variable_ops.cc
absl::Status RegisterResourceVariableKernels(KernelRegistry* registry);  // resource_variable_ops.cc
absl::Status RegisterParseExampleKernels(KernelRegistry* registry);  // parse_example_op.cc
absl::Status RegisterApplyKernels(KernelRegistry* registry);  // apply_ops.cc
absl::Status RegisterApplyMatMulKernels(KernelRegistry* registry);  // apply_matmul_op.cc
absl::Status RegisterSparseApplyKernels(KernelRegistry* registry);  // sparse_apply_ops.cc
absl::Status RegisterScatterKernels(KernelRegistry* registry);  // scatter_ops.cc

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_REGISTER_IO_KERNELS_H_
