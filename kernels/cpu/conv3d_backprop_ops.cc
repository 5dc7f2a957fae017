// Conv3D's gradients for float on oneDNN: Conv3DBackpropInputV2 and
// Conv3DBackpropFilterV2, and the deprecated Conv3DBackpropInput/Conv3DBackpropFilter,
// which take the forward input (or filter) tensor itself where V2 takes its shape.
//
// The input gradient is oneDNN's deconvolution forward with the convolution's strides,
// dilations and pads, as conv_backprop_input_op.cc does in 2-D: its source is
// out_backprop, its destination the input-shaped result, its weights the DHWIO filter read
// as {in, out, kd, kh, kw} (conv3d_util.h), packed once per filter value; primitives are
// cached per sub-batch shape and the batch is split over the pool.
//
// The filter gradient is oneDNN's convolution backward-weights primitive, as
// conv_backprop_filter_op.cc does in 2-D: operands in the layouts the primitive picks
// (reordered from and to the graph's where they differ), a forward primitive as its
// hint, the whole batch in one execution (the result sums over the batch).
//
// TF semantics and words (conv_grad_ops_3d.cc, conv_grad_shape_utils.cc): the sizes
// inputs are vectors (input_sizes int32 or int64, filter_sizes int32); the three shapes
// must be 5-D with matching channels, and out_backprop must have the size a Conv3D of the
// input would give. TF labels its dimension errors "Conv3DBackpropInputOp: " and
// "Conv3DBackpropFilterOp: " for V1 and V2 alike. TF's CPU kernels refuse NCDHW and
// dilations; they are accepted here (conv3d_util.h).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/backward_weights.h"
#include "kernels/cpu/conv3d_util.h"
#include "kernels/cpu/conv_backprop_dims.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// TF's checks of the three shapes of the forward convolution (its input, filter and
// out_backprop), in TF's order: the gradient kernels' own, then
// ConvBackpropComputeDimensionsV2's (prefixed with `label`).
absl::StatusOr<Conv3DGeometry> BackpropGeometry(const Conv3DAttrs& a, const char* label,
                                                const TensorShape& input,
                                                const TensorShape& filter,
                                                const TensorShape& out) {
  if (input.dims() != 5) return absl::InvalidArgumentError("input tensor must have 5 dimensions");
  if (filter.dims() != 5) {
    return absl::InvalidArgumentError("filter_sizes tensor must have 5 dimensions");
  }
  if (out.dims() != 5) {
    return absl::InvalidArgumentError("out_backprop tensor must have 5 dimensions");
  }
  const int c = a.ChannelDim();
  if (input.dim_size(c) != filter.dim_size(3)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input and filter_sizes must have the same number of channels. Got ", input.dim_size(c),
        " for input and ", filter.dim_size(3), " for filter_sizes"));
  }
  if (out.dim_size(c) != filter.dim_size(4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out_backprop and filter_sizes must have the same number of channels. Got ",
        out.dim_size(c), " for out_backprop and ", filter.dim_size(4), " for filter_sizes"));
  }
  Conv3DGeometry g;
  g.batch = input.dim_size(0);
  if (g.batch != out.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": input and out_backprop must have the same batch size. Input batch: ", g.batch,
        ", outbackprop batch: ", out.dim_size(0), ", batch_dim: 0"));
  }
  if (filter.dim_size(3) <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": filter depth must be strictly greated than zero"));
  }
  g.in_depth = input.dim_size(c);
  g.out_depth = filter.dim_size(4);
  const std::string prefix = absl::StrCat(label, ": ");
  for (int i = 0; i < 3; ++i) {
    WindowDim& d = g.dims[i];
    d.input = input.dim_size(a.SpatialDim(i));
    d.size = filter.dim_size(i);
    d.stride = a.strides[i];
    d.dilation = a.dilations[i];
    DFLOW_RETURN_IF_ERROR(
        CheckBackpropDim(prefix, a.padding, a.SpatialDim(i), out.dim_size(a.SpatialDim(i)), &d));
  }
  return g;
}

