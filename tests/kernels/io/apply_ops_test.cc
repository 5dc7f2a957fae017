// Optimizer apply ops (kernels/io/apply_ops.cc): ResourceApplyMomentum (plain and
// Nesterov), ResourceApplyAdam (plain and Nesterov), ResourceApplyRMSProp,
// ResourceApplyCenteredRMSProp, ResourceApplyAdagrad(V2) and ResourceApplyAdadelta run
// through OpTester on resource variables of the test device's VariableStore, over one or
// two steps, against the textbook update rules computed here in double; the ref forms
// (ApplyMomentum with use_nesterov, ApplyAdam, ApplyAdagrad) through a Session on
// VariableV2s. ApplyFtrl/FtrlV2 (lr_power, multiply_linear_by_lr, l1 zeroing),
// ApplyProximalGradientDescent, ApplyProximalAdagrad, ApplyAdagradDA (int64 global_step),
// ApplyAdaMax, ApplyAddSign,
// ApplyPowerSign and ResourceApplyKerasMomentum against TensorFlow 2.21's results
// (kDenseCases, record_tf_values.py), ref and resource forms, use_locking true and false.
// Also: updates are copy-on-write (a tensor read before an update keeps its values), and
// the errors in TF's words: shape mismatches naming the slot, uninitialized or missing
// variables, non-scalar hyperparameters, update_slots=false (accum left as it is).
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/io/register_io_kernels.h"
#include "runtime/device.h"
#include "runtime/variable_store.h"
#include "session/session.h"
#include "tests/kernels/io/variable_op_testing.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::CheckNear;
using testing::MakeTensor;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;
using testing::Vec;
using Doubles = std::vector<double>;
using testing::G;
using testing::S;
using testing::Step;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterApplyKernels); }

// ---------------------------------------------------------------------------------
// Resource variables on the test device.

// A new resource variable holding `values` (a 1-D tensor); returns its unique name.
template <typename T>
std::string NewVariable(const std::string& base, const std::vector<T>& values) {
  static int counter = 0;
  const std::string name = absl::StrCat(base, "_", ++counter);
  auto var = TestCpuDevice()->variables()->LookupOrCreateResource("", name, DataTypeOf<T>());
  absl::MutexLock lock(&var->mu);
  var->value = Vec<T>(values);
  return name;
}

// A resource variable that exists but was never assigned.
std::string NewUninitializedVariable(const std::string& base) {
  static int counter = 0;
  const std::string name = absl::StrCat(base, "_uninit_", ++counter);
  TestCpuDevice()->variables()->LookupOrCreateResource("", name, DT_FLOAT);
  return name;
}

Tensor Handle(const std::string& name) {
  ResourceHandleProto h;
  h.set_name(name);
  return MakeTensor<ResourceHandleProto>({}, {h});
}

// The variable's current value (sharing its buffer, as a ReadVariableOp would).
Tensor Snapshot(const std::string& name) {
  auto var = TestCpuDevice()->variables()->FindResource("", name);
  REQUIRE(var != nullptr);
  absl::MutexLock lock(&var->mu);
  return var->value;
}

template <typename T>
std::vector<T> Read(const std::string& name) {
  return Values<T>(Snapshot(name));
}

template <typename T>
Tensor Scalar(T v) {
  return MakeTensor<T>({}, {v});
}
Tensor F(float v) { return Scalar<float>(v); }

// Runs `op` (T = `dtype`) on `inputs`; `nesterov` sets use_nesterov when given.
absl::Status Apply(const std::string& op, const std::vector<Tensor>& inputs,
                   DataType dtype = DT_FLOAT, int nesterov = -1) {
  OpTester t(op, Registry());
  t.Attr("T", dtype);
  if (nesterov >= 0) t.Attr("use_nesterov", nesterov == 1);
  for (const Tensor& in : inputs) t.Input(in);
  absl::StatusOr<std::vector<Tensor>> out = t.Run();
  return out.status();
}

void RequireOk(const absl::Status& status) {
  INFO(status.ToString());
  REQUIRE(status.ok());
}

// The float inputs as the kernels see them, widened for the double references.
Doubles Wide(const std::vector<float>& v) { return Doubles(v.begin(), v.end()); }
double W(float v) { return static_cast<double>(v); }

void CheckFloats(const std::vector<float>& got, const Doubles& want, double eps = 2e-6) {
  CheckNear(Wide(got), want, eps);
}

const std::vector<float> kVar0 = {1.0f, 2.0f, -3.0f};
const std::vector<float> kGrad1 = {0.5f, -1.0f, 2.0f};
const std::vector<float> kGrad2 = {1.0f, 0.25f, -0.5f};

// ---------------------------------------------------------------------------------
// Momentum.

// accum = accum * momentum + g; var -= lr * accum (Nesterov: var -= lr * (g + momentum *
// accum)).
void MomentumStep(Doubles* var, Doubles* accum, const Doubles& g, double lr, double momentum,
                  bool nesterov) {
  for (size_t i = 0; i < var->size(); ++i) {
    (*accum)[i] = momentum * (*accum)[i] + g[i];
    (*var)[i] -= nesterov ? lr * (g[i] + momentum * (*accum)[i]) : lr * (*accum)[i];
  }
}

