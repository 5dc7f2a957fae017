// SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN, their WithNumSegments forms
// and their gradients SparseSegment{Sum,Mean,SqrtN}Grad and ...GradV2 (TF 2.21's
// SparseSegmentReductionOpBase, SparseSegmentGradOpBase and SparseSegmentGradV2Op on the CPU).
//
// data is viewed as [rows, inner]. Forward: output row s folds the data rows indices[k] of
// the k with segment_ids[k] == s (ids sorted, so each segment is one run of k); output rows
// no id names are 0, and there are last id + 1 of them, or num_segments. The `sparse_gradient`
// attr only picks the gradient Python builds (GradV2); the kernels ignore it.
// Gradient: grad is [segments, inner]; row indices[i] of the result gets grad row
// segment_ids[i] times the segment's scale (1, 1/n or 1/sqrt(n) for a segment of n ids).
// Grad writes the dense [output_dim0, inner] result; GradV2 only the rows of the sorted
// distinct indices, which it returns as its second output.
//
// Arithmetic is TF's, bit for bit: half and bfloat16 rows are summed in float and rounded
// once at the end. A forward run of n rows sums its first 2-9 rows in order and then adds
// groups of 8 rows each summed on its own (Eigen's L(0) + ... + L(7) expressions); for
// n < 10 the sum is multiplied by 1/n (1/sqrt(n)), for n >= 10 divided by n (sqrt(n)).
// A gradient row adds its contributions in input order, the first one assigned.
//
// Errors are TF's, in TF's order, with two quirks of TF's kernel kept: num_segments is read
// as an int32 (an int64 2^32 + 5 means 5 segments), and the last id must be below the max of
// Tidx's type ("Last segment id must be < kintmax"). One divergence: TF's Grad leaves its
// output uninitialised when there are no indices; here it is 0 (the true gradient).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/segment_util.h"
#include "runtime/half.h"

namespace dflow {
namespace {

enum class SparseReduction { kSum, kMean, kSqrtN };

// The dtypes of Mean, SqrtN and every gradient (Sum also takes segment::RealTypes()).
std::vector<DataType> FloatTypes() { return {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}; }

// Calls `fn(T{})` for a dtype of FloatTypes().
template <typename Fn>
void DispatchFloat(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_DOUBLE: fn(double{}); break;
    case DT_HALF: fn(Half{}); break;
    case DT_BFLOAT16: fn(Bfloat16{}); break;
    default: fn(float{});
  }
}

// The type rows are summed in: float for half and bfloat16 (TF casts their rows to float
// and rounds the result once), T itself otherwise.
template <typename T>
using AccType = std::conditional_t<segment::kIs16BitFloat<T>, float, T>;

template <typename T>
AccType<T> ToAcc(T x) {
  if constexpr (segment::kIs16BitFloat<T>) {
    return x.ToFloat();
  } else {
    return x;
  }
}

template <typename T>
T FromAcc(AccType<T> x) {
  if constexpr (segment::kIs16BitFloat<T>) {
    return T::FromFloat(x);
  } else {
    return x;
  }
}

// The scalar value of an int32 or int64 tensor.
int64_t ReadScalar(const Tensor& t) {
  return t.dtype() == DT_INT64 ? t.flat<int64_t>()[0] : t.flat<int32_t>()[0];
}

// v's low 32 bits as an int32 (two's complement), as TF's int32 reads and sums give them.
int64_t WrapInt32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// last + 1 computed in the ids' own type, so an int32 INT32_MAX wraps as it does in TF.
int64_t LastIdPlusOne(int64_t last, DataType ids_dtype) {
  const int64_t next = static_cast<int64_t>(static_cast<uint64_t>(last) + 1);
  return ids_dtype == DT_INT32 ? WrapInt32(next) : next;
}

// ---------------------------------------------------------------------------------------
// Forward reductions.

// TF's ValidateSparseSegmentReduction: shapes and sizes, in its order.
absl::Status ValidateReduction(const OpKernelContext& ctx, bool has_num_segments) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& ids = ctx.input(2);
  if (has_num_segments) {
    const Tensor& num_segments = ctx.input(3);
    if (num_segments.shape().dims() != 0) {
      return KernelError(ctx, "num_segments should be a scalar, not shape ",
                         num_segments.shape().DebugString());
    }
    if (ReadScalar(num_segments) < 0) return KernelError(ctx, "segment ids must be >= 0");
  }
  if (indices.shape().dims() != 1) return KernelError(ctx, "indices should be a vector.");
  if (ids.shape().dims() != 1) return KernelError(ctx, "segment_ids should be a vector.");
  if (indices.NumElements() != ids.NumElements()) {
    return KernelError(ctx, "segment_ids and indices should have same size.");
  }
  if (data.shape().dims() < 1) return KernelError(ctx, "Shape must be at least rank 1");
  return absl::OkStatus();
}

