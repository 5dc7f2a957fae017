// The optimizers of tf.compat.v1.train for the builder API, each one ResourceApply*
// kernel per variable with TF's defaults, slot names and slot initial values.
#ifndef DFLOW_GRAPH_TRAIN_OPTIMIZERS_H_
#define DFLOW_GRAPH_TRAIN_OPTIMIZERS_H_

#include "graph/train/optimizer.h"

namespace dflow {

// The gradient an apply op takes: a dense tensor, or deduplicated rows of it (`rows`,
// for a sparse apply op).
struct ApplyGradient {
  Output dense;
  const SparseGradient* rows = nullptr;
};

// An optimizer whose update is one ResourceApply<kind> op with a ResourceSparseApply<kind>
// twin (TF 1's apply ops): Update builds either; a sparse gradient is deduplicated first.
class ApplyOpOptimizer : public Optimizer {
 public:
  using Optimizer::Optimizer;

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) final;
  Operation ApplySparse(const Scope& scope, const SparseGradient& grad,
                        const Variable& var) final;
  virtual Operation Update(const Scope& scope, const ApplyGradient& grad,
                           const Variable& var) = 0;
};

// var -= lr * grad.
class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(double learning_rate, bool use_locking = false)
      : Optimizer("GradientDescent", use_locking), lr_(learning_rate) {}

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation ApplySparse(const Scope& scope, const SparseGradient& grad,
                        const Variable& var) override;

 private:
  double lr_;
};

// accum = momentum * accum + grad; var -= lr * accum (Nesterov: lr * (grad + momentum *
// accum)). Slot "<var>/Momentum", zeros.
class MomentumOptimizer : public ApplyOpOptimizer {
 public:
  MomentumOptimizer(double learning_rate, double momentum, bool use_nesterov = false,
                    bool use_locking = false)
      : ApplyOpOptimizer("Momentum", use_locking),
        lr_(learning_rate),
        momentum_(momentum),
        nesterov_(use_nesterov) {}

 protected:
  Operation Update(const Scope& scope, const ApplyGradient& grad, const Variable& var) override;

 private:
  double lr_, momentum_;
  bool nesterov_;
};

// Adam (Kingma & Ba) as TF 1 computes it, with bias correction through the beta1_power
// and beta2_power variables. Slots "<var>/Adam" (m) and "<var>/Adam_1" (v), zeros.
class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(double learning_rate = 0.001, double beta1 = 0.9,
                         double beta2 = 0.999, double epsilon = 1e-8, bool use_locking = false)
      : Optimizer("Adam", use_locking),
        lr_(learning_rate),
        beta1_(beta1),
        beta2_(beta2),
        epsilon_(epsilon) {}

 protected:
  absl::Status Prepare(const Variable& first) override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  Operation ApplySparse(const Scope& scope, const SparseGradient& grad,
                        const Variable& var) override;
  Operation Finish(const Scope& scope, const std::vector<Operation>& updates) override;

 private:
  double lr_, beta1_, beta2_, epsilon_;
  Variable beta1_power_, beta2_power_;
};

// RMSProp; slots "<var>/RMSProp" (ms, ones as TF 1), "<var>/RMSProp_1" (mom, zeros),
// and for centered "<var>/RMSProp_2"... (mg, zeros).
class RMSPropOptimizer : public ApplyOpOptimizer {
 public:
  explicit RMSPropOptimizer(double learning_rate, double decay = 0.9, double momentum = 0.0,
                            double epsilon = 1e-10, bool centered = false,
                            bool use_locking = false)
      : ApplyOpOptimizer("RMSProp", use_locking),
        lr_(learning_rate),
        decay_(decay),
        momentum_(momentum),
        epsilon_(epsilon),
        centered_(centered) {}

 protected:
  Operation Update(const Scope& scope, const ApplyGradient& grad, const Variable& var) override;

 private:
  double lr_, decay_, momentum_, epsilon_;
  bool centered_;
};

// accum += grad^2; var -= lr * grad / sqrt(accum). Slot "<var>/Adagrad", filled with
// initial_accumulator_value.
class AdagradOptimizer : public ApplyOpOptimizer {
 public:
  explicit AdagradOptimizer(double learning_rate, double initial_accumulator_value = 0.1,
                            bool use_locking = false)
      : ApplyOpOptimizer("Adagrad", use_locking),
        lr_(learning_rate),
        initial_(initial_accumulator_value) {}

 protected:
  Operation Update(const Scope& scope, const ApplyGradient& grad, const Variable& var) override;

 private:
  double lr_, initial_;
};

// Adadelta (Zeiler): accum = rho accum + (1 - rho) grad^2; update = sqrt(accum_update +
// eps) / sqrt(accum + eps) grad; accum_update = rho accum_update + (1 - rho) update^2;
// var -= lr * update. Slots "<var>/Adadelta" (accum) and "<var>/Adadelta_1"
// (accum_update), zeros. TF 1's defaults.
class AdadeltaOptimizer : public ApplyOpOptimizer {
 public:
  explicit AdadeltaOptimizer(double learning_rate = 0.001, double rho = 0.95,
                             double epsilon = 1e-8, bool use_locking = false)
      : ApplyOpOptimizer("Adadelta", use_locking),
        lr_(learning_rate),
        rho_(rho),
        epsilon_(epsilon) {}

 protected:
  Operation Update(const Scope& scope, const ApplyGradient& grad, const Variable& var) override;

 private:
  double lr_, rho_, epsilon_;
};

// FTRL-Proximal (McMahan et al.), TF 1's FtrlOptimizer: slots "<var>/Ftrl" (accum,
// filled with initial_accumulator_value) and "<var>/Ftrl_1" (linear, zeros);
// ResourceApplyFtrl, or ResourceApplyFtrlV2 with an l2 shrinkage strength.
struct FtrlOptions {
  double learning_rate_power = -0.5;
  double initial_accumulator_value = 0.1;
  double l1_regularization_strength = 0.0;
  double l2_regularization_strength = 0.0;
  double l2_shrinkage_regularization_strength = 0.0;
  bool use_locking = false;
};

class FtrlOptimizer : public ApplyOpOptimizer {
 public:
  explicit FtrlOptimizer(double learning_rate, const FtrlOptions& options = {})
      : ApplyOpOptimizer("Ftrl", options.use_locking),
        lr_(learning_rate),
        options_(options) {}

 protected:
  Operation Update(const Scope& scope, const ApplyGradient& grad, const Variable& var) override;

 private:
  double lr_;
  FtrlOptions options_;
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_OPTIMIZERS_H_
