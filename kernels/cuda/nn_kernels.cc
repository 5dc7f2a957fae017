// MatMul (cuBLAS), Conv2D (im2col + cuBLAS), MaxPool, AvgPool, Softmax and the Sum /
// Mean / Max reductions on CUDA GPUs: float (MatMul and reductions also double,
// reductions also int32/int64).
//
// MatMul: cublasSgemm on the device's handle, which is bound to the compute stream. FP32
// math unless DFLOW_GPU_ALLOW_TF32=1 (CudaGpuDevice set the handle's math mode).
// Conv2D and pooling: NHWC only (TF's default layout); NCHW is UNIMPLEMENTED on the GPU
// here. cuDNN is not used: im2col into a temporary of at most kIm2ColBytes per batch slice,
// then one GEMM against the HWIO filter, which is already the [KH*KW*C, O] matrix.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/window_geometry.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {
namespace {

constexpr int64_t kIm2ColBytes = int64_t{256} << 20;

// Row-major C[m x n] = op(A)[m x k] * op(B)[k x n] as the column-major product
// C^T = op(B)^T * op(A)^T, so no transposes are materialised.
absl::Status GemmRowMajor(CudaGpuDevice* gpu, bool transpose_a, bool transpose_b, int64_t m,
                          int64_t n, int64_t k, const float* a, const float* b, float* c) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (m > kMax || n > kMax || k > kMax) {
    return absl::UnimplementedError(
        absl::StrCat("GEMM dims beyond int range: m=", m, " n=", n, " k=", k));
  }
  return gpu->WithCublas([&](cublasContext* handle) -> absl::Status {
    const float alpha = 1.f, beta = 0.f;
    DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSgemm(
        handle, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
        static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b,
        static_cast<int>(transpose_b ? k : n), a, static_cast<int>(transpose_a ? m : k), &beta, c,
        static_cast<int>(n)));
    return absl::OkStatus();
  });
}

// The same for doubles (cublasDgemm).
absl::Status GemmRowMajor(CudaGpuDevice* gpu, bool transpose_a, bool transpose_b, int64_t m,
                          int64_t n, int64_t k, const double* a, const double* b, double* c) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (m > kMax || n > kMax || k > kMax) {
    return absl::UnimplementedError(
        absl::StrCat("GEMM dims beyond int range: m=", m, " n=", n, " k=", k));
  }
  return gpu->WithCublas([&](cublasContext* handle) -> absl::Status {
    const double alpha = 1, beta = 0;
    DFLOW_CUBLAS_RETURN_IF_ERROR(cublasDgemm(
        handle, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
        static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b,
        static_cast<int>(transpose_b ? k : n), a, static_cast<int>(transpose_a ? m : k), &beta, c,
        static_cast<int>(n)));
    return absl::OkStatus();
  });
}

class MatMulOpKernel final : public CudaOpKernel {
 public:
  explicit MatMulOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(c, c->GetAttr("transpose_b", &transpose_b_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.shape().dims() == 2 && b.shape().dims() == 2,
                OpError(*ctx, "In[0] and In[1] must be matrices: ", a.shape().DebugString(),
                        " and ", b.shape().DebugString()));
    const int64_t m = a.shape().dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.shape().dim_size(transpose_a_ ? 0 : 1);
    const int64_t kb = b.shape().dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.shape().dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(ctx, k == kb,
                OpError(*ctx, "Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                        ", In[1]: ", b.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, TensorShape({m, n})));
    if (m == 0 || n == 0) return;
    if (a.dtype() == DT_DOUBLE) {
      Run<double>(ctx, a, b, m, n, k, out);
    } else {
      Run<float>(ctx, a, b, m, n, k, out);
    }
  }

 private:
  template <typename T>
  void Run(OpKernelContext* ctx, const Tensor& a, const Tensor& b, int64_t m, int64_t n,
           int64_t k, Tensor* out) {
    if (k == 0) {
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchFillConstant<T>(T(0), out->data<T>(), m * n,
                                                                   stream())));
      return;
    }
    OP_REQUIRES_OK(ctx, GemmRowMajor(gpu(), transpose_a_, transpose_b_, m, n, k, a.data<T>(),
                                     b.data<T>(), out->data<T>()));
  }

  bool transpose_a_ = false, transpose_b_ = false;
};

class SoftmaxOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES(ctx, logits.shape().dims() >= 1,
                OpError(*ctx, "logits must have >= 1 dimension, got ", logits.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, logits.shape()));
    const int64_t cols = logits.shape().dim_size(logits.shape().dims() - 1);
    if (logits.NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchSoftmax(logits.data<float>(), out->data<float>(),
                                                         logits.NumElements() / cols, cols,
                                                         stream())));
  }
};

class ReductionOpKernel final : public CudaOpKernel {
 public:
  ReductionOpKernel(OpKernelConstruction* c, ReduceOp op) : CudaOpKernel(c), op_(op) {
    OP_REQUIRES_OK(c, c->GetAttr("keep_dims", &keep_dims_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.shape().dims();
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> axes, ReadIndexTensor(gpu(), ctx->input(1)));
    std::vector<bool> reduced(rank, false);
    for (int64_t axis : axes) {
      OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                  OpError(*ctx, "Invalid reduction dimension (", axis, " for input with ", rank,
                          " dimension(s)"));
      reduced[axis < 0 ? axis + rank : axis] = true;
    }
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    std::vector<int64_t> out_dims;
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) count *= dims[d];
      if (!reduced[d]) out_dims.push_back(dims[d]);
      if (reduced[d] && keep_dims_) out_dims.push_back(1);
    }
    const TensorShape out_shape(absl::MakeConstSpan(out_dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, out_shape));
    if (out_shape.num_elements() == 0) return;
    cudaError_t error = cudaSuccess;
    bool ok = true;
    switch (input.dtype()) {
      case DT_FLOAT: Run<float>(ctx, input, dims, reduced, count, out); return;
      case DT_DOUBLE: Run<double>(ctx, input, dims, reduced, count, out); return;
      case DT_INT32: Run<int32_t>(ctx, input, dims, reduced, count, out); return;
      case DT_INT64: Run<int64_t>(ctx, input, dims, reduced, count, out); return;
      default: ok = false;
    }
    OP_REQUIRES(ctx, ok, OpError(*ctx, "no CUDA kernel for dtype ", DataTypeString(input.dtype())));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  template <typename T>
  void Run(OpKernelContext* ctx, const Tensor& input, const std::vector<int64_t>& dims,
           const std::vector<bool>& reduced, int64_t count, Tensor* out) {
    const int64_t n = out->NumElements();
    if (input.NumElements() == 0) {  // nothing to reduce: the identity of the op
      // Max of nothing is -inf for floats (TF and the CPU kernel), the lowest value else.
      const T fill = op_ == ReduceOp::kMax ? (std::numeric_limits<T>::has_infinity
                                                  ? -std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::lowest())
                     : op_ == ReduceOp::kMean && std::is_floating_point<T>::value
                         ? std::numeric_limits<T>::quiet_NaN()
                         : T(0);
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchFillConstant<T>(fill, out->data<T>(), n, stream())));
      return;
    }
    const std::vector<ReducePass> passes = PlanReduction(dims, reduced);
    if (passes.empty()) {  // no axis: a copy
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, cudaMemcpyAsync(out->raw_data(), input.raw_data(),
                                                             input.TotalBytes(),
                                                             cudaMemcpyDefault, stream())));
      return;
    }
    int64_t scratch_elements = 1;
    for (const ReducePass& p : passes) {
      scratch_elements = std::max(scratch_elements, ReduceScratchElements(p.outer, p.extent, p.inner));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor scratch,
                        ctx->allocate_temp(DT_DOUBLE, TensorShape({scratch_elements})));
    Tensor current = input;
    for (size_t i = 0; i < passes.size(); ++i) {
      const ReducePass& p = passes[i];
      const bool last = i + 1 == passes.size();
      Tensor next;
      if (last) {
        next = *out;
      } else {
        OP_ASSIGN_OR_RETURN(ctx, next, ctx->allocate_temp(input.dtype(), TensorShape({p.outer * p.inner})));
      }
      const ReduceOp op = op_ == ReduceOp::kMean && !last ? ReduceOp::kSum : op_;
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchReduce<T>(op, current.data<T>(), next.data<T>(),
                                                             p.outer, p.extent, p.inner,
                                                             static_cast<double>(count),
                                                             scratch.data<double>(), stream())));
      current = next;
    }
  }

  const ReduceOp op_;
  bool keep_dims_ = false;
};

// Conv2D / pooling attrs in NHWC.
struct WindowAttrs {
  Padding padding = Padding::kValid;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, window{1, 1}, explicit_pads;
};

