// GatherNd(params, indices): indices has shape [..., D] with D <= rank(params); each of
// its N rows names a slice params[i0, ..., i{D-1}, :, ...] and the output, of shape
// indices.shape[:-1] + params.shape[D:], holds those slices in row order.
//
// Checks and messages follow TF 2.21's DoGatherNd. A row outside params is an error
// naming it (policy "", DEFAULT or ERROR) or yields a zero slice (IGNORE). TF's CPU
// kernel gathers in parallel shards and reports whichever bad row a shard stored last;
// here it is always the last bad row, which is what TF reports when one shard runs.
#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/nd_index.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// Index depths TF's GatherNdSlice is instantiated for.
constexpr int64_t kMaxIndexDepth = 7;

// Keeps the larger of `bad` and what `last_bad` holds.
void RecordBadRow(std::atomic<int64_t>& last_bad, int64_t bad) {
  int64_t seen = last_bad.load(std::memory_order_relaxed);
  while (bad > seen && !last_bad.compare_exchange_weak(seen, bad)) {
  }
}

// Copies slice SliceOf(row n) of `params` to output row n for each of `rows` rows;
// rows outside params get T{} (zero, or "" for strings). Returns the last such row, or
// -1 when every row was in range.
template <typename T>
int64_t GatherSlices(OpKernelContext* ctx, const T* params, const std::vector<int64_t>& indices,
                     const SliceIndexer& indexer, int64_t depth, int64_t rows, int64_t slice,
                     T* out) {
  std::atomic<int64_t> last_bad{-1};
  const int64_t cost = slice * CopyCost<T>() + depth + 1;
  ParallelForElements(ctx, rows, cost, [&](int64_t begin, int64_t end) {
    int64_t bad = -1;
    for (int64_t n = begin; n < end; ++n) {
      const int64_t s = indexer.SliceOf(indices.data() + n * depth);
      T* dst = out + n * slice;
      if (s < 0) {
        std::fill_n(dst, slice, T{});
        bad = n;
      } else {
        std::copy_n(params + s * slice, slice, dst);
      }
    }
    RecordBadRow(last_bad, bad);
  });
  return last_bad.load();
}

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string policy;
    if (ctx->HasAttr("bad_indices_policy")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("bad_indices_policy", &policy));
    }
    OP_ASSIGN_OR_RETURN(ctx, policy_, ParseBadIndicesPolicy(policy));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices_t = ctx->input(1);
    OP_REQUIRES_OK(ctx, CheckRanks(*ctx, params.shape(), indices_t.shape()));
    const TensorShape& pshape = params.shape();
    const TensorShape& ishape = indices_t.shape();
    const int depth = static_cast<int>(ishape.dim_size(ishape.dims() - 1));
    const TensorShape batch(ishape.dim_sizes().first(ishape.dims() - 1));
    OP_REQUIRES_OK(ctx, CheckIndexSpace(*ctx, params, indices_t.dtype(), batch, depth));
    std::vector<int64_t> dims(batch.dim_sizes().begin(), batch.dim_sizes().end());
    dims.insert(dims.end(), pshape.dim_sizes().begin() + depth, pshape.dim_sizes().end());
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape out_shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, out_shape));
    const int64_t rows = batch.num_elements();
    if (rows == 0) return;
    OP_REQUIRES(ctx, params.NumElements() > 0,
                KernelError(*ctx, "Requested more than 0 entries, but params is empty.  "
                                  "Params shape: ", pshape.DebugString()));
    OP_REQUIRES(ctx, depth <= kMaxIndexDepth,
                KernelError(*ctx, "Only indices.shape[-1] values between 1 and 7 are currently "
                                  "supported.  Requested rank: ", depth));
    const std::vector<int64_t> indices = ReadNdIndices(indices_t);
    const SliceIndexer indexer(pshape.dim_sizes().first(depth));
    const int64_t slice = DimProduct(pshape, depth, pshape.dims());
    int64_t bad = -1;
    DispatchByElementSize(params.dtype(), [&](auto zero) {
      using T = decltype(zero);
      bad = GatherSlices<T>(ctx, params.data<T>(), indices, indexer, depth, rows, slice,
                            output->data<T>());
    });
    OP_REQUIRES(ctx, bad < 0 || policy_ == BadIndicesPolicy::kIgnore,
                KernelError(*ctx, BadIndexRowString(batch, bad, &indices[bad * depth], depth),
                            " does not index into param shape ", pshape.DebugString(),
                            ", node name: ", name()));
  }

 private:
  static absl::Status CheckRanks(const OpKernelContext& ctx, const TensorShape& params,
                                 const TensorShape& indices) {
    if (params.dims() < 1) return KernelError(ctx, "params must be at least a vector");
    if (indices.dims() < 1) return KernelError(ctx, "indices must be at least a vector");
    const int64_t depth = indices.dim_size(indices.dims() - 1);
    if (depth > params.dims()) {
      return KernelError(ctx, "index innermost dimension length must be <= params rank; saw: ",
                         depth, " vs. ", params.dims());
    }
    return absl::OkStatus();
  }

  // TF's limits on how many rows and elements its Index type can address.
  static absl::Status CheckIndexSpace(const OpKernelContext& ctx, const Tensor& params,
                                      DataType index_dtype, const TensorShape& batch,
                                      int depth) {
    const int64_t int_max = std::numeric_limits<int>::max();
    if (batch.num_elements() > int_max) {
      return KernelError(ctx, "indices has too many elements for int indexing: ",
                         batch.num_elements(), " > ", int_max);
    }
    const int64_t index_max = MaxIndexValue(index_dtype);
    if (params.NumElements() > index_max) {
      return KernelError(ctx, "params.NumElements() too large for ", DataTypeString(index_dtype),
                         " indexing: ", params.NumElements(), " > ", index_max);
    }
    const int64_t slice = DimProduct(params.shape(), depth, params.shape().dims());
    if (slice > index_max) {
      return KernelError(ctx, "slice size is too large for indexing: ", slice, " > ", index_max);
    }
    return absl::OkStatus();
  }

  BadIndicesPolicy policy_ = BadIndicesPolicy::kDefault;
};

// TF 2.21's CPU list: every type with a fixed element size or strings (no float8,
// resource or variant here).
std::vector<DataType> GatherNdParamTypes() {
  std::vector<DataType> types = NumericTypes();
  types.insert(types.end(), {DT_HALF, DT_BFLOAT16, DT_COMPLEX64, DT_COMPLEX128, DT_STRING,
                             DT_QINT8, DT_QUINT8, DT_QINT32});
  return types;
}

}  // namespace

absl::Status RegisterGatherNdKernels(KernelRegistry* registry) {
  return registry->Register<GatherNdOp>(CpuKernel("GatherNd")
                                            .TypeConstraint("Tparams", GatherNdParamTypes())
                                            .TypeConstraint("Tindices",
                                                            {DT_INT16, DT_INT32, DT_INT64}));
}

}  // namespace dflow
