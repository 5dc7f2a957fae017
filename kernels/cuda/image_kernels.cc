// DepthwiseConv2dNative, FusedBatchNorm/V2/V3 and ResizeBilinear / ResizeNearestNeighbor /
// ResizeBicubic on CUDA GPUs (image_kernels.cu), so Keras vision models (MobileNet,
// EfficientNet, U-Net) stay on the GPU. Shapes, attrs and outputs as the CPU kernels
// (kernels/cpu/conv_ops.cc, fused_batch_norm_op.cc, resize_ops.cc, resize_bicubic_op.cc).
//  - DepthwiseConv2dNative: float, NHWC and NCHW, strides, dilations, SAME/VALID/EXPLICIT;
//    one thread per output element (no cuDNN).
//  - FusedBatchNorm*: float, NHWC/NCHW/NDHWC/NCDHW, inference and training (statistics
//    in double, one block per channel).
//  - Resizes: NHWC; the size input is a HostMemory arg, read with ReadIndexTensor.
#include <limits>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/conv_attrs.h"
#include "kernels/cpu/window_geometry.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {
namespace {

class DepthwiseConvOpKernel final : public CudaOpKernel {
 public:
  explicit DepthwiseConvOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    OP_REQUIRES(ctx, input.shape().dims() == 4,
                OpError(*ctx, "input must be 4-dimensional", input.shape().DebugString()));
    OP_REQUIRES(ctx, filter.shape().dims() == 4,
                OpError(*ctx, "filter must be 4-dimensional: ", filter.shape().DebugString()));
    const ImageLayout& l = attrs_.layout;
    const int64_t in_depth = input.shape().dim_size(l.channel);
    OP_REQUIRES(ctx, in_depth == filter.shape().dim_size(2),
                OpError(*ctx, "input and filter must have the same depth: ", in_depth, " vs ",
                        filter.shape().dim_size(2)));
    const int64_t multiplier = filter.shape().dim_size(3);
    WindowDim rows{input.shape().dim_size(l.height), filter.shape().dim_size(0),
                   attrs_.strides[0], attrs_.dilations[0], attrs_.explicit_pads[0],
                   attrs_.explicit_pads[1]};
    WindowDim cols{input.shape().dim_size(l.width), filter.shape().dim_size(1),
                   attrs_.strides[1], attrs_.dilations[1], attrs_.explicit_pads[2],
                   attrs_.explicit_pads[3]};
    OP_REQUIRES_OK(ctx, ComputeWindow(attrs_.padding, &rows));
    OP_REQUIRES_OK(ctx, ComputeWindow(attrs_.padding, &cols));
    WindowGeometry g;
    g.batch = input.shape().dim_size(l.batch);
    g.in_h = rows.input;
    g.in_w = cols.input;
    g.channels = in_depth;
    g.out_h = rows.output;
    g.out_w = cols.output;
    g.window_h = rows.size;
    g.window_w = cols.size;
    g.stride_h = rows.stride;
    g.stride_w = cols.stride;
    g.dilation_h = rows.dilation;
    g.dilation_w = cols.dilation;
    g.pad_top = rows.pad_before;
    g.pad_left = cols.pad_before;
    OP_ASSIGN_OR_RETURN(ctx, TensorShape out_shape,
                        TensorShape::Make(ImageDims(l, g.batch, g.out_h, g.out_w,
                                                    in_depth * multiplier)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchDepthwiseConv(input.data<float>(),
                                                               filter.data<float>(),
                                                               out->data<float>(), g, multiplier,
                                                               l.nchw, stream())));
  }

 private:
  ConvAttrs attrs_;
};

