// CTCLoss, CTCLossV2 and CTCGreedyDecoder: TF 2.21's CPU kernels (ctc_loss_op.cc,
// ctc_decoder_ops.cc) with their checks in TF's order and TF's texts.
//
// CTCLoss(inputs [max_time, batch, classes] logits, labels_indices [n, 2] int64,
// labels_values [n] int32, sequence_length [batch] int32) -> loss [batch] and gradient
// (inputs' shape) w.r.t. the logits. Item b's labels are the values of the rows indexed
// [b, *], in row order; the rows must be in bounds, sorted and distinct, as TF's
// SparseTensor::IndicesValid requires (gaps in the second column are fine). The blank is
// class classes - 1, and a label >= classes - 1 is a "null label" that ends the sequence
// (only null labels may follow it). An item with sequence_length 0 or, with
// ignore_longer_outputs_than_inputs, with more labels than steps gets loss 0 and a zero
// gradient; so do all steps past an item's length. Items are independent and computed
// in parallel, each by CtcLossCalculator (ctc_loss_calculator.h).
//
// CTCLossV2 (float, blank 0) has only a cuDNN kernel in TF, which requires the three
// attrs at their defaults. Ours computes what tf.nn.ctc_loss(..., blank_index=0) does on
// TF's CPU: labels shifted down one class onto CTCLoss's numbering (so a label 0 is the
// "nonnegative" error and labels >= classes are null), CTCLoss's algorithm, blank 0.
//
// CTCGreedyDecoder: each step's first maximal class (NaN never wins, except in column
// 0, which it then keeps); blanks are dropped and, with merge_repeated, a class equal to
// the previous step's. log_probability is minus the sum of the chosen logits (TF's
// value: no softmax). Errors on sequence lengths are FAILED_PRECONDITION, as TF's.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/ctc_loss_calculator.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

using LabelSequences = std::vector<std::vector<int>>;

// FAILED_PRECONDITION "<op>: <what>", KernelError's form.
template <typename... Args>
absl::Status KernelFailedPrecondition(const OpKernelContext& ctx, const Args&... args) {
  return absl::FailedPreconditionError(absl::StrCat(ctx.kernel().type_string(), ": ", args...));
}

struct CtcLossAttrs {
  bool preprocess_collapse_repeated = false;
  bool ctc_merge_repeated = true;
  bool ignore_longer_outputs_than_inputs = false;
};

// TF's checks on CTCLoss's input shapes, in its order (SparseTensor::Create's rank
// check last).
absl::Status CheckCtcLossShapes(const OpKernelContext& ctx) {
  const TensorShape& inputs = ctx.input(0).shape();
  const TensorShape& indices = ctx.input(1).shape();
  const TensorShape& values = ctx.input(2).shape();
  const TensorShape& seq_len = ctx.input(3).shape();
  if (inputs.dims() != 3) return KernelError(ctx, "inputs is not a 3-Tensor");
  if (seq_len.dims() != 1) return KernelError(ctx, "sequence_length is not a vector");
  if (indices.dims() != 2) return KernelError(ctx, "labels_indices is not a matrix");
  if (indices.dim_size(1) <= 1) {
    return KernelError(ctx, "labels_indices second dimension must be >= 1. Received ",
                       indices.dim_size(1));
  }
  if (values.dims() != 1) return KernelError(ctx, "labels_values is not a vector");
  if (inputs.dim_size(0) == 0) {
    return KernelError(ctx, "Max time or first dimension of input cannot be 0.");
  }
  if (inputs.dim_size(2) >= std::numeric_limits<int>::max()) {
    return KernelError(ctx, "num_classes cannot exceed max int");
  }
  if (inputs.dim_size(1) != seq_len.dim_size(0)) {
    return KernelError(ctx, "len(sequence_length) != batch_size.  len(sequence_length):  ",
                       seq_len.dim_size(0), " batch_size: ", inputs.dim_size(1));
  }
  if (indices.dim_size(0) != values.dim_size(0)) {
    return KernelError(ctx,
                       "labels_indices and labels_values must contain the same number of "
                       "rows, but saw shapes: ",
                       indices.DebugString(), " vs. ", values.DebugString());
  }
  if (inputs.dim_size(1) == 0) return KernelError(ctx, "batch_size must not be 0");
  if (indices.dim_size(1) != 2) return KernelError(ctx, "Order length must be SparseTensor rank.");
  return absl::OkStatus();
}

