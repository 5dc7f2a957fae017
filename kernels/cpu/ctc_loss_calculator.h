// CtcLossCalculator: the CTC loss of one sequence and its gradient with respect to the
// logits, TF 2.21's CTCLossCalculator (tensorflow/core/util/ctc/ctc_loss_calculator.h)
// step for step, so that CTCLoss and CTCLossV2 (ctc_loss_op.cc) give TF's numbers.
//
// For a sequence of T steps and l' = the labels with a blank before each and one at the
// end (U = |l'| states):
//   1. y(t) = softmax of step t's logits (the maximum subtracted, the sum in T);
//   2. log alpha (forward) and log beta (backward) over the U states in log space with
//      TF's LogSumExp (Graves' thesis, eq. 7.5-7.15), leaving at log 0 the states that
//      cannot be reached from the start / cannot reach the end in the time left;
//   3. loss = -log p, log p = LogSumExp over u of log alpha(u, 0) + log beta(u, 0);
//   4. gradient(t, c) = y(t, c) - exp(LogSumExp over the u with l'(u) == c of
//      log alpha(u, t) + log beta(u, t), minus log p); the gradient is y itself when no
//      path exists (p == 0, loss +inf).
// With merge_repeated false a non-blank state lasts one step (a label emitted on two
// steps counts twice), so equal neighbouring labels need no blank between them.
//
// TF's quirks, kept on purpose (checked against TF 2.21):
//   - LogSumExp's correction log1p(exp(small - big)) and the exp in 4 are evaluated in
//     float (TF calls expf and log1pf) also when T is double;
//   - with l' == [blank] (every label a null label, see ctc_loss_op.cc) TF's backward
//     pass initialises "rows U - 2 and U - 1" of the last column of its column-major
//     matrix; row -1 is the previous column's row 0, so log beta(0, T - 2) starts at
//     log 1 instead of log 0, which changes the loss. We do the same.
//
// Thread-safety: a calculator keeps scratch buffers; use one per thread.
#ifndef DFLOW_KERNELS_CPU_CTC_LOSS_CALCULATOR_H_
#define DFLOW_KERNELS_CPU_CTC_LOSS_CALCULATOR_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/types/span.h"

namespace dflow::ctc {

template <typename T>
inline constexpr T kLogZero = -std::numeric_limits<T>::infinity();

// log(exp(a) + exp(b)) as TF's ctc::LogSumExp computes it: the larger plus the float
// log1p(exp(difference)).
template <typename T>
inline T LogSumExp(T a, T b) {
  if (a == kLogZero<T>) return b;
  if (b == kLogZero<T>) return a;
  if (a > b) return a + std::log1p(std::exp(static_cast<float>(b - a)));
  return b + std::log1p(std::exp(static_cast<float>(a - b)));
}

template <typename T>
class CtcLossCalculator {
 public:
  // `blank` is the blank's class: num_classes - 1 for CTCLoss, 0 for CTCLossV2.
  CtcLossCalculator(int blank, bool merge_repeated)
      : blank_(blank), merge_repeated_(merge_repeated) {}

  // The loss of one sequence of `steps` >= 1 steps with `num_classes` >= 1 classes: step
  // t's logits are logits[t * stride + c], its gradient goes to gradient[t * stride + c]
  // (every c of the first `steps` steps is written). l_prime holds classes below
  // num_classes, blanks at its even positions.
  T Compute(const T* logits, int64_t stride, int64_t steps, int64_t num_classes,
            absl::Span<const int> l_prime, T* gradient) {
    steps_ = steps;
    classes_ = num_classes;
    l_prime_ = l_prime;
    Softmax(logits, stride);
    Forward();
    Backward();
    const int64_t u_size = static_cast<int64_t>(l_prime_.size());
    T log_p = kLogZero<T>;
    for (int64_t u = 0; u < u_size; ++u) {
      log_p = LogSumExp(log_p, log_alpha_[u] + log_beta_[u]);
    }
    Gradient(log_p, stride, gradient);
    return -log_p;
  }

 private:
  T LogY(int64_t t, int c) const { return log_y_[t * classes_ + c]; }

  // y and log y of every step.
  void Softmax(const T* logits, int64_t stride) {
    y_.resize(static_cast<size_t>(steps_ * classes_));
    log_y_.resize(y_.size());
    for (int64_t t = 0; t < steps_; ++t) {
      const T* x = logits + t * stride;
      T* y = y_.data() + t * classes_;
      T max = x[0];
      for (int64_t c = 1; c < classes_; ++c) max = std::max(max, x[c]);
      T sum = 0;
      for (int64_t c = 0; c < classes_; ++c) {
        y[c] = std::exp(x[c] - max);
        sum += y[c];
      }
      for (int64_t c = 0; c < classes_; ++c) {
        y[c] /= sum;
        log_y_[t * classes_ + c] = std::log(y[c]);
      }
    }
  }

