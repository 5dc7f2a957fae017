// Kernels a TF 1.x training step needs besides the forward ops: the sparse softmax
// cross-entropy loss (with its backprop) and the dense one, L2Loss, ReluGrad, BiasAddGrad, BroadcastGradientArgs (the reduction
// indices of a broadcasting op's gradient) and InTopKV2 (the accuracy of an eval step).
// Each follows TF's CPU kernel, errors included.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// ---------------------------------------------------------------------------------
// SparseSoftmaxCrossEntropyWithLogits: loss[b] = logsumexp(f[b]) - f[b, label[b]],
// backprop[b] = softmax(f[b]) - onehot(label[b]). Each row subtracts its max first, so
// large logits neither overflow nor swamp the small ones.

template <typename T, typename L>
void XentRow(const T* f, L label, int64_t classes, T* loss, T* backprop) {
  const T max = *std::max_element(f, f + classes);
  T sum = 0;
  for (int64_t c = 0; c < classes; ++c) sum += std::exp(f[c] - max);
  const T log_sum = std::log(sum);
  *loss = log_sum - (f[label] - max);
  for (int64_t c = 0; c < classes; ++c) {
    backprop[c] = std::exp(f[c] - max) / sum - (c == label ? T(1) : T(0));
  }
}

template <typename T, typename L>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.shape().dims() == 2,
                KernelError(*ctx, "logits must be 2-D, but got shape ",
                            features.shape().DebugString()));
    OP_REQUIRES(ctx, labels.shape().dims() == 1,
                KernelError(*ctx, "labels must be 1-D, but got shape ",
                            labels.shape().DebugString()));
    const int64_t batch = features.shape().dim_size(0);
    const int64_t classes = features.shape().dim_size(1);
    OP_REQUIRES(ctx, labels.shape().dim_size(0) == batch,
                KernelError(*ctx, "logits and labels must have the same first dimension, got "
                                  "logits shape ",
                            features.shape().DebugString(), " and labels shape ",
                            labels.shape().DebugString()));
    OP_REQUIRES(ctx, classes > 0 || batch == 0,
                KernelError(*ctx, "Must have at least one class, but got logits shape ",
                            features.shape().DebugString()));
    const L* label = labels.data<L>();
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, label[b] >= 0 && label[b] < classes, LabelError(*ctx, labels, label[b],
                                                                       classes));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * backprop, ctx->allocate_output(1, features.shape()));
    const T* f = features.data<T>();
    T* l = loss->data<T>();
    T* bp = backprop->data<T>();
    ParallelForElements(ctx, batch, 30 * classes, [&](int64_t first, int64_t limit) {
      for (int64_t b = first; b < limit; ++b) {
        XentRow(f + b * classes, label[b], classes, l + b, bp + b * classes);
      }
    });
  }

 private:
  // TF's message, which lists every label (Tensor::SummarizeValue of all elements).
  static absl::Status LabelError(const OpKernelContext& ctx, const Tensor& labels, L bad,
                                 int64_t classes) {
    const L* values = labels.data<L>();
    return KernelError(ctx, "Received a label value of ", bad,
                       " which is outside the valid range of [0, ", classes,
                       ").  Label values: ",
                       absl::StrJoin(values, values + labels.NumElements(), " "));
  }
};

