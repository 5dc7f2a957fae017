// TopKV2(input, k): the k largest entries of each row (last dim) of `input` and their
// column indices.
//
// Equal values come out lowest index first. The row algorithms are TF 2.21's CPU ones
// step for step, so that unsorted output (sorted=false) and rows holding NaN (which
// compare neither way) come out in TF's order, not just some valid order:
//   - k == 1: the first column holding the maximum (with NaN: Eigen's maximum);
//   - k == columns: std::sort by value, then each run of equal values by index;
//   - otherwise: TF's bounded heap of k column numbers (std::make_heap, pop_heap and
//     push_heap), read out by std::sort_heap (sorted) or in heap order (unsorted).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// Column `a` ranks before column `b`: a larger value, or an equal one at a lower index
// (TF's stable_comp, the "greater" order of its TopN).
template <typename T>
struct RanksBefore {
  const T* row;
  bool operator()(int64_t a, int64_t b) const {
    if (row[b] < row[a]) return true;
    if (row[b] > row[a]) return false;
    return a < b;
  }
};

// k == 1. TF takes Eigen's row maximum, then the first column equal to it (column 0 when
// none is, as for a NaN maximum). For floats the result with NaN present is Eigen's: in
// TF's AVX build it folds all but the last n % L columns in vectors of L = 8 floats or
// 4 doubles, where a NaN never wins, and the rest one at a time, where a NaN is taken and
// then dropped again by the next column. Half and bfloat16 rows arrive here as floats and
// fold 8 at a time too. (Checked against TF 2.21 on 1,800 rows.)
template <typename T>
void TopOne(const T* row, int64_t cols, int64_t* top) {
  T max = row[0];
  if constexpr (std::is_floating_point_v<T>) {
    constexpr int64_t kLanes = 32 / sizeof(T);
    const int64_t vectorized = cols / kLanes * kLanes;
    T vector_max = -std::numeric_limits<T>::infinity();
    for (int64_t c = 0; c < vectorized; ++c) {
      if (row[c] > vector_max) vector_max = row[c];
    }
    T tail = -std::numeric_limits<T>::infinity();
    for (int64_t c = vectorized; c < cols; ++c) tail = row[c] < tail ? tail : row[c];
    max = tail < vector_max ? vector_max : tail;
  } else {
    max = *std::max_element(row, row + cols);
  }
  top[0] = 0;
  for (int64_t c = 0; c < cols; ++c) {
    if (row[c] == max) {
      top[0] = c;
      return;
    }
  }
}

// k == cols: every column, sorted.
template <typename T>
void SortAll(const T* row, int64_t cols, int64_t* top) {
  std::iota(top, top + cols, int64_t{0});
  std::sort(top, top + cols, [row](int64_t a, int64_t b) { return row[b] < row[a]; });
  int64_t* end = top + cols;
  for (int64_t* run = top; run != end;) {
    int64_t* run_end = run + 1;
    while (run_end != end && row[*run] == row[*run_end]) ++run_end;
    std::sort(run, run_end);
    run = run_end;
  }
}

// 1 < k < cols: TF's TopN, a heap of the best k columns so far with the worst in front.
template <typename T>
void TopOfHeap(const T* row, int64_t cols, int64_t k, bool sorted, std::vector<int64_t>& heap,
               int64_t* top) {
  const RanksBefore<T> before{row};
  heap.assign(static_cast<size_t>(k + 1), 0);
  std::iota(heap.begin(), heap.end(), int64_t{0});  // the first k + 1 columns, unordered
  std::make_heap(heap.begin(), heap.end(), before);
  std::pop_heap(heap.begin(), heap.end(), before);  // drops the worst of them
  heap.pop_back();
  for (int64_t c = k + 1; c < cols; ++c) {
    if (!before(c, heap.front())) continue;
    // Replace the worst: pop it to the back, overwrite, push back in. (Checked against TF
    // 2.21 on 500 random rows with ties and NaN; push-then-pop on k + 1 differs.)
    std::pop_heap(heap.begin(), heap.end(), before);
    heap.back() = c;
    std::push_heap(heap.begin(), heap.end(), before);
  }
  if (sorted) std::sort_heap(heap.begin(), heap.end(), before);
  std::copy(heap.begin(), heap.end(), top);
}

// The top k columns of one row, in TF's order, into `top`.
template <typename T>
void TopKColumns(const T* row, int64_t cols, int64_t k, bool sorted,
                 std::vector<int64_t>& scratch, int64_t* top) {
  if (k == 1) {
    TopOne(row, cols, top);
  } else if (k == cols) {
    SortAll(row, cols, top);
  } else {
    TopOfHeap(row, cols, k, sorted, scratch, top);
  }
}

