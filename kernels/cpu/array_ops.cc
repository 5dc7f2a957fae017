// CPU kernels that create, alias or describe tensors: Const, Placeholder, the identity
// family, NoOp, Shape/ShapeN/Size/Rank, Reshape/ExpandDims/Squeeze and
// Fill/ZerosLike/OnesLike. Cast, Concat/Pack/Unpack and Transpose live in their own
// files; RegisterArrayKernels registers them all.
//
// Kernels that only change a shape (Reshape, ExpandDims, Squeeze, the identities) return
// a view of their input's buffer (Tensor::Reshaped) and never copy.
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// ---------------------------------------------------------------------------------------
// Sources: Const, Placeholder.

// Decodes `value` once; every Compute hands out the same buffer.
class ConstOp : public CheapOpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    // Read the attr in place: constants can be large, so avoid GetAttr's copy.
    const auto& attrs = ctx->def().attr();
    auto it = attrs.find("value");
    OP_REQUIRES(ctx, it != attrs.end() && it->second.has_tensor(),
                absl::InvalidArgumentError(
                    absl::StrCat("Node '", ctx->name(), "' (Const): missing tensor attr 'value'")));
    const TensorProto& proto = it->second.tensor();
    const DataType dtype = ctx->output_types()[0];
    OP_REQUIRES(ctx, proto.dtype() == dtype,
                absl::InvalidArgumentError(absl::StrCat(
                    "Node '", ctx->name(), "' (Const): Type mismatch between value (",
                    DataTypeString(proto.dtype()), ") and dtype (", DataTypeString(dtype), ")")));
    absl::StatusOr<Tensor> tensor = Tensor::FromProto(ctx->allocator(), proto);
    OP_REQUIRES_OK(ctx,
                   Annotate(tensor.status(), absl::StrCat("Node '", ctx->name(), "' (Const): ")));
    tensor_ = *std::move(tensor);
  }

  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, tensor_); }

 private:
  Tensor tensor_;  // read-only after construction
};

// Runs only when nothing was fed: always an error, in TF's words.
class PlaceholderOp : public CheapOpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    if (ctx->HasAttr("shape")) OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::string message = absl::StrCat("You must feed a value for placeholder tensor '", name(),
                                       "' with dtype ", DataTypeString(output_type(0)));
    // TF leaves the shape out for unknown ranks and scalars.
    if (shape_.rank_known() && shape_.rank() > 0) {
      absl::StrAppend(&message, " and shape ", shape_.ToString());
    }
    ctx->SetStatus(absl::InvalidArgumentError(message));
  }

 private:
  PartialShape shape_;  // unknown rank unless the attr says otherwise
};

// ---------------------------------------------------------------------------------------
// Pass-through kernels.

// Identity, StopGradient, PreventGradient, PlaceholderWithDefault: output 0 is input 0.
class IdentityOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// A buffer no one else holds: the input itself when this node is its only owner,
// otherwise a copy.
class SnapshotOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorShape shape = ctx->input(0).shape();
    if (ctx->ForwardInputToOutput(0, 0, shape) != nullptr) return;
    const Tensor& input = ctx->input(0);
    if (!IsCopyableType(input.dtype())) {
      ctx->set_output(0, input);  // resource/variant handles: nothing to copy
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    CopyTensorContents(ctx, input, *output);
  }
};

// ---------------------------------------------------------------------------------------
// Shape, ShapeN, Size, Rank.

class ShapeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {  // one for Shape, N for ShapeN
      const TensorShape& shape = ctx->input(i).shape();
      OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(i, TensorShape{shape.dims()}));
      OP_REQUIRES_OK(ctx, WriteShape(*ctx, shape, *out));
    }
  }
};

class SizeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int64_t size = input.NumElements();
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape{}));
    if (out->dtype() == DT_INT64) {
      out->scalar<int64_t>() = size;
      return;
    }
    OP_REQUIRES(ctx, size <= std::numeric_limits<int32_t>::max(),
                KernelError(*ctx,
                            "Number of elements was larger than representable by 32-bit "
                            "output type: shape ",
                            input.shape().DebugString(), " has ", size, " elements"));
    out->scalar<int32_t>() = static_cast<int32_t>(size);
  }
};

class RankOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape{}));
    out->scalar<int32_t>() = ctx->input(0).shape().dims();
  }
};

// ---------------------------------------------------------------------------------------
// Reshape, ExpandDims, Squeeze: views of the input buffer.

