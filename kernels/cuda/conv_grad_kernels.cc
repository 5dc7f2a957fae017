// Conv2DBackpropInput, Conv2DBackpropFilter, MaxPoolGrad and AvgPoolGrad on CUDA GPUs:
// float, NHWC (NCHW is UNIMPLEMENTED with Conv2D's words, as for the forward ops).
//
// The convolution gradients reuse the forward Conv2D's layout (nn_kernels.cc): im2col
// rows are output pixels, columns (kh, kw, c), and the HWIO filter is the [KH*KW*C, O]
// matrix. So
//   BackpropFilter: dW[K, O] = im2col(x)^T [K, rows] x dy[rows, O], summed over batch
//                   slices by GEMMs with beta = 1;
//   BackpropInput:  cols[rows, K] = dy[rows, O] x W^T [O, K], then col2im adds each
//                   column entry back into the input pixel it came from.
// Column buffers hold at most kColumnBytes per batch slice. A 1x1, stride-1, unpadded
// convolution needs neither im2col nor col2im: x and dx already are [N*H*W, C] matrices.
//
// Sizes and errors are kernels/cpu's (conv_backprop_input_op.cc, conv_backprop_filter_op.cc,
// max_pool_grad_op.cc, avg_pool_grad_op.cc), whose texts are TF's. Their helpers live in
// files this target cannot include (private to other targets), so the few checks are
// repeated here; keep them in step.
#include <cublas_v2.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/conv_attrs.h"
#include "kernels/cpu/conv_backprop_dims.h"
#include "kernels/cpu/window_geometry.h"
#include "kernels/cuda/conv_grad_launchers.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {
namespace {

constexpr int64_t kColumnBytes = int64_t{256} << 20;  // as the forward Conv2D
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// Row-major C[m x n] = op(A) op(B) + beta * C, as the column-major C^T = op(B)^T op(A)^T.
// nn_kernels.cc's GemmRowMajor (file-local there) plus beta, which the filter gradient
// needs to add up batch slices.
absl::Status Sgemm(CudaGpuDevice* gpu, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                   int64_t k, const float* a, const float* b, float beta, float* c) {
  if (m > kMaxInt || n > kMaxInt || k > kMaxInt) {
    return absl::UnimplementedError(
        absl::StrCat("GEMM dims beyond int range: m=", m, " n=", n, " k=", k));
  }
  return gpu->WithCublas([&](cublasContext* handle) -> absl::Status {
    const float alpha = 1.f;
    DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSgemm(
        handle, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
        static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b,
        static_cast<int>(transpose_b ? k : n), a, static_cast<int>(transpose_a ? m : k), &beta,
        c, static_cast<int>(n)));
    return absl::OkStatus();
  });
}

absl::Status Zero(const OpKernelContext& ctx, Tensor* t, cudaStream_t stream) {
  return LaunchStatus(ctx, cudaMemsetAsync(t->raw_data(), 0, t->TotalBytes(), stream));
}

// The NCHW refusal of nn_kernels.cc's ReadWindowAttrs, word for word.
absl::Status NhwcOnly(OpKernelConstruction* c, const ImageLayout& layout) {
  if (!layout.nchw) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat(c->def().op(), " on a CUDA GPU supports data_format NHWC only, not NCHW"));
}

// kernels/cpu/conv_backprop_dims.h's ReadSizeVector, read through ReadIndexTensor: the sizes
// are a HostMemory arg, but one left in device memory is copied back rather than misread.
absl::StatusOr<std::vector<int64_t>> ReadSizeVector(CudaGpuDevice* gpu, const Tensor& sizes,
                                                    absl::string_view op,
                                                    absl::string_view what) {
  if (sizes.shape().dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " input must be 1-dim, not ",
                                                   sizes.shape().dims()));
  }
  return ReadIndexTensor(gpu, sizes);
}

// ---- Convolution gradients. ----

// The forward convolution of one call: rows/cols' input is x's size, output dy's.
struct ConvDims {
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  WindowDim rows, cols;
};

constexpr char kGroupedText[] =
    "Gradients for grouped convolutions are not supported on CPU. Please file a feature "
    "request if you run into this issue. Computed input depth ";

