// The CUDA OpKernels a training step needs besides the forward ops: activation gradients,
// BiasAddGrad, SoftmaxCrossEntropyWithLogits and its sparse form, the comparisons, Select
// and SelectV2, ArgMax, BroadcastTo, Tile and Transpose. Dtypes and host-memory args come
// from kernels/sim/gpu_kernel_list.cc (AddTrainingSpecs) through GpuKernel(op); shape
// checks and their texts follow the CPU kernels, so both devices fail alike.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"
#include "kernels/cuda/train_launchers.h"

namespace dflow::cuda {
namespace {

// Calls fn(T{}) for float / double; false for other dtypes.
template <typename Fn>
bool DispatchReal(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn(float{}); return true;
    case DT_DOUBLE: fn(double{}); return true;
    default: return false;
  }
}

// DispatchReal plus int32 / int64.
template <typename Fn>
bool DispatchNumericT(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_INT32: fn(int32_t{}); return true;
    case DT_INT64: fn(int64_t{}); return true;
    default: return DispatchReal(dtype, std::forward<Fn>(fn));
  }
}

// Calls fn(E{}) with the unsigned type of the dtype's element size: the data-movement
// kernels move bytes.
template <typename Fn>
bool DispatchBySize(DataType dtype, Fn&& fn) {
  switch (DataTypeSize(dtype)) {
    case 1: fn(uint8_t{}); return true;
    case 2: fn(uint16_t{}); return true;
    case 4: fn(uint32_t{}); return true;
    case 8: fn(uint64_t{}); return true;
    default: return false;
  }
}

absl::Status Unsupported(const OpKernelContext& ctx, DataType dtype) {
  return OpError(ctx, "no CUDA kernel for dtype ", DataTypeString(dtype));
}

