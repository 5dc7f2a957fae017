// Host-side entry points of optimizer_kernels.cu: the dense optimizer updates of the GPU's
// resource-variable kernels (resource_kernels.cc). The update rules are kernels/io's
// optimizer_functors.h, compiled for the device, so CPU and GPU update alike.
//
// The scalar hyperparameters stay in device memory (they are graph tensors on the GPU,
// as in TF): the kernels read them through pointers, so an update never waits for the GPU.
// Shared by nvcc and the host compiler: CUDA runtime types only.
#ifndef DFLOW_KERNELS_CUDA_OPTIMIZER_LAUNCHERS_H_
#define DFLOW_KERNELS_CUDA_OPTIMIZER_LAUNCHERS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace dflow::cuda {

enum class OptimizerRule {
  kMomentum, kKerasMomentum, kAdam, kRMSProp, kCenteredRMSProp, kAdagrad, kAdagradV2
};

// One dense update: slot[0] is the variable, then the rule's accumulators in input order;
// scalar[k] points at the k-th scalar input (device memory), in input order.
template <typename T>
struct DenseUpdate {
  T* slot[4] = {};
  const T* scalar[6] = {};
  const T* grad = nullptr;
  int64_t n = 0;
  bool nesterov = false;
  bool update_slots = true;
};

template <typename T>
cudaError_t LaunchDenseUpdate(OptimizerRule rule, const DenseUpdate<T>& update,
                              cudaStream_t stream);

// value[i] += scale * delta[i], scale = sign * *alpha when alpha is not null (gradient
// descent: sign -1), else sign (AssignAdd/AssignSubVariableOp: 1 / -1).
template <typename T>
cudaError_t LaunchAddScaled(T* value, const T* delta, const T* alpha, int sign, int64_t n,
                            cudaStream_t stream);

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_OPTIMIZER_LAUNCHERS_H_