// TF's IndicesValid error for label row i = [b, col] of a [batch, max_len] SparseTensor;
// `order` compares the row with the previous one (-1 before it, 0 equal).
absl::Status InvalidLabelRow(const OpKernelContext& ctx, int64_t i, int64_t b, int64_t col,
                             int64_t batch, int64_t max_len, bool in_bounds, int order) {
  const std::string row = absl::StrCat("indices[", i, "] = [", b, ",", col, "]");
  constexpr char kPrefix[] = "label SparseTensor is not valid: ";
  if (!in_bounds) {
    return KernelError(ctx, kPrefix, row, " is out of bounds: need 0 <= index < [", batch, ",",
                       max_len, "]");
  }
  if (order < 0) {
    return KernelError(ctx, kPrefix, row,
                       " is out of order. Many sparse ops require sorted indices.\n"
                       "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n");
  }
  return KernelError(ctx, kPrefix, row, " is repeated");
}

// Every item's labels. TF views the rows as a SparseTensor of shape [batch, largest
// column + 1] and checks them row by row: in bounds first, then after the previous row.
absl::StatusOr<LabelSequences> ReadLabels(const OpKernelContext& ctx, int64_t batch) {
  const int64_t n = ctx.input(1).shape().dim_size(0);
  const int64_t* ix = ctx.input(1).data<int64_t>();
  const int32_t* values = ctx.input(2).data<int32_t>();
  int64_t max_len = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t col = ix[2 * i + 1];
    max_len = std::max(max_len, col == std::numeric_limits<int64_t>::max() ? col : col + 1);
  }
  LabelSequences labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = ix[2 * i], col = ix[2 * i + 1];
    const bool in_bounds = b >= 0 && b < batch && col >= 0 && col < max_len;
    int order = 1;
    if (i > 0) {
      const int64_t prev_b = ix[2 * i - 2], prev_col = ix[2 * i - 1];
      order = b != prev_b ? (b > prev_b ? 1 : -1) : (col > prev_col) - (col < prev_col);
    }
    if (!in_bounds || order <= 0) {
      return InvalidLabelRow(ctx, i, b, col, batch, max_len, in_bounds, order);
    }
    labels[b].push_back(values[i]);
  }
  return labels;
}

// l' of item b (TF's PopulateLPrimes): its labels up to the first null label (repeats
// collapsed first with preprocess_collapse_repeated), a blank (classes - 1) before each
// and one at the end.
absl::Status MakeLPrime(const OpKernelContext& ctx, const CtcLossAttrs& attrs, int64_t b,
                        int num_classes, int32_t seq_len, const std::vector<int>& label,
                        std::vector<int>* l_prime) {
  if (label.empty()) return KernelError(ctx, "Labels length is zero in batch ", b);
  std::vector<int> l;
  bool finished = false;
  for (size_t i = 0; i < label.size(); ++i) {
    if (i > 0 && attrs.preprocess_collapse_repeated && label[i] == label[i - 1]) continue;
    if (label[i] >= num_classes - 1) {
      finished = true;
    } else if (finished) {
      return KernelError(ctx,
                         "Saw a non-null label (index >= num_classes - 1) following a null "
                         "label, batch: ",
                         b, " num_classes: ", num_classes, " labels: ", absl::StrJoin(label, ","),
                         " labels seen so far: ", absl::StrJoin(l, ","));
    } else {
      l.push_back(label[i]);
    }
  }
  for (int v : l) {
    if (v < 0) {
      return KernelError(ctx, "All labels must be nonnegative integers, batch: ", b,
                         " labels: ", absl::StrJoin(l, ","));
    }
  }
  if (!attrs.ignore_longer_outputs_than_inputs && static_cast<int64_t>(label.size()) > seq_len) {
    return KernelError(ctx, "Not enough time for target transition sequence (required: ",
                       label.size(), ", available: ", seq_len, ")", b,
                       "You can turn this error into a warning by using the flag "
                       "ignore_longer_outputs_than_inputs");
  }
  l_prime->clear();
  for (int v : l) {
    l_prime->push_back(num_classes - 1);
    l_prime->push_back(v);
  }
  l_prime->push_back(num_classes - 1);
  return absl::OkStatus();
}

