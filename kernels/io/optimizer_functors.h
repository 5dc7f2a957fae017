// The update rules of TF's optimizer apply ops (training_ops.cc), element by element in the
// variable's type T, in TF's operation order so float results match its CPU kernels. Dense
// (Apply*) and sparse (SparseApply*) kernels share one rule per optimizer: a Step updates one
// element of every slot from one gradient element. TF's sparse kernels associate a few
// products differently from its dense ones (and some again differently for rows of one
// element), so a Step takes the Form it stands for and follows that kernel's order.
//
// Each functor names its slots (the variable first, then the accumulators it updates, in
// input order; kSlots), where the gradient is among the inputs (kGrad; a sparse op's indices
// follow it), and reads its scalar hyperparameters from Args::scalar in input order.
#ifndef DFLOW_KERNELS_IO_OPTIMIZER_FUNCTORS_H_
#define DFLOW_KERNELS_IO_OPTIMIZER_FUNCTORS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

// The dense rules also run on GPUs (kernels/cuda/optimizer_kernels.cu compiles this
// header with nvcc): one rule, so the CPU and the GPU update alike.
#ifdef __CUDACC__
#define DFLOW_HOST_DEVICE __host__ __device__
#else
#define DFLOW_HOST_DEVICE
#endif

namespace dflow {
namespace optimizer {

// Which of TF's kernels a Step reproduces.
enum class Form {
  kDense,         // Apply*: Eigen expressions over the whole tensor
  kSparseRows,    // SparseApply* with rows of more than one element: Eigen over a row
  kSparseScalar,  // SparseApply* with one-element rows: TF's scalar loop
};

// What an update sees: the slots' element arrays and the scalars (as T), plus the attrs.
template <typename T>
struct Args {
  T* slot[4] = {};
  T scalar[6] = {};
  bool nesterov = false;               // use_nesterov (Momentum, Adam, KerasMomentum)
  bool update_slots = true;            // Adagrad's accumulators
  bool multiply_linear_by_lr = false;  // Ftrl
};

// The dense update of elements [begin, end): slot element i from gradient element i.
// The slots and the gradient are distinct tensors, so no iteration reads what another
// writes: `ivdep` lets the compiler vectorise the rule (with -fno-math-errno for sqrt,
// kernels/io/BUILD), 4x faster for Adam and bit for bit the same results.
template <typename Fn, typename T>
void ApplyDense(const Args<T>& a, const T* grad, int64_t begin, int64_t end) {
  const typename Fn::template Step<T, Form::kDense> step(a);
  T* const slots[4] = {a.slot[0], a.slot[1], a.slot[2], a.slot[3]};
#pragma GCC ivdep
  for (int64_t i = begin; i < end; ++i) step(slots, i, grad[i]);
}

// The sparse update of columns [begin, end) of every row: gradient row r (`inner` elements)
// updates slot row indices[r]. Rows go in order, so a repeated index sees the update before
// it, as in TF's serial loop. REQUIRES: every index in [0, rows).
template <typename Fn, Form kForm, typename T, typename Tindex>
void ApplySparse(const Args<T>& a, const T* grad, const Tindex* indices, int64_t n,
                 int64_t inner, int64_t begin, int64_t end) {
  const typename Fn::template Step<T, kForm> step(a);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t row = static_cast<int64_t>(indices[r]) * inner;
    const T* g = grad + r * inner;
    for (int64_t j = begin; j < end; ++j) step(a.slot, row + j, g[j]);
  }
}

// Eigen's sign(): -1, 0 or 1.
template <typename T>
T Sign(T x) {
  return static_cast<T>((x > T(0)) - (x < T(0)));
}

// ApplyGradientDescent is AddScaled (variable_update.h); the rest:

// ApplyMomentum(var, accum, lr, grad, momentum): accum = accum * momentum + grad;
// var -= accum * lr, or with Nesterov var -= grad * lr + accum * momentum * lr (the sparse
// kernel: lr * grad + lr * momentum * accum).
struct Momentum {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 3;  // lr is input 2, momentum input 4 (5 when sparse)
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), momentum(a.scalar[1]), nesterov(a.nesterov) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      accum = accum * momentum + g;
      if (!nesterov) {
        var -= accum * lr;
      } else if (kForm == Form::kDense) {
        var -= g * lr + accum * momentum * lr;
      } else {
        var -= lr * g + lr * momentum * accum;
      }
    }
    const T lr, momentum;
    const bool nesterov;
  };
};