TEST_CASE("ResourceApplyMomentum follows the momentum rule over two steps, Nesterov too",
          "[kernels][apply]") {
  for (bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    const std::vector<float> accum0 = {0.5f, 0.0f, -1.0f};
    const std::string var = NewVariable<float>("momentum_var", kVar0);
    const std::string accum = NewVariable<float>("momentum_accum", accum0);
    const float lr = 0.1f, momentum = 0.9f;
    Doubles want_var = Wide(kVar0), want_accum = Wide(accum0);
    for (const std::vector<float>& g : {kGrad1, kGrad2}) {
      RequireOk(Apply("ResourceApplyMomentum",
                      {Handle(var), Handle(accum), F(lr), Vec<float>(g), F(momentum)}, DT_FLOAT,
                      nesterov ? 1 : 0));
      MomentumStep(&want_var, &want_accum, Wide(g), W(lr), W(momentum), nesterov);
      CheckFloats(Read<float>(var), want_var);
      CheckFloats(Read<float>(accum), want_accum);
    }
  }
}

TEST_CASE("ResourceApplyMomentum updates double variables", "[kernels][apply]") {
  const std::string var = NewVariable<double>("momentum_double_var", {1.0, -2.0});
  const std::string accum = NewVariable<double>("momentum_double_accum", {0.25, 0.5});
  RequireOk(Apply("ResourceApplyMomentum",
                  {Handle(var), Handle(accum), Scalar<double>(0.01), Vec<double>({3.0, -4.0}),
                   Scalar<double>(0.5)},
                  DT_DOUBLE));
  // accum = {0.125 + 3, 0.25 - 4}; var -= 0.01 * accum.
  CheckNear(Read<double>(accum), {3.125, -3.75}, 1e-14);
  CheckNear(Read<double>(var), {1.0 - 0.03125, -2.0 + 0.0375}, 1e-14);
}

// ---------------------------------------------------------------------------------
// Adam.

struct AdamHyper {
  float lr = 0.01f, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
};

// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; lr_t = lr sqrt(1 - b2^t) / (1 - b1^t);
// var -= lr_t m / (sqrt(v) + eps); Nesterov uses (b1 m + (1 - b1) g) for m.
void AdamStep(Doubles* var, Doubles* m, Doubles* v, const Doubles& g, const AdamHyper& h,
              double beta1_power, double beta2_power, bool nesterov) {
  const double b1 = W(h.beta1), b2 = W(h.beta2);
  const double lr_t = W(h.lr) * std::sqrt(1 - beta2_power) / (1 - beta1_power);
  for (size_t i = 0; i < var->size(); ++i) {
    (*m)[i] = b1 * (*m)[i] + (1 - b1) * g[i];
    (*v)[i] = b2 * (*v)[i] + (1 - b2) * g[i] * g[i];
    const double step_m = nesterov ? b1 * (*m)[i] + (1 - b1) * g[i] : (*m)[i];
    (*var)[i] -= lr_t * step_m / (std::sqrt((*v)[i]) + W(h.epsilon));
  }
}

TEST_CASE("ResourceApplyAdam follows Adam's rule over two steps, Nesterov too",
          "[kernels][apply]") {
  for (bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    const std::vector<float> m0 = {0.1f, -0.2f, 0.0f}, v0 = {0.01f, 0.04f, 0.0f};
    const std::string var = NewVariable<float>("adam_var", kVar0);
    const std::string m = NewVariable<float>("adam_m", m0);
    const std::string v = NewVariable<float>("adam_v", v0);
    const AdamHyper h;
    Doubles want_var = Wide(kVar0), want_m = Wide(m0), want_v = Wide(v0);
    const std::vector<float> beta1_powers = {0.9f, 0.81f}, beta2_powers = {0.999f, 0.998001f};
    for (int step = 0; step < 2; ++step) {
      CAPTURE(step);
      const std::vector<float>& g = step == 0 ? kGrad1 : kGrad2;
      RequireOk(
          Apply("ResourceApplyAdam",
                {Handle(var), Handle(m), Handle(v), F(beta1_powers[step]), F(beta2_powers[step]),
                 F(h.lr), F(h.beta1), F(h.beta2), F(h.epsilon), Vec<float>(g)},
                DT_FLOAT, nesterov ? 1 : 0));
      AdamStep(&want_var, &want_m, &want_v, Wide(g), h, W(beta1_powers[step]),
               W(beta2_powers[step]), nesterov);
      CheckFloats(Read<float>(var), want_var);
      CheckFloats(Read<float>(m), want_m);
      CheckFloats(Read<float>(v), want_v);
    }
  }
}

// ---------------------------------------------------------------------------------
// RMSProp and centered RMSProp.

struct RmsHyper {
  float lr = 0.01f, rho = 0.9f, momentum = 0.5f, epsilon = 1e-6f;
};

