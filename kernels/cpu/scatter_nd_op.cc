// ScatterNd(indices, updates, shape): a zero tensor of `shape` with each update slice
// added at the slice its index row names (the inverse of GatherNd); duplicate rows sum.
//
// Checks and messages follow TF 2.21 (ScatterNdOp::Compute, then DoScatterNd's
// PrepareAndValidateInputs), in TF's order. Updates apply one row at a time in row order,
// so float sums round exactly as TF's sequential CPU loop does. Rows outside `shape` are
// skipped; unless the policy is IGNORE, the last of them is then an error naming it
// (TF's CPU loop also runs on and reports the last one).
// "Adding" follows TF's operator+ per dtype: bool ORs, strings concatenate, integers wrap,
// half and bfloat16 add in float and round back after every update.
#include <algorithm>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/nd_index.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// Index depths TF's ScatterNdFunctor is instantiated for (its message still says 5).
constexpr int64_t kMaxIndexDepth = 7;

template <typename T>
void AddInto(T& out, const T& update) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    out = T::FromFloat(out.ToFloat() + update.ToFloat());  // rounded at every step, as TF
  } else if constexpr (std::is_same_v<T, bool>) {
    out = out || update;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wraps like TF instead of signed-overflow UB
    out = static_cast<T>(static_cast<U>(out) + static_cast<U>(update));
  } else {
    out += update;  // floats, complex; strings concatenate
  }
}

// The output shape from the `shape` input, with TF's message for a negative dim.
absl::StatusOr<TensorShape> ScatterShape(const OpKernelContext& ctx, const Tensor& shape_t) {
  const std::vector<int64_t> dims = ReadIndices(shape_t);
  for (int64_t d : dims) {
    if (d < 0) return KernelError(ctx, "Dimension ", d, " must be >= 0");
  }
  return OutputShape(ctx, dims);
}

// TF's ValidEmptyOutputShape: empty indices and updates fit any output; otherwise all
// three must be non-empty.
bool ValidEmptyOutput(int64_t outputs, int64_t indices, int64_t updates) {
  if (indices == 0 && updates == 0) return true;
  return outputs != 0 && indices != 0 && updates != 0;
}

// updates.dim_size(i), or -1 past its rank (TF reads past the rank unchecked; any
// mismatch is what it then reports).
int64_t DimOrNone(const TensorShape& shape, int i) {
  return i < shape.dims() ? shape.dim_size(i) : -1;
}

// ScatterNdOp::Compute's own checks: updates = indices.shape[:-1] + shape[ix:].
absl::Status CheckOpShapes(const OpKernelContext& ctx, const TensorShape& indices,
                           const TensorShape& updates, const TensorShape& shape,
                           const Tensor& shape_t) {
  if (!ValidEmptyOutput(shape_t.NumElements(), indices.num_elements(), updates.num_elements())) {
    return KernelError(ctx, "Indices and updates specified for empty output shape");
  }
  const int outer = indices.dims() - 1;
  for (int i = 0; i < outer; ++i) {
    if (indices.dim_size(i) != DimOrNone(updates, i)) {
      return KernelError(ctx, "Dimensions [0,", outer, ") of indices[shape=",
                         indices.DebugString(), "] must match dimensions [0,", outer,
                         ") of updates[shape=", updates.DebugString(), "]");
    }
  }
  const int64_t ix = indices.dim_size(outer);
  auto inner_mismatch = [&] {
    return KernelError(ctx, "Dimensions [", ix, ",", shape.dims(), ") of input[shape=",
                       shape.DebugString(), "] must match dimensions [", outer, ",",
                       updates.dims(), ") of updates[shape=", updates.DebugString(), "]");
  };
  if (updates.dims() - outer != shape.dims() - ix) return inner_mismatch();
  for (int i = 0; i + outer < updates.dims(); ++i) {
    if (updates.dim_size(i + outer) != shape.dim_size(ix + i)) return inner_mismatch();
  }
  if (shape_t.shape().dims() != 1) return KernelError(ctx, "Shape must be a vector");
  return absl::OkStatus();
}

