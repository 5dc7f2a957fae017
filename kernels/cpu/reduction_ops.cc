// Reductions (Sum, Mean, Max, Min, Prod, All, Any) and ArgMax/ArgMin.
//
// The one reduction engine:
//   1. Axes are normalised (negative allowed, duplicates ignored, out of range is
//      INVALID_ARGUMENT naming the axis and the rank).
//   2. Size-1 dims are dropped and adjacent dims of the same kind (kept / reduced)
//      merged, so any reduction becomes alternating groups such as [R], [K,R], [R,K],
//      [K,R,K] or [R,K,R].
//   3. The innermost group decides the loop: reduced -> each output folds contiguous
//      runs (ReduceContiguous, several independent accumulator lanes so it vectorises),
//      slab by slab over the outer reduced groups; kept -> a contiguous block of
//      outputs is folded with whole input rows, four per pass (AccumulateRows,
//      vectorised over the outputs), or, for a few narrow columns, with one strided-lane
//      pass over the contiguous rows (FoldNarrowColumns).
//   4. Many outputs: shard over outputs. Few outputs with long reductions (a full Sum):
//      split the reduced index space into a fixed number of chunks, fold each in
//      parallel into its own partials, then combine the partials in chunk order, so
//      the result does not depend on the thread count.
// Float and double sums, means and products accumulate in double (16 lanes, then
// chunk partials), so a Sum of 1e8 floats is accurate to float precision.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace cwise {
namespace {

// ---------------------------------------------------------------------------------
// Reducers: Impl<T> gives the accumulator type and Init / Load / Combine / Finalize.

template <typename T>
using WideAcc = std::conditional_t<std::is_floating_point_v<T>, double, T>;

struct SumReducer {
  template <typename T>
  struct Impl {
    using Acc = WideAcc<T>;
    static Acc Init() { return Acc(0); }
    static Acc Load(T x) { return Acc(x); }
    static Acc Combine(Acc a, Acc b) { return a + b; }
    static T Finalize(Acc a, int64_t /*count*/) { return static_cast<T>(a); }
  };
};

struct MeanReducer {
  template <typename T>
  struct Impl : SumReducer::Impl<T> {
    using Acc = WideAcc<T>;
    // Empty input: NaN for floats (0/0, as TF), 0 for integers (instead of a trap).
    static T Finalize(Acc a, int64_t count) {
      if constexpr (std::is_integral_v<T>) {
        return count == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(a) / count);
      } else {
        return static_cast<T>(a / static_cast<Acc>(count));
      }
    }
  };
};

struct ProdReducer {
  template <typename T>
  struct Impl {
    using Acc = WideAcc<T>;
    static Acc Init() { return Acc(1); }
    static Acc Load(T x) { return Acc(x); }
    static Acc Combine(Acc a, Acc b) { return a * b; }
    static T Finalize(Acc a, int64_t /*count*/) { return static_cast<T>(a); }
  };
};

// Max and Min propagate NaN (a != a only for NaN; `|`, not `||`, keeps it branch-free).
struct MaxReducer {
  template <typename T>
  struct Impl {
    using Acc = T;
    static Acc Init() {
      if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
      return std::numeric_limits<T>::lowest();
    }
    static Acc Load(T x) { return x; }
    static Acc Combine(Acc a, Acc b) { return ((a > b) | (a != a)) ? a : b; }
    static T Finalize(Acc a, int64_t /*count*/) { return a; }
  };
};

struct MinReducer {
  template <typename T>
  struct Impl {
    using Acc = T;
    static Acc Init() {
      if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
      return std::numeric_limits<T>::max();
    }
    static Acc Load(T x) { return x; }
    static Acc Combine(Acc a, Acc b) { return ((a < b) | (a != a)) ? a : b; }
    static T Finalize(Acc a, int64_t /*count*/) { return a; }
  };
};

struct AllReducer {
  template <typename T>
  struct Impl {
    using Acc = bool;
    static Acc Init() { return true; }
    static Acc Load(T x) { return x; }
    static Acc Combine(Acc a, Acc b) { return a && b; }
    static T Finalize(Acc a, int64_t /*count*/) { return a; }
  };
};

struct AnyReducer {
  template <typename T>
  struct Impl {
    using Acc = bool;
    static Acc Init() { return false; }
    static Acc Load(T x) { return x; }
    static Acc Combine(Acc a, Acc b) { return a || b; }
    static T Finalize(Acc a, int64_t /*count*/) { return a; }
  };
};