// ms = rho ms + (1 - rho) g^2; (centered: mg = rho mg + (1 - rho) g, ms -= mg^2 in the
// denominator); mom = momentum mom + lr g / sqrt(ms + eps); var -= mom.
void RmsStep(Doubles* var, Doubles* mg, Doubles* ms, Doubles* mom, const Doubles& g,
             const RmsHyper& h) {
  const double rho = W(h.rho);
  for (size_t i = 0; i < var->size(); ++i) {
    (*ms)[i] = rho * (*ms)[i] + (1 - rho) * g[i] * g[i];
    double denom = (*ms)[i] + W(h.epsilon);
    if (mg != nullptr) {
      (*mg)[i] = rho * (*mg)[i] + (1 - rho) * g[i];
      denom -= (*mg)[i] * (*mg)[i];
    }
    (*mom)[i] = W(h.momentum) * (*mom)[i] + W(h.lr) * g[i] / std::sqrt(denom);
    (*var)[i] -= (*mom)[i];
  }
}

const std::vector<float> kMs0 = {1.0f, 0.5f, 0.25f};
const std::vector<float> kMom0 = {0.0f, 0.1f, -0.1f};

TEST_CASE("ResourceApplyRMSProp follows the RMSProp rule over two steps", "[kernels][apply]") {
  const std::string var = NewVariable<float>("rms_var", kVar0);
  const std::string ms = NewVariable<float>("rms_ms", kMs0);
  const std::string mom = NewVariable<float>("rms_mom", kMom0);
  const RmsHyper h;
  Doubles want_var = Wide(kVar0), want_ms = Wide(kMs0), want_mom = Wide(kMom0);
  for (const std::vector<float>& g : {kGrad1, kGrad2}) {
    RequireOk(
        Apply("ResourceApplyRMSProp", {Handle(var), Handle(ms), Handle(mom), F(h.lr), F(h.rho),
                                       F(h.momentum), F(h.epsilon), Vec<float>(g)}));
    RmsStep(&want_var, nullptr, &want_ms, &want_mom, Wide(g), h);
    CheckFloats(Read<float>(var), want_var);
    CheckFloats(Read<float>(ms), want_ms);
    CheckFloats(Read<float>(mom), want_mom);
  }
}

TEST_CASE("ResourceApplyCenteredRMSProp subtracts the mean gradient's square", "[kernels][apply]") {
  const std::vector<float> mg0 = {0.0f, 0.1f, -0.2f};
  const std::string var = NewVariable<float>("crms_var", kVar0);
  const std::string mg = NewVariable<float>("crms_mg", mg0);
  const std::string ms = NewVariable<float>("crms_ms", kMs0);
  const std::string mom = NewVariable<float>("crms_mom", kMom0);
  const RmsHyper h;
  Doubles want_var = Wide(kVar0), want_mg = Wide(mg0), want_ms = Wide(kMs0), want_mom = Wide(kMom0);
  for (const std::vector<float>& g : {kGrad1, kGrad2}) {
    RequireOk(Apply("ResourceApplyCenteredRMSProp",
                    {Handle(var), Handle(mg), Handle(ms), Handle(mom), F(h.lr), F(h.rho),
                     F(h.momentum), F(h.epsilon), Vec<float>(g)}));
    RmsStep(&want_var, &want_mg, &want_ms, &want_mom, Wide(g), h);
    CheckFloats(Read<float>(var), want_var);
    CheckFloats(Read<float>(mg), want_mg);
    CheckFloats(Read<float>(ms), want_ms);
    CheckFloats(Read<float>(mom), want_mom);
  }
}

// ---------------------------------------------------------------------------------
// Adagrad, AdagradV2, Adadelta.

TEST_CASE("ResourceApplyAdagrad and AdagradV2 follow Adagrad's rule over two steps",
          "[kernels][apply]") {
  const std::vector<float> accum0 = {0.1f, 0.1f, 0.5f};
  const float lr = 0.1f, epsilon = 0.01f;
  for (bool v2 : {false, true}) {
    CAPTURE(v2);
    const std::string var = NewVariable<float>("adagrad_var", kVar0);
    const std::string accum = NewVariable<float>("adagrad_accum", accum0);
    Doubles want_var = Wide(kVar0), want_accum = Wide(accum0);
    for (const std::vector<float>& g : {kGrad1, kGrad2}) {
      if (v2) {
        RequireOk(Apply("ResourceApplyAdagradV2",
                        {Handle(var), Handle(accum), F(lr), F(epsilon), Vec<float>(g)}));
      } else {
        RequireOk(
            Apply("ResourceApplyAdagrad", {Handle(var), Handle(accum), F(lr), Vec<float>(g)}));
      }
      // accum += g^2; var -= lr g / sqrt(accum) (V2: / (sqrt(accum) + epsilon)).
      for (size_t i = 0; i < g.size(); ++i) {
        want_accum[i] += W(g[i]) * W(g[i]);
        want_var[i] -= W(lr) * W(g[i]) / (std::sqrt(want_accum[i]) + (v2 ? W(epsilon) : 0.0));
      }
      CheckFloats(Read<float>(var), want_var);
      CheckFloats(Read<float>(accum), want_accum);
    }
  }
}

