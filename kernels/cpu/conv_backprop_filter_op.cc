// Conv2DBackpropFilter for float (the filter gradient of every CNN training step) on
// oneDNN's convolution backward-weights primitive.
//
// oneDNN computes diff_weights from the forward input (src) and out_backprop (diff_dst).
// The weights' layout is the primitive's choice (format any); given as HWIO too, oneDNN
// falls back to an im2col GEMM (gemm:jit) that runs LeNet's first layer (one input
// channel, 28x28, 5x5) at 11 GFLOP/s. NHWC images are given as they are when oneDNN has a
// direct kernel for them; otherwise (NCHW, or no such kernel) their layouts are its
// choice too. Inputs are reordered into the chosen layouts and the result back into HWIO
// [fh, fw, in, out] (weights {out, in, fh, fw} with HWIO strides); where a chosen layout
// is the graph's, nothing is copied. Backward
// primitives need their forward primitive's descriptor as a hint, so one of each is
// built per shape and cached; the batch is split over the threads as
// kernels/cpu/backward_weights.h says.
//
// TF semantics and words (conv_grad_filter_ops.cc): filter_sizes is int32 [4]; strides,
// dilations, padding, explicit_paddings and data_format as for Conv2D; out_backprop must
// have exactly the size a Conv2D of the input would give (checked as for
// Conv2DBackpropInput). NCHW and dilations are accepted (TF's CPU kernel refuses them).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/backward_weights.h"
#include "kernels/cpu/conv_attrs.h"
#include "kernels/cpu/conv_backprop_dims.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

constexpr char kLabel[] = "Conv2DBackpropFilter: ";

struct Geometry {
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  WindowDim rows, cols;

  std::vector<int64_t> Key() const {
    return {batch,     in_depth,  out_depth,      rows.input,    cols.input,
            rows.size, cols.size, rows.output,    cols.output,   rows.pad_before,
            rows.pad_after, cols.pad_before, cols.pad_after};
  }
  double FlopsPerImage() const {
    return 2.0 * static_cast<double>(rows.output * cols.output * out_depth) *
           static_cast<double>(rows.size * cols.size * in_depth);
  }
};

absl::StatusOr<Geometry> MakeGeometry(const ConvAttrs& a, const TensorShape& in,
                                      const std::vector<int64_t>& filter, const TensorShape& out) {
  const ImageLayout& l = a.layout;
  if (in.dims() != 4) return absl::InvalidArgumentError(absl::StrCat(kLabel, "input must be 4-dimensional"));
  if (out.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "out_backprop must be 4-dimensional"));
  }
  if (filter.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "filter_sizes must have 4 values"));
  }
  Geometry g;
  g.batch = in.dim_size(l.batch);
  if (g.batch != out.dim_size(l.batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLabel, "input and out_backprop must have the same batch size. Input batch: ", g.batch,
        ", outbackprop batch: ", out.dim_size(l.batch), ", batch_dim: ", l.batch));
  }
  g.in_depth = in.dim_size(l.channel);
  if (filter[2] != g.in_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Gradients for grouped convolutions are not supported on CPU. Please file a feature "
        "request if you run into this issue. Computed input depth ", g.in_depth,
        " doesn't match filter input depth ", filter[2]));
  }
  g.out_depth = filter[3];
  if (g.out_depth != out.dim_size(l.channel)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "filter and out_backprop must have the same out_depth"));
  }
  g.rows = {in.dim_size(l.height), filter[0], a.strides[0], a.dilations[0], a.explicit_pads[0],
            a.explicit_pads[1]};
  g.cols = {in.dim_size(l.width), filter[1], a.strides[1], a.dilations[1], a.explicit_pads[2],
            a.explicit_pads[3]};
  DFLOW_RETURN_IF_ERROR(
      CheckBackpropDim(kLabel, a.padding, l.height, out.dim_size(l.height), &g.rows));
  DFLOW_RETURN_IF_ERROR(
      CheckBackpropDim(kLabel, a.padding, l.width, out.dim_size(l.width), &g.cols));
  return g;
}

// The HWIO filter as oneDNN weights {out, in, fh, fw}.
absl::StatusOr<dnnl_memory_desc_t> HwioDesc(const Geometry& g) {
  const int64_t fw = g.cols.size, ic = g.in_depth, oc = g.out_depth;
  return onednn::StridedDesc({oc, ic, g.rows.size, fw}, {1, oc, fw * ic * oc, ic * oc});
}

// The backward-weights primitive (and its forward hint) for `src` and `dst` layouts; the
// weights' layout is always the primitive's choice.
absl::StatusOr<std::shared_ptr<const onednn::Primitive>> BackwardWeightsPrimitive(
    const Geometry& g, const dnnl_memory_desc_t& src, const dnnl_memory_desc_t& dst,
    dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(
      dnnl_memory_desc_t weights,
      onednn::AnyLayoutDesc({g.out_depth, g.in_depth, g.rows.size, g.cols.size}));
  const dnnl_dims_t strides = {g.rows.stride, g.cols.stride};
  const dnnl_dims_t dilates = {g.rows.dilation - 1, g.cols.dilation - 1};  // oneDNN counts from 0
  const dnnl_dims_t pad_l = {g.rows.pad_before, g.cols.pad_before};
  const dnnl_dims_t pad_r = {g.rows.pad_after, g.cols.pad_after};
  dnnl_convolution_desc_t forward;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_forward_desc_init(&forward, dnnl_forward_training,
                                                 dnnl_convolution_direct, &src, &weights, nullptr,
                                                 &dst, strides, dilates, pad_l, pad_r),
      "dnnl_dilated_convolution_forward_desc_init"));
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const onednn::Primitive> hint,
                         onednn::MakePrimitive(&forward, engine));
  dnnl_convolution_desc_t backward;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_backward_weights_desc_init(&backward, dnnl_convolution_direct,
                                                          &src, &weights, nullptr, &dst, strides,
                                                          dilates, pad_l, pad_r),
      "dnnl_dilated_convolution_backward_weights_desc_init"));
  return onednn::MakePrimitive(&backward, engine, {}, hint->pd.get());
}