absl::Status BatchMatches(absl::string_view label, int64_t batch, const TensorShape& out,
                          const ImageLayout& l) {
  if (batch == out.dim_size(l.batch)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      label, "input and out_backprop must have the same batch size. Input batch: ", batch,
      ", outbackprop batch: ", out.dim_size(l.batch), ", batch_dim: ", l.batch));
}

// rows and cols from x's sizes `in` and the filter's [KH, KW, ...], then TF's check that
// they give out_backprop's size.
absl::Status SpatialDims(absl::string_view label, const ConvAttrs& a,
                         const std::vector<int64_t>& in, int64_t kh, int64_t kw,
                         const TensorShape& out, ConvDims* d) {
  const ImageLayout& l = a.layout;
  d->rows = {in[l.height], kh, a.strides[0], a.dilations[0], a.explicit_pads[0],
             a.explicit_pads[1]};
  d->cols = {in[l.width], kw, a.strides[1], a.dilations[1], a.explicit_pads[2],
             a.explicit_pads[3]};
  DFLOW_RETURN_IF_ERROR(
      CheckBackpropDim(label, a.padding, l.height, out.dim_size(l.height), &d->rows));
  return CheckBackpropDim(label, a.padding, l.width, out.dim_size(l.width), &d->cols);
}

// conv_backprop_input_op.cc's MakeGeometry: TF's checks in TF's order.
absl::StatusOr<ConvDims> InputGradDims(const ConvAttrs& a, const std::vector<int64_t>& in,
                                       const TensorShape& filter, const TensorShape& out) {
  constexpr char kLabel[] = "Conv2DCustomBackpropInput: ";  // TF's CPU kernel's name
  const ImageLayout& l = a.layout;
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "filter must be 4-dimensional"));
  }
  ConvDims d;
  d.batch = in[l.batch];
  DFLOW_RETURN_IF_ERROR(BatchMatches(kLabel, d.batch, out, l));
  d.in_depth = in[l.channel];
  const int64_t filter_depth = filter.dim_size(2);
  if (filter_depth <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "filter depth must be strictly greated than zero"));
  }
  if (d.in_depth % filter_depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "input depth must be evenly divisible by filter depth"));
  }
  d.out_depth = filter.dim_size(3);
  if (d.out_depth != out.dim_size(l.channel)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "filter and out_backprop must have the same out_depth"));
  }
  DFLOW_RETURN_IF_ERROR(SpatialDims(kLabel, a, in, filter.dim_size(0), filter.dim_size(1), out,
                                    &d));
  if (d.in_depth != filter_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        kGroupedText, d.in_depth, " doesn't match filter input depth ", filter_depth));
  }
  return d;
}

// conv_backprop_filter_op.cc's MakeGeometry.
absl::StatusOr<ConvDims> FilterGradDims(const ConvAttrs& a, const TensorShape& in,
                                        const std::vector<int64_t>& filter,
                                        const TensorShape& out) {
  constexpr char kLabel[] = "Conv2DBackpropFilter: ";
  const ImageLayout& l = a.layout;
  if (in.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "input must be 4-dimensional"));
  }
  if (out.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "out_backprop must be 4-dimensional"));
  }
  if (filter.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(kLabel, "filter_sizes must have 4 values"));
  }
  ConvDims d;
  d.batch = in.dim_size(l.batch);
  DFLOW_RETURN_IF_ERROR(BatchMatches(kLabel, d.batch, out, l));
  d.in_depth = in.dim_size(l.channel);
  if (filter[2] != d.in_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        kGroupedText, d.in_depth, " doesn't match filter input depth ", filter[2]));
  }
  d.out_depth = filter[3];
  if (d.out_depth != out.dim_size(l.channel)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLabel, "filter and out_backprop must have the same out_depth"));
  }
  const std::vector<int64_t> in_dims(in.dim_sizes().begin(), in.dim_sizes().end());
  DFLOW_RETURN_IF_ERROR(SpatialDims(kLabel, a, in_dims, filter[0], filter[1], out, &d));
  return d;
}