TEST_CASE("ResourceApplyAdagrad with update_slots=false leaves accum as it is",
          "[kernels][apply]") {
  const std::vector<float> accum0 = {0.25f, 1.0f, 4.0f};
  const std::string var = NewVariable<float>("adagrad_noslots_var", kVar0);
  const std::string accum = NewVariable<float>("adagrad_noslots_accum", accum0);
  RequireOk(OpTester("ResourceApplyAdagrad", Registry())
                .Attr("T", DT_FLOAT)
                .Attr("update_slots", false)
                .Input(Handle(var))
                .Input(Handle(accum))
                .Input(F(0.1f))
                .Input(Vec<float>(kGrad1))
                .Run()
                .status());
  CHECK(Read<float>(accum) == accum0);
  Doubles want_var = Wide(kVar0);
  for (size_t i = 0; i < kGrad1.size(); ++i) {
    want_var[i] -= W(0.1f) * W(kGrad1[i]) / std::sqrt(W(accum0[i]));
  }
  CheckFloats(Read<float>(var), want_var);
}

TEST_CASE("ResourceApplyAdadelta follows Adadelta's rule over two steps", "[kernels][apply]") {
  const std::vector<float> accum0 = {0.0f, 0.1f, 0.2f}, update0 = {0.0f, 0.05f, 0.1f};
  const std::string var = NewVariable<float>("adadelta_var", kVar0);
  const std::string accum = NewVariable<float>("adadelta_accum", accum0);
  const std::string accum_update = NewVariable<float>("adadelta_accum_update", update0);
  const float lr = 1.0f, rho = 0.95f, epsilon = 1e-6f;
  Doubles want_var = Wide(kVar0), want_accum = Wide(accum0), want_update = Wide(update0);
  for (const std::vector<float>& g : {kGrad1, kGrad2}) {
    RequireOk(Apply("ResourceApplyAdadelta", {Handle(var), Handle(accum), Handle(accum_update),
                                              F(lr), F(rho), F(epsilon), Vec<float>(g)}));
    // accum = rho accum + (1 - rho) g^2; update = sqrt(accum_update + eps) /
    // sqrt(accum + eps) * g; var -= lr update; accum_update = rho accum_update +
    // (1 - rho) update^2.
    for (size_t i = 0; i < g.size(); ++i) {
      const double gi = W(g[i]), r = W(rho), eps = W(epsilon);
      want_accum[i] = r * want_accum[i] + (1 - r) * gi * gi;
      const double update = std::sqrt(want_update[i] + eps) / std::sqrt(want_accum[i] + eps) * gi;
      want_var[i] -= W(lr) * update;
      want_update[i] = r * want_update[i] + (1 - r) * update * update;
    }
    CheckFloats(Read<float>(var), want_var);
    CheckFloats(Read<float>(accum), want_accum);
    CheckFloats(Read<float>(accum_update), want_update);
  }
}

// ---------------------------------------------------------------------------------
// Copy-on-write and errors (resource forms).

TEST_CASE("A value read before a resource apply op keeps its old values", "[kernels][apply]") {
  const std::vector<float> accum0 = {0.5f, 0.0f, -1.0f};
  const std::string var = NewVariable<float>("cow_var", kVar0);
  const std::string accum = NewVariable<float>("cow_accum", accum0);
  const Tensor var_before = Snapshot(var);
  const Tensor accum_before = Snapshot(accum);
  RequireOk(Apply("ResourceApplyMomentum",
                  {Handle(var), Handle(accum), F(0.1f), Vec<float>(kGrad1), F(0.9f)}, DT_FLOAT, 0));
  CHECK(Values<float>(var_before) == kVar0);
  CHECK(Values<float>(accum_before) == accum0);
  Doubles want_var = Wide(kVar0), want_accum = Wide(accum0);
  MomentumStep(&want_var, &want_accum, Wide(kGrad1), W(0.1f), W(0.9f), false);
  CheckFloats(Read<float>(var), want_var);
  CheckFloats(Read<float>(accum), want_accum);
  CHECK_FALSE(Snapshot(var).SharesBufferWith(var_before));
}

TEST_CASE("A resource apply op whose gradient is its variable's own buffer uses the old gradient",
          "[kernels][apply]") {
  // var and grad share one buffer: the update must not see its own writes through grad.
  const std::string var = NewVariable<float>("alias_var", kVar0);
  const std::string accum = NewVariable<float>("alias_accum", {0.0f, 0.0f, 0.0f});
  const Tensor grad = Snapshot(var);
  RequireOk(Apply("ResourceApplyAdagrad", {Handle(var), Handle(accum), F(0.5f), grad}));
  Doubles want_var = Wide(kVar0), want_accum(3, 0.0);
  for (size_t i = 0; i < 3; ++i) {
    const double g = W(kVar0[i]);
    want_accum[i] += g * g;
    want_var[i] -= 0.5 * g / std::sqrt(want_accum[i]);
  }
  CheckFloats(Read<float>(var), want_var);
  CheckFloats(Read<float>(accum), want_accum);
  CHECK(Values<float>(grad) == kVar0);
}