template <typename T>
class CtcLossOp : public OpKernel {
 public:
  explicit CtcLossOp(OpKernelConstruction* ctx) : CtcLossOp(ctx, /*blank_first=*/false) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckCtcLossShapes(*ctx));
    const Tensor& inputs = ctx->input(0);
    const int64_t max_time = inputs.shape().dim_size(0);
    const int64_t batch = inputs.shape().dim_size(1);
    const int num_classes = static_cast<int>(inputs.shape().dim_size(2));
    OP_ASSIGN_OR_RETURN(ctx, LabelSequences labels, ReadLabels(*ctx, batch));
    const int32_t* seq_len = ctx->input(3).data<int32_t>();
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, seq_len[b] <= max_time,
                  KernelError(*ctx, "sequence_length(", b, ") <= ", max_time));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * loss, ctx->allocate_output(0, ctx->input(3).shape()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * gradient, ctx->allocate_output(1, inputs.shape()));
    for (int64_t b = 0; b < batch; ++b) {
      OP_REQUIRES(ctx, seq_len[b] >= 0, KernelError(*ctx, "seq_len(", b, ") < 0"));
    }
    LabelSequences l_primes(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      // CTCLossV2: labels 1.. are CTCLoss's 0.., and its l' classes move up one.
      if (blank_first_) {
        for (int& v : labels[b]) {
          if (v >= 0) --v;
        }
      }
      OP_REQUIRES_OK(ctx, MakeLPrime(*ctx, attrs_, b, num_classes, seq_len[b], labels[b],
                                     &l_primes[b]));
      // TF would read past empty rows here (it crashes); say why instead.
      OP_REQUIRES(ctx, num_classes > 0 || Skipped(labels[b], seq_len[b]),
                  KernelError(*ctx, "inputs must have at least one class, got shape ",
                              inputs.shape().DebugString()));
      if (blank_first_ && num_classes > 0) {
        for (int& c : l_primes[b]) c = (c + 1) % num_classes;
      }
    }
    ComputeItems(ctx, labels, l_primes, loss, gradient);
  }

 protected:
  // blank_first: CTCLossV2's numbering (blank 0).
  CtcLossOp(OpKernelConstruction* ctx, bool blank_first)
      : OpKernel(ctx), blank_first_(blank_first) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("preprocess_collapse_repeated",
                                     &attrs_.preprocess_collapse_repeated));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ctc_merge_repeated", &attrs_.ctc_merge_repeated));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ignore_longer_outputs_than_inputs",
                                     &attrs_.ignore_longer_outputs_than_inputs));
  }

  const CtcLossAttrs& attrs() const { return attrs_; }

 private:
  // Items that get loss 0 and gradient 0 (TF skips them).
  bool Skipped(const std::vector<int>& label, int32_t seq_len) const {
    return seq_len == 0 || (attrs_.ignore_longer_outputs_than_inputs &&
                            static_cast<int64_t>(label.size()) > seq_len);
  }

  void ComputeItems(OpKernelContext* ctx, const LabelSequences& labels,
                    const LabelSequences& l_primes, Tensor* loss, Tensor* gradient) const {
    const Tensor& inputs = ctx->input(0);
    const int64_t max_time = inputs.shape().dim_size(0);
    const int64_t batch = inputs.shape().dim_size(1);
    const int64_t classes = inputs.shape().dim_size(2);
    const int64_t stride = batch * classes;  // between two steps of one item
    const int32_t* seq_len = ctx->input(3).data<int32_t>();
    const T* logits = inputs.data<T>();
    T* loss_data = loss->data<T>();
    T* grad = gradient->data<T>();
    const int blank = blank_first_ ? 0 : static_cast<int>(classes) - 1;
    int64_t max_steps = 0, max_states = 0;
    for (int64_t b = 0; b < batch; ++b) {
      max_steps = std::max<int64_t>(max_steps, seq_len[b]);
      max_states = std::max<int64_t>(max_states, static_cast<int64_t>(l_primes[b].size()));
    }
    // The calculators' scratch (softmax, forward and backward variables: steps x states
    // each, per thread) lives in std::vectors; it is counted against the session's
    // limits here, by holding a temporary of its size (pages it never touches) meanwhile.
    const double scratch =
        (static_cast<double>(max_steps) * (2.0 * static_cast<double>(max_states) +
                                           2.0 * static_cast<double>(classes)) +
         static_cast<double>(classes)) *
        NumThreads(ctx);
    OP_REQUIRES(ctx, scratch < 1e15,
                KernelError(*ctx, "the loss of ", max_steps, " steps over ", max_states,
                            " label states needs too much scratch memory"));
    OP_ASSIGN_OR_RETURN(
        ctx, Tensor scratch_budget,
        ctx->allocate_temp(DataTypeOf<T>(), TensorShape({static_cast<int64_t>(scratch)})));
    // Softmax, then forward, backward and gradient over the states, per step.
    const int64_t cost = std::max<int64_t>(1, max_steps * (40 * classes + 150 * max_states));
    ParallelForElements(ctx, batch, cost, [&](int64_t begin, int64_t end) {
      ctc::CtcLossCalculator<T> calculator(blank, attrs_.ctc_merge_repeated);
      for (int64_t b = begin; b < end; ++b) {
        const int64_t steps = Skipped(labels[b], seq_len[b]) ? 0 : seq_len[b];
        loss_data[b] = steps == 0 ? T(0)
                                  : calculator.Compute(logits + b * classes, stride, steps,
                                                       classes, l_primes[b], grad + b * classes);
        for (int64_t t = steps; t < max_time; ++t) {
          std::fill_n(grad + t * stride + b * classes, classes, T(0));
        }
      }
    });
  }

  const bool blank_first_;
  CtcLossAttrs attrs_;
};

