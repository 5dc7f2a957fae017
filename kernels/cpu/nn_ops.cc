// Neural-network kernels: activations (through cwise_util.h's UnaryOp), Softmax and
// LogSoftmax over the last dim, and BiasAdd (through broadcast.h's engine).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/rounded_row_sum.h"

namespace dflow {
namespace cwise {
namespace {

// ---------------------------------------------------------------------------------
// Activations.

// Relu and Relu6 keep NaN, as TF does (relu(nan) = relu6(nan) = nan): every comparison
// with NaN is false, so NaN falls through to `x`.
struct ReluFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? T(0) : x;
  }
};
struct Relu6Fn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
  }
};
// Elu and Softplus (TF's exp - 1 and three-way forms) are in activation_ops.cc.

// ---------------------------------------------------------------------------------
// Softmax / LogSoftmax over the last dim. Each row subtracts its max before exp, so
// large logits neither overflow nor lose the small ones; the sum of exps is kept in
// double. `out` may be `in` (forwarded buffer).

template <typename T>
T RowMax(const T* in, int64_t n) {
  constexpr int kLanes = 8;
  T lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -std::numeric_limits<T>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = std::max(lanes[j], in[i + j]);
  }
  for (; i < n; ++i) lanes[0] = std::max(lanes[0], in[i]);
  return *std::max_element(lanes, lanes + kLanes);
}

template <typename T, bool kLog>
void SoftmaxRow(const T* in, T* out, int64_t n) {
  const T max = RowMax(in, n);
  double sum = 0;
  if constexpr (kLog) {
    for (int64_t i = 0; i < n; ++i) sum += std::exp(in[i] - max);
    const T shift = max + static_cast<T>(std::log(sum));
    DFLOW_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] - shift;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T e = std::exp(in[i] - max);
      out[i] = e;
      sum += e;
    }
    const T scale = static_cast<T>(1.0 / sum);
    DFLOW_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] *= scale;
  }
}

// One row of half or bfloat16 as TF's Eigen expression computes it: shifted = x - max,
// e = exp(shifted), then e * (1 / sum) or shifted - log(sum), every operation rounded
// to T and the sum in Eigen's order (rounded_row_sum.h); `first` is the row's flat index.
// `out` may be `in`; `exps` is scratch for LogSoftmax.
template <typename T, bool kLog>
void RoundedSoftmaxRow(const T* in, T* out, int64_t n, int64_t first, std::vector<T>* exps) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, in[i].ToFloat());
  T* e = out;
  if constexpr (kLog) {
    exps->resize(n);
    e = exps->data();
  }
  for (int64_t i = 0; i < n; ++i) {
    const T shifted = T::FromFloat(in[i].ToFloat() - max);
    if constexpr (kLog) out[i] = shifted;
    e[i] = T::FromFloat(std::exp(shifted.ToFloat()));
  }
  const float sum = RoundedRowSum(e, n, first).ToFloat();
  if constexpr (kLog) {
    const float log_sum = T::FromFloat(std::log(sum)).ToFloat();
    for (int64_t i = 0; i < n; ++i) out[i] = T::FromFloat(out[i].ToFloat() - log_sum);
  } else {
    const float scale = T::FromFloat(1.0f / sum).ToFloat();
    for (int64_t i = 0; i < n; ++i) out[i] = T::FromFloat(out[i].ToFloat() * scale);
  }
}

template <bool kLog>
struct SoftmaxKind {
  static constexpr bool kIsLog = kLog;
};