// Whether `p` is one of oneDNN's direct (jit) kernels rather than its im2col GEMM or
// reference fallbacks.
bool IsDirectKernel(const onednn::Primitive& p) {
  const std::string name = p.Implementation();
  return name.find("gemm") == std::string::npos && name.find("ref") == std::string::npos;
}

absl::StatusOr<std::shared_ptr<const BackwardWeightsPlan>> MakeBackwardWeights(
    const Geometry& g, bool nchw, dnnl_engine_t engine) {
  auto plan = std::make_shared<BackwardWeightsPlan>();
  DFLOW_ASSIGN_OR_RETURN(plan->src,
                         onednn::ImageDesc(g.batch, g.in_depth, g.rows.input, g.cols.input, nchw));
  DFLOW_ASSIGN_OR_RETURN(plan->diff_dst, onednn::ImageDesc(g.batch, g.out_depth, g.rows.output,
                                                           g.cols.output, nchw));
  DFLOW_ASSIGN_OR_RETURN(plan->diff_weights, HwioDesc(g));
  // NHWC operands as they are first: oneDNN 2.6 has direct avx512 kernels for them that
  // need no reorder of the images (LeNet-5's filter gradients: 6 -> 16 channels 0.85 ms
  // blocked, where oneDNN picks an avx2 kernel, + 0.13 ms of reorders, against 0.35 ms
  // NHWC; 1 -> 6 channels 0.53 ms + a 0.47 ms reorder of out_backprop against 0.72 ms).
  // NCHW, or a shape with no direct NHWC kernel, gets the layouts oneDNN picks.
  if (!nchw) {
    absl::StatusOr<std::shared_ptr<const onednn::Primitive>> direct =
        BackwardWeightsPrimitive(g, plan->src, plan->diff_dst, engine);
    if (direct.ok() && IsDirectKernel(**direct)) plan->primitive = *std::move(direct);
  }
  if (plan->primitive == nullptr) {
    DFLOW_ASSIGN_OR_RETURN(
        dnnl_memory_desc_t src,
        onednn::AnyLayoutDesc({g.batch, g.in_depth, g.rows.input, g.cols.input}));
    DFLOW_ASSIGN_OR_RETURN(
        dnnl_memory_desc_t dst,
        onednn::AnyLayoutDesc({g.batch, g.out_depth, g.rows.output, g.cols.output}));
    DFLOW_ASSIGN_OR_RETURN(plan->primitive, BackwardWeightsPrimitive(g, src, dst, engine));
  }
  DFLOW_RETURN_IF_ERROR(AddBackwardWeightsReorders(engine, plan.get()));
  return std::shared_ptr<const BackwardWeightsPlan>(std::move(plan));
}

class Conv2DBackpropFilterOp : public OpKernel {
 public:
  explicit Conv2DBackpropFilterOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    const Tensor& out_backprop = ctx->input(2);
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<int64_t> filter,
                        ReadSizeVector(sizes, "Conv2DBackpropFilter", "filter_sizes"));
    absl::StatusOr<Geometry> g = MakeGeometry(attrs_, input.shape(), filter, out_backprop.shape());
    OP_REQUIRES_OK(ctx, g.status());
    OP_ASSIGN_OR_RETURN(ctx, TensorShape filter_shape, OutputShape(*ctx, filter));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, filter_shape));
    if (out->NumElements() == 0) return;
    if (input.NumElements() == 0 || out_backprop.NumElements() == 0) {
      std::fill_n(out->data<float>(), out->NumElements(), 0.0f);
      return;
    }
    OP_REQUIRES_OK(ctx, Run(ctx, *g, input, out_backprop, out));
  }

 private:
  absl::Status Run(OpKernelContext* ctx, const Geometry& g, const Tensor& input,
                   const Tensor& out_backprop, Tensor* out) {
    return RunBackwardWeights(
        ctx, engine_.get(), g.FlopsPerImage(), input, out_backprop,
        [&](int64_t n) {
          Geometry shard = g;
          shard.batch = n;
          return plans_.GetOrCreate(shard.Key(), [&] {
            return MakeBackwardWeights(shard, attrs_.layout.nchw, engine_.get());
          });
        },
        out);
  }

  ConvAttrs attrs_;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<BackwardWeightsPlan> plans_;
};

}  // namespace

absl::Status RegisterConvBackpropFilterKernels(KernelRegistry* registry) {
  return registry->Register<Conv2DBackpropFilterOp>(
      KernelDefBuilder("Conv2DBackpropFilter").Device("CPU").TypeConstraint<float>("T"));
}

}  // namespace dflow
