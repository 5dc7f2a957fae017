// Element-wise CUDA kernels: unary math and activations (LeakyRelu with its alpha), the
// IsNan/IsInf/IsFinite predicates, broadcasting binary ops (DivNoNan, MulNoNan too), AddN,
// BiasAdd, Cast, Fill, ZerosLike, OnesLike. Float everywhere; int32/int64 for the ops
// that make sense on integers (TF registers the same on its GPUs).
#include <algorithm>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {
namespace {

// The dtypes each op registers for are in kernels/sim/gpu_kernel_list.h (GpuKernel(op)):
// Dispatch below must cover them.

// Calls fn(T{}) for float / double / int32 / int64; false for other dtypes.
template <typename Fn>
bool Dispatch(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn(float{}); return true;
    case DT_DOUBLE: fn(double{}); return true;
    case DT_INT32: fn(int32_t{}); return true;
    case DT_INT64: fn(int64_t{}); return true;
    default: return false;
  }
}

// Dispatch plus bool (Cast's source and destination types).
template <typename Fn>
bool DispatchCastable(DataType dtype, Fn&& fn) {
  if (dtype == DT_BOOL) {
    fn(bool{});
    return true;
  }
  return Dispatch(dtype, std::forward<Fn>(fn));
}

absl::Status Unsupported(const OpKernelContext& ctx, DataType dtype) {
  return OpError(ctx, "no CUDA kernel for dtype ", DataTypeString(dtype));
}

