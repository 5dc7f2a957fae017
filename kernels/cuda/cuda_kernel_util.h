// Helpers shared by the CUDA kernels: the device and stream a kernel enqueues on, launch
// errors as Status naming the op, index inputs read on the host, and the broadcast rule.
//
// Every CUDA kernel derives from CudaOpKernel: Compute activates the GPU (kernels launch
// on the calling thread's current device) and enqueues on the compute stream only; it
// never waits for the GPU, except where an index input (a shape, an axis list) lives in
// device memory and must be read on the host (ReadIndexTensor; TF avoids that with
// HostMemory args, which the registrations declare too).
#ifndef DFLOW_KERNELS_CUDA_CUDA_KERNEL_UTIL_H_
#define DFLOW_KERNELS_CUDA_CUDA_KERNEL_UTIL_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/cuda/launchers.h"
#include "kernels/sim/gpu_kernel_list.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/kernel_registry.h"
#include "runtime/op_kernel.h"

namespace dflow::cuda {

// The "GPU" KernelDef of `op`: the dtype constraints and host-memory args of its entry in
// kernels/sim/gpu_kernel_list.h, the one list simulated GPUs register from too. An op
// missing from the table gets an unconstrained def, which RegisterCudaKernels refuses
// (it checks the registry against the table both ways).
KernelDef GpuKernel(absl::string_view op);

// INVALID_ARGUMENT "<op>: <what>" (the executor adds the node name).
template <typename... Args>
absl::Status OpError(const OpKernelContext& ctx, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(ctx.kernel().type_string(), ": ", args...));
}

// OK for cudaSuccess; otherwise CudaErrorToStatus's status (RESOURCE_EXHAUSTED for
// out-of-memory, INTERNAL else, naming the CUDA error) with "<op> on <device>: " in front.
absl::Status LaunchStatus(absl::string_view op, absl::string_view device, cudaError_t error);
// The same for the op and device of `ctx`.
absl::Status LaunchStatus(const OpKernelContext& ctx, cudaError_t error);

class CudaOpKernel : public OpKernel {
 public:
  // Fails construction (INTERNAL) when the device is not a CudaGpuDevice.
  explicit CudaOpKernel(OpKernelConstruction* c);
  // Enqueueing is cheap: run inline on the executor's thread.
  bool IsExpensive() const override { return false; }
  // Activates the GPU, then ComputeOnGpu.
  void Compute(OpKernelContext* ctx) final;

 protected:
  virtual void ComputeOnGpu(OpKernelContext* ctx) = 0;
  CudaGpuDevice* gpu() const { return gpu_; }
  cudaStream_t stream() const { return gpu_->compute_stream()->handle(); }

 private:
  CudaGpuDevice* gpu_ = nullptr;
};

// The values of an int32/int64 index tensor on the host. Host memory (pinned or not) is
// read directly; device memory is copied back on the compute stream, which is then
// waited for (a host round trip).
absl::StatusOr<std::vector<int64_t>> ReadIndexTensor(CudaGpuDevice* gpu, const Tensor& t);

// TF's BCast for two shapes: output shape and collapsed index (size-1 dims dropped,
// neighbouring dims with the same broadcast pattern merged). INVALID_ARGUMENT
// "Incompatible shapes: [2,3] vs. [4]" or, beyond kMaxBroadcastRank collapsed dims,
// UNIMPLEMENTED.
struct BroadcastPlan {
  TensorShape output;
  BroadcastIndex index;
};
absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y);

// One reduction pass: reduce the middle dim of [outer, extent, inner].
struct ReducePass {
  int64_t outer, extent, inner;
};
// The passes that reduce the dims of `dims` flagged in `reduced`, innermost reduced group
// first (each pass's output is the next one's input); runs of adjacent reduced (or kept)
// dims are merged. Empty when nothing is reduced.
std::vector<ReducePass> PlanReduction(const std::vector<int64_t>& dims,
                                      const std::vector<bool>& reduced);

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_CUDA_KERNEL_UTIL_H_