// ---------------------------------------------------------------------------------
// The collapsed view of a reduction (rules 1-2).

// Adjacent input dims merged into one: element count and row-major input stride.
struct Group {
  int64_t size;
  int64_t stride;
};
using GroupList = absl::InlinedVector<Group, 6>;

struct ReductionPlan {
  TensorShape output_shape;
  GroupList kept;              // outermost first; their odometer enumerates the outputs in order
  GroupList reduced;           // outermost first
  bool inner_reduced = false;  // the innermost group is reduced (stride 1)
  int64_t num_outputs = 1;
  int64_t reduce_size = 1;  // input elements folded into each output
};

absl::StatusOr<absl::InlinedVector<int64_t, 8>> ReadAxes(const Tensor& axes) {
  absl::InlinedVector<int64_t, 8> values;
  if (axes.dtype() == DT_INT32) {
    for (int32_t a : axes.flat<int32_t>()) values.push_back(a);
  } else if (axes.dtype() == DT_INT64) {
    for (int64_t a : axes.flat<int64_t>()) values.push_back(a);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("reduction indices must be int32 or int64, got ",
                                                   DataTypeString(axes.dtype())));
  }
  return values;
}

absl::StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& shape, const Tensor& axes,
                                                bool keep_dims) {
  const int rank = shape.dims();
  DFLOW_ASSIGN_OR_RETURN(auto axis_values, ReadAxes(axes));
  absl::InlinedVector<bool, 8> is_reduced(rank, false);
  for (int64_t axis : axis_values) {
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension (", axis,
                                                     " for input with ", rank, " dimension(s)"));
    }
    is_reduced[axis < 0 ? axis + rank : axis] = true;
  }
  ReductionPlan plan;
  absl::InlinedVector<int64_t, 8> out_dims;
  absl::InlinedVector<bool, 8> group_reduced;
  GroupList groups;
  int64_t stride = shape.num_elements();
  for (int d = 0; d < rank; ++d) {
    const int64_t size = shape.dim_size(d);
    stride = size == 0 ? 0 : stride / size;  // empty inputs never use the strides
    if (is_reduced[d]) {
      plan.reduce_size *= size;
      if (keep_dims) out_dims.push_back(1);
    } else {
      plan.num_outputs *= size;
      out_dims.push_back(size);
    }
    if (size == 1) continue;
    if (!groups.empty() && group_reduced.back() == is_reduced[d]) {
      groups.back() = {groups.back().size * size, stride};
    } else {
      groups.push_back({size, stride});
      group_reduced.push_back(is_reduced[d]);
    }
  }
  plan.output_shape = TensorShape(absl::MakeConstSpan(out_dims));
  for (size_t g = 0; g < groups.size(); ++g) {
    (group_reduced[g] ? plan.reduced : plan.kept).push_back(groups[g]);
  }
  plan.inner_reduced = !groups.empty() && group_reduced.back();
  return plan;
}

// An odometer over groups: walks their index space in row-major order and tracks the
// input offset. An empty list has one position, offset 0.
class GroupCounter {
 public:
  explicit GroupCounter(absl::Span<const Group> groups) : groups_(groups), index_(groups.size()) {}

  void Seek(int64_t linear) {
    offset_ = 0;
    for (size_t k = groups_.size(); k-- > 0;) {
      index_[k] = linear % groups_[k].size;
      linear /= groups_[k].size;
      offset_ += index_[k] * groups_[k].stride;
    }
  }
  void Next() {
    for (size_t k = groups_.size(); k-- > 0;) {
      offset_ += groups_[k].stride;
      if (++index_[k] < groups_[k].size) return;
      offset_ -= groups_[k].stride * groups_[k].size;
      index_[k] = 0;
    }
  }
  int64_t offset() const { return offset_; }

 private:
  absl::Span<const Group> groups_;
  absl::InlinedVector<int64_t, 6> index_;
  int64_t offset_ = 0;
};

// ---------------------------------------------------------------------------------
// Inner loops (rule 3).

