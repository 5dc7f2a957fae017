// Conv2DBackpropInput for float (transposed convolution: Keras Conv2DTranspose, U-Net
// decoders) on oneDNN's deconvolution primitive.
//
// The gradient of a convolution with respect to its input is oneDNN's deconvolution
// forward with the same strides, dilations and pads: its source is out_backprop, its
// destination the input-shaped result, and its weights {in, out, fh, fw} are the HWIO
// filter [fh, fw, in, out] read with swapped channel strides (no copy, no spatial flip).
// The deconvolution is a forward primitive, so it needs no forward "hint" primitive as
// the convolution backward-data one does. As in conv_ops.cc, activations stay in the
// graph's layout, the filter is reordered once per value (PackedWeightsCache),
// primitives are cached per sub-batch shape and the batch is split over the pool.
//
// TF semantics and words (conv_grad_input_ops.cc, conv_grad_shape_utils.cc):
// input_sizes is int32 [4] (or [2]: rows and columns, batch and depth from the other
// inputs); strides/dilations/padding/explicit_paddings/data_format as for Conv2D;
// out_backprop must have exactly the size a Conv2D of input_sizes would give. TF's CPU
// kernel refuses NCHW and dilations above 1 as unimplemented; oneDNN has no such limit,
// so they are accepted here (as Conv2D does). Grouped filters are refused as on TF's
// CPU.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/conv_attrs.h"
#include "kernels/cpu/conv_backprop_dims.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// TF names the CPU kernel so in its dimension errors.
constexpr char kLabel[] = "Conv2DCustomBackpropInput: ";

// The sizes of one call: `rows`/`cols` describe the forward convolution (input = the
// result's size, output = out_backprop's).
struct Geometry {
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  WindowDim rows, cols;

  double FlopsPerImage() const {
    return 2.0 * static_cast<double>(rows.output * cols.output * out_depth) *
           static_cast<double>(rows.size * cols.size * in_depth);
  }
  std::vector<int64_t> Key(int64_t n) const {
    return {n,
            in_depth,
            out_depth,
            rows.input,
            cols.input,
            rows.size,
            cols.size,
            rows.output,
            cols.output,
            rows.pad_before,
            rows.pad_after,
            cols.pad_before,
            cols.pad_after};
  }
};

// TF's Conv2DBackpropComputeInputShape: the result's dims in data_format order.
absl::StatusOr<std::vector<int64_t>> InputDims(const ConvAttrs& a, const Tensor& sizes,
                                               const TensorShape& filter,
                                               const TensorShape& out_backprop) {
  DFLOW_ASSIGN_OR_RETURN(const std::vector<int64_t> v,
                         ReadSizeVector(sizes, "Conv2DBackpropInput", "input_sizes"));
  if (v.size() == 4) return v;
  if (v.size() == 2) {
    const int64_t depth = filter.dims() == 4 ? filter.dim_size(2) : 0;
    return ImageDims(a.layout, out_backprop.dim_size(a.layout.batch), v[0], v[1], depth);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, "
                   "but got: ",
                   v.size()));
}

// TF's ConvBackpropComputeDimensionsV2 checks, in TF's order, then the CPU kernel's
// refusal of grouped filters.
absl::StatusOr<Geometry> MakeGeometry(const ConvAttrs& a, const std::vector<int64_t>& in,
                                      const TensorShape& filter, const TensorShape& out) {
  const ImageLayout& l = a.layout;
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "filter must be 4-dimensional"));
  }
  Geometry g;
  g.batch = in[l.batch];
  if (g.batch != out.dim_size(l.batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLabel, "input and out_backprop must have the same batch size. Input batch: ", g.batch,
        ", outbackprop batch: ", out.dim_size(l.batch), ", batch_dim: ", l.batch));
  }
  g.in_depth = in[l.channel];
  const int64_t filter_depth = filter.dim_size(2);
  if (filter_depth <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "filter depth must be strictly greated than zero"));
  }
  if (g.in_depth % filter_depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "input depth must be evenly divisible by filter depth"));
  }
  g.out_depth = filter.dim_size(3);
  if (g.out_depth != out.dim_size(l.channel)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "filter and out_backprop must have the same out_depth"));
  }
  g.rows = {in[l.height],   filter.dim_size(0), a.strides[0],
            a.dilations[0], a.explicit_pads[0], a.explicit_pads[1]};
  g.cols = {in[l.width],    filter.dim_size(1), a.strides[1],
            a.dilations[1], a.explicit_pads[2], a.explicit_pads[3]};
  DFLOW_RETURN_IF_ERROR(
      CheckBackpropDim(kLabel, a.padding, l.height, out.dim_size(l.height), &g.rows));
  DFLOW_RETURN_IF_ERROR(
      CheckBackpropDim(kLabel, a.padding, l.width, out.dim_size(l.width), &g.cols));
  if (g.in_depth != filter_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Gradients for grouped convolutions are not supported on CPU. Please file a feature "
        "request if you run into this issue. Computed input depth ",
        g.in_depth, " doesn't match filter input depth ", filter_depth));
  }
  return g;
}

