// DynamicStitch and ParallelDynamicStitch(indices[N], data[N]): merged[indices[m][i]] =
// data[m][i], the inverse of DynamicPartition (tf.gradients of a gather or of
// tf.dynamic_partition write it). Each indices[m] may have any shape; data[m]'s shape is
// indices[m]'s followed by the shape of one merged row, the same for every m. The result
// has max(index) + 1 rows.
//
// TF semantics and words (dynamic_stitch_op.cc): every index must lie in [0, rows)
// ("indices[i] is out of range", i its position in its own tensor), checked before the
// shapes; when an index appears more than once the last occurrence wins (inputs in order,
// then positions in order). TF's ParallelDynamicStitch leaves the winner among duplicates
// unspecified; here it is the same kernel, so it is DynamicStitch's. Rows no index names
// are zero.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// True when `shape` begins with all of `prefix`'s dims.
bool StartsWith(const TensorShape& shape, const TensorShape& prefix) {
  if (shape.dims() < prefix.dims()) return false;
  for (int d = 0; d < prefix.dims(); ++d) {
    if (shape.dim_size(d) != prefix.dim_size(d)) return false;
  }
  return true;
}

// data[m]'s dims after indices[m]'s (one merged row's shape), as a vector.
std::vector<int64_t> RowDims(const Tensor& data, const Tensor& indices) {
  absl::Span<const int64_t> dims = data.shape().dim_sizes();
  return std::vector<int64_t>(dims.begin() + indices.shape().dims(), dims.end());
}

class DynamicStitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    // TF's CheckArgsAndAllocateResult, in its order: the rows, every index, then shapes.
    int64_t max_index = -1;
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = ctx->input(m);
      const int32_t* idx = indices.data<int32_t>();
      for (int64_t i = 0; i < indices.NumElements(); ++i) {
        max_index = std::max<int64_t>(max_index, idx[i]);
      }
    }
    const int64_t rows = max_index + 1;
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = ctx->input(m);
      const int32_t* idx = indices.data<int32_t>();
      for (int64_t i = 0; i < indices.NumElements(); ++i) {
        OP_REQUIRES(ctx, idx[i] >= 0 && idx[i] < rows,
                    KernelError(*ctx, "indices[", i, "] is out of range"));
      }
    }
    const Tensor& data0 = ctx->input(n);
    const Tensor& indices0 = ctx->input(0);
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = ctx->input(m);
      const Tensor& data = ctx->input(n + m);
      OP_REQUIRES(ctx, StartsWith(data.shape(), indices.shape()),
                  KernelError(*ctx, "data[", m, "].shape = ", data.shape().DebugString(),
                              " does not start with indices[", m,
                              "].shape = ", indices.shape().DebugString()));
      OP_REQUIRES(ctx, m == 0 || RowDims(data, indices) == RowDims(data0, indices0),
                  KernelError(*ctx, "Need data[0].shape[", indices0.shape().dims(), ":] = data[", m,
                              "].shape[", indices.shape().dims(),
                              ":], got data[0].shape = ", data0.shape().DebugString(), ", data[", m,
                              "].shape = ", data.shape().DebugString(),
                              ", indices[0].shape = ", indices0.shape().DebugString(), ", indices[",
                              m, "].shape = ", indices.shape().DebugString()));
    }
    std::vector<int64_t> dims = RowDims(data0, indices0);
    dims.insert(dims.begin(), rows);
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return;
    const int64_t row = out->NumElements() / rows;
    DispatchByElementSize(out->dtype(), [&](auto zero) {
      using T = decltype(zero);
      T* dst = out->data<T>();
      std::fill(dst, dst + out->NumElements(), T{});
      // In input order, so that a later duplicate overwrites an earlier one.
      for (int m = 0; m < n; ++m) {
        const Tensor& indices = ctx->input(m);
        const int32_t* idx = indices.data<int32_t>();
        const T* src = ctx->input(n + m).data<T>();
        for (int64_t i = 0; i < indices.NumElements(); ++i) {
          std::copy(src + i * row, src + (i + 1) * row, dst + idx[i] * row);
        }
      }
    });
  }
};

}  // namespace

absl::Status RegisterDynamicStitchKernels(KernelRegistry* registry) {
  for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
    DFLOW_RETURN_IF_ERROR(
        registry->Register<DynamicStitchOp>(CpuKernel(op).TypeConstraint("T", CopyableTypes())));
  }
  return absl::OkStatus();
}

}  // namespace dflow