// Folds x[0, n) into one accumulator. Independent lanes let the compiler vectorise
// without reassociating (we build without -ffast-math) and keep each lane's running
// sum short, which also helps accuracy. Short runs skip the lane set-up.
template <typename R, typename T>
typename R::Acc ReduceContiguous(const T* x, int64_t n) {
  using Acc = typename R::Acc;
  constexpr int kLanes = 16;
  Acc acc = R::Init();
  int64_t i = 0;
  if (n >= 2 * kLanes) {
    Acc lanes[kLanes];
    for (Acc& lane : lanes) lane = R::Init();
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) lanes[j] = R::Combine(lanes[j], R::Load(x[i + j]));
    }
    for (int width = kLanes / 2; width > 0; width /= 2) {
      for (int j = 0; j < width; ++j) lanes[j] = R::Combine(lanes[j], lanes[j + width]);
    }
    acc = lanes[0];
  }
  for (; i < n; ++i) acc = R::Combine(acc, R::Load(x[i]));
  return acc;
}

// acc[i] = Combine(acc[i], rows[0][i], ..., rows[num_rows - 1][i]) for i < n, with
// num_rows <= 4: folding several rows per pass over acc halves the accumulator traffic.
template <typename R, typename T>
void AccumulateRows(typename R::Acc* acc, const T* const* rows, int num_rows, int64_t n) {
  const T* r0 = rows[0];
  switch (num_rows) {
    case 4: {
      const T *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
      DFLOW_IVDEP
      for (int64_t i = 0; i < n; ++i) {
        acc[i] = R::Combine(acc[i], R::Combine(R::Combine(R::Load(r0[i]), R::Load(r1[i])),
                                               R::Combine(R::Load(r2[i]), R::Load(r3[i]))));
      }
      return;
    }
    case 3: {
      const T *r1 = rows[1], *r2 = rows[2];
      DFLOW_IVDEP
      for (int64_t i = 0; i < n; ++i) {
        acc[i] = R::Combine(acc[i],
                            R::Combine(R::Combine(R::Load(r0[i]), R::Load(r1[i])), R::Load(r2[i])));
      }
      return;
    }
    case 2: {
      const T* r1 = rows[1];
      DFLOW_IVDEP
      for (int64_t i = 0; i < n; ++i) {
        acc[i] = R::Combine(acc[i], R::Combine(R::Load(r0[i]), R::Load(r1[i])));
      }
      return;
    }
    default:
      DFLOW_IVDEP
      for (int64_t i = 0; i < n; ++i) acc[i] = R::Combine(acc[i], R::Load(r0[i]));
  }
}

// Narrow columns: `rows` contiguous rows of `width` elements folded into acc[0, width).
// The flat run is folded with kColumnLanes lanes; since width divides the lane count,
// lane j always sees column j % width.
constexpr int kColumnLanes = 48;

template <typename R, typename T>
void FoldNarrowColumns(typename R::Acc* acc, const T* x, int64_t rows, int64_t width) {
  using Acc = typename R::Acc;
  Acc lanes[kColumnLanes];
  for (Acc& lane : lanes) lane = R::Init();
  const int64_t n = rows * width;
  int64_t i = 0;
  for (; i + kColumnLanes <= n; i += kColumnLanes) {
    for (int j = 0; j < kColumnLanes; ++j) {
      lanes[j] = R::Combine(lanes[j], R::Load(x[i + j]));
    }
  }
  for (int j = 0; j < kColumnLanes; ++j) acc[j % width] = R::Combine(acc[j % width], lanes[j]);
  for (; i < n; ++i) acc[i % width] = R::Combine(acc[i % width], R::Load(x[i]));
}

// Folds reduced positions [rb, re) of outputs [ob, oe) when the innermost group is
// reduced: each output folds contiguous runs of that group, one per outer reduced
// position ("row"). Rows are the outer loop so the input is read slab by slab.
template <typename R, typename T>
void AccumulateInnerReduced(const ReductionPlan& plan, const T* in, int64_t ob, int64_t oe,
                            int64_t rb, int64_t re, typename R::Acc* acc) {
  const absl::Span<const Group> outer_reduced =
      absl::MakeConstSpan(plan.reduced).subspan(0, plan.reduced.size() - 1);
  const int64_t run = plan.reduced.back().size;
  const int64_t first_row = rb / run, last_row = (re - 1) / run;
  GroupCounter rows(outer_reduced), outputs(plan.kept);
  rows.Seek(first_row);
  for (int64_t row = first_row; row <= last_row; ++row, rows.Next()) {
    const int64_t begin = row == first_row ? rb % run : 0;
    const int64_t end = row == last_row ? (re - 1) % run + 1 : run;
    const T* base = in + rows.offset() + begin;
    const int64_t n = end - begin;
    if (plan.kept.size() <= 1) {  // outputs are evenly spaced: skip the odometer
      const int64_t stride = plan.kept.empty() ? 0 : plan.kept[0].stride;
      const T* x = base + ob * stride;
      for (int64_t o = ob; o < oe; ++o, x += stride) {
        acc[o - ob] = R::Combine(acc[o - ob], ReduceContiguous<R>(x, n));
      }
      continue;
    }
    outputs.Seek(ob);
    for (int64_t o = ob; o < oe; ++o, outputs.Next()) {
      acc[o - ob] = R::Combine(acc[o - ob], ReduceContiguous<R>(base + outputs.offset(), n));
    }
  }
}