absl::StatusOr<WindowAttrs> ReadWindowAttrs(OpKernelConstruction* c, bool conv) {
  std::string format = "NHWC", padding;
  if (c->HasAttr("data_format")) DFLOW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  DFLOW_ASSIGN_OR_RETURN(ImageLayout layout, ParseDataFormat(format));
  if (layout.nchw) {
    return absl::UnimplementedError(absl::StrCat(
        c->def().op(), " on a CUDA GPU supports data_format NHWC only, not ", format));
  }
  WindowAttrs attrs;
  DFLOW_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  DFLOW_ASSIGN_OR_RETURN(attrs.padding, ParsePadding(padding, /*allow_explicit=*/conv));
  std::vector<int64_t> strides, four{1, 1, 1, 1};
  DFLOW_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  DFLOW_ASSIGN_OR_RETURN(attrs.strides, SpatialPairFromFour(strides, layout, "strides"));
  if (conv) {
    if (c->HasAttr("dilations")) DFLOW_RETURN_IF_ERROR(c->GetAttr("dilations", &four));
    DFLOW_ASSIGN_OR_RETURN(attrs.dilations, SpatialPairFromFour(four, layout, "dilations"));
    if (c->HasAttr("explicit_paddings")) {
      DFLOW_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &attrs.explicit_pads));
    }
    if (attrs.padding == Padding::kExplicit && attrs.explicit_pads.size() != 8) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit_paddings attribute must contain 8 values, but got: ", attrs.explicit_pads.size()));
    }
  } else {
    DFLOW_RETURN_IF_ERROR(c->GetAttr("ksize", &four));
    DFLOW_ASSIGN_OR_RETURN(attrs.window, SpatialPairFromFour(four, layout, "ksize"));
  }
  return attrs;
}

// Fills the spatial part of `g` for an NHWC input; window sizes come from `attrs.window`
// (pooling) or are already set (Conv2D: the filter's).
absl::Status ComputeGeometry(const WindowAttrs& attrs, const TensorShape& input,
                             WindowGeometry* g) {
  g->batch = input.dim_size(0);
  g->in_h = input.dim_size(1);
  g->in_w = input.dim_size(2);
  g->channels = input.dim_size(3);
  WindowDim rows, cols;
  rows.input = g->in_h;
  cols.input = g->in_w;
  rows.size = g->window_h;
  cols.size = g->window_w;
  rows.stride = g->stride_h = attrs.strides[0];
  cols.stride = g->stride_w = attrs.strides[1];
  rows.dilation = g->dilation_h = attrs.dilations[0];
  cols.dilation = g->dilation_w = attrs.dilations[1];
  if (attrs.padding == Padding::kExplicit) {
    rows.pad_before = attrs.explicit_pads[2];
    rows.pad_after = attrs.explicit_pads[3];
    cols.pad_before = attrs.explicit_pads[4];
    cols.pad_after = attrs.explicit_pads[5];
  }
  DFLOW_RETURN_IF_ERROR(ComputeWindow(attrs.padding, &rows));
  DFLOW_RETURN_IF_ERROR(ComputeWindow(attrs.padding, &cols));
  g->out_h = rows.output;
  g->out_w = cols.output;
  g->pad_top = rows.pad_before;
  g->pad_left = cols.pad_before;
  return absl::OkStatus();
}

