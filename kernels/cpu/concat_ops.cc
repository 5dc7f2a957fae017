// ConcatV2, Concat, Pack and Unpack: data movement along one axis.
//
// Each is a row copy once tensors are viewed as 2-D around the axis: an input of shape
// [d0..dk..dn] concatenated on axis k is [d0*..*d(k-1), dk*..*dn], and output row r is
// the concatenation of row r of every input. Pack is Concat of inputs with a new axis;
// Unpack is the inverse row split.
#include <algorithm>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"

namespace dflow {
namespace {

// Output row r = row r of each input, inputs viewed as [outer, inner[i]].
template <typename T>
void ConcatRows(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs,
                const std::vector<int64_t>& inner, int64_t outer, const Tensor& output) {
  T* dst = output.data<T>();
  if (outer == 1) {  // one big copy per input: parallelise inside each
    for (size_t i = 0; i < inputs.size(); ++i) {
      ParallelCopy<T>(ctx, inputs[i]->data<T>(), dst, inner[i]);
      dst += inner[i];
    }
    return;
  }
  int64_t row = 0;
  for (int64_t n : inner) row += n;
  ParallelForElements(ctx, outer, row * CopyCost<T>(), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* out = dst + r * row;
      for (size_t i = 0; i < inputs.size(); ++i) {
        const T* in = inputs[i]->data<T>() + r * inner[i];
        out = std::copy(in, in + inner[i], out);
      }
    }
  });
}

void ConcatInto(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs,
                const std::vector<int64_t>& inner, int64_t outer, const Tensor& output) {
  if (output.NumElements() == 0) return;
  DispatchByElementSize(output.dtype(), [&](auto zero) {
    ConcatRows<decltype(zero)>(ctx, inputs, inner, outer, output);
  });
}

// OK when `shape` (input `index`) matches `first` everywhere but `axis`.
absl::Status CheckConcatShape(const OpKernelContext& ctx, const TensorShape& first,
                              const TensorShape& shape, int index, int axis) {
  const auto describe = [&] {
    return absl::StrCat("shape[0] = ", first.DebugString(), " vs. shape[", index,
                        "] = ", shape.DebugString());
  };
  if (shape.dims() != first.dims()) {
    return KernelError(ctx, "Ranks of all input tensors should match: ", describe());
  }
  for (int d = 0; d < first.dims(); ++d) {
    if (d != axis && shape.dim_size(d) != first.dim_size(d)) {
      return KernelError(ctx, "Dimension ", d, " in both shapes must be equal: ", describe());
    }
  }
  return absl::OkStatus();
}