// TF's tensor::MakeShape of a sizes vector (checked to be one by the caller).
absl::StatusOr<TensorShape> ShapeFromSizes(const OpKernelContext& ctx, const Tensor& sizes) {
  const std::vector<int64_t> dims = ReadIndices(sizes);
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("Dimension ", d, " must be >= 0"));
  }
  return OutputShape(ctx, dims);  // an element count past int64: a clean error
}

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakeDeconvPrimitive(
    const Conv3DGeometry& g, bool ncdhw, int64_t n, dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src, OutputVolumeDesc(g, n, ncdhw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst, InputVolumeDesc(g, n, ncdhw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t weights, DeconvWeightsDesc(g, /*any_layout=*/true));
  const Conv3DWindow w = WindowOf(g);
  dnnl_deconvolution_desc_t desc;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_deconvolution_forward_desc_init(&desc, dnnl_forward_inference,
                                                   dnnl_deconvolution_direct, &src, &weights,
                                                   nullptr, &dst, w.strides, w.dilates,
                                                   w.pad_l, w.pad_r),
      "dnnl_dilated_deconvolution_forward_desc_init"));
  return onednn::MakePrimitive(&desc, engine);
}

class Conv3DBackpropInputOp : public OpKernel {
 public:
  explicit Conv3DBackpropInputOp(OpKernelConstruction* c)
      : OpKernel(c), takes_shape_(c->def().op() == "Conv3DBackpropInputV2") {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConv3DAttrs(*c, Conv3DKernelKind::kBackprop));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
    filter_constant_ = IsConstantInput(*c, 1);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& out_backprop = ctx->input(2);
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape in_shape, InputShape(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, const Conv3DGeometry g,
                        BackpropGeometry(attrs_, "Conv3DBackpropInputOp", in_shape,
                                         filter.shape(), out_backprop.shape()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, in_shape));
    if (out->NumElements() == 0) return;
    if (out_backprop.NumElements() == 0) {  // no output pixel or channel: a zero gradient
      std::fill_n(out->data<float>(), out->NumElements(), 0.0f);
      return;
    }
    OP_REQUIRES_OK(ctx, Run(ctx, g, *out));
  }

 private:
  // V2: the shape input_sizes holds; V1: the forward input's shape.
  absl::StatusOr<TensorShape> InputShape(const OpKernelContext& ctx) const {
    const Tensor& sizes = ctx.input(0);
    if (!takes_shape_) return sizes.shape();
    if (sizes.shape().dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape must be a vector of {int32,int64}, got shape ", sizes.shape().DebugString()));
    }
    return ShapeFromSizes(ctx, sizes);
  }

  absl::Status Run(OpKernelContext* ctx, const Conv3DGeometry& g, const Tensor& out) {
    const Tensor& filter = ctx->input(1);
    return RunConv3DShards(ctx, engine_.get(), g, ctx->input(2).data<float>(),
                           g.out_depth * g.OutputVolume(), out.data<float>(),
                           g.in_depth * g.InputVolume(),
                           [&](int64_t n) { return MakePlan(g, n, filter); });
  }

  absl::StatusOr<Conv3DPlan> MakePlan(const Conv3DGeometry& g, int64_t n, const Tensor& filter) {
    DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const onednn::Primitive> primitive,
                           primitives_.GetOrCreate(g.Key(n), [&] {
                             return MakeDeconvPrimitive(g, attrs_.ncdhw, n, engine_.get());
                           }));
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t plain, DeconvWeightsDesc(g, /*any_layout=*/false));
    return PlanWithWeights(std::move(primitive), &packed_filters_, engine_.get(), filter, plain,
                           filter_constant_);
  }

  const bool takes_shape_;
  Conv3DAttrs attrs_;
  bool filter_constant_ = false;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
  onednn::PackedWeightsCache packed_filters_;
};