// The HWIO filter [fh, fw, in, out] as deconvolution weights {in, out, fh, fw}: the
// deconvolution's output channels are the convolution's input channels.
absl::StatusOr<dnnl_memory_desc_t> WeightsDesc(const Geometry& g, bool any_layout) {
  const int64_t fh = g.rows.size, fw = g.cols.size, ic = g.in_depth, oc = g.out_depth;
  if (!any_layout) return onednn::StridedDesc({ic, oc, fh, fw}, {oc, 1, fw * ic * oc, ic * oc});
  return onednn::AnyLayoutDesc({ic, oc, fh, fw});
}

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakeDeconvPrimitive(const Geometry& g,
                                                                             bool nchw, int64_t n,
                                                                             dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src,
                         onednn::ImageDesc(n, g.out_depth, g.rows.output, g.cols.output, nchw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst,
                         onednn::ImageDesc(n, g.in_depth, g.rows.input, g.cols.input, nchw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t weights, WeightsDesc(g, /*any_layout=*/true));
  const dnnl_dims_t strides = {g.rows.stride, g.cols.stride};
  // oneDNN counts dilation from 0 (TF's 1 is no dilation).
  const dnnl_dims_t dilates = {g.rows.dilation - 1, g.cols.dilation - 1};
  const dnnl_dims_t pad_l = {g.rows.pad_before, g.cols.pad_before};
  const dnnl_dims_t pad_r = {g.rows.pad_after, g.cols.pad_after};
  dnnl_deconvolution_desc_t desc;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_deconvolution_forward_desc_init(&desc, dnnl_forward_inference,
                                                   dnnl_deconvolution_direct, &src, &weights,
                                                   nullptr, &dst, strides, dilates, pad_l, pad_r),
      "dnnl_dilated_deconvolution_forward_desc_init"));
  return onednn::MakePrimitive(&desc, engine);
}

// A primitive for one shard size and the filter in the layout it wants.
struct Plan {
  std::shared_ptr<const onednn::Primitive> primitive;
  std::shared_ptr<const onednn::PackedWeights> packed;  // null: the filter as it is
  const void* weights = nullptr;
  const dnnl_memory_desc_t* WeightsMd() const { return primitive->Md(dnnl_query_weights_md); }
};

class Conv2DBackpropInputOp : public OpKernel {
 public:
  explicit Conv2DBackpropInputOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
    filter_constant_ = IsConstantInput(*c, 1);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& out_backprop = ctx->input(2);
    OP_REQUIRES(
        ctx, out_backprop.shape().dims() == 4,
        KernelError(*ctx, "input_sizes must be 4-dimensional, got: ", out_backprop.shape().dims()));
    absl::StatusOr<std::vector<int64_t>> in =
        InputDims(attrs_, ctx->input(0), filter.shape(), out_backprop.shape());
    OP_REQUIRES_OK(ctx, in.status());  // TF's words already name the op
    // Negative or overflowing sizes: a clean error before any geometry.
    OP_ASSIGN_OR_RETURN(ctx, TensorShape in_shape, OutputShape(*ctx, *in));
    absl::StatusOr<Geometry> g = MakeGeometry(attrs_, *in, filter.shape(), out_backprop.shape());
    OP_REQUIRES_OK(ctx, g.status());
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, in_shape));
    if (out->NumElements() == 0) return;
    if (out_backprop.NumElements() == 0) {  // no output pixel or channel: a zero gradient
      std::fill_n(out->data<float>(), out->NumElements(), 0.0f);
      return;
    }
    OP_REQUIRES_OK(ctx, Run(ctx, *g, *out));
  }

 private:
  absl::Status Run(OpKernelContext* ctx, const Geometry& g, const Tensor& out) {
    const Tensor& filter = ctx->input(1);
    const onednn::BatchSplit split =
        onednn::SplitBatch(g.batch, g.FlopsPerImage(), NumThreads(ctx));
    const int64_t last = g.batch - (split.shards - 1) * split.block;
    DFLOW_ASSIGN_OR_RETURN(Plan full, MakePlan(g, split.block, filter));
    Plan rest = full;
    if (last != split.block) {
      DFLOW_ASSIGN_OR_RETURN(rest, MakePlan(g, last, filter));
    }
    const int64_t src_image = g.out_depth * g.rows.output * g.cols.output;
    const int64_t dst_image = g.in_depth * g.rows.input * g.cols.input;
    const float* src = ctx->input(2).data<float>();
    float* dst = out.data<float>();
    return onednn::RunShards(ctx, g.batch, split, g.FlopsPerImage(), [&](int64_t first, int64_t n) {
      const Plan& plan = n == split.block ? full : rest;
      const onednn::Primitive& p = *plan.primitive;
      return onednn::Execute(p, engine_.get(),
                             {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), src + first * src_image},
                              {DNNL_ARG_WEIGHTS, plan.WeightsMd(), plan.weights},
                              {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), dst + first * dst_image}});
    });
  }

  absl::StatusOr<Plan> MakePlan(const Geometry& g, int64_t n, const Tensor& filter) {
    Plan plan;
    DFLOW_ASSIGN_OR_RETURN(plan.primitive, primitives_.GetOrCreate(g.Key(n), [&] {
      return MakeDeconvPrimitive(g, attrs_.layout.nchw, n, engine_.get());
    }));
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t plain, WeightsDesc(g, /*any_layout=*/false));
    DFLOW_ASSIGN_OR_RETURN(plan.packed, packed_filters_.Get(engine_.get(), filter, plain,
                                                            *plan.WeightsMd(), filter_constant_));
    plan.weights = plan.packed != nullptr ? plan.packed->buffer.get() : filter.raw_data();
    return plan;
  }

  ConvAttrs attrs_;
  bool filter_constant_ = false;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
  onednn::PackedWeightsCache packed_filters_;
};

}  // namespace

absl::Status RegisterConvBackpropInputKernels(KernelRegistry* registry) {
  return registry->Register<Conv2DBackpropInputOp>(
      KernelDefBuilder("Conv2DBackpropInput").Device("CPU").TypeConstraint<float>("T"));
}

}  // namespace dflow
