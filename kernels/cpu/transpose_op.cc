// Transpose of any rank.
//
// 1. Validate perm (a vector holding each of 0..rank-1 once).
// 2. Simplify: drop size-1 dims and merge input dims that stay adjacent in the output,
//    so NHWC->NCHW ([N,H,W,C], [0,3,1,2]) becomes [N,HW,C] with [0,2,1]. A permutation
//    that simplifies to rank <= 1 moves no data: the output is a view of the input.
// 3. Copy, in one of two shapes, sharded over the pool:
//    - the last input dim stays last: contiguous runs, one copy per run;
//    - otherwise the input's last dim (unit input stride) and the output's last dim
//      (unit output stride) form a 2-D transpose, done in kTile x kTile blocks so both
//      reads and writes stay in cache (4-byte elements go through SSE 4x4 register
//      transposes); the other output dims index batches of it.
// Elements are moved by size (DispatchByElementSize), so every copyable dtype shares one
// instantiation per element size.
#include <algorithm>
#include <numeric>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "kernels/cpu/array_util.h"

namespace dflow {
namespace {

constexpr int64_t kTile = 32;        // block edge of the 2-D transpose
constexpr int64_t kColChunk = 1024;  // columns per parallel work unit

// A transpose reduced to its essentials (step 2).
struct TransposePlan {
  std::vector<int64_t> in_dims;
  std::vector<int> perm;  // output axis k reads input axis perm[k]
};

TransposePlan Simplify(absl::Span<const int64_t> dims, absl::Span<const int> perm) {
  std::vector<int> renumbered(dims.size(), -1);
  std::vector<int64_t> kept;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1) {
      renumbered[i] = static_cast<int>(kept.size());
      kept.push_back(dims[i]);
    }
  }
  // Runs [first, last] of input axes that appear consecutively in the output.
  std::vector<std::pair<int, int>> groups;  // in output order
  for (int axis : perm) {
    const int a = renumbered[axis];
    if (a < 0) continue;
    if (!groups.empty() && groups.back().second + 1 == a) {
      groups.back().second = a;
    } else {
      groups.push_back({a, a});
    }
  }
  std::vector<int> order(groups.size());  // groups by input position
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int x, int y) { return groups[x].first < groups[y].first; });
  TransposePlan plan{std::vector<int64_t>(groups.size()), std::vector<int>(groups.size())};
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const auto [first, last] = groups[order[pos]];
    plan.in_dims[pos] = 1;
    for (int a = first; a <= last; ++a) plan.in_dims[pos] *= kept[a];
    plan.perm[order[pos]] = static_cast<int>(pos);
  }
  return plan;
}

// Per output axis: its size and the element strides of the input and output along it.
struct Layout {
  std::vector<int64_t> size, in_stride, out_stride;
};

Layout MakeLayout(const TransposePlan& plan) {
  const int rank = static_cast<int>(plan.perm.size());
  std::vector<int64_t> input_strides(rank);
  int64_t input_stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    input_strides[i] = input_stride;
    input_stride *= plan.in_dims[i];
  }
  Layout layout{std::vector<int64_t>(rank), std::vector<int64_t>(rank), std::vector<int64_t>(rank)};
  int64_t stride = 1;
  for (int k = rank - 1; k >= 0; --k) {
    layout.size[k] = plan.in_dims[plan.perm[k]];
    layout.in_stride[k] = input_strides[plan.perm[k]];
    layout.out_stride[k] = stride;
    stride *= layout.size[k];
  }
  return layout;
}

// Steps through a subset of output axes in row-major order, tracking the input and
// output offsets of the current index.
class Odometer {
 public:
  Odometer(std::vector<int> axes, const Layout& layout, int64_t start)
      : axes_(std::move(axes)), layout_(layout), index_(axes_.size()) {
    for (int i = static_cast<int>(axes_.size()) - 1; i >= 0; --i) {
      const int64_t size = layout_.size[axes_[i]];
      index_[i] = start % size;
      start /= size;
      in_ += index_[i] * layout_.in_stride[axes_[i]];
      out_ += index_[i] * layout_.out_stride[axes_[i]];
    }
  }
  int64_t in() const { return in_; }
  int64_t out() const { return out_; }