TEST_CASE("Resource apply ops refuse a gradient of another shape in TF's words",
          "[kernels][apply]") {
  const std::string var = NewVariable<float>("shape_var", kVar0);
  const std::string accum = NewVariable<float>("shape_accum", {0.5f, 0.0f, -1.0f});
  absl::Status status = Apply("ResourceApplyMomentum", {Handle(var), Handle(accum), F(0.1f),
                                                        Vec<float>({1.0f, 2.0f}), F(0.9f)});
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Contains("var and grad do not have the same shape[3] [2]"));
  // Nothing was written.
  CHECK(Read<float>(var) == kVar0);
  CHECK(Read<float>(accum) == std::vector<float>{0.5f, 0.0f, -1.0f});

  // An accumulator of another shape is refused too, in TF's words.
  const std::string short_accum = NewVariable<float>("short_accum", {0.5f, 0.0f});
  status = Apply("ResourceApplyAdagrad",
                 {Handle(var), Handle(short_accum), F(0.1f), Vec<float>(kGrad1)});
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Contains("var and accum do not have the same shape[3] [2]"));
  CHECK(Read<float>(var) == kVar0);
}

TEST_CASE("Resource apply ops refuse uninitialized and missing variables", "[kernels][apply]") {
  const std::string var = NewVariable<float>("uninit_var", kVar0);
  const std::string accum = NewUninitializedVariable("accum");
  absl::Status status =
      Apply("ResourceApplyAdagrad", {Handle(var), Handle(accum), F(0.1f), Vec<float>(kGrad1)});
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Contains("Attempting to use uninitialized value " + accum));
  CHECK(Read<float>(var) == kVar0);

  status = Apply("ResourceApplyAdagrad",
                 {Handle("no_such_variable"), Handle(var), F(0.1f), Vec<float>(kGrad1)});
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Contains("Could not find variable no_such_variable. This could mean that the "
                      "variable has been deleted. In TF1, it can also mean the variable is "
                      "uninitialized."));
}

TEST_CASE("Resource apply ops refuse non-scalar hyperparameters", "[kernels][apply]") {
  const std::string var = NewVariable<float>("scalar_var", kVar0);
  const std::string accum = NewVariable<float>("scalar_accum", {0.1f, 0.1f, 0.1f});
  absl::Status status = Apply("ResourceApplyAdagrad",
                              {Handle(var), Handle(accum), Vec<float>({0.1f}), Vec<float>(kGrad1)});
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Contains("lr is not a scalar: [1]"));
  CHECK(Read<float>(var) == kVar0);
}

// ---------------------------------------------------------------------------------
// Ftrl, FtrlV2, the proximal, AdaMax and sign optimizers and Keras momentum against
// TensorFlow 2.21's results (record_tf_values.py), ref and resource forms.