class FusedBatchNormOpKernel final : public CudaOpKernel {
 public:
  explicit FusedBatchNormOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    std::string format;
    OP_REQUIRES_OK(c, c->GetAttr("epsilon", &epsilon_));
    OP_REQUIRES_OK(c, c->GetAttr("is_training", &is_training_));
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    if (c->HasAttr("exponential_avg_factor")) {
      OP_REQUIRES_OK(c, c->GetAttr("exponential_avg_factor", &avg_factor_));
    }
    OP_REQUIRES(c, format == "NHWC" || format == "NCHW" || format == "NDHWC" || format == "NCDHW",
                absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    channels_last_ = format == "NHWC" || format == "NDHWC";
  }

  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES_OK(ctx, CheckShapes(*ctx));
    const ChannelView v = ViewOf(x.shape());
    OP_ASSIGN_OR_RETURN(ctx, Tensor* y, ctx->allocate_output(0, x.shape()));
    float* stats[4];  // batch_mean, batch_variance, reserve_space_1, _2
    for (int i = 0; i < 4; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor* t, ctx->allocate_output(i + 1, TensorShape({v.channels})));
      stats[i] = t->data<float>();
    }
    if (num_outputs() == 6) {  // V3's reserve_space_3: a scalar 0
      OP_ASSIGN_OR_RETURN(ctx, Tensor* reserve, ctx->allocate_output(5, TensorShape({})));
      OP_REQUIRES_OK(ctx, Launch(*ctx, LaunchFillConstant<float>(0.f, reserve->data<float>(), 1,
                                                                 stream())));
    }
    const int64_t c = v.channels;
    if (x.NumElements() == 0) {  // NaN statistics, as TF's kernel
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (int i = 0; i < 4; ++i) {
        OP_REQUIRES_OK(ctx, Launch(*ctx, LaunchFillConstant<float>(i < 2 ? nan : 0.f, stats[i], c,
                                                                   stream())));
      }
      return;
    }
    const float* scale = ctx->input(1).data<float>();
    const float* offset = ctx->input(2).data<float>();
    if (!is_training_) {
      const float* mean = ctx->input(3).data<float>();
      const float* variance = ctx->input(4).data<float>();
      OP_REQUIRES_OK(ctx, Launch(*ctx, LaunchBatchNormAffine(x.data<float>(), scale, offset, mean,
                                                             variance, epsilon_, y->data<float>(),
                                                             v, stream())));
      const size_t bytes = static_cast<size_t>(c) * sizeof(float);
      OP_REQUIRES_OK(ctx, Launch(*ctx, cudaMemcpyAsync(stats[0], mean, bytes, cudaMemcpyDefault,
                                                       stream())));
      OP_REQUIRES_OK(ctx, Launch(*ctx, cudaMemcpyAsync(stats[1], variance, bytes,
                                                       cudaMemcpyDefault, stream())));
      for (int i = 2; i < 4; ++i) {
        OP_REQUIRES_OK(ctx, Launch(*ctx, LaunchFillConstant<float>(0.f, stats[i], c, stream())));
      }
      return;
    }
    const bool read_old = avg_factor_ != 1.0f;
    OP_REQUIRES_OK(ctx, Launch(*ctx, LaunchBatchNormMoments(
                                         x.data<float>(), v, avg_factor_,
                                         read_old ? ctx->input(3).data<float>() : nullptr,
                                         read_old ? ctx->input(4).data<float>() : nullptr,
                                         stats[2], stats[3], stats[0], stats[1], stream())));
    OP_REQUIRES_OK(ctx, Launch(*ctx, LaunchBatchNormAffine(x.data<float>(), scale, offset,
                                                           stats[2], stats[3], epsilon_,
                                                           y->data<float>(), v, stream())));
  }

 private:
  static absl::Status Launch(const OpKernelContext& ctx, cudaError_t error) {
    return LaunchStatus(ctx, error);
  }

  ChannelView ViewOf(const TensorShape& x) const {
    const int axis = channels_last_ ? x.dims() - 1 : 1;
    ChannelView v{1, x.dim_size(axis), 1};
    if (x.num_elements() == 0) return {0, v.channels, 0};
    for (int i = 0; i < x.dims(); ++i) {
      if (i < axis) v.outer *= x.dim_size(i);
      if (i > axis) v.inner *= x.dim_size(i);
    }
    return v;
  }

  // The CPU kernel's checks, in its order and words.
  absl::Status CheckShapes(const OpKernelContext& ctx) const {
    const TensorShape& x = ctx.input(0).shape();
    if (x.dims() != 4 && x.dims() != 5) {
      return OpError(ctx, "input must be 4 or 5-dimensional", x.DebugString());
    }
    const char* names[] = {"scale", "offset", "estimated_mean", "estimated_variance"};
    for (int i = 1; i <= 4; ++i) {
      const TensorShape& s = ctx.input(i).shape();
      if (s.dims() != 1) return OpError(ctx, names[i - 1], " must be 1-dimensional", s.DebugString());
    }
    const int64_t channels = ViewOf(x).channels;
    for (int i = 1; i <= 2; ++i) {
      const int64_t n = ctx.input(i).NumElements();
      if (n != channels) {
        return OpError(ctx, names[i - 1],
                       " must have the same number of elements as the channels of x, got ", n,
                       " and ", channels);
      }
    }
    if (is_training_ && avg_factor_ == 1.0f) return absl::OkStatus();
    const char* prefix = is_training_ ? "When exponential_avg_factor != 1" : "When is_training=false";
    const char* stat_names[] = {"mean", "variance"};
    for (int i = 3; i <= 4; ++i) {
      const int64_t n = ctx.input(i).NumElements();
      if (n != channels) {
        return OpError(ctx, prefix, ", ", stat_names[i - 3],
                       " must have the same number of elements as the channels of x, got ", n,
                       " and ", channels);
      }
    }
    return absl::OkStatus();
  }

  float epsilon_ = 0.0f;
  float avg_factor_ = 1.0f;
  bool is_training_ = true;
  bool channels_last_ = true;
};

enum class ResizeKind { kBilinear, kNearest, kBicubic };