// ---------------------------------------------------------------------------------
// SoftmaxCrossEntropyWithLogits (dense labels, same [batch, classes] shape): TF's
// XentEigenImpl order: shifted = f - max, loss = sum(labels * (log(sum(exp(shifted))) -
// shifted)), backprop = exp(shifted) / sum - labels.

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    const TensorShape& ls = logits.shape();
    const TensorShape& ys = labels.shape();
    // TF broadcasts the two (BCast): a dim of 1 in either stretches to the other's.
    auto broadcastable = [&](int d) {
      return ls.dim_size(d) == ys.dim_size(d) || ls.dim_size(d) == 1 || ys.dim_size(d) == 1;
    };
    OP_REQUIRES(ctx, ls.dims() == 2 && ys.dims() == 2,
                absl::InvalidArgumentError(
                    "logits and labels must be either 2-dimensional, or broadcasted to be "
                    "2-dimensional"));
    OP_REQUIRES(ctx, broadcastable(0) && broadcastable(1),
                absl::InvalidArgumentError(absl::StrCat(
                    "logits and labels must be broadcastable: logits_size=", ls.DebugString(),
                    " labels_size=", ys.DebugString())));
    const int64_t batch = std::max(ls.dim_size(0), ys.dim_size(0));
    const int64_t classes = std::max(ls.dim_size(1), ys.dim_size(1));
    const bool same = ls == ys;
    Tensor broadcast_logits, broadcast_labels;
    if (!same) {
      OP_ASSIGN_OR_RETURN(ctx, broadcast_logits, Broadcast(ctx, logits, batch, classes));
      OP_ASSIGN_OR_RETURN(ctx, broadcast_labels, Broadcast(ctx, labels, batch, classes));
    }
    const Tensor& f_t = same ? logits : broadcast_logits;
    const Tensor& y_t = same ? labels : broadcast_labels;
    OP_ASSIGN_OR_RETURN(ctx, Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * backprop,
                        ctx->allocate_output(1, TensorShape({batch, classes})));
    const T* f = f_t.data<T>();
    const T* y = y_t.data<T>();
    T* l = loss->data<T>();
    T* b = backprop->data<T>();
    ParallelForElements(ctx, batch, classes * 30, [&](int64_t first, int64_t end) {
      for (int64_t r = first; r < end; ++r) {
        const T* fr = f + r * classes;
        const T* yr = y + r * classes;
        T* br = b + r * classes;
        const T max = classes > 0 ? *std::max_element(fr, fr + classes) : T(0);
        T sum = 0;
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(fr[c] - max);
        const T log_sum = std::log(sum);
        T total = 0;
        for (int64_t c = 0; c < classes; ++c) {
          const T shifted = fr[c] - max;
          total += yr[c] * (log_sum - shifted);
          br[c] = std::exp(shifted) / sum - yr[c];
        }
        l[r] = total;
      }
    });
  }

 private:
  // `t` [rows or 1, cols or 1] stretched to [rows, cols].
  static absl::StatusOr<Tensor> Broadcast(OpKernelContext* ctx, const Tensor& t, int64_t rows,
                                          int64_t cols) {
    DFLOW_ASSIGN_OR_RETURN(Tensor out, ctx->allocate_temp(t.dtype(), TensorShape({rows, cols})));
    const int64_t r_in = t.shape().dim_size(0), c_in = t.shape().dim_size(1);
    const T* in = t.data<T>();
    T* o = out.data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = in[(r_in == 1 ? 0 : r) * c_in + (c_in == 1 ? 0 : c)];
    }
    return out;
  }
};

// L2Loss(t) = sum(t^2) / 2, summed in double.
template <typename T>
class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    double sum = 0;
    for (T v : t.flat<T>()) sum += static_cast<double>(v) * static_cast<double>(v);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<T>() = static_cast<T>(sum / 2);
  }
};

// ---------------------------------------------------------------------------------
// ReluGrad: gradients where the forward input was positive, 0 elsewhere (x == 0 too).

template <typename T>
class ReluGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& gradients = ctx->input(0);
    const Tensor& features = ctx->input(1);
    OP_REQUIRES(ctx, gradients.shape() == features.shape(),
                KernelError(*ctx, "Inputs to operation ", ctx->node_name(), " of type ",
                            type_string(), " must have the same size and shape.  Input 0: ",
                            gradients.shape().DebugString(),
                            " != input 1: ", features.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, features.shape()));
    const T* g = gradients.data<T>();
    const T* x = features.data<T>();
    T* out = output->data<T>();
    ParallelForElements(ctx, output->NumElements(), 1, [&](int64_t first, int64_t limit) {
      // Both loads unconditional: a select the compiler vectorises, where a branch on
      // the sign of activations mispredicts about half the time (4 ns an element).
      for (int64_t i = first; i < limit; ++i) {
        const T gi = g[i];
        out[i] = x[i] > T(0) ? gi : T(0);
      }
    });
  }
};