// TF's ValidateScatterNdUpdateShape (a rank-1 indices counts as one batch dim of depth 1).
absl::Status CheckUpdateShape(const OpKernelContext& ctx, const TensorShape& shape,
                              const TensorShape& indices, const TensorShape& updates) {
  const bool batched = indices.dims() > 1;
  const int64_t slice_dim = batched ? indices.dim_size(indices.dims() - 1) : 1;
  const int batch_dim = batched ? indices.dims() - 1 : 1;
  auto prefix_error = [&] {
    return KernelError(ctx, "Dimensions [0,", batch_dim, ") of indices[shape=",
                       indices.DebugString(), "] must match dimensions [0,", batch_dim,
                       ") of updates[shape=", updates.DebugString(), "]");
  };
  auto suffix_error = [&] {
    return KernelError(ctx, "Dimensions [", slice_dim, ",", shape.dims(), ") of input[shape=",
                       shape.DebugString(), "] must match dimensions [", slice_dim, ",",
                       updates.dims(), ") of updates[shape=", updates.DebugString(), "]");
  };
  if (updates.dims() < batch_dim) return prefix_error();
  if (shape.dims() < slice_dim + (updates.dims() - batch_dim)) return suffix_error();
  if (updates.dims() != batch_dim + shape.dims() - slice_dim) return suffix_error();
  for (int d = 0; d < batch_dim; ++d) {
    if (updates.dim_size(d) != indices.dim_size(d)) return prefix_error();
  }
  for (int d = 0; d < updates.dims() - batch_dim; ++d) {
    if (updates.dim_size(d + batch_dim) != shape.dim_size(d + slice_dim)) return suffix_error();
  }
  return absl::OkStatus();
}

// DoScatterNd's PrepareAndValidateInputs; returns the index depth (slice_dim).
absl::StatusOr<int64_t> CheckScatter(const OpKernelContext& ctx, const TensorShape& shape,
                                     const TensorShape& indices, const TensorShape& updates,
                                     DataType index_dtype) {
  if (shape.dims() < 1) {
    return KernelError(ctx, "Output must be at least 1-D, got shape: ", shape.DebugString());
  }
  if (!ValidEmptyOutput(shape.num_elements(), indices.num_elements(), updates.num_elements())) {
    return KernelError(ctx, "Indices and updates specified for empty output.  indices shape: ",
                       indices.DebugString());
  }
  if (updates.dim_size(0) != indices.dim_size(0)) {
    return KernelError(ctx, "Dimensions [0,1) of indices[shape=", indices.DebugString(),
                       "] = ", indices.dim_size(0), " must match dimensions [0,1) of updates[",
                       "shape=", updates.DebugString(), "] = ", updates.dim_size(0));
  }
  DFLOW_RETURN_IF_ERROR(CheckUpdateShape(ctx, shape, indices, updates));
  const int64_t index_max = MaxIndexValue(index_dtype);
  const std::string index_name = DataTypeString(index_dtype);
  if (indices.num_elements() > index_max) {
    return KernelError(ctx, "indices has too many elements for ", index_name, " indexing: ",
                       indices.num_elements(), " > ", index_max);
  }
  if (shape.dim_size(0) > index_max) {
    return KernelError(ctx, "params_shape[0] too large for ", index_name, " indexing: ",
                       shape.dim_size(0), " > ", index_max);
  }
  const int64_t slice_dim = indices.dims() > 1 ? indices.dim_size(indices.dims() - 1) : 1;
  const int64_t slice = DimProduct(shape, static_cast<int>(slice_dim), shape.dims());
  if (slice > index_max) {
    return KernelError(ctx, "slice size is too large for indexing: ", slice, " > ", index_max);
  }
  return slice_dim;
}

// Adds update row n into the output slice its index row names, for each of `rows` rows,
// skipping rows outside the output. Returns the last such row, or -1.
template <typename T>
int64_t ScatterAdd(const std::vector<int64_t>& indices, const SliceIndexer& indexer,
                   int64_t depth, int64_t rows, int64_t slice, const T* updates, T* out) {
  int64_t bad = -1;
  for (int64_t n = 0; n < rows; ++n) {
    const int64_t s = indexer.SliceOf(indices.data() + n * depth);
    if (s < 0) {
      bad = n;
      continue;
    }
    const T* src = updates + n * slice;
    T* dst = out + s * slice;
    for (int64_t j = 0; j < slice; ++j) AddInto(dst[j], src[j]);
  }
  return bad;
}