absl::StatusOr<std::shared_ptr<const BackwardWeightsPlan>> MakeBackwardWeights(
    const Conv3DGeometry& g, bool ncdhw, dnnl_engine_t engine) {
  auto plan = std::make_shared<BackwardWeightsPlan>();
  DFLOW_ASSIGN_OR_RETURN(plan->src, InputVolumeDesc(g, g.batch, ncdhw));
  DFLOW_ASSIGN_OR_RETURN(plan->diff_dst, OutputVolumeDesc(g, g.batch, ncdhw));
  DFLOW_ASSIGN_OR_RETURN(plan->diff_weights, ConvWeightsDesc(g, /*any_layout=*/false));
  const WindowDim* d = g.dims.data();
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src,
                         onednn::AnyLayoutDesc({g.batch, g.in_depth, d[0].input, d[1].input,
                                                d[2].input}));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst,
                         onednn::AnyLayoutDesc({g.batch, g.out_depth, d[0].output, d[1].output,
                                                d[2].output}));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t weights, ConvWeightsDesc(g, /*any_layout=*/true));
  const Conv3DWindow w = WindowOf(g);
  dnnl_convolution_desc_t forward;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_forward_desc_init(&forward, dnnl_forward_training,
                                                 dnnl_convolution_direct, &src, &weights, nullptr,
                                                 &dst, w.strides, w.dilates, w.pad_l, w.pad_r),
      "dnnl_dilated_convolution_forward_desc_init"));
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const onednn::Primitive> hint,
                         onednn::MakePrimitive(&forward, engine));
  dnnl_convolution_desc_t backward;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_backward_weights_desc_init(&backward, dnnl_convolution_direct,
                                                          &src, &weights, nullptr, &dst,
                                                          w.strides, w.dilates, w.pad_l, w.pad_r),
      "dnnl_dilated_convolution_backward_weights_desc_init"));
  DFLOW_ASSIGN_OR_RETURN(plan->primitive,
                         onednn::MakePrimitive(&backward, engine, {}, hint->pd.get()));
  DFLOW_RETURN_IF_ERROR(AddBackwardWeightsReorders(engine, plan.get()));
  return std::shared_ptr<const BackwardWeightsPlan>(std::move(plan));
}

class Conv3DBackpropFilterOp : public OpKernel {
 public:
  explicit Conv3DBackpropFilterOp(OpKernelConstruction* c)
      : OpKernel(c), takes_shape_(c->def().op() == "Conv3DBackpropFilterV2") {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConv3DAttrs(*c, Conv3DKernelKind::kBackprop));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& out_backprop = ctx->input(2);
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape filter_shape, FilterShape(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, const Conv3DGeometry g,
                        BackpropGeometry(attrs_, "Conv3DBackpropFilterOp", input.shape(),
                                         filter_shape, out_backprop.shape()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, filter_shape));
    if (out->NumElements() == 0) return;
    if (input.NumElements() == 0 || out_backprop.NumElements() == 0) {
      std::fill_n(out->data<float>(), out->NumElements(), 0.0f);
      return;
    }
    OP_REQUIRES_OK(ctx, RunBackwardWeights(
                            ctx, engine_.get(), g.FlopsPerImage(), input, out_backprop,
                            [&](int64_t n) {
                              Conv3DGeometry shard = g;
                              shard.batch = n;
                              return plans_.GetOrCreate(g.Key(n), [&] {
                                return MakeBackwardWeights(shard, attrs_.ncdhw, engine_.get());
                              });
                            },
                            out));
  }

 private:
  // V2: the shape filter_sizes holds; V1: the forward filter's shape.
  absl::StatusOr<TensorShape> FilterShape(const OpKernelContext& ctx) const {
    const Tensor& sizes = ctx.input(1);
    if (!takes_shape_) return sizes.shape();
    if (sizes.shape().dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "filter_sizes shape must be rank 1 but is rank ", sizes.shape().dims()));
    }
    return ShapeFromSizes(ctx, sizes);
  }

  const bool takes_shape_;
  Conv3DAttrs attrs_;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<BackwardWeightsPlan> plans_;
};

}  // namespace

absl::Status RegisterConv3DBackpropKernels(KernelRegistry* registry) {
  for (const char* op : {"Conv3DBackpropInput", "Conv3DBackpropInputV2"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<Conv3DBackpropInputOp>(
        KernelDefBuilder(op).Device("CPU").TypeConstraint<float>("T")));
  }
  for (const char* op : {"Conv3DBackpropFilter", "Conv3DBackpropFilterV2"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<Conv3DBackpropFilterOp>(
        KernelDefBuilder(op).Device("CPU").TypeConstraint<float>("T")));
  }
  return absl::OkStatus();
}

}  // namespace dflow