// ResourceApplyKerasMomentum(var, accum, lr, grad, momentum): accum = accum * momentum -
// grad * lr; var += accum (Nesterov: var += accum * momentum - grad * lr).
struct KerasMomentum {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 3;
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), momentum(a.scalar[1]), nesterov(a.nesterov) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      accum = accum * momentum - g * lr;
      var += nesterov ? accum * momentum - g * lr : accum;
    }
    const T lr, momentum;
    const bool nesterov;
  };
};

// ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad).
struct Adam {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 9;
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : alpha(a.scalar[2] * std::sqrt(T(1) - a.scalar[1]) / (T(1) - a.scalar[0])),
          beta1(a.scalar[3]), beta2(a.scalar[4]), epsilon(a.scalar[5]), nesterov(a.nesterov) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& m = s[1][i];
      T& v = s[2][i];
      m += (g - m) * (T(1) - beta1);
      v += (g * g - v) * (T(1) - beta2);
      if (nesterov) {
        var -= ((g * (T(1) - beta1) + beta1 * m) * alpha) / (std::sqrt(v) + epsilon);
      } else {
        var -= (m * alpha) / (std::sqrt(v) + epsilon);
      }
    }
    const T alpha, beta1, beta2, epsilon;
    const bool nesterov;
  };
};

// ApplyAdaMax(var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad): m += (grad - m) *
// (1 - beta1); v = max(beta2 * v, |grad|); var -= lr / (1 - beta1_power) * (m / (v + eps)).
struct AdaMax {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 8;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a)
        : step_size(a.scalar[1] / (T(1) - a.scalar[0])), beta1(a.scalar[2]), beta2(a.scalar[3]),
          epsilon(a.scalar[4]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& m = s[1][i];
      T& v = s[2][i];
      m += (g - m) * (T(1) - beta1);
      v = std::max(beta2 * v, std::abs(g));
      var -= step_size * (m / (v + epsilon));
    }
    const T step_size, beta1, beta2, epsilon;
  };
};

// ApplyRMSProp(var, ms, mom, lr, rho, momentum, epsilon, grad). Dense: ms += (grad^2 - ms) *
// (1 - rho); mom = mom * momentum + grad * lr / sqrt(ms + eps). Sparse: ms = ms * rho +
// grad^2 * (1 - rho); mom = mom * momentum + rsqrt(ms + eps) * lr * grad. Then var -= mom.
struct RMSProp {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 7;
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), rho(a.scalar[1]), momentum(a.scalar[2]), epsilon(a.scalar[3]) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& ms = s[1][i];
      T& mom = s[2][i];
      if (kForm == Form::kDense) {
        ms += (g * g - ms) * (T(1) - rho);
        mom = mom * momentum + (g * lr) / std::sqrt(ms + epsilon);
      } else {
        ms = ms * rho + g * g * (T(1) - rho);
        mom = mom * momentum + T(1) / std::sqrt(ms + epsilon) * lr * g;
      }
      var -= mom;
    }
    const T lr, rho, momentum, epsilon;
  };
};

// ApplyCenteredRMSProp(var, mg, ms, mom, lr, rho, momentum, epsilon, grad): RMSProp whose
// denominator subtracts the mean gradient's square: ms - mg^2 + eps.
struct CenteredRMSProp {
  static constexpr int kSlots = 4;
  static constexpr int kGrad = 8;
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), rho(a.scalar[1]), momentum(a.scalar[2]), epsilon(a.scalar[3]) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& mg = s[1][i];
      T& ms = s[2][i];
      T& mom = s[3][i];
      if (kForm == Form::kDense) {
        ms += (g * g - ms) * (T(1) - rho);
        mg += (g - mg) * (T(1) - rho);
        const T denom = (ms - mg * mg) + epsilon;
        mom = mom * momentum + (g * lr) / std::sqrt(denom);
      } else {
        ms = ms * rho + g * g * (T(1) - rho);
        mg = mg * rho + g * (T(1) - rho);
        const T denom = ms + epsilon - mg * mg;
        mom = mom * momentum + T(1) / std::sqrt(denom) * lr * g;
      }
      var -= mom;
    }
    const T lr, rho, momentum, epsilon;
  };
};

// ApplyAdagrad(var, accum, lr, grad): accum += grad^2; var -= grad * lr * rsqrt(accum) (the
// sparse kernel's one-element rows: lr * grad / sqrt(accum)). update_slots=false leaves
// accum as it is.
struct Adagrad {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 3;
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), update_slots(a.update_slots) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      if (update_slots) accum += g * g;
      if (kForm == Form::kSparseScalar) {
        var -= lr * g / std::sqrt(accum);
      } else {
        var -= g * lr * (T(1) / std::sqrt(accum));
      }
    }
    const T lr;
    const bool update_slots;
  };
};

