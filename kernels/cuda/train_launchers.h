// Host-side entry points of train_kernels.cu: activation gradients, comparisons, selects,
// ArgMax, the cross-entropies, strided gathers (BroadcastTo, Tile, Transpose) and the
// batched 2-D transpose. Each enqueues on `stream` and returns cudaGetLastError().
// BiasAddGrad needs no kernel of its own: it runs launchers.h's LaunchReduce.
//
// Data-movement launchers take an element type E of the element's size (uint8_t,
// uint16_t, uint32_t, uint64_t): they move bytes, so every dtype of one size shares one
// instantiation. Arithmetic launchers are instantiated for the dtypes their comments name.
// Shared by nvcc and the host compiler: CUDA runtime types only.
#ifndef DFLOW_KERNELS_CUDA_TRAIN_LAUNCHERS_H_
#define DFLOW_KERNELS_CUDA_TRAIN_LAUNCHERS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/launchers.h"

namespace dflow::cuda {

// The activation gradients, with kernels/cpu's formulas (activation_grad_ops.cc,
// cwise_grad_ops.cc, nn_grad_ops.cc). Inputs in the op's order: (gradients, features or
// outputs) for all but kSigmoid and kTanh, which take (y, dy).
enum class ActivationGradOp {
  kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign, kSigmoid, kTanh
};
// `alpha` is read by kLeakyRelu only (the attr already rounded to T). Float and double.
template <typename T>
cudaError_t LaunchActivationGrad(ActivationGradOp op, const T* a, const T* b, T* out, int64_t n,
                                 T alpha, cudaStream_t stream);

enum class CompareOp { kEqual, kNotEqual, kGreater, kGreaterEqual, kLess, kLessEqual };
// z[i] = x[..] op y[..] over the broadcast `bcast` (MakeBroadcastPlan). Float, double,
// int32_t, int64_t.
template <typename T>
cudaError_t LaunchCompare(CompareOp op, const T* x, const T* y, bool* z, int64_t n,
                          const BroadcastIndex& bcast, cudaStream_t stream);

// Select (TF 1.x): out[i] = cond[i / row] ? t[i] : e[i]. A scalar condition is row = n,
// one per first-dim slice is row = n / rows, same shapes is row = 1.
template <typename E>
cudaError_t LaunchSelectRows(const bool* cond, const E* t, const E* e, E* out, int64_t n,
                             int64_t row, cudaStream_t stream);

// SelectV2: output element i decomposed over `rank` collapsed dims; each operand's offset
// is sum(index[d] * strides[k][d]) (stride 0 where operand k is broadcast).
struct Select3Index {
  int rank = 1;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[3][kMaxBroadcastRank] = {};  // cond, then, else
};
template <typename E>
cudaError_t LaunchSelectBroadcast(const bool* cond, const E* t, const E* e, E* out, int64_t n,
                                  const Select3Index& index, cudaStream_t stream);

// out[i] = in[sum((index[d] % mods[d]) * strides[d])], index[d] the output index along
// collapsed dim d: BroadcastTo (stride 0), Tile (mods[d] = input dim < dims[d]) and
// Transpose (permuted strides). mods[d] == dims[d] skips the modulo.
struct GatherIndex {
  int rank = 1;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t mods[kMaxBroadcastRank] = {};
  int64_t strides[kMaxBroadcastRank] = {};
};
template <typename E>
cudaError_t LaunchGather(const E* in, E* out, int64_t n, const GatherIndex& index,
                         cudaStream_t stream);

// in [batch, rows, cols] -> out [batch, cols, rows], through shared-memory tiles so both
// reads and writes are coalesced.
template <typename E>
cudaError_t LaunchTranspose2D(const E* in, E* out, int64_t batch, int64_t rows, int64_t cols,
                              cudaStream_t stream);

// ArgMax over the middle dim of [outer, len, inner] into out[outer * inner], with the CPU
// kernel's exact tie and NaN behaviour (reduction_ops.cc ArgOfRow / ArgRange). REQUIRES:
// len >= 1. T float, double, int32_t, int64_t; Index int32_t, int64_t.
template <typename T, typename Index>
cudaError_t LaunchArgMax(const T* in, Index* out, int64_t outer, int64_t len, int64_t inner,
                         cudaStream_t stream);

// SoftmaxCrossEntropyWithLogits over [batch, classes] (float). Element (r, c) of logits
// is logits[r * row_stride + c * col_stride] (stride 0 along a broadcast dim of size 1),
// and likewise for labels. REQUIRES: classes >= 1.
struct XentLayout {
  int64_t batch = 0, classes = 0;
  int64_t logits_row = 0, logits_col = 0, labels_row = 0, labels_col = 0;
};
cudaError_t LaunchSoftmaxXent(const float* logits, const float* labels, float* loss,
                              float* backprop, const XentLayout& layout, cudaStream_t stream);
// SparseSoftmaxCrossEntropyWithLogits over [batch, classes] (float logits; L int32_t or
// int64_t). A label outside [0, classes) gives a NaN loss and NaN backprop row, as TF's
// GPU kernel (the CPU kernel refuses it, which would need the labels on the host).
// REQUIRES: classes >= 1.
template <typename L>
cudaError_t LaunchSparseSoftmaxXent(const float* logits, const L* labels, float* loss,
                                    float* backprop, int64_t batch, int64_t classes,
                                    cudaStream_t stream);

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_TRAIN_LAUNCHERS_H_