// The output's row count: num_segments (read as an int32, as TF's kernel does) or the last
// id + 1, or TF's error. Only the last id is looked at here; SplitRuns checks the others.
absl::StatusOr<int64_t> ReductionRows(const OpKernelContext& ctx, const std::vector<int64_t>& ids,
                                      bool has_num_segments) {
  const int64_t last = ids.empty() ? 0 : ids.back();
  const int64_t limit = ctx.input(1).dtype() == DT_INT32 ? std::numeric_limits<int32_t>::max()
                                                         : std::numeric_limits<int64_t>::max();
  if (last >= limit) {
    return KernelError(ctx, "Last segment id must be < kintmax, got ", last, " limit ", limit);
  }
  const int64_t last_plus_one = ids.empty() ? 0 : LastIdPlusOne(last, ctx.input(2).dtype());
  int64_t rows = last_plus_one;
  if (has_num_segments) {
    rows = WrapInt32(ReadScalar(ctx.input(3)));
    if (rows < last_plus_one) return KernelError(ctx, "segment ids must be < num_segments");
  }
  if (rows < 0) return KernelError(ctx, "segment ids must be >= 0");
  return rows;
}

// One segment: positions [begin, end) of indices and segment_ids, all with id `id`.
struct SegmentRun {
  int64_t id, begin, end;
};

// Splits sorted `ids` into runs, checking as TF walks them: a decrease after the run, then
// the run's id against [0, rows), then its indices against [0, data_rows).
absl::StatusOr<std::vector<SegmentRun>> SplitRuns(const OpKernelContext& ctx,
                                                  const std::vector<int64_t>& ids,
                                                  const std::vector<int64_t>& indices, int64_t rows,
                                                  int64_t data_rows) {
  std::vector<SegmentRun> runs;
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int64_t begin = 0, end = 1; begin < n; begin = end++) {
    while (end < n && ids[end] == ids[begin]) ++end;
    if (end < n && ids[end] < ids[begin]) return KernelError(ctx, "segment ids are not increasing");
    if (ids[begin] < 0 || ids[begin] >= rows) {
      return KernelError(ctx, "Segment id ", ids[begin], " out of range [0, ", rows,
                         "), possibly because 'segment_ids' input is not sorted.");
    }
    for (int64_t k = begin; k < end; ++k) {
      if (indices[k] < 0 || indices[k] >= data_rows) {
        return KernelError(ctx, "Bad: indices[", k, "] == ", indices[k], " out of range [0, ",
                           data_rows, ")");
      }
    }
    runs.push_back({ids[begin], begin, end});
  }
  return runs;
}

// acc = `row` in the accumulator type.
template <typename T>
void LoadRow(const T* row, int64_t inner, AccType<T>* acc) {
  for (int64_t i = 0; i < inner; ++i) acc[i] = ToAcc(row[i]);
}

// acc += `row` (integers wrap, as Eigen's do).
template <typename T>
void AddRow(const T* row, int64_t inner, AccType<T>* acc) {
  for (int64_t i = 0; i < inner; ++i) acc[i] = segment::Add(acc[i], ToAcc(row[i]));
}

// n for Mean, sqrt(n) for SqrtN: what a run of n rows is divided by.
template <SparseReduction kReduction, typename A>
A RunDivisor(int64_t n) {
  if constexpr (kReduction == SparseReduction::kMean) {
    return static_cast<A>(n);
  } else {
    return static_cast<A>(std::sqrt(static_cast<double>(n)));
  }
}