// ---------------------------------------------------------------------------------
// BiasAddGrad: the bias gradient, out_backprop summed over every dim but the channel's
// (the last for NHWC, dim 1 for NCHW). Sums in double, so long reductions stay exact to
// float precision whatever their length.
//
// NHWC sums run over fixed chunks of rows, each chunk's sums made on whichever pool
// thread takes it and the chunks' sums added in chunk order: the same bits for any
// thread count. Within a chunk, rows are read in groups whose width is a multiple of
// both the channel count and 8, each lane summing one channel of every group: LeNet's 6
// channels are 24 double lanes (4 rows) instead of a 6-wide loop the compiler can only
// run as scalars (its 100x28x28x6 gradient: 278 us a step).

// Rows per chunk of an NHWC BiasAddGrad.
constexpr int64_t kBiasGradChunkRows = 2048;

// sums[c] += the NHWC rows [0, rows) of `g` (`channels` wide), in groups as above.
template <typename T>
void SumRowsInGroups(const T* g, int64_t rows, int64_t channels, double* sums) {
  const int64_t group = std::lcm<int64_t>(channels, 8);
  if (group > 256) {  // wide rows vectorise as they are
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = g + r * channels;
      for (int64_t c = 0; c < channels; ++c) sums[c] += static_cast<double>(row[c]);
    }
    return;
  }
  const int64_t rows_per_group = group / channels;
  double lanes[256] = {};
  int64_t r = 0;
  for (; r + rows_per_group <= rows; r += rows_per_group) {
    const T* block = g + r * channels;
    for (int64_t k = 0; k < group; ++k) lanes[k] += static_cast<double>(block[k]);
  }
  for (int64_t k = 0; k < group; ++k) sums[k % channels] += lanes[k];
  for (; r < rows; ++r) {
    for (int64_t c = 0; c < channels; ++c) sums[c] += static_cast<double>(g[r * channels + c]);
  }
}

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string format = "NHWC";
    if (ctx->HasAttr("data_format")) OP_REQUIRES_OK(ctx, ctx->GetAttr("data_format", &format));
    OP_REQUIRES(ctx, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    channels_first_ = format == "NCHW";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    const TensorShape& shape = grad.shape();
    OP_REQUIRES(ctx, shape.dims() >= 2,
                absl::InvalidArgumentError(absl::StrCat("Input tensor must be at least 2D: ",
                                                        shape.DebugString())));
    const int axis = channels_first_ ? 1 : shape.dims() - 1;
    const int64_t channels = shape.dim_size(axis);
    const int64_t outer = DimProduct(shape, 0, axis);
    const int64_t inner = DimProduct(shape, axis + 1, shape.dims());
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, TensorShape({channels})));
    std::vector<double> sums(channels, 0.0);
    const T* g = grad.data<T>();
    if (inner == 1) {  // NHWC: the channels are contiguous
      const int64_t chunks = (outer + kBiasGradChunkRows - 1) / kBiasGradChunkRows;
      std::vector<double> chunk_sums(chunks * channels, 0.0);
      ParallelForElements(ctx, chunks, kBiasGradChunkRows * channels,
                          [&](int64_t begin, int64_t end) {
                            for (int64_t k = begin; k < end; ++k) {
                              const int64_t first = k * kBiasGradChunkRows;
                              const int64_t rows = std::min(kBiasGradChunkRows, outer - first);
                              SumRowsInGroups(g + first * channels, rows, channels,
                                              chunk_sums.data() + k * channels);
                            }
                          });
      for (int64_t k = 0; k < chunks; ++k) {
        for (int64_t c = 0; c < channels; ++c) sums[c] += chunk_sums[k * channels + c];
      }
      for (int64_t c = 0; c < channels; ++c) output->data<T>()[c] = static_cast<T>(sums[c]);
      return;
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        const T* row = g + (o * channels + c) * inner;
        double sum = 0;
        for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(row[i]);
        sums[c] += sum;
      }
    }
    for (int64_t c = 0; c < channels; ++c) output->data<T>()[c] = static_cast<T>(sums[c]);
  }

 private:
  bool channels_first_ = false;
};