const std::vector<testing::ApplyCase> kDenseCases = {
    // BEGIN kDenseCases (record_tf_values.py)
    // ApplyFtrl
    {"ApplyFtrl", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {G, S(0.1f), S(0.05f), S(0.02f), S(-0.5f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.36161408f, -1.0745994f, 0.25892824f, 1.2780162f, 0.0f, 0.0485985f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-2.2038023f, 11.864631f, -5.429608f, -15.222814f, -0.04276693f, -0.5f}},
     1e-06},
    // ApplyFtrl
    {"ApplyFtrl", {{"multiply_linear_by_lr", true}}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {G, S(0.1f), S(0.05f), S(0.02f), S(-0.5f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.28606102f, -0.99274f, 0.1722917f, 1.0505934f, 0.4764943f, 0.048598506f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-0.17538023f, 1.0964631f, -0.36296082f, -1.2522812f, -0.3642767f, -0.05f}},
     1e-06},
    // ApplyFtrl, lr_power -0.7 (TF's vectorized pow: a few ulps)
    {"ApplyFtrl", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {G, S(0.1f), S(0.05f), S(0.02f), S(-0.7f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.4550348f, -1.323529f, 0.3409182f, 1.6399766f, 0.0f, 0.050196927f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-2.2503896f, 15.139912f, -9.527712f, -20.870815f, -0.017740726f, -0.5f}},
     1e-05},
    // ApplyFtrl, lr_power -0.7
    {"ApplyFtrl", {{"multiply_linear_by_lr", true}}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {G, S(0.1f), S(0.05f), S(0.02f), S(-0.7f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.36197594f, -1.2445905f, 0.27617133f, 1.427308f, 0.5305381f, 0.050196927f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-0.18003896f, 1.4239912f, -0.77277124f, -1.8170817f, -0.3617741f, -0.05f}},
     1e-05},
    // ApplyFtrl, l1 0.8 (linear inside [-l1, l1] zeroes var)
    {"ApplyFtrl", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.5f, -1.0f, 2.0f, 3.0f, -4.0f, 0.0f}},
     {G, S(0.1f), S(0.8f), S(0.02f), S(-0.5f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.16013926f, -0.9245237f, 0.13619308f, 0.98742044f, 0.3770248f, 0.0f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-1.7538023f, 10.964631f, -3.6296077f, -12.522814f, -3.642767f, -0.5f}},
     1e-06},
    // ApplyFtrlV2
    {"ApplyFtrlV2", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {G, S(0.1f), S(0.05f), S(0.02f), S(0.1f), S(-0.5f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.32803494f, -1.0382174f, 0.2541151f, 1.2274778f, 0.005672004f, 0.0485985f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-2.0038023f, 11.464631f, -5.329608f, -14.622813f, -0.09276691f, -0.5f}},
     1e-06},
    // ApplyFtrlV2
    {"ApplyFtrlV2", {{"multiply_linear_by_lr", true}}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {G, S(0.1f), S(0.05f), S(0.02f), S(0.1f), S(-0.5f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.2524819f, -0.956358f, 0.16747855f, 1.0000551f, 0.4831256f, 0.048598506f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f},
      {-0.15538023f, 1.0564631f, -0.35296082f, -1.1922812f, -0.3692767f, -0.05f}},
     1e-06},
    // ApplyProximalGradientDescent
    {"ApplyProximalGradientDescent", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f}},
     {S(0.1f), S(0.05f), S(0.02f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.9431138f, -1.8912176f, 0.2944112f, 2.8892217f, -0.2694611f, 0.04491018f}},
     1e-06},
    // ApplyProximalGradientDescent
    {"ApplyProximalGradientDescent", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f}},
     {S(0.1f), S(0.0f), S(0.02f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.9481038f, -1.8962076f, 0.29940122f, 2.8942118f, -0.2744511f, 0.0499002f}},
     1e-06},
    // ApplyAdagradDA
    {"ApplyAdagradDA", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}},
     {G, S(0.1f), S(0.05f), S(0.02f), Step(3)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{-0.06693351f, 0.08625033f, -0.09857456f, -0.09670237f, 0.0f, 0.03771737f},
      {0.55f, -1.1f, 2.2f, 1.3f, -0.15f, -0.5f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f}},
     1e-06},
    // ApplyAdagradDA
    {"ApplyAdagradDA", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}},
     {G, S(0.1f), S(0.0f), S(0.02f), Step(3)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{-0.09203359f, 0.0998688f, -0.10578733f, -0.10931571f, 0.01984127f, 0.053881958f},
      {0.55f, -1.1f, 2.2f, 1.3f, -0.15f, -0.5f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f}},
     1e-06},
    // ApplyProximalAdagrad
    {"ApplyProximalAdagrad", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}},
     {S(0.1f), S(0.05f), S(0.02f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.903977f, -1.9006784f, 0.40075368f, 2.9063463f, -0.27593085f, 0.048703704f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f}},
     1e-06},
    // ApplyProximalAdagrad
    {"ApplyProximalAdagrad", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}},
     {S(0.1f), S(0.0f), S(0.02f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.9124f, -1.9052345f, 0.40316257f, 2.9105651f, -0.28257978f, 0.054115225f},
      {0.35f, 1.2f, 4.3f, 1.4f, 0.5625f, 0.85f}},
     1e-06},
    // ApplyAdaMax
    {"ApplyAdaMax", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f},
      {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}},
     {S(0.729f), S(0.01f), S(0.9f), S(0.999f), S(0.0000001f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.99298894f, -1.992989f, 0.49298894f, 2.986347f, -0.22525202f, 0.0030781082f},
      {0.09500001f, -0.19000003f, 0.38000005f, 0.37000003f, -0.33499998f, -0.050000012f},
      {0.5f, 1.0f, 2.0f, 1.0f, 0.4995f, 0.59940004f}},
     1e-06},
    // ApplyAddSign
    {"ApplyAddSign", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {S(0.1f), S(1.0f), S(0.5f), S(0.9f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.925f, -1.85f, 0.19999999f, 2.85f, -0.2625f, 0.075f},
      {0.09500001f, -0.19000003f, 0.38000005f, 0.37000003f, -0.33499998f, -0.050000012f}},
     1e-06},
    // ApplyPowerSign
    {"ApplyPowerSign", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {S(0.1f), S(0.6931472f), S(0.5f), S(0.9f), G},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.92928934f, -1.8585787f, 0.21715727f, 2.8585787f, -0.26767766f, 0.07071068f},
      {0.09500001f, -0.19000003f, 0.38000005f, 0.37000003f, -0.33499998f, -0.050000012f}},
     1e-06},
    // ApplyKerasMomentum (resource form only)
    {"ApplyKerasMomentum", {}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {S(0.1f), G, S(0.9f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.995f, -1.99f, 0.48f, 3.17f, -0.635f, 0.05f},
      {-5.0000027e-03f, 0.010000005f, -0.02000001f, 0.17000002f, -0.385f, 0.05f}},
     1e-06},
    // ApplyKerasMomentum (resource form only)
    {"ApplyKerasMomentum", {{"use_nesterov", true}}, {2, 3},
     {{1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 0.0f},
      {0.05f, -0.1f, 0.2f, 0.3f, -0.4f, 0.0f}},
     {S(0.1f), G, S(0.9f)},
     {2, 3}, {0.5f, -1.0f, 2.0f, 1.0f, 0.25f, -0.5f},
     {},
     {{0.9455f, -1.891f, 0.282f, 3.053f, -0.6215f, 0.095f},
      {-5.0000027e-03f, 0.010000005f, -0.02000001f, 0.17000002f, -0.385f, 0.05f}},
     1e-06},
    // END kDenseCases
};