// Rows TF sums before its groups of 8: n & 7, or 8 + (n & 7) when that is 0 or 1.
int64_t FirstGroupSize(int64_t n) { return (n & 7) >= 2 ? (n & 7) : (n & 7) + 8; }

// Folds the data rows rows[0..n) into `out` in TF's order (see the top of the file);
// `acc` and `group` are scratch rows of `inner` elements.
template <SparseReduction kReduction, typename T>
void FoldRun(const T* data, int64_t inner, const int64_t* rows, int64_t n, AccType<T>* acc,
             AccType<T>* group, T* out) {
  using A = AccType<T>;
  constexpr bool kScaled = kReduction != SparseReduction::kSum;
  LoadRow(data + rows[0] * inner, inner, acc);
  if (n > 1) {
    const int64_t first = FirstGroupSize(n);
    for (int64_t k = 1; k < first; ++k) AddRow(data + rows[k] * inner, inner, acc);
    if constexpr (kScaled) {
      if (n < 10) {
        const A scale = A(1) / RunDivisor<kReduction, A>(n);
        for (int64_t i = 0; i < inner; ++i) acc[i] = acc[i] * scale;
      }
    }
    for (int64_t k = first; k < n; k += 8) {
      LoadRow(data + rows[k] * inner, inner, group);
      for (int64_t j = 1; j < 8; ++j) AddRow(data + rows[k + j] * inner, inner, group);
      for (int64_t i = 0; i < inner; ++i) acc[i] = segment::Add(acc[i], group[i]);
    }
    if constexpr (kScaled) {
      if (n >= 10) {
        const A divisor = RunDivisor<kReduction, A>(n);
        for (int64_t i = 0; i < inner; ++i) acc[i] = acc[i] / divisor;
      }
    }
  }
  for (int64_t i = 0; i < inner; ++i) out[i] = FromAcc<T>(acc[i]);
}

// Zeroes the output rows no run writes: the empty segments.
template <typename T>
void ZeroGaps(const std::vector<SegmentRun>& runs, int64_t inner, int64_t rows, T* out) {
  int64_t next = 0;  // first row neither written by a run nor zeroed yet
  for (const SegmentRun& run : runs) {
    std::fill(out + next * inner, out + run.id * inner, segment::Zero<T>());
    next = run.id + 1;
  }
  std::fill(out + next * inner, out + rows * inner, segment::Zero<T>());
}

template <SparseReduction kReduction, typename T>
void ReduceRuns(OpKernelContext* ctx, const std::vector<SegmentRun>& runs,
                const std::vector<int64_t>& indices, const T* data, int64_t inner, int64_t rows,
                T* out) {
  ZeroGaps(runs, inner, rows, out);
  const int64_t num_runs = static_cast<int64_t>(runs.size());
  if (num_runs == 0) return;
  const int64_t rows_per_run =
      std::max<int64_t>(1, static_cast<int64_t>(indices.size()) / num_runs);
  // Each run writes its own output row, so runs shard freely.
  ParallelForElements(ctx, num_runs, 2 * inner * rows_per_run + 1, [&](int64_t first, int64_t end) {
    std::vector<AccType<T>> acc(inner), group(inner);
    for (int64_t r = first; r < end; ++r) {
      const SegmentRun& run = runs[r];
      FoldRun<kReduction>(data, inner, indices.data() + run.begin, run.end - run.begin, acc.data(),
                          group.data(), out + run.id * inner);
    }
  });
}

template <SparseReduction kReduction, bool kHasNumSegments>
class SparseSegmentReductionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    OP_REQUIRES_OK(ctx, ValidateReduction(*ctx, kHasNumSegments));
    const std::vector<int64_t> indices = ReadIndices(ctx->input(1));
    const std::vector<int64_t> ids = ReadIndices(ctx->input(2));
    OP_ASSIGN_OR_RETURN(ctx, const int64_t rows, ReductionRows(*ctx, ids, kHasNumSegments));
    std::vector<int64_t> dims(data.shape().dim_sizes().begin(), data.shape().dim_sizes().end());
    dims[0] = rows;
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    // TF checks this after allocating, and only when there are ids (last id -1, no
    // num_segments).
    OP_REQUIRES(ctx, ids.empty() || rows > 0, KernelError(*ctx, "segment ids must be >= 0"));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<SegmentRun> runs,
                        SplitRuns(*ctx, ids, indices, rows, data.shape().dim_size(0)));
    if (output->NumElements() == 0) return;
    const int64_t inner = DimProduct(data.shape(), 1, data.shape().dims());
    auto reduce = [&](auto zero) {
      using T = decltype(zero);
      ReduceRuns<kReduction, T>(ctx, runs, indices, data.data<T>(), inner, rows, output->data<T>());
    };
    if constexpr (kReduction == SparseReduction::kSum) {
      segment::DispatchReal(data.dtype(), reduce);
    } else {
      DispatchFloat(data.dtype(), reduce);
    }
  }
};