// ApplyAdagradV2(var, accum, lr, epsilon, grad): var -= grad * lr / (sqrt(accum) + epsilon).
struct AdagradV2 {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 4;
  template <typename T, Form kForm>
  struct Step {
    DFLOW_HOST_DEVICE explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), epsilon(a.scalar[1]), update_slots(a.update_slots) {}
    DFLOW_HOST_DEVICE void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      if (update_slots) accum += g * g;
      var -= g * lr / (std::sqrt(accum) + epsilon);
    }
    const T lr, epsilon;
    const bool update_slots;
  };
};

// ApplyAdadelta(var, accum, accum_update, lr, rho, epsilon, grad).
struct Adadelta {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 6;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a) : lr(a.scalar[0]), rho(a.scalar[1]), epsilon(a.scalar[2]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      T& accum_update = s[2][i];
      accum = accum * rho + g * g * (T(1) - rho);
      const T update =
          std::sqrt(accum_update + epsilon) * (T(1) / std::sqrt(accum + epsilon)) * g;
      var -= update * lr;
      accum_update = accum_update * rho + update * update * (T(1) - rho);
    }
    const T lr, rho, epsilon;
  };
};

// FTRL-proximal, ApplyFtrl(var, accum, linear, grad, lr, l1, l2, lr_power) and ApplyFtrlV2
// (l2_shrinkage before lr_power), with TF's lr_power == -0.5 shortcut (sqrt for pow):
//   g' = grad (+ 2 * l2_shrinkage * var);  new_accum = accum + grad^2
//   linear += g' - (new_accum^-p - accum^-p) / lr * var
//   var = |linear| > l1 ? (l1 * sign(linear) - linear) / (new_accum^-p / lr + 2 * l2) : 0
//   accum = new_accum
// multiply_linear_by_lr keeps linear multiplied by lr (g' * lr, no / lr, l1 * lr and
// 2 * l2 * lr). The sparse kernel clamps linear to [-l1, l1] instead of selecting 0 (equal
// unless the quadratic is 0), and on one-element rows uses pow (not sqrt) for the
// accumulator difference and adds (linear + g') before subtracting.
template <bool kShrinkage>
struct FtrlRule {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 3;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), l1(a.scalar[1]), l2(a.scalar[2]),
          l2_shrinkage(kShrinkage ? a.scalar[3] : T(0)), lr_power(a.scalar[kShrinkage ? 4 : 3]),
          by_lr(a.multiply_linear_by_lr), sqrt_power(lr_power == T(-0.5)) {}
    T Power(T x) const { return sqrt_power ? std::sqrt(x) : std::pow(x, -lr_power); }
    void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      T& linear = s[2][i];
      const T gs = kShrinkage ? g + T(2) * l2_shrinkage * var : g;
      const T new_accum = accum + g * g;
      const T quadratic =
          by_lr ? Power(new_accum) + T(2) * l2 * lr : Power(new_accum) / lr + T(2) * l2;
      const T bound = by_lr ? l1 * lr : l1;
      if (kForm == Form::kSparseScalar) {
        T sigma = std::pow(new_accum, -lr_power) - std::pow(accum, -lr_power);
        if (!by_lr) sigma /= lr;
        linear = by_lr ? linear + gs * lr - sigma * var : linear + gs - sigma * var;
      } else if (by_lr) {
        linear += gs * lr - (Power(new_accum) - Power(accum)) * var;
      } else {
        linear += gs - (Power(new_accum) - Power(accum)) / lr * var;
      }
      if (kForm == Form::kDense) {
        var = std::abs(linear) > bound ? (bound * Sign(linear) - linear) / quadratic : T(0);
      } else {
        var = (std::max(std::min(linear, bound), -bound) - linear) / quadratic;
      }
      accum = new_accum;
    }
    const T lr, l1, l2, l2_shrinkage, lr_power;
    const bool by_lr, sqrt_power;
  };
};
using Ftrl = FtrlRule<false>;
using FtrlV2 = FtrlRule<true>;

// The proximal step shared by ProximalGradientDescent and ProximalAdagrad: with step size
// `rate`, var = sign(p) * max(|p| - rate * l1, 0) / (1 + l2 * rate) for p = var - grad *
// rate (without l1: p / (1 + l2 * rate)). TF's sparse one-element rows divide in double
// (its literal 1.0) and round once to T.
template <typename T, Form kForm>
T ProximalStep(T var, T g, T rate, T l1, T l2) {
  const T prox = kForm == Form::kSparseScalar ? var - rate * g : var - g * rate;
  const T shrunk = l1 > T(0) ? Sign(prox) * std::max(std::abs(prox) - rate * l1, T(0)) : prox;
  if (kForm == Form::kSparseScalar) return static_cast<T>(shrunk / (1.0 + l2 * rate));
  return shrunk / (T(1) + l2 * rate);
}