class CtcLossV2Op : public CtcLossOp<float> {
 public:
  explicit CtcLossV2Op(OpKernelConstruction* ctx) : CtcLossOp<float>(ctx, /*blank_first=*/true) {
    // TF's cuDNN kernel's conditions and texts.
    OP_REQUIRES(ctx, !attrs().preprocess_collapse_repeated,
                absl::InvalidArgumentError(
                    "GPU CTCLossOp requires preprocess_collapse_repeated to be false"));
    OP_REQUIRES(ctx, attrs().ctc_merge_repeated,
                absl::InvalidArgumentError("GPU CTCLossOp requires ctc_merge_repeated to be true"));
    OP_REQUIRES(ctx, !attrs().ignore_longer_outputs_than_inputs,
                absl::InvalidArgumentError(
                    "GPU CTCLossOp requires ignore_longer_outputs_than_inputs tobe false"));
  }
};

// TF's CTCDecodeHelper checks, in its order.
absl::Status CheckGreedyDecoderInputs(const OpKernelContext& ctx) {
  const TensorShape& inputs = ctx.input(0).shape();
  const TensorShape& seq_len = ctx.input(1).shape();
  if (inputs.dims() != 3) return KernelError(ctx, "inputs is not a 3-Tensor");
  if (inputs.num_elements() == 0) return KernelError(ctx, "inputs must not be empty");
  if (seq_len.dims() != 1) return KernelError(ctx, "sequence_length is not a vector");
  const int64_t max_time = inputs.dim_size(0);
  const int64_t batch = inputs.dim_size(1);
  if (batch != seq_len.dim_size(0)) {
    return KernelFailedPrecondition(
        ctx, "len(sequence_length) != batch_size.  len(sequence_length):  ", seq_len.dim_size(0),
        " batch_size: ", batch);
  }
  const int32_t* lengths = ctx.input(1).data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    if (!(lengths[b] <= max_time)) {
      return KernelFailedPrecondition(ctx, "sequence_length(", b, ") <= ", max_time);
    }
  }
  if (inputs.dim_size(2) >= std::numeric_limits<int>::max()) {
    return KernelError(ctx, "num_classes cannot exceed max int");
  }
  return absl::OkStatus();
}