WindowGeometry GeometryOf(const ConvDims& d) {
  WindowGeometry g;
  g.batch = d.batch;
  g.in_h = d.rows.input;
  g.in_w = d.cols.input;
  g.channels = d.in_depth;
  g.out_h = d.rows.output;
  g.out_w = d.cols.output;
  g.window_h = d.rows.size;
  g.window_w = d.cols.size;
  g.stride_h = d.rows.stride;
  g.stride_w = d.cols.stride;
  g.dilation_h = d.rows.dilation;
  g.dilation_w = d.cols.dilation;
  g.pad_top = d.rows.pad_before;
  g.pad_left = d.cols.pad_before;
  return g;
}

// True when x (and dx) already is the im2col matrix [N*H*W, C]: a 1x1 window, stride 1,
// no padding on any side; and the whole batch fits one GEMM's int dims.
bool Pointwise(const WindowGeometry& g) {
  return g.window_h == 1 && g.window_w == 1 && g.stride_h == 1 && g.stride_w == 1 &&
         g.pad_top == 0 && g.pad_left == 0 && g.out_h == g.in_h && g.out_w == g.in_w &&
         g.batch * g.in_h * g.in_w <= kMaxInt;
}

// Images per column buffer: as many as fit kColumnBytes, at least one.
int64_t BatchSlice(const WindowGeometry& g) {
  const int64_t image_bytes = g.out_h * g.out_w * g.window_h * g.window_w * g.channels *
                              static_cast<int64_t>(sizeof(float));
  return std::max<int64_t>(1, std::min(g.batch, kColumnBytes / std::max<int64_t>(1, image_bytes)));
}

class ConvGradOpKernel : public CudaOpKernel {
 public:
  explicit ConvGradOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
    OP_REQUIRES_OK(c, NhwcOnly(c, attrs_.layout));
  }

 protected:
  ConvAttrs attrs_;
};

class Conv2DBackpropInputOpKernel final : public ConvGradOpKernel {
 public:
  using ConvGradOpKernel::ConvGradOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    OP_REQUIRES(ctx, dy.shape().dims() == 4,
                OpError(*ctx, "input_sizes must be 4-dimensional, got: ", dy.shape().dims()));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<int64_t> in, InputDims(ctx->input(0), filter, dy));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape in_shape, OutputShape(*ctx, in));
    OP_ASSIGN_OR_RETURN(ctx, const ConvDims d,
                        InputGradDims(attrs_, in, filter.shape(), dy.shape()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* dx, ctx->allocate_output(0, in_shape));
    if (dx->NumElements() == 0) return;
    if (dy.NumElements() == 0) {  // no output pixel or channel: a zero gradient
      OP_REQUIRES_OK(ctx, Zero(*ctx, dx, stream()));
      return;
    }
    const WindowGeometry g = GeometryOf(d);
    const int64_t k = g.window_h * g.window_w * g.channels;
    const int64_t rows_per_image = g.out_h * g.out_w;
    if (Pointwise(g)) {  // dx[NHW, C] = dy[NHW, O] x W[C, O]^T
      OP_REQUIRES_OK(ctx, Sgemm(gpu(), false, true, g.batch * rows_per_image, g.channels,
                                d.out_depth, dy.data<float>(), filter.data<float>(), 0.f,
                                dx->data<float>()));
      return;
    }
    const int64_t slice = BatchSlice(g);
    OP_ASSIGN_OR_RETURN(ctx, Tensor cols,
                        ctx->allocate_temp(DT_FLOAT, TensorShape({slice * rows_per_image, k})));
    const int64_t in_image = g.in_h * g.in_w * g.channels;
    for (int64_t b = 0; b < g.batch; b += slice) {
      WindowGeometry part = g;
      part.batch = std::min(slice, g.batch - b);
      // The next slice's GEMM overwrites `cols` after this col2im: one stream orders them.
      OP_REQUIRES_OK(ctx, Sgemm(gpu(), false, true, part.batch * rows_per_image, k, d.out_depth,
                                dy.data<float>() + b * rows_per_image * d.out_depth,
                                filter.data<float>(), 0.f, cols.data<float>()));
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchCol2Im(cols.data<float>(),
                                                          dx->data<float>() + b * in_image, part,
                                                          stream())));
    }
  }

 private:
  // conv_backprop_input_op.cc's InputDims: input_sizes holds 4 dims, or 2 (rows, cols;
  // batch and depth from out_backprop and the filter).
  absl::StatusOr<std::vector<int64_t>> InputDims(const Tensor& sizes, const Tensor& filter,
                                                 const Tensor& dy) {
    DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                           ReadSizeVector(gpu(), sizes, "Conv2DBackpropInput", "input_sizes"));
    if (v.size() == 4) return v;
    if (v.size() == 2) {
      const int64_t depth = filter.shape().dims() == 4 ? filter.shape().dim_size(2) : 0;
      return ImageDims(attrs_.layout, dy.shape().dim_size(attrs_.layout.batch), v[0], v[1],
                       depth);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("Conv2DBackpropInput requires input_sizes to contain 4 values or 2 "
                     "values, but got: ",
                     v.size()));
  }
};