// Folds reduced positions [rb, re) of outputs [ob, oe) when the innermost group is
// kept: outputs come in contiguous blocks of `width`, each folded with one input row
// per reduced position, a tile at a time so the accumulators stay in L2.
template <typename R, typename T>
void AccumulateInnerKept(const ReductionPlan& plan, const T* in, int64_t ob, int64_t oe, int64_t rb,
                         int64_t re, typename R::Acc* acc) {
  constexpr int64_t kTile = 8192;
  const int64_t width = plan.kept.empty() ? 1 : plan.kept.back().size;
  const absl::Span<const Group> outer_kept =
      absl::MakeConstSpan(plan.kept).subspan(0, plan.kept.empty() ? 0 : plan.kept.size() - 1);
  const bool narrow = plan.reduced.size() == 1 && kColumnLanes % width == 0;
  GroupCounter blocks(outer_kept), rows(plan.reduced);
  blocks.Seek(ob / width);
  for (int64_t o = ob, col = ob % width; o < oe; col = 0, blocks.Next()) {
    const int64_t span = std::min(width - col, oe - o);
    const T* block = in + blocks.offset() + col;
    if (narrow && span == width) {
      // One reduced group just outside the kept one: rows are contiguous.
      FoldNarrowColumns<R>(acc + (o - ob), block + rb * width, re - rb, width);
      o += span;
      continue;
    }
    for (int64_t t = 0; t < span; t += kTile) {
      const int64_t n = std::min(kTile, span - t);
      rows.Seek(rb);
      for (int64_t r = rb; r < re;) {
        const T* batch[4] = {nullptr, nullptr, nullptr, nullptr};
        int num_rows = 0;
        for (; num_rows < 4 && r < re; ++num_rows, ++r, rows.Next()) {
          batch[num_rows] = block + t + rows.offset();
        }
        AccumulateRows<R>(acc + (o - ob) + t, batch, num_rows, n);
      }
    }
    o += span;
  }
}

// Folds reduced positions [rb, re) (row-major over plan.reduced) of outputs [ob, oe)
// into acc[0, oe - ob).
template <typename R, typename T>
void AccumulateRange(const ReductionPlan& plan, const T* in, int64_t ob, int64_t oe, int64_t rb,
                     int64_t re, typename R::Acc* acc) {
  if (plan.inner_reduced) {
    AccumulateInnerReduced<R>(plan, in, ob, oe, rb, re, acc);
  } else {
    AccumulateInnerKept<R>(plan, in, ob, oe, rb, re, acc);
  }
}

// ---------------------------------------------------------------------------------
// Driver (rule 4).

// Reduced chunks below this many elements are not worth splitting.
constexpr int64_t kMinChunk = 32 * 1024;
constexpr int64_t kMaxChunks = 64;
// Up to this many outputs, a reduction whose innermost group is kept splits its reduced
// rows rather than its outputs.
constexpr int64_t kMaxOutputsForRowChunks = 16 * 1024;

// How many chunks of the reduced positions are folded apart (into partial accumulators,
// combined in chunk order: the count depends only on the shape, so results do not vary
// with the thread count). Few outputs split the reduced positions. So do reductions
// that keep the innermost group (NHWC global pooling, 96 channels over 112x112): split
// by outputs, both threads would read every cache line of every row (the Mean took 0.44
// ms on 2 threads, 0.29 on 1).
int64_t NumChunks(const ReductionPlan& plan) {
  const int64_t num_out = plan.num_outputs, size = plan.reduce_size;
  if (!plan.inner_reduced && num_out <= kMaxOutputsForRowChunks) {
    return std::clamp<int64_t>(num_out * size / kMinChunk, 1, std::min(kMaxChunks, size));
  }
  if (num_out >= kMaxChunks || size < 2 * kMinChunk) return 1;
  return std::min(kMaxChunks, size / kMinChunk);
}