// The shape `requested` (at most one -1) describes for a tensor of shape `input`.
absl::StatusOr<TensorShape> ResolveReshape(const OpKernelContext& ctx, const TensorShape& input,
                                           absl::Span<const int64_t> requested) {
  const auto describe = [&] {
    return absl::StrCat(" (input shape ", input.DebugString(), ", requested shape ",
                        DimsString(requested), ")");
  };
  std::vector<int64_t> dims(requested.begin(), requested.end());
  int unknown = -1;
  int64_t product = 1;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) {
        return KernelError(ctx, "Only one input size may be -1, not both ", unknown, " and ", i,
                           describe());
      }
      unknown = i;
    } else if (dims[i] < 0) {
      return KernelError(ctx, "Size ", i, " must be non-negative, not ", dims[i], describe());
    } else if (__builtin_mul_overflow(product, dims[i], &product)) {
      return KernelError(ctx, "Requested shape has too many elements", describe());
    }
  }
  const int64_t n = input.num_elements();
  if (unknown >= 0) {
    if (product == 0) {
      return KernelError(ctx,
                         "Reshape cannot infer the missing input size for an empty tensor "
                         "unless all specified input sizes are non-zero",
                         describe());
    }
    if (n % product != 0) {
      return KernelError(ctx, "Input to reshape is a tensor with ", n,
                         " values, but the requested shape requires a multiple of ", product,
                         describe());
    }
    dims[unknown] = n / product;
    product = n;
  }
  if (product != n) {
    return KernelError(ctx, "Input to reshape is a tensor with ", n,
                       " values, but the requested shape has ", product, describe());
  }
  return TensorShape(dims);
}

class ReshapeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    OP_REQUIRES(ctx, sizes.shape().dims() == 1,
                KernelError(*ctx, "sizes input must be 1-D, not ", sizes.shape().DebugString(),
                            " (input shape ", input.shape().DebugString(), ")"));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape,
                        ResolveReshape(*ctx, input.shape(), ReadIndices(sizes)));
    ctx->set_output(0, input.Reshaped(shape));
  }
};

class ExpandDimsOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dim_tensor = ctx->input(1);
    OP_REQUIRES(ctx, dim_tensor.NumElements() == 1,
                KernelError(*ctx, "'dim' must be a tensor with a single value, got shape ",
                            dim_tensor.shape().DebugString()));
    const int rank = input.shape().dims();
    int64_t dim = ReadIndices(dim_tensor)[0];
    OP_REQUIRES(ctx, dim >= -1 - rank && dim <= rank,
                KernelError(*ctx, "Tried to expand dim index ", dim, " for tensor with ", rank,
                            " dimensions (input shape ", input.shape().DebugString(), ")"));
    if (dim < 0) dim += rank + 1;
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims.insert(dims.begin() + dim, 1);
    ctx->set_output(0, input.Reshaped(TensorShape(dims)));
  }
};

class SqueezeOp : public CheapOpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("squeeze_dims", &squeeze_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, std::vector<bool> squeeze, DimsToSqueeze(*ctx, input.shape()));
    std::vector<int64_t> dims;
    for (int i = 0; i < input.shape().dims(); ++i) {
      if (!squeeze[i]) dims.push_back(input.shape().dim_size(i));
    }
    ctx->set_output(0, input.Reshaped(TensorShape(dims)));
  }

 private:
  // Per dim of `shape`, whether it goes: the listed dims, or every size-1 dim.
  absl::StatusOr<std::vector<bool>> DimsToSqueeze(const OpKernelContext& ctx,
                                                  const TensorShape& shape) const {
    const int rank = shape.dims();
    std::vector<bool> squeeze(rank, false);
    if (squeeze_dims_.empty()) {
      for (int i = 0; i < rank; ++i) squeeze[i] = shape.dim_size(i) == 1;
      return squeeze;
    }
    for (int64_t requested : squeeze_dims_) {
      std::optional<int> dim = NormalizeAxis(requested, rank);
      if (!dim) {
        return KernelError(ctx, "Tried to squeeze dim index ", requested, " for tensor with ", rank,
                           " dimensions (input shape ", shape.DebugString(), ")");
      }
      if (shape.dim_size(*dim) != 1) {
        return KernelError(ctx, "Can not squeeze dim[", *dim, "], expected a dimension of 1, got ",
                           shape.dim_size(*dim), " (input shape ", shape.DebugString(), ")");
      }
      squeeze[*dim] = true;
    }
    return squeeze;
  }

  std::vector<int64_t> squeeze_dims_;
};

// ---------------------------------------------------------------------------------------
// Fill, ZerosLike, OnesLike.