// The k input, truncated to int as TF's kernel reads it (a k of 2^32 + 2 means 2).
int64_t ReadK(const Tensor& k) {
  switch (k.dtype()) {
    case DT_INT16: return k.scalar<int16_t>();
    case DT_INT64: return static_cast<int32_t>(k.scalar<int64_t>());
    default: return k.scalar<int32_t>();
  }
}

template <typename T, typename Index>
class TopKOp : public OpKernel {
 public:
  explicit TopKOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("sorted", &sorted_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& k_t = ctx->input(1);
    OP_REQUIRES(ctx, k_t.shape().dims() == 0,
                KernelError(*ctx, "k must be scalar, got shape ", k_t.shape().DebugString()));
    const int64_t k = ReadK(k_t);
    OP_REQUIRES(ctx, k >= 0, KernelError(*ctx, "Need k >= 0, got ", k));
    const int rank = input.shape().dims();
    OP_REQUIRES(ctx, rank >= 1,
                KernelError(*ctx, "input must be >= 1-D, got shape ", input.shape().DebugString()));
    const int64_t cols = input.shape().dim_size(rank - 1);
    OP_REQUIRES(ctx, cols >= k,
                KernelError(*ctx, "input must have at least k columns. Had ", cols, ", needed ", k));
    const int64_t rows = DimProduct(input.shape(), 0, rank - 1);
    const int64_t index_max = std::numeric_limits<Index>::max();
    OP_REQUIRES(ctx, rows <= index_max,
                KernelError(*ctx, "First dimension of flattened input must be <= ", index_max,
                            ", got ", rows));
    OP_REQUIRES(ctx, cols <= index_max,
                KernelError(*ctx, "Second dimension of flattened input must be <= ", index_max,
                            ", got ", cols));
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims.back() = k;
    const TensorShape out_shape(dims);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * values, ctx->allocate_output(0, out_shape));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * indices, ctx->allocate_output(1, out_shape));
    if (k == 0 || rows == 0) return;
    ComputeRows(ctx, input.data<T>(), rows, cols, k, values->data<T>(), indices->data<Index>());
  }

 private:
  void ComputeRows(OpKernelContext* ctx, const T* in, int64_t rows, int64_t cols, int64_t k,
                   T* values, Index* indices) const {
    // About 4 * cols * log2(k + 1) comparisons a row, as TF estimates.
    int64_t log_k = 1;
    while ((int64_t{1} << log_k) <= k) ++log_k;
    const int64_t cost = 4 * cols * log_k + 2 * k;
    ParallelForElements(ctx, rows, cost, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> top(static_cast<size_t>(k));
      std::vector<int64_t> scratch;
      std::vector<float> widened;  // half and bfloat16 compare as floats, as Eigen's do
      for (int64_t r = begin; r < end; ++r) {
        const T* row = in + r * cols;
        if constexpr (kIsHalfOrBfloat16<T>) {
          widened.resize(static_cast<size_t>(cols));
          for (int64_t c = 0; c < cols; ++c) widened[c] = row[c].ToFloat();
          TopKColumns(widened.data(), cols, k, sorted_, scratch, top.data());
        } else {
          TopKColumns(row, cols, k, sorted_, scratch, top.data());
        }
        for (int64_t i = 0; i < k; ++i) {
          values[r * k + i] = row[top[i]];
          indices[r * k + i] = static_cast<Index>(top[i]);
        }
      }
    });
  }

  bool sorted_ = true;
};

template <typename T>
absl::Status RegisterTopKForValues(KernelRegistry* registry) {
  auto kernel = [](DataType index_type) {
    return CpuKernel("TopKV2")
        .TypeConstraint("T", {DataTypeOf<T>()})
        .TypeConstraint("index_type", {index_type});
  };
  DFLOW_RETURN_IF_ERROR((registry->Register<TopKOp<T, int16_t>>(kernel(DT_INT16))));
  DFLOW_RETURN_IF_ERROR((registry->Register<TopKOp<T, int32_t>>(kernel(DT_INT32))));
  return registry->Register<TopKOp<T, int64_t>>(kernel(DT_INT64));
}

}  // namespace

// TF 2.21's CPU list: the real number types, half and bfloat16. Tk (k's dtype) is
// unconstrained, as in TF.
absl::Status RegisterTopKKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<Half>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<Bfloat16>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<int8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<int16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<int64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<uint8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<uint16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKForValues<uint32_t>(registry));
  return RegisterTopKForValues<uint64_t>(registry);
}

}  // namespace dflow