class Conv2DBackpropFilterOpKernel final : public ConvGradOpKernel {
 public:
  using ConvGradOpKernel::ConvGradOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& dy = ctx->input(2);
    OP_ASSIGN_OR_RETURN(
        ctx, const std::vector<int64_t> sizes,
        ReadSizeVector(gpu(), ctx->input(1), "Conv2DBackpropFilter", "filter_sizes"));
    OP_ASSIGN_OR_RETURN(ctx, const ConvDims d,
                        FilterGradDims(attrs_, x.shape(), sizes, dy.shape()));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape filter_shape, OutputShape(*ctx, sizes));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* dw, ctx->allocate_output(0, filter_shape));
    if (dw->NumElements() == 0) return;
    if (x.NumElements() == 0 || dy.NumElements() == 0) {  // an empty sum
      OP_REQUIRES_OK(ctx, Zero(*ctx, dw, stream()));
      return;
    }
    const WindowGeometry g = GeometryOf(d);
    const int64_t k = g.window_h * g.window_w * g.channels;
    const int64_t rows_per_image = g.out_h * g.out_w;
    if (Pointwise(g)) {  // dW[C, O] = x[NHW, C]^T x dy[NHW, O]
      OP_REQUIRES_OK(ctx, Sgemm(gpu(), true, false, g.channels, d.out_depth,
                                g.batch * rows_per_image, x.data<float>(), dy.data<float>(), 0.f,
                                dw->data<float>()));
      return;
    }
    const int64_t slice = BatchSlice(g);
    OP_ASSIGN_OR_RETURN(ctx, Tensor cols,
                        ctx->allocate_temp(DT_FLOAT, TensorShape({slice * rows_per_image, k})));
    const int64_t in_image = g.in_h * g.in_w * g.channels;
    for (int64_t b = 0; b < g.batch; b += slice) {
      WindowGeometry part = g;
      part.batch = std::min(slice, g.batch - b);
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchIm2Col(x.data<float>() + b * in_image,
                                                          cols.data<float>(), part, stream())));
      // The first slice writes dW, later ones add to it.
      OP_REQUIRES_OK(ctx, Sgemm(gpu(), true, false, k, d.out_depth, part.batch * rows_per_image,
                                cols.data<float>(),
                                dy.data<float>() + b * rows_per_image * d.out_depth,
                                b == 0 ? 0.f : 1.f, dw->data<float>()));
    }
  }
};

// ---- Pooling gradients. ----