template <typename R, typename T>
void RunReduction(OpKernelContext* ctx, const ReductionPlan& plan, const T* in, T* out) {
  using Acc = typename R::Acc;
  const int64_t num_out = plan.num_outputs, size = plan.reduce_size;
  if (num_out == 0) return;
  if (size == 0) {
    std::fill(out, out + num_out, R::Finalize(R::Init(), 0));
    return;
  }
  const int64_t chunks = NumChunks(plan);
  if (chunks == 1) {
    ParallelForElements(ctx, num_out, size, [&](int64_t begin, int64_t end) {
      constexpr int64_t kBlock = 8192;
      const int64_t block = std::min(kBlock, end - begin);
      std::unique_ptr<Acc[]> acc(new Acc[block]);
      for (int64_t b = begin; b < end; b += block) {
        const int64_t n = std::min(block, end - b);
        std::fill(acc.get(), acc.get() + n, R::Init());
        AccumulateRange<R>(plan, in, b, b + n, 0, size, acc.get());
        for (int64_t i = 0; i < n; ++i) out[b + i] = R::Finalize(acc[i], size);
      }
    });
    return;
  }
  std::unique_ptr<Acc[]> partials(new Acc[chunks * num_out]);
  std::fill(partials.get(), partials.get() + chunks * num_out, R::Init());
  ParallelForElements(ctx, chunks, num_out * (size / chunks), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      AccumulateRange<R>(plan, in, 0, num_out, c * size / chunks, (c + 1) * size / chunks,
                         partials.get() + c * num_out);
    }
  });
  for (int64_t o = 0; o < num_out; ++o) {
    Acc acc = partials[o];
    for (int64_t c = 1; c < chunks; ++c) acc = R::Combine(acc, partials[c * num_out + o]);
    out[o] = R::Finalize(acc, size);
  }
}

template <typename T, typename Reducer>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (ctx->HasAttr("keep_dims")) OP_REQUIRES_OK(ctx, ctx->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const T* in = input.data<T>();
    OP_ASSIGN_OR_RETURN(ctx, ReductionPlan plan,
                        MakeReductionPlan(input.shape(), ctx->input(1), keep_dims_));
    // Nothing to fold (no axes, or only size-1 axes): the output is the input.
    if (plan.reduce_size == 1 && ctx->ForwardInputToOutput(0, 0, plan.output_shape)) return;
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, plan.output_shape));
    RunReduction<typename Reducer::template Impl<T>>(ctx, plan, in, output->data<T>());
  }

 private:
  bool keep_dims_ = false;
};

// ---------------------------------------------------------------------------------
// ArgMax / ArgMin: the index of the first extreme value along one axis.

struct ArgMaxFn {
  template <typename T>
  static bool Better(T a, T b) {
    return a > b;
  }
};
struct ArgMinFn {
  template <typename T>
  static bool Better(T a, T b) {
    return a < b;
  }
};

// The index of the first best element of row[0, len), len >= 1. Lanes keep the first
// best of each residue class; the lane winner is the best value with the lowest index.
template <typename Fn, typename T>
int64_t ArgOfRow(const T* row, int64_t len) {
  constexpr int kLanes = 16;
  T best_value = row[0];
  int64_t best = 0, l = 1;
  if (len >= 2 * kLanes) {
    T value[kLanes];
    int64_t index[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      value[j] = row[j];
      index[j] = j;
    }
    for (l = kLanes; l + kLanes <= len; l += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        const bool better = Fn::Better(row[l + j], value[j]);
        value[j] = better ? row[l + j] : value[j];
        index[j] = better ? l + j : index[j];
      }
    }
    for (int j = 1; j < kLanes; ++j) {
      const bool tie = !Fn::Better(value[0], value[j]) && !Fn::Better(value[j], value[0]);
      if (Fn::Better(value[j], value[0]) || (tie && index[j] < index[0])) {
        value[0] = value[j];
        index[0] = index[j];
      }
    }
    best_value = value[0];
    best = index[0];
  }
  for (; l < len; ++l) {
    if (Fn::Better(row[l], best_value)) {
      best_value = row[l];
      best = l;
    }
  }
  return best;
}