// ---------------------------------------------------------------------------------------
// Gradients.

// Grad writes the dense gradient; GradV2 the rows of the sorted distinct indices only.
enum class GradForm { kDense, kCompact };

// TF's input checks of both gradient forms, in its order; `dim0_name` names input 3.
absl::Status ValidateGrad(const OpKernelContext& ctx, absl::string_view dim0_name) {
  if (ctx.input(1).shape().dims() != 1) return KernelError(ctx, "indices should be a vector.");
  if (ctx.input(2).shape().dims() != 1) {
    return KernelError(ctx, "segment_ids should be a vector.");
  }
  if (ctx.input(3).shape().dims() != 0) {
    return KernelError(ctx, dim0_name, " should be a scalar.");
  }
  if (ctx.input(1).NumElements() != ctx.input(2).NumElements()) {
    return KernelError(ctx, "segment_ids and indices should have same size.");
  }
  return absl::OkStatus();
}

// grad's dims with dim 0 set to `dim0`, with TF's TensorShape::SetDimWithStatus errors.
absl::StatusOr<std::vector<int64_t>> DenseGradDims(const OpKernelContext& ctx, int64_t dim0) {
  const TensorShape& shape = ctx.input(0).shape();
  if (shape.dims() == 0) return KernelError(ctx, "Index must be less than 0, got 0");
  if (dim0 < 0) return KernelError(ctx, "Expected a non-negative size, got ", dim0);
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  dims[0] = dim0;
  return dims;
}

absl::Status CheckSegmentId(const OpKernelContext& ctx, int64_t id, int64_t num_segments) {
  if (id >= 0 && id < num_segments) return absl::OkStatus();
  return KernelError(ctx, "Segment id ", id, " out of range [0, ", num_segments, ").");
}

// TF's checks of the ids and indices, in its order: the last id against grad's rows, then
// (Grad of Mean and SqrtN, which count segment sizes first) every id, then each position's
// index and id in turn.
absl::Status CheckGradIds(const OpKernelContext& ctx, const std::vector<int64_t>& indices,
                          const std::vector<int64_t>& ids, int64_t output_rows, bool ids_first) {
  const int64_t num_segments = ctx.input(0).shape().dim_size(0);
  if (LastIdPlusOne(ids.back(), ctx.input(2).dtype()) > num_segments) {
    return KernelError(ctx, "Invalid number of segments");
  }
  if (ids_first) {
    for (int64_t id : ids) DFLOW_RETURN_IF_ERROR(CheckSegmentId(ctx, id, num_segments));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= output_rows) {
      return KernelError(ctx, "Index ", indices[i], " out of range [0, ", output_rows, ").");
    }
    DFLOW_RETURN_IF_ERROR(CheckSegmentId(ctx, ids[i], num_segments));
  }
  return absl::OkStatus();
}

// Each segment's scale, as TF computes it in double: 1, 1/n or 1/sqrt(n) for n ids.
template <SparseReduction kReduction>
std::vector<double> SegmentScales(const std::vector<int64_t>& ids, int64_t num_segments) {
  std::vector<double> scales(num_segments, 0.0);
  if constexpr (kReduction == SparseReduction::kSum) {
    std::fill(scales.begin(), scales.end(), 1.0);
  } else {
    for (int64_t id : ids) scales[id] += 1;
    for (double& s : scales) {
      const double n = std::max(s, 1.0);
      s = kReduction == SparseReduction::kMean ? 1.0 / n : 1.0 / std::sqrt(n);
    }
  }
  return scales;
}