class Conv2DOpKernel final : public CudaOpKernel {
 public:
  explicit Conv2DOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ReadWindowAttrs(c, /*conv=*/true));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    OP_REQUIRES(ctx, input.shape().dims() == 4 && filter.shape().dims() == 4,
                OpError(*ctx, "input and filter must be 4-dimensional: ", input.shape().DebugString(),
                        " ", filter.shape().DebugString()));
    OP_REQUIRES(ctx, filter.shape().dim_size(2) == input.shape().dim_size(3),
                OpError(*ctx, "input depth must equal filter in_depth: ", input.shape().dim_size(3),
                        " vs ", filter.shape().dim_size(2)));
    WindowGeometry g;
    g.window_h = filter.shape().dim_size(0);
    g.window_w = filter.shape().dim_size(1);
    OP_REQUIRES_OK(ctx, ComputeGeometry(attrs_, input.shape(), &g));
    const int64_t out_channels = filter.shape().dim_size(3);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out,
                        ctx->allocate_output(0, TensorShape({g.batch, g.out_h, g.out_w, out_channels})));
    if (out->NumElements() == 0) return;
    const int64_t k = g.window_h * g.window_w * g.channels;
    const int64_t rows_per_image = g.out_h * g.out_w;
    const bool pointwise = g.window_h == 1 && g.window_w == 1 && g.stride_h == 1 &&
                           g.stride_w == 1 && g.pad_top == 0 && g.pad_left == 0 &&
                           g.out_h == g.in_h && g.out_w == g.in_w;  // no bottom/right padding
    if (pointwise) {  // the input already is the [N*H*W, C] matrix
      OP_REQUIRES_OK(ctx, GemmRowMajor(gpu(), false, false, g.batch * rows_per_image, out_channels,
                                       k, input.data<float>(), filter.data<float>(),
                                       out->data<float>()));
      return;
    }
    const int64_t image_bytes = rows_per_image * k * static_cast<int64_t>(sizeof(float));
    const int64_t slice = std::max<int64_t>(1, std::min(g.batch, kIm2ColBytes / std::max<int64_t>(1, image_bytes)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor cols,
                        ctx->allocate_temp(DT_FLOAT, TensorShape({slice * rows_per_image, k})));
    const int64_t in_image = g.in_h * g.in_w * g.channels;
    for (int64_t b = 0; b < g.batch; b += slice) {
      WindowGeometry part = g;
      part.batch = std::min(slice, g.batch - b);
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchIm2Col(input.data<float>() + b * in_image,
                                                          cols.data<float>(), part, stream())));
      OP_REQUIRES_OK(ctx, GemmRowMajor(gpu(), false, false, part.batch * rows_per_image,
                                       out_channels, k, cols.data<float>(), filter.data<float>(),
                                       out->data<float>() + b * rows_per_image * out_channels));
    }
  }

 private:
  WindowAttrs attrs_;
};

class PoolOpKernel final : public CudaOpKernel {
 public:
  PoolOpKernel(OpKernelConstruction* c, bool max_pool) : CudaOpKernel(c), max_pool_(max_pool) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ReadWindowAttrs(c, /*conv=*/false));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.shape().dims() == 4,
                OpError(*ctx, "input must be 4-dimensional: ", input.shape().DebugString()));
    WindowGeometry g;
    g.window_h = attrs_.window[0];
    g.window_w = attrs_.window[1];
    OP_REQUIRES_OK(ctx, ComputeGeometry(attrs_, input.shape(), &g));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out,
                        ctx->allocate_output(0, TensorShape({g.batch, g.out_h, g.out_w, g.channels})));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchPool(max_pool_, input.data<float>(),
                                                      out->data<float>(), g, stream())));
  }

 private:
  const bool max_pool_;
  WindowAttrs attrs_;
};

}  // namespace

absl::Status RegisterCudaNnKernels(KernelRegistry* registry) {
  // Dtypes and host-memory args: kernels/sim/gpu_kernel_list.h (GpuKernel(op)).
  DFLOW_RETURN_IF_ERROR(registry->Register<MatMulOpKernel>(GpuKernel("MatMul")));
  DFLOW_RETURN_IF_ERROR(registry->Register<SoftmaxOpKernel>(GpuKernel("Softmax")));
  DFLOW_RETURN_IF_ERROR(registry->Register<Conv2DOpKernel>(GpuKernel("Conv2D")));
  DFLOW_RETURN_IF_ERROR(registry->Register(
      GpuKernel("MaxPool"),
      [](OpKernelConstruction* c) { return std::make_unique<PoolOpKernel>(c, true); }));
  DFLOW_RETURN_IF_ERROR(registry->Register(
      GpuKernel("AvgPool"),
      [](OpKernelConstruction* c) { return std::make_unique<PoolOpKernel>(c, false); }));
  const std::pair<const char*, ReduceOp> reductions[] = {
      {"Sum", ReduceOp::kSum}, {"Mean", ReduceOp::kMean}, {"Max", ReduceOp::kMax}};
  for (const auto& [op, kind] : reductions) {
    const ReduceOp k = kind;
    DFLOW_RETURN_IF_ERROR(registry->Register(
        GpuKernel(op),
        [k](OpKernelConstruction* c) { return std::make_unique<ReductionOpKernel>(c, k); }));
  }
  return absl::OkStatus();
}

}  // namespace dflow::cuda
