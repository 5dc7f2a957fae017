// The CUDA kernel library's entry point (explicit registration, docs/STYLE.md #14).
//
// RegisterCudaKernels registers a "GPU" kernel for every op of kernels/sim/gpu_kernel_list.h,
// with that table's dtypes and host-memory args (the table simulated GPUs register from
// too; tests/kernels/cuda:cuda_registration_test checks both registries against it), plus the
// generic accelerator _Send/_Recv (kernels/cpu/sendrecv_ops.h), which copy through
// CudaCopier. session/kernel_library.cc calls it instead of RegisterSimGpuKernels when
// the machine has a real GPU. In a build without CUDA the stub returns UNIMPLEMENTED.
#ifndef DFLOW_KERNELS_CUDA_REGISTER_CUDA_KERNELS_H_
#define DFLOW_KERNELS_CUDA_REGISTER_CUDA_KERNELS_H_

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// FAILED_PRECONDITION naming the op when an op of the list got no kernel.
absl::Status RegisterCudaKernels(KernelRegistry* registry);

namespace cuda {
// Per-file groups (math_kernels.cc, nn_kernels.cc, image_kernels.cc, array_kernels.cc).
absl::Status RegisterCudaMathKernels(KernelRegistry* registry);
absl::Status RegisterCudaNnKernels(KernelRegistry* registry);
absl::Status RegisterCudaImageKernels(KernelRegistry* registry);
absl::Status RegisterCudaArrayKernels(KernelRegistry* registry);
// Training (train_kernels.cc, conv_grad_kernels.cc, resource_kernels.cc).
absl::Status RegisterCudaTrainKernels(KernelRegistry* registry);
absl::Status RegisterCudaConvGradKernels(KernelRegistry* registry);
absl::Status RegisterCudaResourceKernels(KernelRegistry* registry);
// Ops computed on the host by their CPU kernel and uploaded (host_computed_kernels.cc).
absl::Status RegisterCudaHostComputedKernels(KernelRegistry* registry);
}  // namespace cuda

}  // namespace dflow

#endif  // DFLOW_KERNELS_CUDA_REGISTER_CUDA_KERNELS_H_
