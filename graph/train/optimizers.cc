#include "graph/train/optimizers.h"

#include <string>
#include <vector>

#include "graph/array_ops.h"
#include "graph/ops.h"

namespace dflow {
namespace {

AttrMap Locking(bool use_locking) { return {{"use_locking", BoolAttr(use_locking)}}; }

// ResourceApply<kind>(before..., grad, after...), or for rows
// ResourceSparseApply<kind>(before..., values, indices, after...): every sparse apply op
// takes the indices right after the gradient.
Operation ApplyOp(const Scope& scope, const std::string& kind, std::vector<OpArg> args,
                  const ApplyGradient& grad, const std::vector<OpArg>& after,
                  const AttrMap& attrs) {
  if (grad.rows == nullptr) {
    args.push_back(grad.dense);
  } else {
    args.push_back(grad.rows->values);
    args.push_back(grad.rows->indices);
  }
  args.insert(args.end(), after.begin(), after.end());
  const std::string op = (grad.rows == nullptr ? "ResourceApply" : "ResourceSparseApply") + kind;
  return AddOp(scope, op, args, attrs);
}

}  // namespace

Operation ApplyOpOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                       const Variable& var) {
  return Update(scope, ApplyGradient{grad, nullptr}, var);
}

Operation ApplyOpOptimizer::ApplySparse(const Scope& scope, const SparseGradient& grad,
                                        const Variable& var) {
  const SparseGradient rows = Deduplicated(scope, grad);
  return Update(scope, ApplyGradient{Output(), &rows}, var);
}

Operation GradientDescentOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                               const Variable& var) {
  return AddOp(scope, "ResourceApplyGradientDescent", {var.handle(), Input(lr_), grad},
               Locking(use_locking()));
}

Operation MomentumOptimizer::Update(const Scope& scope, const ApplyGradient& grad,
                                    const Variable& var) {
  Variable accum = MakeSlot(var, 0.0);
  AttrMap attrs = Locking(use_locking());
  attrs["use_nesterov"] = BoolAttr(nesterov_);
  return ApplyOp(scope, "Momentum", {var.handle(), accum.handle(), Input(lr_)}, grad,
                 {Input(momentum_)}, attrs);
}

absl::Status AdamOptimizer::Prepare(const Variable& first) {
  beta1_power_ = MakeState("beta1_power", beta1_, first.dtype(), first);
  beta2_power_ = MakeState("beta2_power", beta2_, first.dtype(), first);
  return absl::OkStatus();
}

Operation AdamOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                    const Variable& var) {
  Variable m = MakeSlot(var, 0.0);
  Variable v = MakeSlot(var, 0.0, "_1");
  Output beta1_power = beta1_power_.Read(scope);
  Output beta2_power = beta2_power_.Read(scope);
  return AddOp(scope, "ResourceApplyAdam",
               {var.handle(), m.handle(), v.handle(), beta1_power, beta2_power, Input(lr_),
                Input(beta1_), Input(beta2_), Input(epsilon_), grad},
               Locking(use_locking()));
}

// The beta powers advance once per step, after every variable used the old ones.
Operation AdamOptimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  Scope after = scope.WithControlDependencies(updates);
  std::vector<Operation> all = updates;
  for (const auto& [power, beta] : {std::pair{&beta1_power_, beta1_},
                                    std::pair{&beta2_power_, beta2_}}) {
    Scope at = power->Colocated(after);
    Output next = Mul(at, power->Read(at), beta);
    all.push_back(AddOp(at, "AssignVariableOp", {power->handle(), next}));
  }
  return NoOp(scope.WithOpName("update").WithControlDependencies(all));
}

Operation RMSPropOptimizer::Update(const Scope& scope, const ApplyGradient& grad,
                                   const Variable& var) {
  Variable ms = MakeSlot(var, 1.0);
  Variable mom = MakeSlot(var, 0.0, "_1");
  const std::vector<OpArg> hyper = {Input(lr_), Input(decay_), Input(momentum_),
                                    Input(epsilon_)};
  std::vector<OpArg> before = {var.handle(), ms.handle(), mom.handle()};
  if (centered_) before.insert(before.begin() + 1, MakeSlot(var, 0.0, "_2").handle());
  before.insert(before.end(), hyper.begin(), hyper.end());
  return ApplyOp(scope, centered_ ? "CenteredRMSProp" : "RMSProp", before, grad, {},
                 Locking(use_locking()));
}

