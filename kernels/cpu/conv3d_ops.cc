// Conv3D for float (3-D CNNs: video, volumetric segmentation) on oneDNN's convolution
// primitive, the 3-D form of conv_ops.cc's direct path.
//
// Activations stay in the graph's layout (NDHWC or NCDHW) and are never reordered; the
// DHWIO filter [kd, kh, kw, in, out] is described to oneDNN as a strided view
// (conv3d_util.h) and reordered once per value into the layout the primitive prefers
// (PackedWeightsCache: a frozen graph's filter is a Const). Primitives are cached per
// sub-batch shape and the batch is split over the session's pool, each shard running its
// primitive single-threaded (dnnl_util.h says why).
//
// TF semantics and words (conv_ops_3d.cc): input [batch, planes, rows, cols, in],
// filter [kd, kh, kw, in, out], strides and dilations 5 values in data_format order with
// batch and channel entries 1, padding SAME (the odd pad after) or VALID, an empty
// output returns before the channel check. TF's CPU kernel refuses NCDHW and dilations
// as unimplemented; oneDNN has no such limit, so they are accepted (as Conv2D does here).
// A grouped convolution (input depth a multiple of the filter's) is refused, as on TF's
// CPU.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/conv3d_util.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// TF's Conv3DOp::Compute checks, in its order and words, and the output's sizes.
absl::StatusOr<Conv3DGeometry> ForwardGeometry(const Conv3DAttrs& a, const TensorShape& input,
                                               const TensorShape& filter) {
  if (input.dims() != 5) return absl::InvalidArgumentError("input must be 5-dimensional");
  if (filter.dims() != 5) return absl::InvalidArgumentError("filter must be 5-dimensional");
  Conv3DGeometry g;
  g.batch = input.dim_size(0);
  g.in_depth = input.dim_size(a.ChannelDim());
  g.out_depth = filter.dim_size(4);
  const int64_t filter_depth = filter.dim_size(3);
  if (filter_depth == 0) return absl::InvalidArgumentError("filter_depth must be non-zero");
  if (g.in_depth % filter_depth != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input depth must be evenly divisible by filter depth: ", g.in_depth, " vs ",
        filter_depth));
  }
  if (filter.num_elements() == 0) {
    return absl::InvalidArgumentError(
        "filter must not have zero elements (i.e. all dimensions must be non-zero)");
  }
  for (int i = 0; i < 3; ++i) {
    WindowDim& d = g.dims[i];
    d.input = input.dim_size(a.SpatialDim(i));
    d.size = filter.dim_size(i);
    d.stride = a.strides[i];
    d.dilation = a.dilations[i];
    DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &d));
  }
  return g;
}

// The output's dims in data_format order.
std::vector<int64_t> OutputDims(const Conv3DAttrs& a, const Conv3DGeometry& g) {
  std::vector<int64_t> dims(5);
  dims[0] = g.batch;
  dims[a.ChannelDim()] = g.out_depth;
  for (int i = 0; i < 3; ++i) dims[a.SpatialDim(i)] = g.dims[i].output;
  return dims;
}

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakeConvPrimitive(
    const Conv3DGeometry& g, bool ncdhw, int64_t n, dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src, InputVolumeDesc(g, n, ncdhw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst, OutputVolumeDesc(g, n, ncdhw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t weights, ConvWeightsDesc(g, /*any_layout=*/true));
  const Conv3DWindow w = WindowOf(g);
  dnnl_convolution_desc_t desc;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference,
                                                 dnnl_convolution_direct, &src, &weights,
                                                 nullptr, &dst, w.strides, w.dilates, w.pad_l,
                                                 w.pad_r),
      "dnnl_dilated_convolution_forward_desc_init"));
  return onednn::MakePrimitive(&desc, engine);
}

class Conv3DOp : public OpKernel {
 public:
  explicit Conv3DOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConv3DAttrs(*c, Conv3DKernelKind::kForward));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
    filter_constant_ = IsConstantInput(*c, 1);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, const Conv3DGeometry g,
                        ForwardGeometry(attrs_, input.shape(), filter.shape()));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape out_shape, OutputShape(*ctx, OutputDims(attrs_, g)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return;
    const int64_t filter_depth = filter.shape().dim_size(3);
    OP_REQUIRES(ctx, filter_depth == g.in_depth,
                absl::InvalidArgumentError(absl::StrCat(
                    "Number of channels in filter (", filter_depth,
                    ") must match last dimension of input (", g.in_depth, ")")));
    OP_REQUIRES_OK(ctx, Run(ctx, g, *out));
  }

 private:
  absl::Status Run(OpKernelContext* ctx, const Conv3DGeometry& g, const Tensor& out) {
    const Tensor& filter = ctx->input(1);
    return RunConv3DShards(ctx, engine_.get(), g, ctx->input(0).data<float>(),
                           g.in_depth * g.InputVolume(), out.data<float>(),
                           g.out_depth * g.OutputVolume(),
                           [&](int64_t n) { return MakePlan(g, n, filter); });
  }

  absl::StatusOr<Conv3DPlan> MakePlan(const Conv3DGeometry& g, int64_t n, const Tensor& filter) {
    DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const onednn::Primitive> primitive,
                           primitives_.GetOrCreate(g.Key(n), [&] {
                             return MakeConvPrimitive(g, attrs_.ncdhw, n, engine_.get());
                           }));
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t plain, ConvWeightsDesc(g, /*any_layout=*/false));
    return PlanWithWeights(std::move(primitive), &packed_filters_, engine_.get(), filter, plain,
                           filter_constant_);
  }

  Conv3DAttrs attrs_;
  bool filter_constant_ = false;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
  onednn::PackedWeightsCache packed_filters_;
};

}  // namespace

absl::Status RegisterConv3DKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<Conv3DOp>(
      KernelDefBuilder("Conv3D").Device("CPU").TypeConstraint<float>("T")));
  return RegisterConv3DBackpropKernels(registry);
}

}  // namespace dflow