// Row-major element strides of `shape`.
std::vector<int64_t> Strides(const TensorShape& shape) {
  std::vector<int64_t> strides(shape.dims(), 1);
  for (int d = shape.dims() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim_size(d + 1);
  return strides;
}

// ---- Activation gradients ----

class ActivationGradOpKernel final : public CudaOpKernel {
 public:
  ActivationGradOpKernel(OpKernelConstruction* c, ActivationGradOp op) : CudaOpKernel(c), op_(op) {
    if (op == ActivationGradOp::kLeakyRelu) OP_REQUIRES_OK(c, c->GetAttr("alpha", &alpha_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (!(a.shape() == b.shape())) {
      // ReluGrad's CPU kernel (nn_grad_ops.cc) prefixes the op; the others do not.
      const std::string text = absl::StrCat(
          "Inputs to operation ", name(), " of type ", type_string(),
          " must have the same size and shape.  Input 0: ", a.shape().DebugString(),
          " != input 1: ", b.shape().DebugString());
      ctx->SetStatus(op_ == ActivationGradOp::kRelu ? OpError(*ctx, text)
                                                    : absl::InvalidArgumentError(text));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, a.shape()));
    const int64_t n = a.NumElements();
    if (n == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = DispatchReal(a.dtype(), [&](auto t) {
      using T = decltype(t);
      // alpha rounded to T, as the CPU's Constant<T>(alpha).
      error = LaunchActivationGrad<T>(op_, a.data<T>(), b.data<T>(), out->data<T>(), n,
                                      static_cast<T>(alpha_), stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, a.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  const ActivationGradOp op_;
  float alpha_ = 0.2f;
};

// ---- BiasAddGrad ----

// The sum over every dim but the channel's, as LaunchReduce passes: NHWC is one pass over
// [1, N*H*W, C]; NCHW is [N, C, H*W] reduced innermost first, then over N. Each pass sums
// in double; a two-pass NCHW rounds its partial sums to T once in between.
class BiasAddGradOpKernel final : public CudaOpKernel {
 public:
  explicit BiasAddGradOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    std::string format = "NHWC";
    if (c->HasAttr("data_format")) OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_REQUIRES(c, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    nchw_ = format == "NCHW";
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const TensorShape& shape = grad.shape();
    OP_REQUIRES(ctx, shape.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("Input tensor must be at least 2D: ", shape.DebugString())));
    const int axis = nchw_ ? 1 : shape.dims() - 1;
    const int64_t channels = shape.dim_size(axis);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < shape.dims(); ++d) {
      if (d != axis) (d < axis ? outer : inner) *= shape.dim_size(d);
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, TensorShape({channels})));
    if (channels == 0) return;
    const bool ok = DispatchReal(grad.dtype(), [&](auto t) {
      Run<decltype(t)>(ctx, grad, outer, channels, inner, out);
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, grad.dtype()));
  }

 private:
  template <typename T>
  void Run(OpKernelContext* ctx, const Tensor& grad, int64_t outer, int64_t channels,
           int64_t inner, Tensor* out) {
    if (grad.NumElements() == 0) {  // a sum of nothing
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchFillConstant<T>(T(0), out->data<T>(), channels,
                                                                   stream())));
      return;
    }
    // Size-1 reduced dims are dropped: they would cost a copy pass each.
    std::vector<int64_t> dims;
    std::vector<bool> reduced;
    if (outer > 1) dims.push_back(outer), reduced.push_back(true);
    dims.push_back(channels), reduced.push_back(false);
    if (inner > 1) dims.push_back(inner), reduced.push_back(true);
    const std::vector<ReducePass> passes = PlanReduction(dims, reduced);
    if (passes.empty()) {  // nothing to sum: [1, C] or [C, 1]
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, cudaMemcpyAsync(out->raw_data(), grad.raw_data(),
                                                             out->TotalBytes(),
                                                             cudaMemcpyDefault, stream())));
      return;
    }
    int64_t scratch_elements = 1;
    for (const ReducePass& p : passes) {
      scratch_elements =
          std::max(scratch_elements, ReduceScratchElements(p.outer, p.extent, p.inner));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor scratch,
                        ctx->allocate_temp(DT_DOUBLE, TensorShape({scratch_elements})));
    Tensor current = grad;
    for (size_t i = 0; i < passes.size(); ++i) {
      const ReducePass& p = passes[i];
      Tensor next = *out;
      if (i + 1 < passes.size()) {
        OP_ASSIGN_OR_RETURN(ctx, next,
                            ctx->allocate_temp(grad.dtype(), TensorShape({p.outer * p.inner})));
      }
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchReduce<T>(ReduceOp::kSum, current.data<T>(),
                                                             next.data<T>(), p.outer, p.extent,
                                                             p.inner, /*divisor=*/0,
                                                             scratch.data<double>(), stream())));
      current = next;
    }
  }

  bool nchw_ = false;
};

// ---- Cross-entropies (float) ----

class SoftmaxXentOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    const TensorShape& ls = logits.shape();
    const TensorShape& ys = labels.shape();
    OP_REQUIRES(ctx, ls.dims() == 2 && ys.dims() == 2,
                absl::InvalidArgumentError(
                    "logits and labels must be either 2-dimensional, or broadcasted to be "
                    "2-dimensional"));
    auto broadcastable = [&](int d) {
      return ls.dim_size(d) == ys.dim_size(d) || ls.dim_size(d) == 1 || ys.dim_size(d) == 1;
    };
    OP_REQUIRES(ctx, broadcastable(0) && broadcastable(1),
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must be broadcastable: logits_size=", ls.DebugString(),
                    " labels_size=", ys.DebugString())));
    // BCast's rule: a 1 takes the other side's dim (0 included).
    auto dim = [&](int d) { return ls.dim_size(d) == 1 ? ys.dim_size(d) : ls.dim_size(d); };
    XentLayout layout;
    layout.batch = dim(0);
    layout.classes = dim(1);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* loss, ctx->allocate_output(0, TensorShape({layout.batch})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* backprop,
                        ctx->allocate_output(1, TensorShape({layout.batch, layout.classes})));
    if (layout.batch == 0) return;
    if (layout.classes == 0) {  // the CPU's empty row sums to a loss of 0
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchFillConstant<float>(
                                                 0.f, loss->data<float>(), layout.batch,
                                                 stream())));
      return;
    }
    // A broadcast dim (size 1) is read with stride 0.
    layout.logits_row = ls.dim_size(0) == 1 ? 0 : ls.dim_size(1);
    layout.logits_col = ls.dim_size(1) == 1 ? 0 : 1;
    layout.labels_row = ys.dim_size(0) == 1 ? 0 : ys.dim_size(1);
    layout.labels_col = ys.dim_size(1) == 1 ? 0 : 1;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchSoftmaxXent(
                                               logits.data<float>(), labels.data<float>(),
                                               loss->data<float>(), backprop->data<float>(),
                                               layout, stream())));
  }
};

class SparseSoftmaxXentOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.shape().dims() == 2,
                OpError(*ctx, "logits must be 2-D, but got shape ",
                        features.shape().DebugString()));
    OP_REQUIRES(ctx, labels.shape().dims() == 1,
                OpError(*ctx, "labels must be 1-D, but got shape ", labels.shape().DebugString()));
    const int64_t batch = features.shape().dim_size(0);
    const int64_t classes = features.shape().dim_size(1);
    OP_REQUIRES(ctx, labels.shape().dim_size(0) == batch,
                OpError(*ctx, "logits and labels must have the same first dimension, got "
                              "logits shape ",
                        features.shape().DebugString(), " and labels shape ",
                        labels.shape().DebugString()));
    OP_REQUIRES(ctx, classes > 0 || batch == 0,
                OpError(*ctx, "Must have at least one class, but got logits shape ",
                        features.shape().DebugString()));
    // Labels stay on the GPU: an out-of-range one gives a NaN row there (TF's GPU kernel)
    // rather than the CPU's error, which would cost a host round trip per step.
    OP_ASSIGN_OR_RETURN(ctx, Tensor* loss, ctx->allocate_output(0, TensorShape({batch})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* backprop, ctx->allocate_output(1, features.shape()));
    if (batch == 0) return;
    cudaError_t error = cudaSuccess;
    if (labels.dtype() == DT_INT32) {
      error = LaunchSparseSoftmaxXent<int32_t>(features.data<float>(), labels.data<int32_t>(),
                                               loss->data<float>(), backprop->data<float>(),
                                               batch, classes, stream());
    } else {
      OP_REQUIRES(ctx, labels.dtype() == DT_INT64, Unsupported(*ctx, labels.dtype()));
      error = LaunchSparseSoftmaxXent<int64_t>(features.data<float>(), labels.data<int64_t>(),
                                               loss->data<float>(), backprop->data<float>(),
                                               batch, classes, stream());
    }
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }
};

// ---- Comparisons ----

