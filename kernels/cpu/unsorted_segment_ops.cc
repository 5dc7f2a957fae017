// UnsortedSegmentSum and UnsortedSegmentMax (TF 2.21's UnsortedSegmentReductionOp on
// the CPU): segment_ids, any shape that prefixes data's, in any order; output row s folds
// the data slices whose id is s, with num_segments rows.
//
// data is viewed as [N, inner] with N = segment_ids.NumElements(). Rows start at the
// fold's identity (Sum 0, Max numeric_limits<T>::lowest(), which is what an empty
// segment keeps); negative ids are dropped, as TF does; an id >= num_segments is TF's
// "segment_ids[i,j] = id is out of range [0, num_segments)", reported for the first such
// id before anything is folded.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/segment_util.h"

namespace dflow {
namespace {

enum class UnsortedReduction { kSum, kMax };

// "[1,2]" for flat element `flat` of `shape`, "" for a scalar (TF's SliceDebugString).
std::string IndexString(const TensorShape& shape, int64_t flat) {
  if (shape.dims() == 0) return "";
  std::vector<int64_t> index(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    index[d] = flat % shape.dim_size(d);
    flat /= shape.dim_size(d);
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

// True when `shape`'s leading dims are `prefix`'s (TF's TensorShapeUtils::StartsWith).
bool StartsWith(const TensorShape& shape, const TensorShape& prefix) {
  if (prefix.dims() > shape.dims()) return false;
  for (int d = 0; d < prefix.dims(); ++d) {
    if (shape.dim_size(d) != prefix.dim_size(d)) return false;
  }
  return true;
}

// The scalar num_segments (int32 or int64).
int64_t ReadNumSegments(const Tensor& t) {
  return t.dtype() == DT_INT64 ? t.flat<int64_t>()[0] : t.flat<int32_t>()[0];
}

template <UnsortedReduction kReduction, typename T>
void FoldUnsorted(OpKernelContext* ctx, const std::vector<int64_t>& ids, const T* in,
                  int64_t inner, int64_t num_segments, T* out) {
  const T init = kReduction == UnsortedReduction::kSum ? segment::Zero<T>() : segment::Lowest<T>();
  std::fill(out, out + num_segments * inner, init);
  const int64_t n = static_cast<int64_t>(ids.size());
  // Sharded over columns: each shard owns its output columns, so no two threads ever
  // write one element and every element folds its rows in data order.
  ParallelForElements(ctx, inner, 2 * n + 1, [&](int64_t first, int64_t end) {
    for (int64_t r = 0; r < n; ++r) {
      if (ids[r] < 0) continue;
      const T* row = in + r * inner;
      T* dst = out + ids[r] * inner;
      for (int64_t i = first; i < end; ++i) {
        dst[i] = kReduction == UnsortedReduction::kMax ? segment::Max(dst[i], row[i])
                                                       : segment::Add(dst[i], row[i]);
      }
    }
  });
}

template <UnsortedReduction kReduction>
class UnsortedSegmentReductionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    const Tensor& num_segments_t = ctx->input(2);
    OP_REQUIRES(ctx, num_segments_t.shape().dims() == 0,
                KernelError(*ctx, "num_segments should be a scalar, not shape ",
                            num_segments_t.shape().DebugString()));
    OP_REQUIRES(ctx, StartsWith(data.shape(), ids_t.shape()),
                KernelError(*ctx, "data.shape = ", data.shape().DebugString(),
                            " does not start with segment_ids.shape = ",
                            ids_t.shape().DebugString()));
    const int64_t num_segments = ReadNumSegments(num_segments_t);
    OP_REQUIRES(ctx, num_segments >= 0,
                KernelError(*ctx, "Input num_segments == ", num_segments,
                            " must not be negative."));
    const std::vector<int64_t> ids = segment::ReadSegmentIds(ids_t);
    for (size_t i = 0; i < ids.size(); ++i) {
      OP_REQUIRES(ctx, ids[i] < num_segments,
                  KernelError(*ctx, "segment_ids", IndexString(ids_t.shape(), i), " = ", ids[i],
                              " is out of range [0, ", num_segments, ")"));
    }
    std::vector<int64_t> dims = {num_segments};
    dims.insert(dims.end(), data.shape().dim_sizes().begin() + ids_t.shape().dims(),
                data.shape().dim_sizes().end());
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    if (output->NumElements() == 0) return;
    const int64_t inner = DimProduct(data.shape(), ids_t.shape().dims(), data.shape().dims());
    segment::DispatchReal(data.dtype(), [&](auto zero) {
      using T = decltype(zero);
      FoldUnsorted<kReduction, T>(ctx, ids, data.data<T>(), inner, num_segments,
                                  output->data<T>());
    });
  }
};

}  // namespace

absl::Status RegisterUnsortedSegmentKernels(KernelRegistry* registry) {
  // TF's op def lets UnsortedSegmentSum (not Max) take int16 ids.
  DFLOW_RETURN_IF_ERROR(registry->Register<UnsortedSegmentReductionOp<UnsortedReduction::kSum>>(
      CpuKernel("UnsortedSegmentSum")
          .TypeConstraint("T", segment::RealTypes())
          .TypeConstraint("Tindices", {DT_INT16, DT_INT32, DT_INT64})
          .TypeConstraint("Tnumsegments", IndexTypes())));
  return registry->Register<UnsortedSegmentReductionOp<UnsortedReduction::kMax>>(
      CpuKernel("UnsortedSegmentMax")
          .TypeConstraint("T", segment::RealTypes())
          .TypeConstraint("Tindices", IndexTypes())
          .TypeConstraint("Tnumsegments", IndexTypes()));
}

}  // namespace dflow
