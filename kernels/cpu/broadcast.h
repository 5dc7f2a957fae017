// The one broadcasting engine of the CPU kernels: NumPy/TF broadcasting of two inputs
// onto an output, used by every binary element-wise op and by BiasAdd.
//
// Rules (TF's BCast):
//   1. Shapes are aligned on their last dims; the shorter one is padded with 1s.
//   2. Per dim the sizes must be equal or one of them 1 (that input is broadcast);
//      otherwise INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]".
//   3. Output dims of size 1 are dropped and adjacent dims in which each input is
//      broadcast in both or in neither are merged, so [2,3,4]+[2,3,4] runs as one flat
//      loop, [8,16]+[16] (BiasAdd) as rows against one vector, [4,1,3]+[2,1] as three dims.
//
// Execution walks any range of output elements row by row over the innermost collapsed
// dim; each row is a contiguous loop of vector-vector, vector-scalar, scalar-vector or
// scalar-scalar form, which the compiler vectorises. Ranges are independent, so the
// whole output is sharded with ParallelForElements.
#ifndef DFLOW_KERNELS_CPU_BROADCAST_H_
#define DFLOW_KERNELS_CPU_BROADCAST_H_

#include <algorithm>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor_shape.h"

namespace dflow {
namespace cwise {

using DimVector = absl::InlinedVector<int64_t, 6>;

// How x and y map onto the output, collapsed (rule 3). `dims` has at least one entry;
// strides are in elements, 0 along dims where that input is broadcast.
struct BroadcastPlan {
  TensorShape output_shape;
  DimVector dims;
  DimVector x_strides;
  DimVector y_strides;
};

inline absl::Status IncompatibleShapes(const TensorShape& x, const TensorShape& y) {
  return absl::InvalidArgumentError(
      absl::StrCat("Incompatible shapes: ", x.DebugString(), " vs. ", y.DebugString()));
}

inline absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.dims(), y.dims());
  DimVector out_dims(rank);
  // Per collapsed dim: size, and whether x / y is broadcast along it.
  struct Run {
    int64_t size;
    bool x_bcast;
    bool y_bcast;
  };
  absl::InlinedVector<Run, 6> runs;
  for (int i = 0; i < rank; ++i) {
    const int xi = i - (rank - x.dims()), yi = i - (rank - y.dims());
    const int64_t xd = xi < 0 ? 1 : x.dim_size(xi);
    const int64_t yd = yi < 0 ? 1 : y.dim_size(yi);
    if (xd != yd && xd != 1 && yd != 1) return IncompatibleShapes(x, y);
    const int64_t od = xd == 1 ? yd : xd;
    out_dims[i] = od;
    if (od == 1) continue;
    const bool xb = xd == 1, yb = yd == 1;
    if (!runs.empty() && runs.back().x_bcast == xb && runs.back().y_bcast == yb) {
      runs.back().size *= od;
    } else {
      runs.push_back({od, xb, yb});
    }
  }
  BroadcastPlan plan;
  plan.output_shape = TensorShape(absl::MakeConstSpan(out_dims));
  if (runs.empty()) runs.push_back({1, false, false});
  const size_t n = runs.size();
  plan.dims.resize(n);
  plan.x_strides.resize(n);
  plan.y_strides.resize(n);
  int64_t x_stride = 1, y_stride = 1;
  for (size_t i = n; i-- > 0;) {
    plan.dims[i] = runs[i].size;
    plan.x_strides[i] = runs[i].x_bcast ? 0 : x_stride;
    plan.y_strides[i] = runs[i].y_bcast ? 0 : y_stride;
    if (!runs[i].x_bcast) x_stride *= runs[i].size;
    if (!runs[i].y_bcast) y_stride *= runs[i].size;
  }
  return plan;
}

// The output element type of binary functor Fn on T (bool for comparisons).
template <typename Fn, typename T>
using BinaryResult = decltype(Fn::Apply(T{}, T{}));