class ResizeOpKernel final : public CudaOpKernel {
 public:
  ResizeOpKernel(OpKernelConstruction* c, ResizeKind kind) : CudaOpKernel(c), kind_(kind) {
    OP_REQUIRES_OK(c, c->GetAttr("align_corners", &align_corners_));
    OP_REQUIRES_OK(c, c->GetAttr("half_pixel_centers", &half_pixel_centers_));
  }

  void ComputeOnGpu(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResizeGeometry g, Validate(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape,
                        TensorShape::Make({g.batch, g.out_h, g.out_w, g.channels}));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return;
    const Tensor& in = ctx->input(0);
    cudaError_t error = cudaSuccess;
    switch (kind_) {
      case ResizeKind::kBilinear:
        error = LaunchResizeBilinear(in.data<float>(), out->data<float>(), g, stream());
        break;
      case ResizeKind::kBicubic:
        error = LaunchResizeBicubic(in.data<float>(), out->data<float>(), g, stream());
        break;
      case ResizeKind::kNearest:
        switch (in.dtype()) {
          case DT_FLOAT: error = LaunchResizeNearest<float>(in.data<float>(), out->data<float>(), g, stream()); break;
          case DT_DOUBLE: error = LaunchResizeNearest<double>(in.data<double>(), out->data<double>(), g, stream()); break;
          case DT_INT32: error = LaunchResizeNearest<int32_t>(in.data<int32_t>(), out->data<int32_t>(), g, stream()); break;
          case DT_INT64: error = LaunchResizeNearest<int64_t>(in.data<int64_t>(), out->data<int64_t>(), g, stream()); break;
          default:
            ctx->SetStatus(OpError(*ctx, "no CUDA kernel for dtype ", DataTypeString(in.dtype())));
            return;
        }
        break;
    }
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  static float Scale(int64_t in, int64_t out, bool align_corners) {
    return (align_corners && out > 1) ? (in - 1) / static_cast<float>(out - 1)
                                      : in / static_cast<float>(out);
  }

  // kernels/cpu/resize_util.h ValidateResize: TF's checks in its order and words.
  absl::StatusOr<ResizeGeometry> Validate(const OpKernelContext& ctx) const {
    if (half_pixel_centers_ && align_corners_) {
      return OpError(ctx, "If half_pixel_centers is True, align_corners must be False.");
    }
    const TensorShape& input = ctx.input(0).shape();
    if (input.dims() != 4) return OpError(ctx, "input must be 4-dimensional", input.DebugString());
    ResizeGeometry g;
    g.batch = input.dim_size(0);
    g.channels = input.dim_size(3);
    if (g.channels <= 0) return OpError(ctx, "image must have at least one channel");
    g.in_h = input.dim_size(1);
    g.in_w = input.dim_size(2);
    if (g.in_h <= 0 || g.in_w <= 0) return OpError(ctx, "input image must be of non-zero size");
    constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
    if (g.in_h >= kInt32Max || g.in_w >= kInt32Max) {
      return OpError(ctx, "input sizes must be between 0 and max int32");
    }
    const Tensor& size = ctx.input(1);
    if (size.shape().dims() != 1) {
      return OpError(ctx, "shape_t must be 1-dimensional", size.shape().DebugString());
    }
    if (size.NumElements() != 2) {
      return OpError(ctx, "shape_t must have two elements", size.shape().DebugString());
    }
    DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> out_size, ReadIndexTensor(gpu(), size));
    g.out_h = out_size[0];
    g.out_w = out_size[1];
    if (g.out_h <= 0 || g.out_w <= 0) return OpError(ctx, "output dimensions must be positive");
    g.height_scale = Scale(g.in_h, g.out_h, align_corners_);
    g.width_scale = Scale(g.in_w, g.out_w, align_corners_);
    g.align_corners = align_corners_;
    g.half_pixel_centers = half_pixel_centers_;
    return g;
  }

  const ResizeKind kind_;
  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

}  // namespace

absl::Status RegisterCudaImageKernels(KernelRegistry* registry) {
  // Dtypes and host-memory args: kernels/sim/gpu_kernel_list.h (GpuKernel(op)).
  DFLOW_RETURN_IF_ERROR(
      registry->Register<DepthwiseConvOpKernel>(GpuKernel("DepthwiseConv2dNative")));
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<FusedBatchNormOpKernel>(GpuKernel(op)));
  }
  const std::pair<const char*, ResizeKind> resizes[] = {
      {"ResizeBilinear", ResizeKind::kBilinear},
      {"ResizeNearestNeighbor", ResizeKind::kNearest},
      {"ResizeBicubic", ResizeKind::kBicubic}};
  for (const auto& [op, kind] : resizes) {
    const ResizeKind k = kind;
    DFLOW_RETURN_IF_ERROR(registry->Register(
        GpuKernel(op),
        [k](OpKernelConstruction* c) { return std::make_unique<ResizeOpKernel>(c, k); }));
  }
  return absl::OkStatus();
}

}  // namespace dflow::cuda