template <typename T>
class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string policy;
    if (ctx->HasAttr("bad_indices_policy")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("bad_indices_policy", &policy));
    }
    OP_ASSIGN_OR_RETURN(ctx, policy_, ParseBadIndicesPolicy(policy));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices_t = ctx->input(0);
    const Tensor& updates_t = ctx->input(1);
    const TensorShape& ishape = indices_t.shape();
    const TensorShape& ushape = updates_t.shape();
    OP_REQUIRES(ctx, ishape.dims() >= 1,
                KernelError(*ctx, "Indices shape must have rank at least one. Found:",
                            ishape.DebugString()));
    OP_REQUIRES(ctx, ushape.dims() >= 1,
                KernelError(*ctx, "Updates shape must have rank at least one. Found:",
                            ushape.DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, ScatterShape(*ctx, ctx->input(2)));
    OP_REQUIRES_OK(ctx, CheckOpShapes(*ctx, ishape, ushape, shape, ctx->input(2)));
    OP_ASSIGN_OR_RETURN(ctx, const int64_t depth,
                        CheckScatter(*ctx, shape, ishape, ushape, indices_t.dtype()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return;
    std::fill_n(output->data<T>(), shape.num_elements(), T{});
    OP_REQUIRES(ctx, depth >= 1 && depth <= kMaxIndexDepth,
                KernelError(*ctx, "Only indices.shape[-1] values between 1 and 5 are currently "
                                  "supported.  Requested rank: ", depth));
    const std::vector<int64_t> indices = ReadNdIndices(indices_t);
    const SliceIndexer indexer(shape.dim_sizes().first(depth));
    const int64_t rows = ishape.num_elements() / depth;
    const int64_t bad = ScatterAdd<T>(indices, indexer, depth, rows,
                                      DimProduct(shape, static_cast<int>(depth), shape.dims()),
                                      updates_t.data<T>(), output->data<T>());
    const TensorShape batch(ishape.dim_sizes().first(ishape.dims() - 1));
    OP_REQUIRES(ctx, bad < 0 || policy_ == BadIndicesPolicy::kIgnore,
                KernelError(*ctx, BadIndexRowString(batch, bad, &indices[bad * depth], depth),
                            " does not index into shape ", shape.DebugString()));
  }

 private:
  BadIndicesPolicy policy_ = BadIndicesPolicy::kDefault;
};

template <typename T>
absl::Status RegisterScatterNd(KernelRegistry* registry, DataType dtype) {
  return registry->Register<ScatterNdOp<T>>(CpuKernel("ScatterNd")
                                                .TypeConstraint("T", {dtype})
                                                .TypeConstraint("Tindices", IndexTypes()));
}

}  // namespace

// TF 2.21's CPU list.
absl::Status RegisterScatterNdKernels(KernelRegistry* registry) {
  absl::Status status;
  for (DataType dtype : NumericTypes()) {
    DispatchNumeric(dtype, [&](auto zero) {
      if (status.ok()) status = RegisterScatterNd<decltype(zero)>(registry, dtype);
    });
  }
  DFLOW_RETURN_IF_ERROR(status);
  DFLOW_RETURN_IF_ERROR(RegisterScatterNd<Half>(registry, DT_HALF));
  DFLOW_RETURN_IF_ERROR(RegisterScatterNd<Bfloat16>(registry, DT_BFLOAT16));
  DFLOW_RETURN_IF_ERROR(RegisterScatterNd<std::complex<float>>(registry, DT_COMPLEX64));
  DFLOW_RETURN_IF_ERROR(RegisterScatterNd<std::complex<double>>(registry, DT_COMPLEX128));
  return RegisterScatterNd<std::string>(registry, DT_STRING);
}

}  // namespace dflow