// Outputs [begin, end) of an [outer, len, inner] input reduced over its middle dim.
template <typename Fn, typename T, typename Index>
void ArgRange(const T* in, int64_t len, int64_t inner, Index* out, int64_t begin, int64_t end) {
  if (inner == 1) {
    for (int64_t o = begin; o < end; ++o)
      out[o] = static_cast<Index>(ArgOfRow<Fn>(in + o * len, len));
    return;
  }
  // Columns: a tile of outputs keeps its best values while the rows stream past.
  constexpr int64_t kTile = 2048;
  std::unique_ptr<T[]> best(new T[kTile]);
  std::unique_ptr<Index[]> index(new Index[kTile]);
  for (int64_t o = begin; o < end;) {
    const int64_t n = std::min({kTile, end - o, inner - o % inner});
    const T* base = in + (o / inner) * len * inner + o % inner;
    std::copy_n(base, n, best.get());
    std::fill_n(index.get(), n, Index{0});
    for (int64_t l = 1; l < len; ++l) {
      const T* row = base + l * inner;
      for (int64_t j = 0; j < n; ++j) {
        const bool better = Fn::Better(row[j], best[j]);
        best[j] = better ? row[j] : best[j];
        index[j] = better ? static_cast<Index>(l) : index[j];
      }
    }
    std::copy_n(index.get(), n, out + o);
    o += n;
  }
}

template <typename T, typename Fn>
class ArgOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dim = ctx->input(1);
    OP_REQUIRES(
        ctx, dim.shape().dims() == 0,
        absl::InvalidArgumentError(absl::StrCat(
            "dim must be a scalar, but received tensor of shape: ", dim.shape().DebugString())));
    OP_ASSIGN_OR_RETURN(ctx, auto axes, ReadAxes(dim));
    const TensorShape& shape = input.shape();
    const int rank = shape.dims();
    int64_t axis = axes[0];
    OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                absl::InvalidArgumentError(absl::StrCat("Expected dimension in the range [", -rank,
                                                        ", ", rank, "), but got ", axis)));
    if (axis < 0) axis += rank;
    OP_REQUIRES(ctx, shape.dim_size(axis) > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Reduction axis ", axis, " is empty in shape ", shape.DebugString())));
    absl::InlinedVector<int64_t, 8> out_dims;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      out_dims.push_back(shape.dim_size(d));
      (d < axis ? outer : inner) *= shape.dim_size(d);
    }
    const T* in = input.data<T>();
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output,
                        ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims))));
    const int64_t len = shape.dim_size(axis);
    if (output_type(0) == DT_INT32) {
      Run(ctx, in, outer, len, inner, output->data<int32_t>());
    } else {
      Run(ctx, in, outer, len, inner, output->data<int64_t>());
    }
  }

 private:
  template <typename Index>
  static void Run(OpKernelContext* ctx, const T* in, int64_t outer, int64_t len, int64_t inner,
                  Index* out) {
    ParallelForElements(ctx, outer * inner, len * 2, [=](int64_t begin, int64_t end) {
      ArgRange<Fn>(in, len, inner, out, begin, end);
    });
  }
};

}  // namespace
}  // namespace cwise

absl::Status RegisterReductionKernels(KernelRegistry* registry) {
  using cwise::RegisterForTypes;
  const cwise::NumericTypes numeric;
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ReductionOp, cwise::SumReducer>(registry, "Sum", numeric)));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ReductionOp, cwise::MeanReducer>(registry, "Mean", numeric)));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ReductionOp, cwise::ProdReducer>(registry, "Prod", numeric)));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ReductionOp, cwise::MaxReducer>(registry, "Max", numeric)));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ReductionOp, cwise::MinReducer>(registry, "Min", numeric)));
  DFLOW_RETURN_IF_ERROR(
      (cwise::RegisterBoolOp<cwise::ReductionOp, cwise::AllReducer>(registry, "All")));
  DFLOW_RETURN_IF_ERROR(
      (cwise::RegisterBoolOp<cwise::ReductionOp, cwise::AnyReducer>(registry, "Any")));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ArgOp, cwise::ArgMaxFn>(registry, "ArgMax", numeric)));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForTypes<cwise::ArgOp, cwise::ArgMinFn>(registry, "ArgMin", numeric)));
  return absl::OkStatus();
}

}  // namespace dflow