// ---------------------------------------------------------------------------------
// BroadcastGradientArgs, as TF's BCast computes grad_{x,y}_reduce_idx: shapes aligned
// on the right and 1-extended; an output dim gets reduced for each input whose dim there
// is 1 (for both when both are 1). Equal shapes reduce nothing, even over 1-dims: BCast
// takes its equal-shapes fast path before looking at dims.

struct ReduceIndices {
  bool valid = true;
  std::vector<int64_t> r0, r1;
};

ReduceIndices GradReduceIndices(const std::vector<int64_t>& s0, const std::vector<int64_t>& s1) {
  ReduceIndices result;
  if (s0 == s1) return result;
  const size_t rank = std::max(s0.size(), s1.size());
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d0 = i < rank - s0.size() ? 1 : s0[i - (rank - s0.size())];
    const int64_t d1 = i < rank - s1.size() ? 1 : s1[i - (rank - s1.size())];
    if (d0 != 1 && d1 != 1 && d0 != d1) {
      result.valid = false;
      return result;
    }
    if (d0 == 1) result.r0.push_back(static_cast<int64_t>(i));
    if (d1 == 1) result.r1.push_back(static_cast<int64_t>(i));
  }
  return result;
}

template <typename T>
class BroadcastGradientArgsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> shapes[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& in = ctx->input(i);
      OP_REQUIRES(ctx, in.shape().dims() == 1,
                  KernelError(*ctx, "In[", i, "] must be a vector.", in.shape().DebugString()));
      const T* v = in.data<T>();
      shapes[i].assign(v, v + in.NumElements());
    }
    const ReduceIndices indices = GradReduceIndices(shapes[0], shapes[1]);
    OP_REQUIRES(ctx, indices.valid,
                KernelError(*ctx, "Incompatible shapes: [", absl::StrJoin(shapes[0], ","),
                            "] vs. [", absl::StrJoin(shapes[1], ","), "]"));
    Output(ctx, 0, indices.r0);
    Output(ctx, 1, indices.r1);
  }

 private:
  static void Output(OpKernelContext* ctx, int index, const std::vector<int64_t>& values) {
    const int64_t n = static_cast<int64_t>(values.size());
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(index, TensorShape({n})));
    std::copy(values.begin(), values.end(), out->data<T>());
  }
};

// ---------------------------------------------------------------------------------
// InTopKV2: targets[b] is in the top k of predictions[b] when fewer than k predictions
// are strictly greater than its own (ties count for it). TF answers false, rather than
// guessing, for an out-of-range target or any non-finite prediction in the row.

template <typename T, typename Index>
bool InTopK(const T* row, int64_t classes, Index target, Index k) {
  if (target < 0 || target >= classes || !std::isfinite(row[target])) return false;
  const T target_prediction = row[target];
  int64_t more_probable = 0;
  for (int64_t c = 0; c < classes; ++c) {
    if (!std::isfinite(row[c])) return false;
    if (row[c] > target_prediction) ++more_probable;
  }
  return more_probable < static_cast<int64_t>(k);
}