// The positions grouped by index: group g is positions[begin[g] .. begin[g + 1]), the i with
// indices[i] == unique[g], in increasing i (TF's order of adding them).
struct IndexGroups {
  std::vector<int64_t> unique;     // sorted distinct indices
  std::vector<int64_t> positions;  // 0..N-1 stably sorted by index
  std::vector<int64_t> begin;      // unique.size() + 1 offsets into positions
};

IndexGroups GroupByIndex(const std::vector<int64_t>& indices) {
  IndexGroups groups;
  groups.positions.resize(indices.size());
  std::iota(groups.positions.begin(), groups.positions.end(), int64_t{0});
  std::stable_sort(groups.positions.begin(), groups.positions.end(),
                   [&](int64_t a, int64_t b) { return indices[a] < indices[b]; });
  for (size_t k = 0; k < groups.positions.size(); ++k) {
    const int64_t index = indices[groups.positions[k]];
    if (k == 0 || index != groups.unique.back()) {
      groups.unique.push_back(index);
      groups.begin.push_back(static_cast<int64_t>(k));
    }
  }
  groups.begin.push_back(static_cast<int64_t>(groups.positions.size()));
  return groups;
}

// acc = (or, after the first contribution, acc +=) `row` times `scale`; a scale of 1
// multiplies nothing, as in TF.
template <typename T>
void AddScaledRow(const T* row, int64_t inner, AccType<T> scale, bool first, AccType<T>* acc) {
  using A = AccType<T>;
  for (int64_t i = 0; i < inner; ++i) {
    A x = ToAcc(row[i]);
    if (scale != A(1)) x = x * scale;  // its own statement: rounded before the add, as TF's
    acc[i] = first ? x : acc[i] + x;
  }
}

// Writes each group's gradient row: output row unique[g] (dense) or g (compact).
template <typename T>
void WriteGroups(OpKernelContext* ctx, const IndexGroups& groups, const std::vector<int64_t>& ids,
                 const std::vector<double>& scales, const T* grad, int64_t inner, bool dense,
                 T* out) {
  using A = AccType<T>;
  const int64_t num_groups = static_cast<int64_t>(groups.unique.size());
  const int64_t per_group =
      std::max<int64_t>(1, static_cast<int64_t>(groups.positions.size()) / num_groups);
  // Each group writes its own output row, so groups shard freely.
  ParallelForElements(ctx, num_groups, 2 * inner * per_group + 1, [&](int64_t first, int64_t end) {
    std::vector<A> acc(inner);
    for (int64_t g = first; g < end; ++g) {
      for (int64_t k = groups.begin[g]; k < groups.begin[g + 1]; ++k) {
        const int64_t id = ids[groups.positions[k]];
        AddScaledRow(grad + id * inner, inner, static_cast<A>(scales[id]), k == groups.begin[g],
                     acc.data());
      }
      T* dst = out + (dense ? groups.unique[g] : g) * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = FromAcc<T>(acc[i]);
    }
  });
}

