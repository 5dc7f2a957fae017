// The update rules of TF's optimizer apply ops (training_ops.cc's functors), element by
// element in the variable's type T, in TF's operation order so float results match its CPU
// kernels. Each functor names its slots (the variable first, then the accumulators it
// updates, in input order) and its scalar hyperparameters (in input order, after the
// slots; the gradient is the op's other input).
#ifndef DFLOW_KERNELS_IO_OPTIMIZER_FUNCTORS_H_
#define DFLOW_KERNELS_IO_OPTIMIZER_FUNCTORS_H_

#include <cmath>
#include <cstdint>

namespace dflow {
namespace optimizer {

// What an update sees: the slots' element arrays, the gradient, the scalars (as T).
template <typename T>
struct Args {
  T* slot[4];
  const T* grad;
  T scalar[6];
  bool nesterov = false;
  bool update_slots = true;  // Adagrad's accumulators
};

// ApplyGradientDescent is AddScaled (variable_update.h); the rest:

// ApplyMomentum(var, accum, lr, grad, momentum): accum = accum * momentum + grad;
// var -= accum * lr, or with Nesterov var -= grad * lr + accum * momentum * lr.
struct Momentum {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 3;  // lr is input 2, momentum input 4
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T lr = a.scalar[0], momentum = a.scalar[1];
    T* var = a.slot[0];
    T* accum = a.slot[1];
    for (int64_t i = begin; i < end; ++i) {
      accum[i] = accum[i] * momentum + a.grad[i];
      if (a.nesterov) {
        var[i] -= a.grad[i] * lr + accum[i] * momentum * lr;
      } else {
        var[i] -= accum[i] * lr;
      }
    }
  }
};

// ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad).
struct Adam {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 9;
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T beta1_power = a.scalar[0], beta2_power = a.scalar[1], lr = a.scalar[2];
    const T beta1 = a.scalar[3], beta2 = a.scalar[4], epsilon = a.scalar[5];
    const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    T* var = a.slot[0];
    T* m = a.slot[1];
    T* v = a.slot[2];
    for (int64_t i = begin; i < end; ++i) {
      const T g = a.grad[i];
      m[i] += (g - m[i]) * (T(1) - beta1);
      v[i] += (g * g - v[i]) * (T(1) - beta2);
      if (a.nesterov) {
        var[i] -= ((g * (T(1) - beta1) + beta1 * m[i]) * alpha) / (std::sqrt(v[i]) + epsilon);
      } else {
        var[i] -= (m[i] * alpha) / (std::sqrt(v[i]) + epsilon);
      }
    }
  }
};

// ApplyRMSProp(var, ms, mom, lr, rho, momentum, epsilon, grad).
struct RMSProp {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 7;
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T lr = a.scalar[0], rho = a.scalar[1], momentum = a.scalar[2], epsilon = a.scalar[3];
    T* var = a.slot[0];
    T* ms = a.slot[1];
    T* mom = a.slot[2];
    for (int64_t i = begin; i < end; ++i) {
      const T g = a.grad[i];
      ms[i] += (g * g - ms[i]) * (T(1) - rho);
      mom[i] = mom[i] * momentum + (g * lr) / std::sqrt(ms[i] + epsilon);
      var[i] -= mom[i];
    }
  }
};

// ApplyCenteredRMSProp(var, mg, ms, mom, lr, rho, momentum, epsilon, grad).
struct CenteredRMSProp {
  static constexpr int kSlots = 4;
  static constexpr int kGrad = 8;
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T lr = a.scalar[0], rho = a.scalar[1], momentum = a.scalar[2], epsilon = a.scalar[3];
    T* var = a.slot[0];
    T* mg = a.slot[1];
    T* ms = a.slot[2];
    T* mom = a.slot[3];
    for (int64_t i = begin; i < end; ++i) {
      const T g = a.grad[i];
      ms[i] += (g * g - ms[i]) * (T(1) - rho);
      mg[i] += (g - mg[i]) * (T(1) - rho);
      const T denom = (ms[i] - mg[i] * mg[i]) + epsilon;
      mom[i] = mom[i] * momentum + (g * lr) / std::sqrt(denom);
      var[i] -= mom[i];
    }
  }
};

// ApplyAdagrad(var, accum, lr, grad): accum += grad^2; var -= grad * lr / sqrt(accum).
struct Adagrad {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 3;
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T lr = a.scalar[0];
    T* var = a.slot[0];
    T* accum = a.slot[1];
    for (int64_t i = begin; i < end; ++i) {
      const T g = a.grad[i];
      if (a.update_slots) accum[i] += g * g;
      var[i] -= g * lr * (T(1) / std::sqrt(accum[i]));
    }
  }
};

// ApplyAdagradV2(var, accum, lr, epsilon, grad): var -= grad * lr / (sqrt(accum) + epsilon).
struct AdagradV2 {
  static constexpr int kSlots = 2;
  static constexpr int kGrad = 4;
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T lr = a.scalar[0], epsilon = a.scalar[1];
    T* var = a.slot[0];
    T* accum = a.slot[1];
    for (int64_t i = begin; i < end; ++i) {
      const T g = a.grad[i];
      if (a.update_slots) accum[i] += g * g;
      var[i] -= g * lr / (std::sqrt(accum[i]) + epsilon);
    }
  }
};

// ApplyAdadelta(var, accum, accum_update, lr, rho, epsilon, grad).
struct Adadelta {
  static constexpr int kSlots = 3;
  static constexpr int kGrad = 6;
  template <typename T>
  static void Apply(const Args<T>& a, int64_t begin, int64_t end) {
    const T lr = a.scalar[0], rho = a.scalar[1], epsilon = a.scalar[2];
    T* var = a.slot[0];
    T* accum = a.slot[1];
    T* accum_update = a.slot[2];
    for (int64_t i = begin; i < end; ++i) {
      const T g = a.grad[i];
      accum[i] = accum[i] * rho + g * g * (T(1) - rho);
      const T update =
          std::sqrt(accum_update[i] + epsilon) * (T(1) / std::sqrt(accum[i] + epsilon)) * g;
      var[i] -= update * lr;
      accum_update[i] = accum_update[i] * rho + update * update * (T(1) - rho);
    }
  }
};

}  // namespace optimizer
}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_OPTIMIZER_FUNCTORS_H_