class CompareOpKernel final : public CudaOpKernel {
 public:
  CompareOpKernel(OpKernelConstruction* c, CompareOp op) : CudaOpKernel(c), op_(op) {
    if (c->HasAttr("incompatible_shape_error")) {
      OP_REQUIRES_OK(c, c->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(x.shape(), y.shape());
    if (!plan.ok() && !incompatible_shape_error_ && absl::IsInvalidArgument(plan.status())) {
      // Equal / NotEqual with incompatible_shape_error=false: one scalar verdict.
      OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, TensorShape()));
      const int verdict = op_ == CompareOp::kNotEqual ? 1 : 0;
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, cudaMemsetAsync(out->raw_data(), verdict,
                                                             sizeof(bool), stream())));
      return;
    }
    OP_REQUIRES_OK(ctx, plan.status());
    OP_ASSIGN_OR_RETURN(ctx, Tensor* z, ctx->allocate_output(0, plan->output));
    const int64_t n = plan->output.num_elements();
    if (n == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = DispatchNumericT(x.dtype(), [&](auto t) {
      using T = decltype(t);
      error = LaunchCompare<T>(op_, x.data<T>(), y.data<T>(), z->data<bool>(), n, plan->index,
                               stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  const CompareOp op_;
  bool incompatible_shape_error_ = true;
};

// ---- Select, SelectV2 ----

// TF 1.x Select: a scalar condition picks whole tensors, a vector one picks first-dim
// slices, otherwise all three shapes are equal. The condition is read on the GPU.
class SelectOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& then_t = ctx->input(1);
    const Tensor& else_t = ctx->input(2);
    const absl::Status same_size_error =
        OpError(*ctx, "'then' and 'else' must have the same size.  but received: ",
                then_t.shape().DebugString(), " vs. ", else_t.shape().DebugString());
    const int64_t n = then_t.NumElements();
    int64_t rows = n;  // one condition per element
    if (cond.shape().dims() == 0) {
      OP_REQUIRES(ctx, then_t.shape() == else_t.shape(), same_size_error);
      rows = 1;
    } else if (cond.shape().dims() == 1 && then_t.shape().dims() != 1) {
      OP_REQUIRES(ctx, then_t.shape().dims() >= 1,
                  OpError(*ctx, "'then' must be at least a vector, but saw shape: ",
                          then_t.shape().DebugString()));
      OP_REQUIRES(ctx, then_t.shape().dim_size(0) == cond.NumElements(),
                  OpError(*ctx, "Number of batches of 'then' must match size of 'cond', but saw: ",
                          then_t.shape().dim_size(0), " vs. ", cond.NumElements()));
      OP_REQUIRES(ctx, then_t.shape() == else_t.shape(), same_size_error);
      rows = cond.NumElements();
    } else {
      for (int i = 1; i < 3; ++i) {
        OP_REQUIRES(ctx, ctx->input(i).shape() == cond.shape(),
                    OpError(*ctx, "Inputs to operation ", ctx->node_name(), " of type ",
                            type_string(), " must have the same size and shape.  Input 0: ",
                            cond.shape().DebugString(), " != input ", i, ": ",
                            ctx->input(i).shape().DebugString()));
      }
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, then_t.shape()));
    if (n == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = DispatchBySize(then_t.dtype(), [&](auto e) {
      using E = decltype(e);
      error = LaunchSelectRows<E>(cond.data<bool>(), then_t.data<E>(), else_t.data<E>(),
                                  out->data<E>(), n, n / rows, stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, then_t.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }
};

// SelectV2: numpy broadcasting of condition, then and else.
class SelectV2OpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const TensorShape* shapes[3] = {&ctx->input(0).shape(), &ctx->input(1).shape(),
                                    &ctx->input(2).shape()};
    int rank = 0;
    for (const TensorShape* s : shapes) rank = std::max(rank, s->dims());
    std::vector<int64_t> dims(rank, 1);
    bool broadcastable = true;
    for (const TensorShape* s : shapes) {
      for (int i = 0; i < s->dims(); ++i) {
        int64_t& o = dims[rank - s->dims() + i];
        const int64_t d = s->dim_size(i);
        if (d == o || d == 1) continue;
        broadcastable = broadcastable && o == 1;
        o = d;
      }
    }
    OP_REQUIRES(ctx, broadcastable,
                OpError(*ctx, "condition ", shapes[0]->DebugString(), ", then ",
                        shapes[1]->DebugString(), ", and else ", shapes[2]->DebugString(),
                        " must be broadcastable"));
    OP_ASSIGN_OR_RETURN(ctx, Select3Index index, MakeIndex(shapes, dims));
    const TensorShape out_shape(absl::MakeConstSpan(dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, out_shape));
    const int64_t n = out_shape.num_elements();
    if (n == 0) return;
    const Tensor& then_t = ctx->input(1);
    cudaError_t error = cudaSuccess;
    const bool ok = DispatchBySize(then_t.dtype(), [&](auto e) {
      using E = decltype(e);
      error = LaunchSelectBroadcast<E>(ctx->input(0).data<bool>(), then_t.data<E>(),
                                       ctx->input(2).data<E>(), out->data<E>(), n, index,
                                       stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, then_t.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  // Per-operand strides over the output dims (0 where broadcast); size-1 output dims are
  // dropped and neighbours that are contiguous in all three operands merged.
  static absl::StatusOr<Select3Index> MakeIndex(const TensorShape* const shapes[3],
                                                const std::vector<int64_t>& dims) {
    const int rank = static_cast<int>(dims.size());
    std::vector<std::vector<int64_t>> strides(3, std::vector<int64_t>(rank, 0));
    for (int k = 0; k < 3; ++k) {
      int64_t stride = 1;
      for (int i = shapes[k]->dims() - 1; i >= 0; --i) {
        const int64_t d = shapes[k]->dim_size(i);
        strides[k][rank - shapes[k]->dims() + i] = d == 1 ? 0 : stride;
        stride *= d;
      }
    }
    Select3Index index;
    index.rank = 0;
    for (int d = 0; d < rank; ++d) {
      if (dims[d] == 1) continue;
      const int r = index.rank;
      bool merge = r > 0;
      for (int k = 0; k < 3 && merge; ++k) {
        merge = index.strides[k][r - 1] == strides[k][d] * dims[d];
      }
      if (merge) {
        index.dims[r - 1] *= dims[d];
        for (int k = 0; k < 3; ++k) index.strides[k][r - 1] = strides[k][d];
        continue;
      }
      if (r == kMaxBroadcastRank) {
        return absl::UnimplementedError(absl::StrCat(
            "SelectV2 on a CUDA GPU: broadcasting to ", DimsString(dims), " needs more than ",
            kMaxBroadcastRank, " collapsed dims"));
      }
      index.dims[r] = dims[d];
      for (int k = 0; k < 3; ++k) index.strides[k][r] = strides[k][d];
      index.rank = r + 1;
    }
    if (index.rank == 0) {  // a single element
      index.rank = 1;
      index.dims[0] = 1;
    }
    return index;
  }
};

// ---- Gathers: BroadcastTo, Tile, Transpose ----

// One output dim of a gather: its size, the input index's modulus and the input stride.
struct GatherDim {
  int64_t size, mod, stride;
};

// The GatherIndex of `dims`: size-1 dims dropped, a broadcast dim (stride 0) needs no
// modulus, and neighbours that neither wrap nor jump in the input are merged.
absl::StatusOr<GatherIndex> MakeGather(const std::vector<GatherDim>& dims) {
  GatherIndex g;
  g.rank = 0;
  for (GatherDim d : dims) {
    if (d.size == 1) continue;
    if (d.stride == 0) d.mod = d.size;
    const int r = g.rank;
    if (r > 0 && g.mods[r - 1] == g.dims[r - 1] && d.mod == d.size &&
        g.strides[r - 1] == d.stride * d.size) {
      g.dims[r - 1] *= d.size;
      g.mods[r - 1] = g.dims[r - 1];
      g.strides[r - 1] = d.stride;
      continue;
    }
    if (r == kMaxBroadcastRank) {
      return absl::UnimplementedError(absl::StrCat("a gather on a CUDA GPU of more than ",
                                                   kMaxBroadcastRank, " collapsed dims"));
    }
    g.dims[r] = d.size;
    g.mods[r] = d.mod;
    g.strides[r] = d.stride;
    g.rank = r + 1;
  }
  if (g.rank == 0) {  // a single element
    g.rank = 1;
    g.dims[0] = g.mods[0] = 1;
  }
  return g;
}

// Allocates output 0 of `shape` and gathers the input into it.
void RunGather(OpKernelContext* ctx, cudaStream_t stream, const Tensor& input,
               const TensorShape& shape, const std::vector<GatherDim>& dims) {
  OP_ASSIGN_OR_RETURN(ctx, GatherIndex index, MakeGather(dims));
  OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, shape));
  const int64_t n = shape.num_elements();
  if (n == 0) return;
  cudaError_t error = cudaSuccess;
  const bool ok = DispatchBySize(input.dtype(), [&](auto e) {
    using E = decltype(e);
    error = LaunchGather<E>(input.data<E>(), out->data<E>(), n, index, stream);
  });
  OP_REQUIRES(ctx, ok, Unsupported(*ctx, input.dtype()));
  OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
}

class BroadcastToOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    OP_REQUIRES(ctx, shape_t.shape().dims() == 1,
                OpError(*ctx, "shape must be a vector of {int32,int64}, got shape ",
                        shape_t.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dims, ReadIndexTensor(gpu(), shape_t));
    // broadcast_to_op.cc MakeRequestedShape's checks.
    int64_t product = 1;
    for (int64_t d : dims) {
      OP_REQUIRES(ctx, d >= 0, OpError(*ctx, "Dimension ", d, " must be >= 0"));
      OP_REQUIRES(ctx, !__builtin_mul_overflow(product, d, &product),
                  OpError(*ctx, "Shape ", DimsString(dims),
                          " would have more than 2**63 - 1 elements"));
    }
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    const TensorShape& in_shape = input.shape();
    OP_REQUIRES(ctx, in_shape.dims() <= shape.dims(),
                OpError(*ctx, "Rank of input (", in_shape.dims(),
                        ") must be no greater than rank of output shape (", shape.dims(), ")."));
    if (in_shape == shape) {
      ctx->set_output(0, input);  // nothing to broadcast: share the buffer, as TF does
      return;
    }
    const int offset = shape.dims() - in_shape.dims();
    bool compatible = true, equal = true;
    for (int i = 0; i < in_shape.dims(); ++i) {
      const int64_t x = in_shape.dim_size(i), y = shape.dim_size(i + offset);
      compatible = compatible && (x == y || x == 1 || y == 1);
      equal = equal && (x == y || x == 1);  // the broadcast of both is `shape`
    }
    OP_REQUIRES(ctx, compatible,
                OpError(*ctx, "Incompatible shapes: ", in_shape.DebugString(), " vs. ",
                        shape.DebugString()));
    OP_REQUIRES(ctx, equal,
                OpError(*ctx, "Unable to broadcast tensor of shape ", in_shape.DebugString(),
                        " to tensor of shape ", shape.DebugString()));
    const std::vector<int64_t> in_strides = Strides(in_shape);
    std::vector<GatherDim> gather;
    for (int d = 0; d < shape.dims(); ++d) {
      const int i = d - offset;
      const bool present = i >= 0 && in_shape.dim_size(i) != 1;
      gather.push_back({shape.dim_size(d), shape.dim_size(d), present ? in_strides[i] : 0});
    }
    RunGather(ctx, stream(), input, shape, gather);
  }
};

class TileOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& multiples_t = ctx->input(1);
    const int rank = input.shape().dims();
    OP_REQUIRES(ctx, multiples_t.shape().dims() == 1,
                OpError(*ctx, "Expected multiples to be 1-D, but got shape ",
                        multiples_t.shape().DebugString()));
    OP_REQUIRES(ctx, multiples_t.NumElements() == rank,
                OpError(*ctx, "Expected multiples argument to be a vector of length ", rank,
                        " but got length ", multiples_t.NumElements()));
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> multiples, ReadIndexTensor(gpu(), multiples_t));
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(ctx, multiples[d] >= 0,
                  OpError(*ctx, "Expected multiples[", d, "] >= 0, but got ", multiples[d]));
      const int64_t dim = input.shape().dim_size(d);
      OP_REQUIRES(ctx, !__builtin_mul_overflow(dim, multiples[d], &out_dims[d]),
                  OpError(*ctx, "output dimension ", d, " overflows: ", dim, " * ",
                          multiples[d]));
    }
    if (std::all_of(multiples.begin(), multiples.end(), [](int64_t m) { return m == 1; })) {
      ctx->set_output(0, input);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, out_dims));
    const std::vector<int64_t> in_strides = Strides(input.shape());
    std::vector<GatherDim> gather;
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.shape().dim_size(d);
      gather.push_back({out_dims[d], std::max<int64_t>(dim, 1), dim == 1 ? 0 : in_strides[d]});
    }
    RunGather(ctx, stream(), input, shape, gather);
  }
};