Operation AdagradOptimizer::Update(const Scope& scope, const ApplyGradient& grad,
                                   const Variable& var) {
  Variable accum = MakeSlot(var, initial_);
  return ApplyOp(scope, "Adagrad", {var.handle(), accum.handle(), Input(lr_)}, grad, {},
                 Locking(use_locking()));
}

Operation AdadeltaOptimizer::Update(const Scope& scope, const ApplyGradient& grad,
                                    const Variable& var) {
  Variable accum = MakeSlot(var, 0.0);
  Variable accum_update = MakeSlot(var, 0.0, "_1");
  return ApplyOp(scope, "Adadelta",
                 {var.handle(), accum.handle(), accum_update.handle(), Input(lr_), Input(rho_),
                  Input(epsilon_)},
                 grad, {}, Locking(use_locking()));
}

Operation FtrlOptimizer::Update(const Scope& scope, const ApplyGradient& grad,
                                const Variable& var) {
  Variable accum = MakeSlot(var, options_.initial_accumulator_value);
  Variable linear = MakeSlot(var, 0.0, "_1");
  std::vector<OpArg> after = {Input(lr_), Input(options_.l1_regularization_strength),
                              Input(options_.l2_regularization_strength)};
  const bool shrinkage = options_.l2_shrinkage_regularization_strength != 0.0;
  if (shrinkage) after.push_back(Input(options_.l2_shrinkage_regularization_strength));
  after.push_back(Input(options_.learning_rate_power));
  return ApplyOp(scope, shrinkage ? "FtrlV2" : "Ftrl",
                 {var.handle(), accum.handle(), linear.handle()}, grad, after,
                 Locking(use_locking()));
}

// ---- Sparse paths: the rows of an embedding's gradient alone, as TF 1's optimizers ----

// TF: resource_scatter_add(var, indices, -lr * grad), repeated indices adding up.
Operation GradientDescentOptimizer::ApplySparse(const Scope& scope, const SparseGradient& grad,
                                                const Variable& var) {
  return AddOp(scope, "ResourceScatterAdd",
               {var.handle(), grad.indices, Mul(scope, grad.values, -lr_)});
}

// TF 1's _apply_sparse_shared: m and v decay in every row, the rows' gradient terms are
// scattered in, and the variable moves in every row (the dense update's result).
Operation AdamOptimizer::ApplySparse(const Scope& scope, const SparseGradient& grad,
                                     const Variable& var) {
  SparseGradient g = Deduplicated(scope, grad);
  Variable m = MakeSlot(var, 0.0);
  Variable v = MakeSlot(var, 0.0, "_1");
  Output beta1_power = beta1_power_.Read(scope);
  Output beta2_power = beta2_power_.Read(scope);
  Output lr = Mul(scope, Input(lr_),
                  RealDiv(scope, Sqrt(scope, Sub(scope, 1.0, beta2_power)),
                          Sub(scope, 1.0, beta1_power)));
  auto decay_and_scatter = [&](const Variable& slot, double beta, const Output& term) {
    Operation decay = AddOp(scope, "AssignVariableOp",
                            {slot.handle(), Mul(scope, slot.Read(scope), beta)});
    return AddOp(scope.WithControlDependencies({decay}), "ResourceScatterAdd",
                 {slot.handle(), g.indices, Mul(scope, term, 1.0 - beta)});
  };
  Operation m_add = decay_and_scatter(m, beta1_, g.values);
  Operation v_add = decay_and_scatter(v, beta2_, Square(scope, g.values));
  Output m_t = m.Read(scope.WithControlDependencies({m_add}));
  Output v_t = v.Read(scope.WithControlDependencies({v_add}));
  Output step = RealDiv(scope, Mul(scope, lr, m_t), Add(scope, Sqrt(scope, v_t), epsilon_));
  Operation update = AddOp(scope, "AssignSubVariableOp", {var.handle(), step});
  return NoOp(scope.WithOpName("sparse_update")
                  .WithControlDependencies({update, m_add, v_add}));
}

}  // namespace dflow