// out[i] = Fn(x[i * sx], y[i * sy]) for i < n, where sx, sy are 0 or 1.
template <typename Fn, typename T, typename Out>
inline void BroadcastRow(const T* x, int64_t sx, const T* y, int64_t sy, Out* out, int64_t n) {
  if (sx != 0 && sy != 0) {
    DFLOW_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = Fn::Apply(x[i], y[i]);
  } else if (sx != 0) {
    const T b = *y;
    DFLOW_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = Fn::Apply(x[i], b);
  } else if (sy != 0) {
    const T a = *x;
    DFLOW_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = Fn::Apply(a, y[i]);
  } else {
    std::fill(out, out + n, Fn::Apply(*x, *y));
  }
}

// Computes output elements [begin, end) of `plan`.
template <typename Fn, typename T, typename Out>
void BroadcastRange(const BroadcastPlan& plan, const T* x, const T* y, Out* out, int64_t begin,
                    int64_t end) {
  const int outer_rank = static_cast<int>(plan.dims.size()) - 1;
  const int64_t inner = plan.dims[outer_rank];
  const int64_t sx = plan.x_strides[outer_rank], sy = plan.y_strides[outer_rank];
  // Odometer over the outer dims, with the offsets of the current row in x and y.
  DimVector index(outer_rank);
  int64_t x_row = 0, y_row = 0;
  int64_t col = begin % inner;
  for (int64_t k = outer_rank - 1, rest = begin / inner; k >= 0; --k) {
    index[k] = rest % plan.dims[k];
    rest /= plan.dims[k];
    x_row += index[k] * plan.x_strides[k];
    y_row += index[k] * plan.y_strides[k];
  }
  for (int64_t pos = begin; pos < end;) {
    const int64_t n = std::min(inner - col, end - pos);
    BroadcastRow<Fn>(x + x_row + col * sx, sx, y + y_row + col * sy, sy, out + pos, n);
    pos += n;
    col = 0;
    for (int k = outer_rank - 1; k >= 0; --k) {
      x_row += plan.x_strides[k];
      y_row += plan.y_strides[k];
      if (++index[k] < plan.dims[k]) break;
      x_row -= plan.x_strides[k] * plan.dims[k];
      y_row -= plan.y_strides[k] * plan.dims[k];
      index[k] = 0;
    }
  }
}

// Computes the whole output of `plan`, sharded over the context's pool. `out` may be
// x's or y's buffer when that input is not broadcast (same element count as out).
template <typename Fn, typename T, typename Out>
void RunBroadcast(OpKernelContext* ctx, const BroadcastPlan& plan, const T* x, const T* y,
                  Out* out) {
  if (plan.output_shape.num_elements() == 0) return;
  ParallelForElements(ctx, plan.output_shape.num_elements(), Fn::kCost,
                      [&plan, x, y, out](int64_t begin, int64_t end) {
                        BroadcastRange<Fn>(plan, x, y, out, begin, end);
                      });
}

// Allocates output 0 for `plan`, reusing input 0 or 1 in place when the executor
// allows it and the input has the output's dtype and element count. Returns nullptr
// (with the status set on ctx) when allocation fails.
inline Tensor* ForwardOrAllocateBinaryOutput(OpKernelContext* ctx, const TensorShape& shape) {
  for (int i = 0; i < 2; ++i) {
    if (ctx->input(i).NumElements() != shape.num_elements()) continue;
    if (Tensor* out = ctx->ForwardInputToOutput(i, 0, shape)) return out;
  }
  absl::StatusOr<Tensor*> out = ctx->allocate_output(0, shape);
  if (!out.ok()) {
    ctx->SetStatus(out.status());
    return nullptr;
  }
  return *out;
}

// Equal shapes need no plan: one flat loop (the common case, and the cheapest path for
// graphs of tiny tensors).
template <typename Fn, typename T, typename Out>
void RunSameShape(OpKernelContext* ctx, int64_t n, const T* x, const T* y, Out* out) {
  ParallelForElements(ctx, n, Fn::kCost, [x, y, out](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = Fn::Apply(x[i], y[i]);
  });
}

}  // namespace cwise
}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_BROADCAST_H_