TEST_CASE("Apply ops give TensorFlow's results: Ftrl, proximal, AdaMax, sign, Keras momentum",
          "[kernels][apply]") {
  REQUIRE(kDenseCases.size() >= 16);
  for (const testing::ApplyCase& c : kDenseCases) testing::CheckApplyCase(c);
}

TEST_CASE("Apply ops name the slot whose shape differs from var's, as TF",
          "[kernels][apply]") {
  const std::string var = NewVariable<float>("ftrl_shape_var", kVar0);
  const std::string accum = NewVariable<float>("ftrl_shape_accum", {0.1f, 0.1f, 0.1f});
  const std::string linear = NewVariable<float>("ftrl_shape_linear", {0.0f, 0.0f});
  absl::Status status =
      Apply("ResourceApplyFtrl", {Handle(var), Handle(accum), Handle(linear), Vec<float>(kGrad1),
                                  F(0.1f), F(0.0f), F(0.0f), F(-0.5f)});
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Contains("var and linear do not have the same shape[3] [2]"));
  // Dense Ftrl checks only that hyperparameters are scalars (the sparse one their signs).
  status = Apply("ResourceApplyFtrl", {Handle(var), Handle(accum), Handle(accum),
                                       Vec<float>(kGrad1), F(0.1f), Vec<float>({0.0f}), F(0.0f),
                                       F(-0.5f)});
  CHECK_THAT(std::string(status.message()), Contains("l1 is not a scalar: [1]"));
  CHECK(Read<float>(var) == kVar0);
}

// ---------------------------------------------------------------------------------
// Ref forms, through a Session on VariableV2s.

std::string FloatAttr(const std::string& key) {
  return " attr { key: '" + key + "' value { type: DT_FLOAT } }";
}

std::string Variable(const std::string& name) {
  return "node { name: '" + name + "' op: 'VariableV2'" + FloatAttr("dtype") +
         " attr { key: 'shape' value { shape { dim { size: 3 } } } } }\n";
}

std::string Const(const std::string& name, const std::vector<float>& values) {
  std::string text = "node { name: '" + name + "' op: 'Const'" + FloatAttr("dtype") +
                     " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {";
  if (values.size() != 1) absl::StrAppend(&text, " dim { size: ", values.size(), " }");
  text += " }";
  for (float v : values) absl::StrAppend(&text, " float_val: ", v);
  return text + " } } } }\n";
}

std::string Op(const std::string& name, const std::string& op,
               const std::vector<std::string>& inputs, const std::string& extra = "") {
  std::string text = "node { name: '" + name + "' op: '" + op + "'";
  for (const std::string& in : inputs) text += " input: '" + in + "'";
  return text + FloatAttr("T") + extra + " }\n";
}

std::unique_ptr<Session> MakeSession(const std::string& graph) {
  auto session = NewSession();
  REQUIRE(session.ok());
  absl::Status status = (*session)->Create(testing::GraphFromText(graph));
  INFO(status.ToString());
  REQUIRE(status.ok());
  return *std::move(session);
}