template <typename T, typename Index>
class InTopKV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& predictions = ctx->input(0);
    const Tensor& targets = ctx->input(1);
    const Tensor& k = ctx->input(2);
    OP_REQUIRES(ctx, predictions.shape().dims() == 2,
                KernelError(*ctx, "predictions must be 2-dimensional"));
    OP_REQUIRES(ctx, targets.shape().dims() == 1,
                KernelError(*ctx, "targets must be 1-dimensional"));
    OP_REQUIRES(ctx, k.shape().dims() == 0,
                KernelError(*ctx, "k must be 0-D, got shape ", k.shape().DebugString()));
    const int64_t batch = predictions.shape().dim_size(0);
    const int64_t classes = predictions.shape().dim_size(1);
    OP_REQUIRES(ctx, targets.shape().dim_size(0) == batch,
                KernelError(*ctx, "First dimension of predictions ", batch,
                            " must match length of targets ", targets.shape().dim_size(0)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, targets.shape()));
    const T* p = predictions.data<T>();
    const Index* t = targets.data<Index>();
    const Index top = k.data<Index>()[0];
    bool* out = output->data<bool>();
    for (int64_t b = 0; b < batch; ++b) out[b] = InTopK(p + b * classes, classes, t[b], top);
  }
};

template <typename T, typename L>
absl::Status RegisterXent(KernelRegistry* registry) {
  return registry->Register<SparseSoftmaxXentOp<T, L>>(
      CpuKernel("SparseSoftmaxCrossEntropyWithLogits")
          .TypeConstraint("T", {DataTypeOf<T>()})
          .TypeConstraint("Tlabels", {DataTypeOf<L>()}));
}

template <typename Index>
absl::Status RegisterIndexKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<BroadcastGradientArgsOp<Index>>(
      CpuKernel("BroadcastGradientArgs").TypeConstraint("T", {DataTypeOf<Index>()})));
  return registry->Register<InTopKV2Op<float, Index>>(
      CpuKernel("InTopKV2").TypeConstraint("T", {DataTypeOf<Index>()}));
}

}  // namespace

absl::Status RegisterNnGradKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR((RegisterXent<float, int32_t>(registry)));
  DFLOW_RETURN_IF_ERROR((RegisterXent<float, int64_t>(registry)));
  DFLOW_RETURN_IF_ERROR((RegisterXent<double, int32_t>(registry)));
  DFLOW_RETURN_IF_ERROR((RegisterXent<double, int64_t>(registry)));
  DFLOW_RETURN_IF_ERROR(registry->Register<ReluGradOp<float>>(
      CpuKernel("ReluGrad").TypeConstraint("T", {DT_FLOAT})));
  DFLOW_RETURN_IF_ERROR(registry->Register<ReluGradOp<double>>(
      CpuKernel("ReluGrad").TypeConstraint("T", {DT_DOUBLE})));
  DFLOW_RETURN_IF_ERROR(registry->Register<SoftmaxXentOp<float>>(
      CpuKernel("SoftmaxCrossEntropyWithLogits").TypeConstraint("T", {DT_FLOAT})));
  DFLOW_RETURN_IF_ERROR(registry->Register<SoftmaxXentOp<double>>(
      CpuKernel("SoftmaxCrossEntropyWithLogits").TypeConstraint("T", {DT_DOUBLE})));
  DFLOW_RETURN_IF_ERROR(registry->Register<L2LossOp<float>>(
      CpuKernel("L2Loss").TypeConstraint("T", {DT_FLOAT})));
  DFLOW_RETURN_IF_ERROR(registry->Register<L2LossOp<double>>(
      CpuKernel("L2Loss").TypeConstraint("T", {DT_DOUBLE})));
  DFLOW_RETURN_IF_ERROR(registry->Register<BiasAddGradOp<float>>(
      CpuKernel("BiasAddGrad").TypeConstraint("T", {DT_FLOAT})));
  DFLOW_RETURN_IF_ERROR(registry->Register<BiasAddGradOp<double>>(
      CpuKernel("BiasAddGrad").TypeConstraint("T", {DT_DOUBLE})));
  DFLOW_RETURN_IF_ERROR(RegisterIndexKernels<int32_t>(registry));
  return RegisterIndexKernels<int64_t>(registry);
}

}  // namespace dflow