// A transpose with size-1 dims dropped and input dims that stay adjacent in the output
// merged: NHWC -> NCHW becomes [N, HW, C] with perm [0, 2, 1].
struct TransposePlan {
  std::vector<int64_t> in_dims;
  std::vector<int> perm;  // output dim k is input dim perm[k]
};

TransposePlan SimplifyTranspose(const TensorShape& shape, const std::vector<int>& perm) {
  std::vector<int> renumbered(shape.dims(), -1);  // index among the dims kept
  std::vector<int64_t> kept;
  for (int d = 0; d < shape.dims(); ++d) {
    if (shape.dim_size(d) == 1) continue;
    renumbered[d] = static_cast<int>(kept.size());
    kept.push_back(shape.dim_size(d));
  }
  std::vector<std::pair<int, int>> groups;  // [first, last] kept dims, in output order
  for (int axis : perm) {
    const int a = renumbered[axis];
    if (a < 0) continue;
    if (!groups.empty() && groups.back().second + 1 == a) {
      groups.back().second = a;
    } else {
      groups.push_back({a, a});
    }
  }
  std::vector<int> order(groups.size());  // groups by input position
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return groups[a].first < groups[b].first; });
  TransposePlan plan{std::vector<int64_t>(groups.size()), std::vector<int>(groups.size())};
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const auto [first, last] = groups[order[pos]];
    int64_t size = 1;
    for (int a = first; a <= last; ++a) size *= kept[a];
    plan.in_dims[pos] = size;
    plan.perm[order[pos]] = static_cast<int>(pos);
  }
  return plan;
}

class TransposeOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int> perm, ReadPerm(ctx, input.shape()));
    std::vector<int64_t> out_dims;
    for (int axis : perm) out_dims.push_back(input.shape().dim_size(axis));
    const TensorShape out_shape(absl::MakeConstSpan(out_dims));
    const TransposePlan plan = SimplifyTranspose(input.shape(), perm);
    if (plan.perm.size() <= 1) {  // no data moves
      ctx->set_output(0, input.Reshaped(out_shape));
      return;
    }
    const size_t rank = plan.perm.size();
    if (rank == 2 || (rank == 3 && plan.perm[0] == 0)) {
      // A (batched) 2-D transpose: perm [1, 0] or [0, 2, 1] (merging leaves no other).
      OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, out_shape));
      if (out->NumElements() == 0) return;
      const int64_t batch = rank == 3 ? plan.in_dims[0] : 1;
      const int64_t rows = plan.in_dims[rank - 2], cols = plan.in_dims[rank - 1];
      cudaError_t error = cudaSuccess;
      const bool ok = DispatchBySize(input.dtype(), [&](auto e) {
        using E = decltype(e);
        error = LaunchTranspose2D<E>(input.data<E>(), out->data<E>(), batch, rows, cols, stream());
      });
      OP_REQUIRES(ctx, ok, Unsupported(*ctx, input.dtype()));
      OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
      return;
    }
    std::vector<int64_t> in_strides(rank, 1);
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      in_strides[d] = in_strides[d + 1] * plan.in_dims[d + 1];
    }
    std::vector<GatherDim> gather;
    for (int axis : plan.perm) {
      gather.push_back({plan.in_dims[axis], plan.in_dims[axis], in_strides[axis]});
    }
    RunGather(ctx, stream(), input, out_shape, gather);
  }

 private:
  // perm as ints after checking it is a permutation of [0, rank), with transpose_op.cc's
  // texts.
  absl::StatusOr<std::vector<int>> ReadPerm(OpKernelContext* ctx, const TensorShape& shape) {
    const Tensor& perm_t = ctx->input(1);
    const std::string input_shape = absl::StrCat(" (input shape ", shape.DebugString(), ")");
    if (perm_t.shape().dims() != 1) {
      return OpError(*ctx, "perm must be a vector, not ", perm_t.shape().DebugString(),
                     input_shape);
    }
    DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> values, ReadIndexTensor(gpu(), perm_t));
    const int rank = shape.dims();
    if (static_cast<int64_t>(values.size()) != rank) {
      return OpError(*ctx, "transpose expects a vector of size ", rank,
                     ". But input(1) is a vector of size ", values.size(), input_shape);
    }
    std::vector<int> perm(rank);
    std::vector<bool> seen(rank, false);
    for (int i = 0; i < rank; ++i) {
      if (values[i] < 0 || values[i] >= rank) {
        return OpError(*ctx, values[i], " is out of range [0 .. ", rank, ") in perm ",
                       DimsString(values), input_shape);
      }
      perm[i] = static_cast<int>(values[i]);
      seen[perm[i]] = true;
    }
    for (int i = 0; i < rank; ++i) {
      if (!seen[i]) {
        return OpError(*ctx, i, " is missing from perm ", DimsString(values), input_shape);
      }
    }
    return perm;
  }
};