std::vector<Tensor> RunSession(Session& session, const std::vector<std::string>& fetches,
                               const std::vector<std::string>& targets = {}) {
  std::vector<Tensor> out;
  absl::Status status = session.Run({}, fetches, targets, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return out;
}

TEST_CASE("ApplyMomentum with use_nesterov updates ref variables; earlier reads keep values",
          "[kernels][apply]") {
  const std::vector<float> accum0 = {0.5f, 0.0f, -1.0f};
  const float lr = 0.1f, momentum = 0.9f;
  const std::string graph =
      Variable("var") + Variable("accum") + Const("var0", kVar0) + Const("accum0", accum0) +
      Const("lr", {lr}) + Const("momentum", {momentum}) + Const("grad", kGrad1) +
      Op("init_var", "Assign", {"var", "var0"}) + Op("init_accum", "Assign", {"accum", "accum0"}) +
      Op("apply", "ApplyMomentum", {"var", "accum", "lr", "grad", "momentum"},
         " attr { key: 'use_nesterov' value { b: true } }") +
      Op("read_var", "Identity", {"var"}) + Op("read_accum", "Identity", {"accum"});
  auto session = MakeSession(graph);
  RunSession(*session, {}, {"init_var", "init_accum"});
  const std::vector<Tensor> before = RunSession(*session, {"read_var", "read_accum"});
  Doubles want_var = Wide(kVar0), want_accum = Wide(accum0);
  for (int step = 0; step < 2; ++step) {
    CAPTURE(step);
    const std::vector<Tensor> applied = RunSession(*session, {"apply"});
    MomentumStep(&want_var, &want_accum, Wide(kGrad1), W(lr), W(momentum), true);
    CheckFloats(Values<float>(applied[0]), want_var);  // the output is the variable
    const std::vector<Tensor> after = RunSession(*session, {"read_var", "read_accum"});
    CheckFloats(Values<float>(after[0]), want_var);
    CheckFloats(Values<float>(after[1]), want_accum);
  }
  CHECK(Values<float>(before[0]) == kVar0);
  CHECK(Values<float>(before[1]) == accum0);
}

TEST_CASE("ApplyAdam and ApplyAdagrad update ref variables", "[kernels][apply]") {
  const std::vector<float> m0 = {0.1f, -0.2f, 0.0f}, v0 = {0.01f, 0.04f, 0.0f};
  const std::vector<float> accum0 = {0.1f, 0.1f, 0.5f};
  const AdamHyper h;
  const std::string graph =
      Variable("var") + Variable("m") + Variable("v") + Variable("accum") + Const("var0", kVar0) +
      Const("m0", m0) + Const("v0", v0) + Const("accum0", accum0) + Const("b1p", {0.9f}) +
      Const("b2p", {0.999f}) + Const("lr", {h.lr}) + Const("b1", {h.beta1}) +
      Const("b2", {h.beta2}) + Const("eps", {h.epsilon}) + Const("grad", kGrad1) +
      Op("init_var", "Assign", {"var", "var0"}) + Op("init_m", "Assign", {"m", "m0"}) +
      Op("init_v", "Assign", {"v", "v0"}) + Op("init_accum", "Assign", {"accum", "accum0"}) +
      Op("adam", "ApplyAdam", {"var", "m", "v", "b1p", "b2p", "lr", "b1", "b2", "eps", "grad"}) +
      Op("adagrad", "ApplyAdagrad", {"var", "accum", "lr", "grad"}) +
      Op("read_m", "Identity", {"m"}) + Op("read_v", "Identity", {"v"}) +
      Op("read_accum", "Identity", {"accum"});
  auto session = MakeSession(graph);
  RunSession(*session, {}, {"init_var", "init_m", "init_v", "init_accum"});
  Doubles want_var = Wide(kVar0), want_m = Wide(m0), want_v = Wide(v0);
  AdamStep(&want_var, &want_m, &want_v, Wide(kGrad1), h, W(0.9f), W(0.999f), false);
  CheckFloats(Values<float>(RunSession(*session, {"adam"})[0]), want_var);
  const std::vector<Tensor> slots = RunSession(*session, {"read_m", "read_v"});
  CheckFloats(Values<float>(slots[0]), want_m);
  CheckFloats(Values<float>(slots[1]), want_v);

  // Adagrad on the same variable, from where Adam left it.
  Doubles want_accum = Wide(accum0);
  const std::vector<float> var_after_adam = Values<float>(RunSession(*session, {"var"})[0]);
  Doubles want_after = Wide(var_after_adam);
  for (size_t i = 0; i < 3; ++i) {
    want_accum[i] += W(kGrad1[i]) * W(kGrad1[i]);
    want_after[i] -= W(h.lr) * W(kGrad1[i]) / std::sqrt(want_accum[i]);
  }
  CheckFloats(Values<float>(RunSession(*session, {"adagrad"})[0]), want_after);
  CheckFloats(Values<float>(RunSession(*session, {"read_accum"})[0]), want_accum);
}

TEST_CASE("Ref apply ops refuse uninitialized variables and mismatched gradients",
          "[kernels][apply]") {
  const std::string graph = Variable("var") + Variable("accum") + Const("var0", kVar0) +
                            Const("accum0", {0.1f, 0.1f, 0.1f}) + Const("lr", {0.1f}) +
                            "node { name: 'grad' op: 'Placeholder'" + FloatAttr("dtype") + " }\n" +
                            Op("init_var", "Assign", {"var", "var0"}) +
                            Op("init_accum", "Assign", {"accum", "accum0"}) +
                            Op("apply", "ApplyAdagrad", {"var", "accum", "lr", "grad"});
  auto session = MakeSession(graph);
  const Tensor grad = Vec<float>(kGrad1);
  std::vector<Tensor> out;
  RunSession(*session, {}, {"init_var"});
  absl::Status status = session->Run({{"grad", grad}}, {"apply"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Contains("Attempting to use uninitialized value accum"));

  RunSession(*session, {}, {"init_accum"});
  status = session->Run({{"grad", Vec<float>({1.0f, 2.0f})}}, {"apply"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Contains("var and grad do not have the same shape[3] [2]"));
  CHECK(Values<float>(RunSession(*session, {"var"})[0]) == kVar0);
  // And with a matching gradient it applies.
  REQUIRE(session->Run({{"grad", grad}}, {"apply"}, {}, &out).ok());
  CHECK(Values<float>(out[0]) != kVar0);
}

}  // namespace
}  // namespace dflow