template <typename T>
class CtcGreedyDecoderOp : public OpKernel {
 public:
  explicit CtcGreedyDecoderOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("merge_repeated", &merge_repeated_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("blank_index", &blank_index_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckGreedyDecoderInputs(*ctx));
    const Tensor& inputs = ctx->input(0);
    const int64_t batch = inputs.shape().dim_size(1);
    const int64_t classes = inputs.shape().dim_size(2);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * log_prob, ctx->allocate_output(3, TensorShape{batch, 1}));
    const int64_t blank = blank_index_ < 0 ? classes + blank_index_ : blank_index_;
    OP_REQUIRES(ctx, blank >= 0 && blank < classes,
                KernelError(*ctx, "blank_index expected to be between ", -classes, " and ",
                            classes - 1, " but was ", blank_index_));
    std::vector<std::vector<int64_t>> decoded(static_cast<size_t>(batch));
    Decode(ctx, blank, log_prob->data<T>(), &decoded);
    OP_REQUIRES_OK(ctx, StoreDecoded(ctx, decoded));
  }

 private:
  // decoded[b] and log_prob[b] of every item, in parallel.
  void Decode(OpKernelContext* ctx, int64_t blank, T* log_prob,
              std::vector<std::vector<int64_t>>* decoded) const {
    const Tensor& inputs = ctx->input(0);
    const int64_t max_time = inputs.shape().dim_size(0);
    const int64_t batch = inputs.shape().dim_size(1);
    const int64_t classes = inputs.shape().dim_size(2);
    const T* x = inputs.data<T>();
    const int32_t* seq_len = ctx->input(1).data<int32_t>();
    ParallelForElements(ctx, batch, 2 * max_time * classes + 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        std::vector<int64_t>& out = (*decoded)[b];
        T sum = 0;
        int64_t prev = -1;
        for (int64_t t = 0; t < seq_len[b]; ++t) {
          const T* row = x + (t * batch + b) * classes;
          int64_t best = 0;
          T max = row[0];
          for (int64_t c = 1; c < classes; ++c) {
            if (row[c] > max) {
              max = row[c];
              best = c;
            }
          }
          sum += -max;
          if (best != blank && !(merge_repeated_ && best == prev)) out.push_back(best);
          prev = best;
        }
        log_prob[b] = sum;
      }
    });
  }

  // The decoded classes as a sparse [batch, longest] tensor: indices, values, shape.
  static absl::Status StoreDecoded(OpKernelContext* ctx,
                                   const std::vector<std::vector<int64_t>>& decoded) {
    int64_t total = 0, longest = 0;
    for (const std::vector<int64_t>& d : decoded) {
      total += static_cast<int64_t>(d.size());
      longest = std::max(longest, static_cast<int64_t>(d.size()));
    }
    DFLOW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape{total, 2}));
    DFLOW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, TensorShape{total}));
    DFLOW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(2, TensorShape{2}));
    int64_t* ix = indices->data<int64_t>();
    int64_t* vals = values->data<int64_t>();
    int64_t k = 0;
    for (size_t b = 0; b < decoded.size(); ++b) {
      for (size_t i = 0; i < decoded[b].size(); ++i, ++k) {
        ix[2 * k] = static_cast<int64_t>(b);
        ix[2 * k + 1] = static_cast<int64_t>(i);
        vals[k] = decoded[b][i];
      }
    }
    shape->data<int64_t>()[0] = static_cast<int64_t>(decoded.size());
    shape->data<int64_t>()[1] = longest;
    return absl::OkStatus();
  }

  bool merge_repeated_ = false;
  int64_t blank_index_ = -1;
};

template <typename T>
absl::Status RegisterCtcForType(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<CtcLossOp<T>>(CpuKernel("CTCLoss").TypeConstraint<T>("T")));
  return registry->Register<CtcGreedyDecoderOp<T>>(
      CpuKernel("CTCGreedyDecoder").TypeConstraint<T>("T"));
}

}  // namespace

// TF 2.21's CPU list: CTCLoss and CTCGreedyDecoder for float and double; CTCLossV2
// (float only) has no TF CPU kernel, see the top of the file.
absl::Status RegisterCtcKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterCtcForType<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterCtcForType<double>(registry));
  return registry->Register<CtcLossV2Op>(CpuKernel("CTCLossV2"));
}

}  // namespace dflow