// ---- ArgMax ----

class ArgMaxOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dim = ctx->input(1);
    OP_REQUIRES(ctx, dim.shape().dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("dim must be a scalar, but received tensor of shape: ",
                                 dim.shape().DebugString())));
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> axes, ReadIndexTensor(gpu(), dim));
    const TensorShape& shape = input.shape();
    const int rank = shape.dims();
    int64_t axis = axes[0];
    OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                absl::InvalidArgumentError(absl::StrCat("Expected dimension in the range [",
                                                        -rank, ", ", rank, "), but got ", axis)));
    if (axis < 0) axis += rank;
    OP_REQUIRES(ctx, shape.dim_size(axis) > 0,
                absl::InvalidArgumentError(absl::StrCat("Reduction axis ", axis,
                                                        " is empty in shape ",
                                                        shape.DebugString())));
    std::vector<int64_t> out_dims;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      out_dims.push_back(shape.dim_size(d));
      (d < axis ? outer : inner) *= shape.dim_size(d);
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out,
                        ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims))));
    if (out->NumElements() == 0) return;
    const int64_t len = shape.dim_size(axis);
    cudaError_t error = cudaSuccess;
    const bool ok = DispatchNumericT(input.dtype(), [&](auto t) {
      using T = decltype(t);
      if (out->dtype() == DT_INT32) {
        error = LaunchArgMax<T, int32_t>(input.data<T>(), out->data<int32_t>(), outer, len,
                                         inner, stream());
      } else {
        error = LaunchArgMax<T, int64_t>(input.data<T>(), out->data<int64_t>(), outer, len,
                                         inner, stream());
      }
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, input.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }
};

