// SegmentSum, SegmentMean and SegmentMax: reductions over runs of equal, sorted
// segment_ids along data's dimension 0 (TF 2.21's SegmentReductionOp on the CPU).
//
// data is viewed as [N, inner]; output row s folds the data rows whose id is s, and has
// output_rows = last id + 1 rows. As in TF the output is allocated before the ids are
// walked; rows no id names (gaps, and rows before the first id) are 0 for all three
// ops, Max included (checked against TF 2.21: SegmentMax of ids [0, 0, 2, 2] gives a
// zero row 1, unlike UnsortedSegmentMax's lowest()). Errors, in TF's order and words:
// data rank 0, ids not a vector, ids and data rows of different counts, a negative last
// id ("segment ids must be >= 0"), a decrease ("segment ids are not increasing"), and an
// id outside [0, output_rows) (a negative first id).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/segment_util.h"

namespace dflow {
namespace {

enum class SegmentReduction { kSum, kMean, kMax };

// Folds `rows` data rows of `inner` elements starting at `in` into `out`.
template <SegmentReduction kReduction, typename T>
void FoldSegment(const T* in, int64_t rows, int64_t inner, T* out) {
  std::copy(in, in + inner, out);
  for (int64_t r = 1; r < rows; ++r) {
    const T* row = in + r * inner;
    for (int64_t i = 0; i < inner; ++i) {
      out[i] = kReduction == SegmentReduction::kMax ? segment::Max(out[i], row[i])
                                                    : segment::Add(out[i], row[i]);
    }
  }
  if constexpr (kReduction == SegmentReduction::kMean) {
    for (int64_t i = 0; i < inner; ++i) out[i] = segment::DivideByCount(out[i], rows);
  }
}

// One run of equal ids: data rows [begin, end) all have id `id`.
struct SegmentRun {
  int64_t id, begin, end;
};

// Splits sorted `ids` into runs, or TF's error for ids that decrease or fall outside
// [0, output_rows).
absl::StatusOr<std::vector<SegmentRun>> SplitRuns(const OpKernelContext& ctx,
                                                  const std::vector<int64_t>& ids,
                                                  int64_t output_rows) {
  std::vector<SegmentRun> runs;
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int64_t begin = 0, end = 1; begin < n; begin = end++) {
    while (end < n && ids[end] == ids[begin]) ++end;
    if (end < n && ids[end] < ids[begin]) return KernelError(ctx, "segment ids are not increasing");
    if (ids[begin] < 0 || ids[begin] >= output_rows) {
      return KernelError(ctx, "Segment id ", ids[begin], " out of range [0, ", output_rows,
                         "), possibly because 'segment_ids' input is not sorted.");
    }
    runs.push_back({ids[begin], begin, end});
  }
  return runs;
}

template <SegmentReduction kReduction>
class SegmentReductionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    OP_REQUIRES(ctx, data.shape().dims() >= 1, KernelError(*ctx, "input must be at least rank 1"));
    OP_REQUIRES(ctx, ids_t.shape().dims() == 1,
                KernelError(*ctx, "segment_ids should be a vector."));
    OP_REQUIRES(ctx, ids_t.NumElements() == data.shape().dim_size(0),
                KernelError(*ctx, "segment_ids should be the same size as dimension 0 of input."));
    const std::vector<int64_t> ids = segment::ReadSegmentIds(ids_t);
    // TF checks the last id alone (so [-3, -1] fails here, not as unsorted); an id of
    // int64 max would make last + 1 wrap negative in TF too: the same error.
    const int64_t last = ids.empty() ? -1 : ids.back();
    OP_REQUIRES(ctx, ids.empty() || (last >= 0 && last < std::numeric_limits<int64_t>::max()),
                KernelError(*ctx, "segment ids must be >= 0"));
    const int64_t output_rows = last + 1;
    std::vector<int64_t> dims(data.shape().dim_sizes().begin(), data.shape().dim_sizes().end());
    dims[0] = output_rows;
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<SegmentRun> runs, SplitRuns(*ctx, ids, output_rows));
    const int64_t inner = DimProduct(data.shape(), 1, data.shape().dims());
    segment::DispatchReal(data.dtype(), [&](auto zero) {
      using T = decltype(zero);
      Reduce<T>(ctx, runs, data.data<T>(), inner, output_rows, output->data<T>());
    });
  }

 private:
  template <typename T>
  static void Reduce(OpKernelContext* ctx, const std::vector<SegmentRun>& runs, const T* in,
                     int64_t inner, int64_t output_rows, T* out) {
    // Zero everything first: the rows no run writes are TF's default value, 0.
    std::fill(out, out + output_rows * inner, segment::Zero<T>());
    const int64_t num_runs = static_cast<int64_t>(runs.size());
    if (num_runs == 0) return;
    const int64_t rows_per_run = std::max<int64_t>(1, runs.back().end / num_runs);
    const int64_t cost = 2 * inner * rows_per_run + 1;
    ParallelForElements(ctx, num_runs, cost, [&](int64_t first, int64_t end) {
      for (int64_t k = first; k < end; ++k) {
        const SegmentRun& run = runs[k];
        FoldSegment<kReduction>(in + run.begin * inner, run.end - run.begin, inner,
                                out + run.id * inner);
      }
    });
  }
};

}  // namespace

absl::Status RegisterSegmentKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<SegmentReductionOp<SegmentReduction::kSum>>(
      CpuKernel("SegmentSum")
          .TypeConstraint("T", segment::RealTypes())
          .TypeConstraint("Tindices", IndexTypes())));
  DFLOW_RETURN_IF_ERROR(registry->Register<SegmentReductionOp<SegmentReduction::kMean>>(
      CpuKernel("SegmentMean")
          .TypeConstraint("T", segment::RealTypes())
          .TypeConstraint("Tindices", IndexTypes())));
  return registry->Register<SegmentReductionOp<SegmentReduction::kMax>>(
      CpuKernel("SegmentMax")
          .TypeConstraint("T", segment::RealTypes())
          .TypeConstraint("Tindices", IndexTypes()));
}

}  // namespace dflow