// ApplyProximalGradientDescent(var, alpha, l1, l2, delta).
struct ProximalGradientDescent {
  static constexpr int kSlots = 1;
  static constexpr int kGrad = 4;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a) : lr(a.scalar[0]), l1(a.scalar[1]), l2(a.scalar[2]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      s[0][i] = ProximalStep<T, kForm>(s[0][i], g, lr, l1, l2);
    }
    const T lr, l1, l2;
  };
};

// ApplyProximalAdagrad(var, accum, lr, l1, l2, grad): accum += grad^2, then the proximal
// step with rate lr * rsqrt(accum) (one-element sparse rows: lr / sqrt(accum)).
struct ProximalAdagrad {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 5;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a) : lr(a.scalar[0]), l1(a.scalar[1]), l2(a.scalar[2]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& accum = s[1][i];
      accum += g * g;
      const T rate = kForm == Form::kSparseScalar ? lr / std::sqrt(accum)
                                                  : lr * (T(1) / std::sqrt(accum));
      var = ProximalStep<T, kForm>(var, g, rate, l1, l2);
    }
    const T lr, l1, l2;
  };
};

// ApplyAdagradDA(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2,
// global_step): g += grad, gg += grad^2, then with step T
//   var = lr * -sign(g) * max(|g| - l1 * T, 0) / (sqrt(gg) + T * l2 * lr)   (l1 > 0)
//   var = lr * g * -1 / (sqrt(gg) + T * l2 * lr)                             (l1 = 0)
// (the sparse kernel divides through by T * lr: -sign(g) * max(|g| / T - l1, 0) /
// (l2 + sqrt(gg) / (T * lr)), rounding differently).
struct AdagradDA {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 3;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), l1(a.scalar[1]), l2(a.scalar[2]), step(a.scalar[3]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      T& ga = s[1][i];
      T& gg = s[2][i];
      ga += g;
      gg += g * g;
      s[0][i] = kForm == Form::kDense ? Dense(ga, gg) : Sparse(ga, gg);
    }
    T Dense(T ga, T gg) const {
      const T denominator = std::sqrt(gg) + step * l2 * lr;
      if (l1 > T(0)) {
        return lr * (-Sign(ga) * std::max(std::abs(ga) - step * l1, T(0))) / denominator;
      }
      return lr * ga * T(-1) / denominator;
    }
    T Sparse(T ga, T gg) const {
      const T denominator = l2 + std::sqrt(gg) / (step * lr);
      if (l1 > T(0)) {
        return T(-1) * Sign(ga) * std::max(std::abs(ga) / step - l1, T(0)) / denominator;
      }
      return T(-1) * (ga / step) / denominator;
    }
    const T lr, l1, l2, step;
  };
};

// ApplyAddSign(var, m, lr, alpha, sign_decay, beta, grad): m = m * beta + grad * (1 - beta);
// var -= lr * (alpha + sign_decay * sign(grad) * sign(m)) * grad.
struct AddSign {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 6;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), alpha(a.scalar[1]), sign_decay(a.scalar[2]), beta(a.scalar[3]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& m = s[1][i];
      m = m * beta + g * (T(1) - beta);
      const T sign_gm = Sign(g) * Sign(m);
      var -= lr * (alpha + sign_decay * sign_gm) * g;
    }
    const T lr, alpha, sign_decay, beta;
  };
};

// ApplyPowerSign(var, m, lr, logbase, sign_decay, beta, grad): m as AddSign;
// var -= lr * exp(logbase * sign_decay * sign(grad) * sign(m)) * grad.
struct PowerSign {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 6;
  template <typename T, Form kForm>
  struct Step {
    explicit Step(const Args<T>& a)
        : lr(a.scalar[0]), log_decay(a.scalar[1] * a.scalar[2]), beta(a.scalar[3]) {}
    void operator()(T* const* s, int64_t i, T g) const {
      T& var = s[0][i];
      T& m = s[1][i];
      m = m * beta + g * (T(1) - beta);
      const T sign_gm = Sign(g) * Sign(m);
      var -= lr * std::exp(log_decay * sign_gm) * g;
    }
    const T lr, log_decay, beta;
  };
};

}  // namespace optimizer
}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_OPTIMIZER_FUNCTORS_H_