// A factory binding a constructor argument.
template <typename Kernel, typename Arg>
KernelFactory With(Arg arg) {
  return [arg](OpKernelConstruction* c) { return std::make_unique<Kernel>(c, arg); };
}

}  // namespace

absl::Status RegisterCudaTrainKernels(KernelRegistry* registry) {
  using G = ActivationGradOp;
  const std::pair<const char*, G> grads[] = {
      {"ReluGrad", G::kRelu},         {"Relu6Grad", G::kRelu6},
      {"EluGrad", G::kElu},           {"SeluGrad", G::kSelu},
      {"LeakyReluGrad", G::kLeakyRelu}, {"SoftplusGrad", G::kSoftplus},
      {"SoftsignGrad", G::kSoftsign}, {"SigmoidGrad", G::kSigmoid},
      {"TanhGrad", G::kTanh},
  };
  for (const auto& [op, kind] : grads) {
    DFLOW_RETURN_IF_ERROR(
        registry->Register(GpuKernel(op), With<ActivationGradOpKernel>(kind)));
  }
  const std::pair<const char*, CompareOp> compares[] = {
      {"Equal", CompareOp::kEqual},     {"NotEqual", CompareOp::kNotEqual},
      {"Greater", CompareOp::kGreater}, {"GreaterEqual", CompareOp::kGreaterEqual},
      {"Less", CompareOp::kLess},       {"LessEqual", CompareOp::kLessEqual},
  };
  for (const auto& [op, kind] : compares) {
    DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel(op), With<CompareOpKernel>(kind)));
  }
  DFLOW_RETURN_IF_ERROR(registry->Register<BiasAddGradOpKernel>(GpuKernel("BiasAddGrad")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<SoftmaxXentOpKernel>(GpuKernel("SoftmaxCrossEntropyWithLogits")));
  DFLOW_RETURN_IF_ERROR(registry->Register<SparseSoftmaxXentOpKernel>(
      GpuKernel("SparseSoftmaxCrossEntropyWithLogits")));
  DFLOW_RETURN_IF_ERROR(registry->Register<SelectOpKernel>(GpuKernel("Select")));
  DFLOW_RETURN_IF_ERROR(registry->Register<SelectV2OpKernel>(GpuKernel("SelectV2")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ArgMaxOpKernel>(GpuKernel("ArgMax")));
  DFLOW_RETURN_IF_ERROR(registry->Register<BroadcastToOpKernel>(GpuKernel("BroadcastTo")));
  DFLOW_RETURN_IF_ERROR(registry->Register<TileOpKernel>(GpuKernel("Tile")));
  return registry->Register<TransposeOpKernel>(GpuKernel("Transpose"));
}

}  // namespace dflow::cuda
