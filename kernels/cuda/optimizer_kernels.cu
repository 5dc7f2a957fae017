// Device code of optimizer_launchers.h: one thread per element, grid-stride, the rule of
// kernels/io/optimizer_functors.h applied in place.
#include "kernels/cuda/optimizer_launchers.h"

#include <algorithm>

#include "kernels/io/optimizer_functors.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  // Grid-stride loops cover the rest; 65535 blocks keep every launch legal.
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
}

template <typename Fn, typename T>
__global__ void DenseUpdateKernel(DenseUpdate<T> u, int num_scalars) {
  // The scalars are read by every thread: a handful of cached loads, no host round trip.
  optimizer::Args<T> args;
  for (int k = 0; k < num_scalars; ++k) args.scalar[k] = *u.scalar[k];
  args.nesterov = u.nesterov;
  args.update_slots = u.update_slots;
  const typename Fn::template Step<T, optimizer::Form::kDense> step(args);
  T* slots[4] = {u.slot[0], u.slot[1], u.slot[2], u.slot[3]};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < u.n;
       i += int64_t{gridDim.x} * blockDim.x) {
    step(slots, i, u.grad[i]);
  }
}

template <typename Fn, typename T>
cudaError_t Launch(const DenseUpdate<T>& u, int num_scalars, cudaStream_t stream) {
  if (u.n == 0) return cudaSuccess;
  DenseUpdateKernel<Fn, T><<<Blocks(u.n), kThreads, 0, stream>>>(u, num_scalars);
  return cudaGetLastError();
}

template <typename T>
__global__ void AddScaledKernel(T* value, const T* delta, const T* alpha, int sign,
                                int64_t n) {
  const T scale = alpha == nullptr ? static_cast<T>(sign) : static_cast<T>(sign) * *alpha;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    // 1 and -1 add and subtract exactly, as the CPU's AddScaled.
    if (alpha == nullptr) {
      value[i] = sign > 0 ? value[i] + delta[i] : value[i] - delta[i];
    } else {
      value[i] = value[i] + scale * delta[i];
    }
  }
}

}  // namespace

template <typename T>
cudaError_t LaunchDenseUpdate(OptimizerRule rule, const DenseUpdate<T>& u,
                              cudaStream_t stream) {
  namespace opt = optimizer;
  switch (rule) {
    case OptimizerRule::kMomentum: return Launch<opt::Momentum>(u, 2, stream);
    case OptimizerRule::kKerasMomentum: return Launch<opt::KerasMomentum>(u, 2, stream);
    case OptimizerRule::kAdam: return Launch<opt::Adam>(u, 6, stream);
    case OptimizerRule::kRMSProp: return Launch<opt::RMSProp>(u, 4, stream);
    case OptimizerRule::kCenteredRMSProp: return Launch<opt::CenteredRMSProp>(u, 4, stream);
    case OptimizerRule::kAdagrad: return Launch<opt::Adagrad>(u, 1, stream);
    case OptimizerRule::kAdagradV2: return Launch<opt::AdagradV2>(u, 2, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t LaunchAddScaled(T* value, const T* delta, const T* alpha, int sign, int64_t n,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  AddScaledKernel<T><<<Blocks(n), kThreads, 0, stream>>>(value, delta, alpha, sign, n);
  return cudaGetLastError();
}

template cudaError_t LaunchDenseUpdate<float>(OptimizerRule, const DenseUpdate<float>&,
                                              cudaStream_t);
template cudaError_t LaunchDenseUpdate<double>(OptimizerRule, const DenseUpdate<double>&,
                                               cudaStream_t);
template cudaError_t LaunchAddScaled<float>(float*, const float*, const float*, int, int64_t,
                                            cudaStream_t);
template cudaError_t LaunchAddScaled<double>(double*, const double*, const double*, int,
                                             int64_t, cudaStream_t);
template cudaError_t LaunchAddScaled<int32_t>(int32_t*, const int32_t*, const int32_t*, int,
                                              int64_t, cudaStream_t);
template cudaError_t LaunchAddScaled<int64_t>(int64_t*, const int64_t*, const int64_t*, int,
                                              int64_t, cudaStream_t);

}  // namespace dflow::cuda