template <SparseReduction kReduction, GradForm kForm>
class SparseSegmentGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    constexpr bool kDense = kForm == GradForm::kDense;
    const Tensor& grad = ctx->input(0);
    OP_REQUIRES_OK(ctx, ValidateGrad(*ctx, kDense ? "output_dim0" : "dense_output_dim0"));
    const int64_t output_rows = ctx->input(3).flat<int32_t>()[0];
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dims, DenseGradDims(*ctx, output_rows));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape dense_shape, OutputShape(*ctx, dims));
    const std::vector<int64_t> indices = ReadIndices(ctx->input(1));
    const std::vector<int64_t> ids = ReadIndices(ctx->input(2));
    if (output_rows == 0 || ids.empty()) {
      OP_REQUIRES_OK(ctx, WriteEmpty(ctx, dense_shape, kDense));
      return;
    }
    const bool ids_first = kDense && kReduction != SparseReduction::kSum;
    OP_REQUIRES_OK(ctx, CheckGradIds(*ctx, indices, ids, output_rows, ids_first));
    const IndexGroups groups = GroupByIndex(indices);
    if (!kDense) dims[0] = static_cast<int64_t>(groups.unique.size());
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, TensorShape(dims)));
    if (!kDense) OP_REQUIRES_OK(ctx, WriteUniqueIndices(ctx, groups.unique));
    if (output->NumElements() == 0) return;
    const int64_t inner = DimProduct(grad.shape(), 1, grad.shape().dims());
    const std::vector<double> scales = SegmentScales<kReduction>(ids, grad.shape().dim_size(0));
    DispatchFloat(grad.dtype(), [&](auto zero) {
      using T = decltype(zero);
      T* out = output->data<T>();
      if (kDense) std::fill(out, out + output->NumElements(), segment::Zero<T>());
      WriteGroups(ctx, groups, ids, scales, grad.data<T>(), inner, kDense, out);
    });
  }

 private:
  // No indices or no output rows: Grad's dense output is all 0, GradV2's outputs have no
  // rows.
  static absl::Status WriteEmpty(OpKernelContext* ctx, const TensorShape& dense_shape, bool dense) {
    if (dense) {
      DFLOW_ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, dense_shape));
      DispatchFloat(output->dtype(), [&](auto zero) {
        using T = decltype(zero);
        std::fill(output->data<T>(), output->data<T>() + output->NumElements(), segment::Zero<T>());
      });
      return absl::OkStatus();
    }
    std::vector<int64_t> dims(dense_shape.dim_sizes().begin(), dense_shape.dim_sizes().end());
    dims[0] = 0;
    DFLOW_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(dims)).status());
    return WriteUniqueIndices(ctx, {});
  }

  // GradV2's second output, in Tidx.
  static absl::Status WriteUniqueIndices(OpKernelContext* ctx, const std::vector<int64_t>& unique) {
    DFLOW_ASSIGN_OR_RETURN(
        Tensor * out, ctx->allocate_output(1, TensorShape({static_cast<int64_t>(unique.size())})));
    DispatchIndexType(out->dtype(), [&](auto zero) {
      using I = decltype(zero);
      std::transform(unique.begin(), unique.end(), out->data<I>(),
                     [](int64_t v) { return static_cast<I>(v); });
    });
    return absl::OkStatus();
  }
};

// Registers kernel K for `op` with T in `types` and int32/int64 indices and ids (and
// num_segments when `num_segments`).
template <typename K>
absl::Status RegisterSparse(KernelRegistry* registry, const std::string& op,
                            std::vector<DataType> types, bool num_segments = false) {
  KernelDefBuilder builder = CpuKernel(op)
                                 .TypeConstraint("T", std::move(types))
                                 .TypeConstraint("Tidx", IndexTypes())
                                 .TypeConstraint("Tsegmentids", IndexTypes());
  if (num_segments) builder.TypeConstraint("Tnumsegments", IndexTypes());
  return registry->Register<K>(builder);
}

// SparseSegment<name>, its WithNumSegments form, Grad and GradV2.
template <SparseReduction kReduction>
absl::Status RegisterFamily(KernelRegistry* registry, const std::string& name,
                            const std::vector<DataType>& types) {
  const std::string op = "SparseSegment" + name;
  DFLOW_RETURN_IF_ERROR(
      (RegisterSparse<SparseSegmentReductionOp<kReduction, false>>(registry, op, types)));
  DFLOW_RETURN_IF_ERROR((RegisterSparse<SparseSegmentReductionOp<kReduction, true>>(
      registry, op + "WithNumSegments", types, /*num_segments=*/true)));
  DFLOW_RETURN_IF_ERROR((RegisterSparse<SparseSegmentGradOp<kReduction, GradForm::kDense>>(
      registry, op + "Grad", FloatTypes())));
  return RegisterSparse<SparseSegmentGradOp<kReduction, GradForm::kCompact>>(
      registry, op + "GradV2", FloatTypes());
}

}  // namespace

absl::Status RegisterSparseSegmentKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      RegisterFamily<SparseReduction::kSum>(registry, "Sum", segment::RealTypes()));
  DFLOW_RETURN_IF_ERROR(RegisterFamily<SparseReduction::kMean>(registry, "Mean", FloatTypes()));
  return RegisterFamily<SparseReduction::kSqrtN>(registry, "SqrtN", FloatTypes());
}

}  // namespace dflow