// The pooled geometry of one call from the forward input's NHWC dims, or TF's error.
absl::StatusOr<WindowGeometry> PoolGeometry(const std::vector<int64_t>& in, const ImageLayout& l,
                                            const std::vector<int64_t>& ksize,
                                            const std::vector<int64_t>& strides,
                                            Padding padding, const std::vector<int64_t>& pads,
                                            bool check_pads) {
  WindowDim rows{in[l.height], ksize[l.height], strides[l.height], 1, pads[0], pads[1]};
  WindowDim cols{in[l.width], ksize[l.width], strides[l.width], 1, pads[2], pads[3]};
  if (check_pads) DFLOW_RETURN_IF_ERROR(CheckExplicitPoolPads(rows, cols));
  DFLOW_RETURN_IF_ERROR(ComputeWindow(padding, &rows));
  DFLOW_RETURN_IF_ERROR(ComputeWindow(padding, &cols));
  WindowGeometry g;
  g.batch = in[l.batch];
  g.channels = in[l.channel];
  g.in_h = rows.input;
  g.in_w = cols.input;
  g.out_h = rows.output;
  g.out_w = cols.output;
  g.window_h = rows.size;
  g.window_w = cols.size;
  g.stride_h = rows.stride;
  g.stride_w = cols.stride;
  g.pad_top = rows.pad_before;
  g.pad_left = cols.pad_before;
  return g;
}

// "Expected <what> shape to be [..], but got [..]" unless `t` has the pooled shape.
absl::Status CheckPooledShape(const char* what, const Tensor& t, const WindowGeometry& g,
                              const ImageLayout& l) {
  const TensorShape want(ImageDims(l, g.batch, g.out_h, g.out_w, g.channels));
  if (t.shape() == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Expected ", what, " shape to be ",
                                                 want.DebugString(), ", but got ",
                                                 t.shape().DebugString()));
}

// max_pool_grad_op.cc's CheckWindow.
absl::Status CheckMaxPoolWindow(const std::vector<int64_t>& ksize,
                                const std::vector<int64_t>& strides, const ImageLayout& l) {
  if (ksize.size() != 4) {
    return absl::InvalidArgumentError("Sliding window ksize field must specify 4 dimensions");
  }
  if (strides.size() != 4) {
    return absl::InvalidArgumentError("Sliding window strides field must specify 4 dimensions");
  }
  if (ksize[l.batch] != 1 || strides[l.batch] != 1) {
    return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[l.channel] != 1 || strides[l.channel] != 1) {
    return absl::UnimplementedError("MaxPoolingGrad is not yet supported on the depth dimension.");
  }
  for (int i = 0; i < 4; ++i) {
    if (ksize[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sliding window ksize for dimension ", i, " was zero or negative"));
    }
  }
  for (int i : {l.height, l.width}) {
    if (strides[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("Stride must be > 0, but got ", strides[i]));
    }
  }
  return absl::OkStatus();
}

class MaxPoolGradOpKernel final : public CudaOpKernel {
 public:
  explicit MaxPoolGradOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    std::string format, padding;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_ASSIGN_OR_RETURN(c, layout_, ParseDataFormat(format));
    OP_REQUIRES_OK(c, NhwcOnly(c, layout_));
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &ksize_));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &strides_));
    OP_REQUIRES_OK(c, CheckMaxPoolWindow(ksize_, strides_, layout_));
    OP_REQUIRES_OK(c, c->GetAttr("padding", &padding));
    OP_ASSIGN_OR_RETURN(c, padding_, ParsePadding(padding, /*allow_explicit=*/true));
    if (padding_ == Padding::kExplicit) {  // as TF, read only for EXPLICIT
      std::vector<int64_t> pads;
      OP_REQUIRES_OK(c, c->GetAttr("explicit_paddings", &pads));
      OP_ASSIGN_OR_RETURN(c, pads_, ParseExplicitPaddings(padding_, pads, layout_));
    }
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    absl::StatusOr<WindowGeometry> g = Geometry(*ctx);
    // The CPU kernel names the op in front of every Compute error.
    OP_REQUIRES(ctx, g.ok(),
                absl::Status(g.status().code(),
                             absl::StrCat(type_string(), ": ", g.status().message())));
    const Tensor& x = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* dx, ctx->allocate_output(0, x.shape()));
    if (dx->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchMaxPoolGrad(x.data<float>(),
                                                             ctx->input(2).data<float>(),
                                                             dx->data<float>(), *g, stream())));
  }

 private:
  // max_pool_grad_op.cc's Geometry: ranks, output size, then orig_output's and grad's shapes.
  absl::StatusOr<WindowGeometry> Geometry(const OpKernelContext& ctx) const {
    const char* names[] = {"tensor_in", "tensor_out", "out_backprop"};
    for (int i = 0; i < 3; ++i) {
      if (ctx.input(i).shape().dims() != 4) {
        return absl::InvalidArgumentError(absl::StrCat(names[i], " must be 4-dimensional"));
      }
    }
    const TensorShape& in = ctx.input(0).shape();
    DFLOW_ASSIGN_OR_RETURN(
        const WindowGeometry g,
        PoolGeometry({in.dim_sizes().begin(), in.dim_sizes().end()}, layout_, ksize_, strides_,
                     padding_, pads_, padding_ == Padding::kExplicit));
    DFLOW_RETURN_IF_ERROR(CheckPooledShape("orig_output", ctx.input(1), g, layout_));
    DFLOW_RETURN_IF_ERROR(CheckPooledShape("grad", ctx.input(2), g, layout_));
    return g;
  }

  ImageLayout layout_;
  Padding padding_ = Padding::kValid;
  std::vector<int64_t> ksize_, strides_;
  std::vector<int64_t> pads_ = std::vector<int64_t>(4, 0);  // {top, bottom, left, right}
};