class UnaryOpKernel final : public CudaOpKernel {
 public:
  UnaryOpKernel(OpKernelConstruction* c, UnaryOp op) : CudaOpKernel(c), op_(op) {}
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = Dispatch(x.dtype(), [&](auto t) {
      using T = decltype(t);
      error = LaunchUnary<T>(op_, x.data<T>(), y->data<T>(), x.NumElements(), stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  const UnaryOp op_;
};

// LeakyRelu: the alpha attr rounded to T, as the CPU kernel.
class LeakyReluOpKernel final : public CudaOpKernel {
 public:
  explicit LeakyReluOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("alpha", &alpha_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    bool ok = true;
    switch (x.dtype()) {
      case DT_FLOAT:
        error = LaunchLeakyRelu<float>(x.data<float>(), y->data<float>(), x.NumElements(), alpha_,
                                       stream());
        break;
      case DT_DOUBLE:
        error = LaunchLeakyRelu<double>(x.data<double>(), y->data<double>(), x.NumElements(),
                                        static_cast<double>(alpha_), stream());
        break;
      default: ok = false;
    }
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  float alpha_ = 0.2f;
};

// IsNan, IsInf, IsFinite: float or double in, bool out.
class PredicateOpKernel final : public CudaOpKernel {
 public:
  PredicateOpKernel(OpKernelConstruction* c, PredicateOp op) : CudaOpKernel(c), op_(op) {}
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    bool ok = true;
    switch (x.dtype()) {
      case DT_FLOAT:
        error = LaunchPredicate<float>(op_, x.data<float>(), y->data<bool>(), x.NumElements(),
                                       stream());
        break;
      case DT_DOUBLE:
        error = LaunchPredicate<double>(op_, x.data<double>(), y->data<bool>(), x.NumElements(),
                                        stream());
        break;
      default: ok = false;
    }
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  const PredicateOp op_;
};

class BinaryOpKernel final : public CudaOpKernel {
 public:
  BinaryOpKernel(OpKernelConstruction* c, BinaryOp op) : CudaOpKernel(c), op_(op) {}
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, BroadcastPlan plan, MakeBroadcastPlan(x.shape(), y.shape()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* z, ctx->allocate_output(0, plan.output));
    const int64_t n = plan.output.num_elements();
    if (n == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = Dispatch(x.dtype(), [&](auto t) {
      using T = decltype(t);
      error = LaunchBinary<T>(op_, x.data<T>(), y.data<T>(), z->data<T>(), n, plan.index, stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  const BinaryOp op_;
};

class AddNOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      OP_REQUIRES(ctx, ctx->input(i).shape() == first.shape(),
                  OpError(*ctx, "Inputs to operation AddN must have the same size and shape. "
                                "Input 0: ", first.shape().DebugString(), " != input ", i, ": ",
                          ctx->input(i).shape().DebugString()));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, first.shape()));
    if (first.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = Dispatch(first.dtype(), [&](auto t) {
      using T = decltype(t);
      // Passes of up to kMaxAddN inputs; later passes add onto the output.
      for (int begin = 0; begin < ctx->num_inputs() && error == cudaSuccess; begin += kMaxAddN) {
        PointerArray<T> inputs;
        for (int i = begin; i < std::min(ctx->num_inputs(), begin + kMaxAddN); ++i) {
          inputs.ptrs[inputs.count++] = ctx->input(i).data<T>();
        }
        error = LaunchAddN<T>(inputs, begin > 0, out->data<T>(), first.NumElements(), stream());
      }
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, first.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }
};

class BiasAddOpKernel final : public CudaOpKernel {
 public:
  explicit BiasAddOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    std::string format = "NHWC";
    if (c->HasAttr("data_format")) OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_REQUIRES(c, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    nchw_ = format == "NCHW";
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    OP_REQUIRES(ctx, x.shape().dims() >= 2,
                OpError(*ctx, "Input tensor must be at least 2D: ", x.shape().DebugString()));
    OP_REQUIRES(ctx, bias.shape().dims() == 1,
                OpError(*ctx, "Biases must be 1D: ", bias.shape().DebugString()));
    const int channel_dim = nchw_ ? 1 : x.shape().dims() - 1;
    const int64_t channels = x.shape().dim_size(channel_dim);
    OP_REQUIRES(ctx, bias.NumElements() == channels,
                OpError(*ctx, "Must provide as many biases as the channel dimension of the input "
                              "tensor: ", bias.shape().DebugString(), " vs. ",
                        x.shape().DebugString()));
    int64_t inner = 1;
    for (int d = channel_dim + 1; d < x.shape().dims(); ++d) inner *= x.shape().dim_size(d);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = Dispatch(x.dtype(), [&](auto t) {
      using T = decltype(t);
      error = LaunchBiasAdd<T>(x.data<T>(), bias.data<T>(), y->data<T>(), x.NumElements(),
                               channels, inner, stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  bool nchw_ = false;
};

class CastOpKernel final : public CudaOpKernel {
 public:
  explicit CastOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("DstT", &dst_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (x.dtype() == dst_) {
      ctx->set_output(0, x);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* y, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    bool ok = false;
    DispatchCastable(x.dtype(), [&](auto s) {
      using Src = decltype(s);
      ok = DispatchCastable(dst_, [&](auto d) {
        using Dst = decltype(d);
        error = LaunchCast<Src, Dst>(x.data<Src>(), y->data<Dst>(), x.NumElements(), stream());
      });
    });
    OP_REQUIRES(ctx, ok, OpError(*ctx, "no CUDA kernel to cast ", DataTypeString(x.dtype()),
                                 " to ", DataTypeString(dst_)));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  DataType dst_ = DT_INVALID;
};

class FillOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, ctx->input(0).shape().dims() == 1,
                OpError(*ctx, "dims must be a vector, got shape ",
                        ctx->input(0).shape().DebugString()));
    OP_REQUIRES(ctx, value.shape().dims() == 0,
                OpError(*ctx, "value must be a scalar, got shape ", value.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dims, ReadIndexTensor(gpu(), ctx->input(0)));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, TensorShape::Make(absl::MakeConstSpan(dims)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, shape));
    if (shape.num_elements() == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = Dispatch(value.dtype(), [&](auto t) {
      using T = decltype(t);
      error = LaunchFill<T>(value.data<T>(), out->data<T>(), shape.num_elements(), stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, value.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }
};

// ZerosLike (value 0) and OnesLike (value 1).
class ConstantLikeOpKernel final : public CudaOpKernel {
 public:
  ConstantLikeOpKernel(OpKernelConstruction* c, int value) : CudaOpKernel(c), value_(value) {}
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, x.shape()));
    if (x.NumElements() == 0) return;
    cudaError_t error = cudaSuccess;
    const bool ok = Dispatch(x.dtype(), [&](auto t) {
      using T = decltype(t);
      error = LaunchFillConstant<T>(static_cast<T>(value_), out->data<T>(), x.NumElements(),
                                    stream());
    });
    OP_REQUIRES(ctx, ok, Unsupported(*ctx, x.dtype()));
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, error));
  }

 private:
  const int value_;
};

template <typename Arg>
KernelFactory Factory(Arg arg, std::unique_ptr<OpKernel> (*make)(OpKernelConstruction*, Arg)) {
  return [arg, make](OpKernelConstruction* c) { return make(c, arg); };
}

std::unique_ptr<OpKernel> MakeUnary(OpKernelConstruction* c, UnaryOp op) {
  return std::make_unique<UnaryOpKernel>(c, op);
}
std::unique_ptr<OpKernel> MakePredicate(OpKernelConstruction* c, PredicateOp op) {
  return std::make_unique<PredicateOpKernel>(c, op);
}
std::unique_ptr<OpKernel> MakeBinary(OpKernelConstruction* c, BinaryOp op) {
  return std::make_unique<BinaryOpKernel>(c, op);
}
std::unique_ptr<OpKernel> MakeConstantLike(OpKernelConstruction* c, int value) {
  return std::make_unique<ConstantLikeOpKernel>(c, value);
}

}  // namespace

absl::Status RegisterCudaMathKernels(KernelRegistry* registry) {
  struct UnaryEntry {
    const char* op;
    UnaryOp kind;
  };
  const UnaryEntry unary[] = {
      {"Neg", UnaryOp::kNeg},         {"Abs", UnaryOp::kAbs},     {"Square", UnaryOp::kSquare},
      {"Sqrt", UnaryOp::kSqrt},       {"Rsqrt", UnaryOp::kRsqrt}, {"Exp", UnaryOp::kExp},
      {"Log", UnaryOp::kLog},         {"Relu", UnaryOp::kRelu},   {"Relu6", UnaryOp::kRelu6},
      {"Sigmoid", UnaryOp::kSigmoid}, {"Tanh", UnaryOp::kTanh},     {"Elu", UnaryOp::kElu},
      {"Selu", UnaryOp::kSelu},       {"Softsign", UnaryOp::kSoftsign},
      {"Softplus", UnaryOp::kSoftplus}, {"Erf", UnaryOp::kErf},   {"Erfc", UnaryOp::kErfc},
      {"Round", UnaryOp::kRound},     {"Rint", UnaryOp::kRound},
  };
  for (const UnaryEntry& e : unary) {
    DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel(e.op), Factory(e.kind, &MakeUnary)));
  }
  struct BinaryEntry {
    const char* op;
    BinaryOp kind;
  };
  const BinaryEntry binary[] = {
      {"Add", BinaryOp::kAdd},     {"AddV2", BinaryOp::kAdd},   {"Sub", BinaryOp::kSub},
      {"Mul", BinaryOp::kMul},     {"RealDiv", BinaryOp::kDiv}, {"Maximum", BinaryOp::kMax},
      {"Minimum", BinaryOp::kMin}, {"SquaredDifference", BinaryOp::kSquaredDifference},
      {"DivNoNan", BinaryOp::kDivNoNan}, {"MulNoNan", BinaryOp::kMulNoNan},
  };
  for (const BinaryEntry& e : binary) {
    DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel(e.op), Factory(e.kind, &MakeBinary)));
  }
  DFLOW_RETURN_IF_ERROR(registry->Register<LeakyReluOpKernel>(GpuKernel("LeakyRelu")));
  const std::pair<const char*, PredicateOp> predicates[] = {{"IsNan", PredicateOp::kIsNan},
                                                            {"IsInf", PredicateOp::kIsInf},
                                                            {"IsFinite", PredicateOp::kIsFinite}};
  for (const auto& [op, kind] : predicates) {
    DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel(op), Factory(kind, &MakePredicate)));
  }
  DFLOW_RETURN_IF_ERROR(registry->Register<AddNOpKernel>(GpuKernel("AddN")));
  DFLOW_RETURN_IF_ERROR(registry->Register<BiasAddOpKernel>(GpuKernel("BiasAdd")));
  DFLOW_RETURN_IF_ERROR(registry->Register<CastOpKernel>(GpuKernel("Cast")));
  DFLOW_RETURN_IF_ERROR(registry->Register<FillOpKernel>(GpuKernel("Fill")));
  DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel("ZerosLike"), Factory(0, &MakeConstantLike)));
  return registry->Register(GpuKernel("OnesLike"), Factory(1, &MakeConstantLike));
}

}  // namespace dflow::cuda