  void Next() {
    for (int i = static_cast<int>(axes_.size()) - 1; i >= 0; --i) {
      const int axis = axes_[i];
      in_ += layout_.in_stride[axis];
      out_ += layout_.out_stride[axis];
      if (++index_[i] < layout_.size[axis]) return;
      in_ -= index_[i] * layout_.in_stride[axis];
      out_ -= index_[i] * layout_.out_stride[axis];
      index_[i] = 0;
    }
  }

 private:
  std::vector<int> axes_;
  const Layout& layout_;
  std::vector<int64_t> index_;
  int64_t in_ = 0;
  int64_t out_ = 0;
};

int64_t Product(const Layout& layout, const std::vector<int>& axes) {
  int64_t product = 1;
  for (int axis : axes) product *= layout.size[axis];
  return product;
}

// The last input dim stays last: copy contiguous runs.
template <typename T>
void CopyRuns(OpKernelContext* ctx, const Layout& layout, const T* src, T* dst) {
  const int last = static_cast<int>(layout.size.size()) - 1;
  std::vector<int> outer(last);
  std::iota(outer.begin(), outer.end(), 0);
  const int64_t run = layout.size[last];
  ParallelForElements(ctx, Product(layout, outer), run * CopyCost<T>(),
                      [&](int64_t begin, int64_t end) {
                        Odometer index(outer, layout, begin);
                        for (int64_t i = begin; i < end; ++i, index.Next()) {
                          std::copy(src + index.in(), src + index.in() + run, dst + index.out());
                        }
                      });
}

// dst[i * dst_stride + j] = src[j * src_stride + i] for i in [i0, i1), j in [j0, j1).
template <typename T>
void TransposeBlockScalar(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t i0,
                          int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t jj = j0; jj < j1; jj += kTile) {
    const int64_t j_end = std::min(jj + kTile, j1);
    for (int64_t i = i0; i < i1; ++i) {
      T* out = dst + i * dst_stride;
      for (int64_t j = jj; j < j_end; ++j) out[j] = src[j * src_stride + i];
    }
  }
}

// The tile kernel of TransposeTiled; specialised below where SIMD helps.
template <typename T>
void TransposeBlock(const T* src, int64_t src_stride, T* dst, int64_t dst_stride, int64_t i0,
                    int64_t i1, int64_t j0, int64_t j1) {
  TransposeBlockScalar(src, src_stride, dst, dst_stride, i0, i1, j0, j1);
}

#if defined(__SSE2__)
// 4-byte elements (float, int32): 4x4 blocks transposed in SSE registers, about twice
// as fast as the scalar loop; ragged edges fall back to it.
inline void Transpose4x4(const uint32_t* src, int64_t src_stride, uint32_t* dst,
                         int64_t dst_stride) {
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  __m128 r0 = _mm_loadu_ps(s);
  __m128 r1 = _mm_loadu_ps(s + src_stride);
  __m128 r2 = _mm_loadu_ps(s + 2 * src_stride);
  __m128 r3 = _mm_loadu_ps(s + 3 * src_stride);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(d, r0);
  _mm_storeu_ps(d + dst_stride, r1);
  _mm_storeu_ps(d + 2 * dst_stride, r2);
  _mm_storeu_ps(d + 3 * dst_stride, r3);
}

template <>
void TransposeBlock<uint32_t>(const uint32_t* src, int64_t src_stride, uint32_t* dst,
                              int64_t dst_stride, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t jj = j0; jj < j1; jj += kTile) {
    const int64_t j_end = std::min(jj + kTile, j1);
    const int64_t j_quads = jj + (j_end - jj) / 4 * 4;
    int64_t i = i0;
    for (; i + 4 <= i1; i += 4) {
      for (int64_t j = jj; j < j_quads; j += 4) {
        Transpose4x4(src + j * src_stride + i, src_stride, dst + i * dst_stride + j, dst_stride);
      }
      TransposeBlockScalar(src, src_stride, dst, dst_stride, i, i + 4, j_quads, j_end);
    }
    TransposeBlockScalar(src, src_stride, dst, dst_stride, i, i1, jj, j_end);
  }
}
#endif  // __SSE2__

