// SparseToDense(sparse_indices, output_shape, sparse_values, default_value): a dense tensor
// of `default_value` with `sparse_values` (one per index, or one for all) at the indices,
// as TF 2.21's CPU kernel: indices a scalar, a vector (one dim) or a [count, rank] matrix;
// with validate_indices, each index in bounds, in lexicographic order and not repeated,
// checked index by index with TF's texts; without, only bounds ("Indices are not valid
// (out of bounds)"), and a repeated index keeps the last value.
// Values are moved by element size, so one kernel serves every dtype TF registers
// (numbers, bool, string).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

std::string IndexText(const int64_t* index, int64_t rank) {
  return absl::StrCat("[", absl::StrJoin(index, index + rank, ","), "]");
}

// TF's SparseTensor::IndicesValid, one index at a time.
absl::Status ValidateIndices(const OpKernelContext& ctx, const std::vector<int64_t>& indices,
                             int64_t count, int64_t rank, const TensorShape& shape) {
  for (int64_t n = 0; n < count; ++n) {
    const int64_t* index = indices.data() + n * rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (index[d] < 0 || index[d] >= shape.dim_size(d)) {
        return KernelError(ctx, "indices[", n, "] = ", IndexText(index, rank),
                           " is out of bounds: need 0 <= index < ",
                           IndexText(shape.dim_sizes().data(), rank));
      }
    }
    if (n == 0) continue;
    const int64_t* previous = index - rank;
    int order = 0;  // -1: index < previous, 1: index > previous
    for (int64_t d = 0; d < rank && order == 0; ++d) {
      if (index[d] != previous[d]) order = index[d] < previous[d] ? -1 : 1;
    }
    if (order < 0) {
      return KernelError(ctx, "indices[", n, "] = ", IndexText(index, rank),
                         " is out of order. Many sparse ops require sorted indices.\n"
                         "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n");
    }
    if (order == 0) {
      return KernelError(ctx, "indices[", n, "] = ", IndexText(index, rank), " is repeated");
    }
  }
  return absl::OkStatus();
}

template <typename E>
class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_indices", &validate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& dims = ctx->input(1);
    const Tensor& values = ctx->input(2);
    const Tensor& fill = ctx->input(3);
    const int index_rank = indices.shape().dims();
    OP_REQUIRES(ctx, index_rank <= 2,
                KernelError(*ctx, "sparse_indices should be a scalar, vector, or matrix, got "
                                  "shape ", indices.shape().DebugString()));
    const int64_t count = index_rank > 0 ? indices.shape().dim_size(0) : 1;
    const int64_t rank = index_rank > 1 ? indices.shape().dim_size(1) : 1;
    OP_REQUIRES(ctx, dims.shape().dims() == 1,
                KernelError(*ctx, "output_shape must be rank 1, got shape ",
                            dims.shape().DebugString()));
    OP_REQUIRES(ctx, dims.NumElements() == rank,
                KernelError(*ctx, "output_shape has incorrect number of elements: ",
                            dims.NumElements(), " should be: ", rank));
    OP_REQUIRES(ctx, values.shape().dims() == 0 ||
                         (values.shape().dims() == 1 && values.NumElements() == count),
                KernelError(*ctx, "sparse_values has incorrect shape ",
                            values.shape().DebugString(), ", should be [] or [", count, "]"));
    OP_REQUIRES(ctx, fill.shape().dims() == 0,
                KernelError(*ctx, "default_value should be a scalar."));
    absl::StatusOr<TensorShape> shape = TensorShape::Make(ReadIndices(dims));
    OP_REQUIRES(ctx, shape.ok(), KernelError(*ctx, shape.status().message()));
    // A string default copied into every element must fit the session's limits.
    OP_REQUIRES_OK(ctx, CheckReplicatedStrings(*ctx, fill, *shape));
    const std::vector<int64_t> flat_indices = ReadIndices(indices);
    if (validate_) OP_REQUIRES_OK(ctx, ValidateIndices(*ctx, flat_indices, count, rank, *shape));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, *shape));
    E* out = output->data<E>();
    std::fill(out, out + output->NumElements(), fill.data<E>()[0]);
    const bool one_value = values.shape().dims() == 0;
    for (int64_t n = 0; n < count; ++n) {
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = flat_indices[n * rank + d];
        OP_REQUIRES(ctx, i >= 0 && i < shape->dim_size(d),
                    KernelError(*ctx, "Indices are not valid (out of bounds).  Shape: ",
                                shape->DebugString()));
        offset = offset * shape->dim_size(d) + i;
      }
      out[offset] = values.data<E>()[one_value ? 0 : n];
    }
  }

 private:
  bool validate_ = true;
};

}  // namespace

absl::Status RegisterSparseToDenseKernels(KernelRegistry* registry) {
  std::vector<DataType> types = NumericOrHalfTypes();  // with bool
  types.push_back(DT_STRING);
  absl::Status status;
  for (DataType dtype : types) {
    DispatchByElementSize(dtype, [&](auto element) {
      using E = decltype(element);
      if (!status.ok()) return;
      status = registry->Register<SparseToDenseOp<E>>(
          CpuKernel("SparseToDense")
              .TypeConstraint("T", {dtype})
              .TypeConstraint("Tindices", {DT_INT32, DT_INT64}));
    });
  }
  return status;
}

}  // namespace dflow