  // The states [first, end) of step t that TF computes: those that can still reach the
  // last two states in the steps left and can have been reached in t + 1 steps.
  int64_t FirstState(int64_t t) const {
    return std::max<int64_t>(0, static_cast<int64_t>(l_prime_.size()) - 2 * (steps_ - t));
  }
  int64_t EndState(int64_t t) const {
    return std::min<int64_t>(static_cast<int64_t>(l_prime_.size()), 2 * (t + 1));
  }

  // log_alpha_[t * U + u].
  void Forward() {
    const int64_t u_size = static_cast<int64_t>(l_prime_.size());
    log_alpha_.assign(static_cast<size_t>(steps_ * u_size), kLogZero<T>);
    log_alpha_[0] = LogY(0, blank_);
    // (TF also writes state 1 when U == 1, out of its column; step 1 overwrites it.)
    if (u_size > 1) log_alpha_[1] = LogY(0, l_prime_[1]);
    for (int64_t t = 1; t < steps_; ++t) {
      const T* prev = log_alpha_.data() + (t - 1) * u_size;
      T* cur = log_alpha_.data() + t * u_size;
      for (int64_t u = FirstState(t); u < EndState(t); ++u) {
        const int label = l_prime_[u];
        T sum = kLogZero<T>;
        if (merge_repeated_ || label == blank_) sum = prev[u];
        if (u > 0) sum = LogSumExp(sum, prev[u - 1]);
        if (u > 1 && label != blank_ && !(merge_repeated_ && label == l_prime_[u - 2])) {
          sum = LogSumExp(sum, prev[u - 2]);
        }
        cur[u] = LogY(t, label) + sum;
      }
    }
  }

  // log_beta_[t * U + u].
  void Backward() {
    const int64_t u_size = static_cast<int64_t>(l_prime_.size());
    log_beta_.assign(static_cast<size_t>(steps_ * u_size), kLogZero<T>);
    T* last = log_beta_.data() + (steps_ - 1) * u_size;
    for (int64_t u = std::max<int64_t>(0, u_size - 2); u < u_size; ++u) last[u] = 0;
    if (u_size == 1 && steps_ >= 2) log_beta_[steps_ - 2] = 0;  // TF's row -1 (see top)
    for (int64_t t = steps_ - 2; t >= 0; --t) {
      const T* next = log_beta_.data() + (t + 1) * u_size;
      T* cur = log_beta_.data() + t * u_size;
      for (int64_t u = FirstState(t); u < EndState(t); ++u) {
        const int label = l_prime_[u];
        if (merge_repeated_ || label == blank_) {
          cur[u] = LogSumExp(cur[u], next[u] + LogY(t + 1, label));
        }
        if (u + 1 < u_size) {
          cur[u] = LogSumExp(cur[u], next[u + 1] + LogY(t + 1, l_prime_[u + 1]));
        }
        if (u + 2 < u_size && label != blank_ &&
            !(merge_repeated_ && label == l_prime_[u + 2])) {
          cur[u] = LogSumExp(cur[u], next[u + 2] + LogY(t + 1, l_prime_[u + 2]));
        }
      }
    }
  }

  void Gradient(T log_p, int64_t stride, T* gradient) {
    const int64_t u_size = static_cast<int64_t>(l_prime_.size());
    for (int64_t t = 0; t < steps_; ++t) {
      const T* y = y_.data() + t * classes_;
      T* dy = gradient + t * stride;
      if (log_p == kLogZero<T>) {  // no valid path
        std::copy(y, y + classes_, dy);
        continue;
      }
      prob_sum_.assign(static_cast<size_t>(classes_), kLogZero<T>);
      for (int64_t u = 0; u < u_size; ++u) {
        T& sum = prob_sum_[l_prime_[u]];
        sum = LogSumExp(sum, log_alpha_[t * u_size + u] + log_beta_[t * u_size + u]);
      }
      for (int64_t c = 0; c < classes_; ++c) {
        dy[c] = y[c] - std::exp(static_cast<float>(prob_sum_[c] - log_p));
      }
    }
  }

  const int blank_;
  const bool merge_repeated_;
  // The sequence being computed.
  int64_t steps_ = 0;
  int64_t classes_ = 0;
  absl::Span<const int> l_prime_;
  // Scratch, reused across sequences.
  std::vector<T> y_, log_y_;               // [steps][classes]
  std::vector<T> log_alpha_, log_beta_;    // [steps][U]
  std::vector<T> prob_sum_;                // [classes]
};

}  // namespace dflow::ctc

#endif  // DFLOW_KERNELS_CPU_CTC_LOSS_CALCULATOR_H_