// ConcatV2 (values..., axis) and Concat (concat_dim, values...).
template <bool kAxisFirst>
class ConcatOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int first_value = kAxisFirst ? 1 : 0;
    OP_ASSIGN_OR_RETURN(
        ctx, int axis,
        ReadAxis(*ctx, ctx->input(kAxisFirst ? 0 : n), ctx->input(first_value).shape()));
    const TensorShape& first = ctx->input(first_value).shape();
    std::vector<const Tensor*> inputs;
    std::vector<int64_t> inner;
    int64_t axis_size = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& input = ctx->input(first_value + i);
      OP_REQUIRES_OK(ctx, CheckConcatShape(*ctx, first, input.shape(), i, axis));
      inputs.push_back(&input);
      inner.push_back(DimProduct(input.shape(), axis, input.shape().dims()));
      OP_REQUIRES(ctx, !__builtin_add_overflow(axis_size, input.shape().dim_size(axis), &axis_size),
                  KernelError(*ctx, "output dimension ", axis, " overflows int64 at input ", i));
    }
    std::vector<int64_t> dims(first.dim_sizes().begin(), first.dim_sizes().end());
    dims[axis] = axis_size;
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    ConcatInto(ctx, inputs, inner, DimProduct(first, 0, axis), *output);
  }

 private:
  // The concatenation axis in [0, rank of `first`).
  static absl::StatusOr<int> ReadAxis(const OpKernelContext& ctx, const Tensor& axis_tensor,
                                      const TensorShape& first) {
    const char* name = kAxisFirst ? "concat_dim" : "axis";
    if (axis_tensor.NumElements() != 1 || axis_tensor.shape().dims() > 1) {
      return KernelError(ctx, name, " tensor should be a scalar integer, but got shape ",
                         axis_tensor.shape().DebugString());
    }
    const int rank = first.dims();
    if (rank == 0) {
      return KernelError(ctx, "Can't concatenate scalars (use tf.stack instead)");
    }
    const int64_t value = ReadIndices(axis_tensor)[0];
    std::optional<int> axis = NormalizeAxis(value, rank);
    if (!axis) {
      return KernelError(ctx, "Expected concatenating dimensions in the range [", -rank, ", ", rank,
                         "), but got ", value, " (shape[0] = ", first.DebugString(), ")");
    }
    return *axis;
  }
};

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_attr_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& first = ctx->input(0);
    const int out_rank = first.shape().dims() + 1;
    std::optional<int> axis = NormalizeAxis(axis_attr_, out_rank);
    OP_REQUIRES(ctx, axis.has_value(),
                KernelError(*ctx, "axis = ", axis_attr_, " not in [", -out_rank, ", ", out_rank,
                            ") (values[0].shape = ", first.shape().DebugString(), ")"));
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < n; ++i) {
      const Tensor& input = ctx->input(i);
      OP_REQUIRES(ctx, input.shape() == first.shape(),
                  KernelError(*ctx, "Shapes of all inputs must match: values[0].shape = ",
                              first.shape().DebugString(), " != values[", i,
                              "].shape = ", input.shape().DebugString()));
      inputs.push_back(&input);
    }
    std::vector<int64_t> dims(first.shape().dim_sizes().begin(), first.shape().dim_sizes().end());
    dims.insert(dims.begin() + *axis, n);
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    if (n == 1) {  // only a new axis of size 1: a view
      ctx->set_output(0, first.Reshaped(shape));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    const std::vector<int64_t> inner(n, DimProduct(first.shape(), *axis, first.shape().dims()));
    ConcatInto(ctx, inputs, inner, DimProduct(first.shape(), 0, *axis), *output);
  }

 private:
  int64_t axis_attr_ = 0;
};

// Output i = input[..., i, ...] with the input viewed as [outer, num, inner].
template <typename T>
void UnpackRows(OpKernelContext* ctx, const Tensor& input, const std::vector<Tensor*>& outputs,
                int64_t outer, int64_t inner) {
  const int64_t num = static_cast<int64_t>(outputs.size());
  const T* src = input.data<T>();
  ParallelForElements(ctx, outer * num, inner * CopyCost<T>(), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t row = unit / num;
      const T* in = src + unit * inner;
      std::copy(in, in + inner, outputs[unit % num]->data<T>() + row * inner);
    }
  });
}

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_attr_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.shape().dims();
    const int num = ctx->num_outputs();
    std::optional<int> axis = NormalizeAxis(axis_attr_, rank);
    OP_REQUIRES(ctx, axis.has_value(),
                KernelError(*ctx, "axis = ", axis_attr_, " not in [", -rank, ", ", rank,
                            ") (input shape ", input.shape().DebugString(), ")"));
    OP_REQUIRES(ctx, input.shape().dim_size(*axis) == num,
                KernelError(*ctx, "Input shape axis ", *axis, " must equal ", num, ", got shape ",
                            input.shape().DebugString()));
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims.erase(dims.begin() + *axis);
    const TensorShape shape(dims);
    if (num == 1) {  // dropping a size-1 axis: a view
      ctx->set_output(0, input.Reshaped(shape));
      return;
    }
    std::vector<Tensor*> outputs;
    for (int i = 0; i < num; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(i, shape));
      outputs.push_back(output);
    }
    if (shape.num_elements() == 0) return;
    DispatchByElementSize(input.dtype(), [&](auto zero) {
      UnpackRows<decltype(zero)>(ctx, input, outputs, DimProduct(input.shape(), 0, *axis),
                                 DimProduct(input.shape(), *axis + 1, rank));
    });
  }

 private:
  int64_t axis_attr_ = 0;
};

}  // namespace

absl::Status RegisterConcatKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<ConcatOp<false>>(CpuKernel("ConcatV2")
                                              .TypeConstraint("T", CopyableTypes())
                                              .TypeConstraint("Tidx", IndexTypes())));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<ConcatOp<true>>(CpuKernel("Concat").TypeConstraint("T", CopyableTypes())));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<PackOp>(CpuKernel("Pack").TypeConstraint("T", CopyableTypes())));
  return registry->Register<UnpackOp>(CpuKernel("Unpack").TypeConstraint("T", CopyableTypes()));
}

}  // namespace dflow