template <typename T, typename Kind>
class SoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES(ctx, logits.shape().dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat("logits must have >= 1 dimension, got ",
                                                        logits.shape().DebugString())));
    const TensorShape shape = logits.shape();
    const int64_t cols = shape.dim_size(shape.dims() - 1);
    const int64_t rows = cols == 0 ? 0 : shape.num_elements() / cols;
    const T* in = logits.data<T>();
    Tensor* output = ctx->ForwardInputToOutput(0, 0, shape);
    if (output == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, output, ctx->allocate_output(0, shape));
    }
    T* out = output->data<T>();
    ParallelForElements(ctx, rows, cols * 30, [=](int64_t begin, int64_t end) {
      if constexpr (kIsHalfOrBfloat16<T>) {
        std::vector<T> exps;
        for (int64_t r = begin; r < end; ++r) {
          RoundedSoftmaxRow<T, Kind::kIsLog>(in + r * cols, out + r * cols, cols, r * cols,
                                             &exps);
        }
      } else {
        for (int64_t r = begin; r < end; ++r) {
          SoftmaxRow<T, Kind::kIsLog>(in + r * cols, out + r * cols, cols);
        }
      }
    });
  }
};

// ---------------------------------------------------------------------------------
// BiasAdd: value + bias along the channel dim (last for NHWC, dim 1 for NCHW). Both
// layouts are a broadcast of bias viewed as [C] (NHWC) or [C,1,...,1] (NCHW).

struct AddBiasFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return a + b;
  }
};

template <typename T, typename Fn>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string format = "NHWC";
    if (ctx->HasAttr("data_format")) OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &format));
    OP_REQUIRES(ctx, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError("BiasAdd: invalid data_format '" + format +
                                           "': expected NHWC or NCHW"));
    channels_first_ = format == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    const TensorShape shape = value.shape();  // a copy: forwarding empties input 0
    OP_REQUIRES(ctx, shape.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("Input tensor must be at least 2D: ", shape.DebugString())));
    OP_REQUIRES(ctx, bias.shape().dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("Biases must be 1D: ", bias.shape().DebugString())));
    const int channel_dim = channels_first_ ? 1 : shape.dims() - 1;
    const int64_t channels = shape.dim_size(channel_dim);
    OP_REQUIRES(ctx, bias.shape().dim_size(0) == channels,
                absl::InvalidArgumentError(absl::StrCat(
                    "Must provide as many biases as the channel dimension of the input "
                    "tensor: ",
                    bias.shape().DebugString(), " vs. ", shape.DebugString())));
    DimVector bias_dims(shape.dims() - channel_dim, 1);
    bias_dims[0] = channels;
    OP_ASSIGN_OR_RETURN(ctx, BroadcastPlan plan,
                        MakeBroadcastPlan(shape, TensorShape(absl::MakeConstSpan(bias_dims))));
    const T* value_data = value.data<T>();
    const T* bias_data = bias.data<T>();
    Tensor* out = ctx->ForwardInputToOutput(0, 0, shape);
    if (out == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, out, ctx->allocate_output(0, shape));
    }
    RunBroadcast<Fn>(ctx, plan, value_data, bias_data, out->data<T>());
  }

 private:
  bool channels_first_ = false;
};

}  // namespace

absl::Status RegisterNnKernels(KernelRegistry* r) {
  const NumericTypes numeric;
  const RealTypes real;
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, ReluFn>(r, "Relu", numeric)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, Relu6Fn>(r, "Relu6", numeric)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<SoftmaxOp, SoftmaxKind<false>>(r, "Softmax", real)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<SoftmaxOp, SoftmaxKind<true>>(r, "LogSoftmax", real)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<BiasAddOp, AddBiasFn>(r, "BiasAdd", numeric)));
  // Half and bfloat16, computed in float and rounded as TF does (cwise_util.h InFloat).
  const HalfTypes half;
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, InFloat<ReluFn>>(r, "Relu", half)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, InFloat<Relu6Fn>>(r, "Relu6", half)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<SoftmaxOp, SoftmaxKind<false>>(r, "Softmax", half)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<SoftmaxOp, SoftmaxKind<true>>(r, "LogSoftmax", half)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<BiasAddOp, InFloat<AddBiasFn>>(r, "BiasAdd", half)));
  return absl::OkStatus();
}

}  // namespace cwise
}  // namespace dflow