// Batched 2-D transposes between output axis `rows` (input stride 1) and the last
// output axis (output stride 1). Work units are (batch, row block, column chunk).
template <typename T>
void TransposeTiled(OpKernelContext* ctx, const Layout& layout, int rows_axis, const T* src,
                    T* dst) {
  const int last = static_cast<int>(layout.size.size()) - 1;
  std::vector<int> batch;
  for (int k = 0; k < last; ++k) {
    if (k != rows_axis) batch.push_back(k);
  }
  const int64_t rows = layout.size[rows_axis], cols = layout.size[last];
  const int64_t src_stride = layout.in_stride[last], dst_stride = layout.out_stride[rows_axis];
  const int64_t row_blocks = (rows + kTile - 1) / kTile;
  const int64_t col_chunks = (cols + kColChunk - 1) / kColChunk;
  const int64_t per_batch = row_blocks * col_chunks;
  const int64_t unit_cost = std::min(rows, kTile) * std::min(cols, kColChunk) * 2;
  ParallelForElements(
      ctx, Product(layout, batch) * per_batch, unit_cost, [&](int64_t begin, int64_t end) {
        Odometer index(batch, layout, begin / per_batch);
        for (int64_t unit = begin; unit < end; ++unit) {
          const int64_t within = unit % per_batch;
          if (within == 0 && unit != begin) index.Next();
          const int64_t i0 = (within / col_chunks) * kTile;
          const int64_t j0 = (within % col_chunks) * kColChunk;
          TransposeBlock(src + index.in(), src_stride, dst + index.out(), dst_stride, i0,
                         std::min(i0 + kTile, rows), j0, std::min(j0 + kColChunk, cols));
        }
      });
}

template <typename T>
void TransposeTyped(OpKernelContext* ctx, const TransposePlan& plan, const Tensor& input,
                    const Tensor& output) {
  const Layout layout = MakeLayout(plan);
  const int last = static_cast<int>(plan.perm.size()) - 1;
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  if (plan.perm[last] == last) {
    CopyRuns<T>(ctx, layout, src, dst);
    return;
  }
  const int rows_axis =
      static_cast<int>(std::find(plan.perm.begin(), plan.perm.end(), last) - plan.perm.begin());
  TransposeTiled<T>(ctx, layout, rows_axis, src, dst);
}

// perm as ints after checking it is a permutation of [0, rank).
absl::StatusOr<std::vector<int>> ReadPerm(const OpKernelContext& ctx, const Tensor& perm_tensor,
                                          const TensorShape& shape) {
  const auto describe = [&] { return absl::StrCat(" (input shape ", shape.DebugString(), ")"); };
  if (perm_tensor.shape().dims() != 1) {
    return KernelError(ctx, "perm must be a vector, not ", perm_tensor.shape().DebugString(),
                       describe());
  }
  const std::vector<int64_t> values = ReadIndices(perm_tensor);
  const int rank = shape.dims();
  if (static_cast<int64_t>(values.size()) != rank) {
    return KernelError(ctx, "transpose expects a vector of size ", rank,
                       ". But input(1) is a vector of size ", values.size(), describe());
  }
  std::vector<int> perm(rank);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (values[i] < 0 || values[i] >= rank) {
      return KernelError(ctx, values[i], " is out of range [0 .. ", rank, ") in perm ",
                         DimsString(values), describe());
    }
    perm[i] = static_cast<int>(values[i]);
    seen[perm[i]] = true;
  }
  for (int i = 0; i < rank; ++i) {
    if (!seen[i]) {
      return KernelError(ctx, i, " is missing from perm ", DimsString(values), describe());
    }
  }
  return perm;
}

class TransposeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int> perm, ReadPerm(*ctx, ctx->input(1), input.shape()));
    std::vector<int64_t> out_dims;
    for (int axis : perm) out_dims.push_back(input.shape().dim_size(axis));
    const TensorShape out_shape(out_dims);
    const TransposePlan plan = Simplify(input.shape().dim_sizes(), perm);
    if (plan.perm.size() <= 1) {  // no data moves
      ctx->set_output(0, input.Reshaped(out_shape));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, out_shape));
    if (output->NumElements() == 0) return;
    DispatchByElementSize(input.dtype(), [&](auto zero) {
      TransposeTyped<decltype(zero)>(ctx, plan, input, *output);
    });
  }
};

}  // namespace

absl::Status RegisterTransposeKernel(KernelRegistry* registry) {
  return registry->Register<TransposeOp>(CpuKernel("Transpose")
                                             .TypeConstraint("T", CopyableTypes())
                                             .TypeConstraint("Tperm", IndexTypes()));
}

}  // namespace dflow