// Sets every element of `tensor` (of storage type T) to `value`, in parallel when large.
template <typename T>
void FillElements(OpKernelContext* ctx, const Tensor& tensor, const T& value) {
  T* data = tensor.data<T>();
  ParallelForElements(
      ctx, tensor.NumElements(), CopyCost<T>(),
      [data, &value](int64_t begin, int64_t end) { std::fill(data + begin, data + end, value); });
}

// The input's buffer when this node owns it alone (it is overwritten), else a new one.
absl::StatusOr<Tensor*> ReuseInputOrAllocate(OpKernelContext* ctx) {
  const TensorShape shape = ctx->input(0).shape();
  Tensor* output = ctx->ForwardInputToOutput(0, 0, shape);
  if (output != nullptr) return output;
  return ctx->allocate_output(0, shape);
}

class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dims = ctx->input(0);
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, dims.shape().dims() == 1,
                KernelError(*ctx, "dims must be a vector, got shape ", dims.shape().DebugString()));
    OP_REQUIRES(
        ctx, value.shape().dims() == 0,
        KernelError(*ctx, "value must be a scalar, got shape ", value.shape().DebugString()));
    const std::vector<int64_t> requested = ReadIndices(dims);
    absl::StatusOr<TensorShape> shape = TensorShape::Make(requested);
    OP_REQUIRES(ctx, shape.ok(),
                KernelError(*ctx, "dims ", DimsString(requested),
                            " are not a valid shape: ", shape.status().message()));
    OP_REQUIRES_OK(ctx, CheckReplicatedStrings(*ctx, value, *shape));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, *shape));
    DispatchByElementSize(value.dtype(), [&](auto zero) {
      using T = decltype(zero);
      FillElements<T>(ctx, *out, value.scalar<T>());
    });
  }
};

class ZerosLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ReuseInputOrAllocate(ctx));
    // All-zero bytes are zero for every numeric type; strings become empty.
    DispatchByElementSize(out->dtype(), [&](auto zero) {
      using T = decltype(zero);
      FillElements<T>(ctx, *out, T{});
    });
  }
};

class OnesLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ReuseInputOrAllocate(ctx));
    DispatchNumeric(out->dtype(), [&](auto zero) {
      using T = decltype(zero);
      FillElements<T>(ctx, *out, static_cast<T>(1));
    });
  }
};

// ---------------------------------------------------------------------------------------
// Registration.

absl::Status RegisterSourceAndIdentityKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<ConstOp>(CpuKernel("Const")));
  for (const char* op : {"Placeholder", "PlaceholderV2"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<PlaceholderOp>(CpuKernel(op)));
  }
  for (const char* op : {"Identity", "StopGradient", "PreventGradient", "PlaceholderWithDefault"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<IdentityOp>(CpuKernel(op)));
  }
  // IdentityN and NoOp: routing kernels every device shares (control_flow_ops.h).
  return registry->Register<SnapshotOp>(CpuKernel("Snapshot"));
}

absl::Status RegisterShapeKernels(KernelRegistry* registry) {
  for (const char* op : {"Shape", "ShapeN"}) {
    DFLOW_RETURN_IF_ERROR(
        registry->Register<ShapeOp>(CpuKernel(op).TypeConstraint("out_type", IndexTypes())));
  }
  DFLOW_RETURN_IF_ERROR(
      registry->Register<SizeOp>(CpuKernel("Size").TypeConstraint("out_type", IndexTypes())));
  DFLOW_RETURN_IF_ERROR(registry->Register<RankOp>(CpuKernel("Rank")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<ReshapeOp>(CpuKernel("Reshape").TypeConstraint("Tshape", IndexTypes())));
  DFLOW_RETURN_IF_ERROR(registry->Register<ExpandDimsOp>(
      CpuKernel("ExpandDims").TypeConstraint("Tdim", IndexTypes())));
  return registry->Register<SqueezeOp>(CpuKernel("Squeeze"));
}

absl::Status RegisterFillKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<FillOp>(CpuKernel("Fill")
                                     .TypeConstraint("T", CopyableTypes())
                                     .TypeConstraint("index_type", IndexTypes())));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<ZerosLikeOp>(CpuKernel("ZerosLike").TypeConstraint("T", CopyableTypes())));
  return registry->Register<OnesLikeOp>(CpuKernel("OnesLike").TypeConstraint("T", NumericTypes()));
}

}  // namespace

absl::Status RegisterArrayKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterSourceAndIdentityKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterShapeKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterFillKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterCastKernel(registry));
  DFLOW_RETURN_IF_ERROR(RegisterConcatKernels(registry));
  return RegisterTransposeKernel(registry);
}

}  // namespace dflow