class AvgPoolGradOpKernel final : public CudaOpKernel {
 public:
  explicit AvgPoolGradOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    std::string format, padding;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_ASSIGN_OR_RETURN(c, layout_, ParseDataFormat(format));
    OP_REQUIRES_OK(c, NhwcOnly(c, layout_));
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &ksize_));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &strides_));
    OP_REQUIRES_OK(c, c->GetAttr("padding", &padding));
    OP_ASSIGN_OR_RETURN(c, padding_, ParsePadding(padding, /*allow_explicit=*/false));
    // avg_pool_grad_op.cc's checks and texts.
    OP_REQUIRES(c, ksize_.size() == 4 && strides_.size() == 4,
                absl::InvalidArgumentError(
                    "Sliding window ksize and strides fields must specify 4 dimensions"));
    OP_REQUIRES(c, ksize_[layout_.batch] == 1 && strides_[layout_.batch] == 1,
                absl::UnimplementedError("Pooling is not yet supported on the batch dimension."));
    OP_REQUIRES(c, ksize_[layout_.channel] == 1 && strides_[layout_.channel] == 1,
                absl::UnimplementedError("Non-spatial pooling is not yet supported."));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    OP_REQUIRES(ctx, sizes.shape().dims() == 1 && sizes.NumElements() == 4,
                absl::InvalidArgumentError(
                    absl::StrCat("orig_input_shape must be 1-dimensional and 4 elements, got ",
                                 sizes.shape().DebugString())));
    OP_REQUIRES(ctx, grad.shape().dims() == 4,
                absl::InvalidArgumentError("out_backprop must be 4-dimensional"));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<int64_t> dims, ReadIndexTensor(gpu(), sizes));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape in_shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, const WindowGeometry g,
                        PoolGeometry(dims, layout_, ksize_, strides_, padding_, {0, 0, 0, 0},
                                     /*check_pads=*/false));
    OP_REQUIRES_OK(ctx, CheckPooledShape("grad", grad, g, layout_));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* dx, ctx->allocate_output(0, in_shape));
    if (dx->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchAvgPoolGrad(grad.data<float>(),
                                                             dx->data<float>(), g, stream())));
  }

 private:
  ImageLayout layout_;
  Padding padding_ = Padding::kValid;
  std::vector<int64_t> ksize_, strides_;
};

}  // namespace

absl::Status RegisterCudaConvGradKernels(KernelRegistry* registry) {
  // Dtypes and host-memory args: kernels/sim/gpu_kernel_list.h (GpuKernel(op)).
  DFLOW_RETURN_IF_ERROR(
      registry->Register<Conv2DBackpropInputOpKernel>(GpuKernel("Conv2DBackpropInput")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<Conv2DBackpropFilterOpKernel>(GpuKernel("Conv2DBackpropFilter")));
  DFLOW_RETURN_IF_ERROR(registry->Register<MaxPoolGradOpKernel>(GpuKernel("MaxPoolGrad")));
  return registry->Register<AvgPoolGradOpKernel>(GpuKernel("AvgPoolGrad"));
}

}  // namespace dflow::cuda
