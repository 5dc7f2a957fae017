// Variables, initializers and optimizers of graph/train: names, initial values, one
// and several update steps against the update rules worked by hand, and errors.
#include "graph/train/optimizers.h"

#include <cmath>
#include <memory>
#include <tuple>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "graph/ops.h"
#include "graph/train/initializers.h"
#include "graph/train/variable.h"
#include "session/client_session.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {
namespace {

struct Model {
  Scope root = Scope::NewRootScope();
  Variable w;
  Output loss;
};

// loss = sum(w * x), so dloss/dw = x = {1, -2} at every step.
Model LinearModel() {
  Model m;
  m.w = Variable::Create(m.root.WithOpName("w"), {0.5, 0.25});
  m.loss = Sum(m.root, Mul(m.root, m.w.value(), {1.0, -2.0}), 0);
  return m;
}

std::vector<double> Train(Model& m, Optimizer& opt, int steps) {
  absl::StatusOr<Operation> train = opt.Minimize(m.root, m.loss, {m.w});
  INFO(train.status().ToString());
  REQUIRE(train.ok());
  Operation init = InitializeVariables(m.root, opt.AllVariables({m.w}));
  auto session = ClientSession::Create(m.root);
  REQUIRE(session.ok());
  std::vector<Tensor> none;
  REQUIRE((*session)->Run({}, {}, {init}, &none).ok());
  for (int i = 0; i < steps; ++i) {
    absl::Status status = (*session)->Run({}, {}, {*train}, &none);
    INFO(status.ToString());
    REQUIRE(status.ok());
  }
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({m.w.Read(m.root)}, &out).ok());
  return ToDoubles(out[0]);
}

TEST_CASE("Variable: names like TF's and the initial value") {
  Model m = LinearModel();
  CHECK(m.w.name() == "w");
  CHECK(m.w.initializer().name() == "w/Assign");
  CHECK(m.w.value().node->name() == "w/Read");
  CHECK(m.w.handle().node->attr("shared_name")->s() == "w");
  CHECK(m.w.dtype() == DT_DOUBLE);
  GradientDescentOptimizer sgd(0.1);
  CHECK(Train(m, sgd, 0) == std::vector<double>{0.5, 0.25});
}

TEST_CASE("GradientDescent") {
  Model m = LinearModel();
  GradientDescentOptimizer sgd(0.1);
  std::vector<double> w = Train(m, sgd, 2);
  CHECK(w[0] == Approx(0.5 - 0.2));
  CHECK(w[1] == Approx(0.25 + 0.4));
  CHECK(sgd.variables().empty());
}

TEST_CASE("Momentum, plain and Nesterov, with its slot") {
  for (bool nesterov : {false, true}) {
    Model m = LinearModel();
    MomentumOptimizer opt(0.1, 0.9, nesterov);
    std::vector<double> w = Train(m, opt, 2);
    // accum: g, then 1.9 g; var -= lr * accum (Nesterov: lr * (g + 0.9 * accum)).
    const double moved = nesterov ? 0.1 * (1.9 + 2.71) : 0.1 * (1.0 + 1.9);
    CHECK(w[0] == Approx(0.5 - moved * 1.0));
    CHECK(w[1] == Approx(0.25 + moved * 2.0));
    REQUIRE(opt.variables().size() == 1);
    CHECK(opt.variables()[0].name() == "w/Momentum");
  }
}

TEST_CASE("Adam: bias-corrected first steps and its beta powers") {
  Model m = LinearModel();
  AdamOptimizer adam(0.01);
  std::vector<double> w = Train(m, adam, 2);
  // With a constant gradient g, m_t / sqrt(v_t) after bias correction is sign(g), up to
  // epsilon: each step moves every weight by lr against its gradient's sign.
  CHECK(w[0] == Approx(0.5 - 0.02).epsilon(1e-6));
  CHECK(w[1] == Approx(0.25 + 0.02).epsilon(1e-6));
  std::vector<std::string> names;
  for (const Variable& v : adam.variables()) names.push_back(v.name());
  CHECK(names == std::vector<std::string>{"beta1_power", "beta2_power", "w/Adam", "w/Adam_1"});
}

TEST_CASE("RMSProp (plain and centered) and Adagrad move against the gradient") {
  for (int kind = 0; kind < 3; ++kind) {
    Model m = LinearModel();
    std::unique_ptr<Optimizer> opt;
    if (kind == 0) opt = std::make_unique<RMSPropOptimizer>(0.01);
    if (kind == 1) opt = std::make_unique<RMSPropOptimizer>(0.01, 0.9, 0.5, 1e-10, true);
    if (kind == 2) opt = std::make_unique<AdagradOptimizer>(0.1);
    std::vector<double> w = Train(m, *opt, 1);
    INFO(opt->name());
    if (kind == 0) {
      // ms = 0.9 * 1 + 0.1 g^2 (TF 1 starts ms at ones); var -= lr g / sqrt(ms).
      CHECK(w[0] == Approx(0.5 - 0.01 * 1.0 / std::sqrt(0.9 + 0.1)));
      CHECK(w[1] == Approx(0.25 + 0.01 * 2.0 / std::sqrt(0.9 + 0.4)));
    } else if (kind == 2) {
      CHECK(w[0] == Approx(0.5 - 0.1 * 1.0 / std::sqrt(0.1 + 1.0)));
      CHECK(w[1] == Approx(0.25 + 0.1 * 2.0 / std::sqrt(0.1 + 4.0)));
    } else {
      CHECK(w[0] < 0.5);
      CHECK(w[1] > 0.25);
    }
  }
}

TEST_CASE("Adadelta and FTRL (plain and with l2 shrinkage): TF 1's first step, slots") {
  // The gradients are 1 for w[0] = 0.5 and -2 for w[1] = 0.25.
  {
    Model m = LinearModel();
    AdadeltaOptimizer adadelta(1.0);
    std::vector<double> w = Train(m, adadelta, 1);
    for (auto [index, g, start] : {std::tuple{0, 1.0, 0.5}, std::tuple{1, -2.0, 0.25}}) {
      const double accum = 0.05 * g * g;
      const double update = std::sqrt(1e-8) / std::sqrt(accum + 1e-8) * g;
      CHECK(w[index] == Approx(start - update).epsilon(1e-5));
    }
  }
  for (double shrinkage : {0.0, 0.3}) {
    INFO("l2 shrinkage " << shrinkage);
    Model m = LinearModel();
    FtrlOptions options;
    options.l1_regularization_strength = 0.01;
    options.l2_regularization_strength = 0.1;
    options.l2_shrinkage_regularization_strength = shrinkage;
    FtrlOptimizer ftrl(0.1, options);
    std::vector<double> w = Train(m, ftrl, 1);
    for (auto [index, g, start] : {std::tuple{0, 1.0, 0.5}, std::tuple{1, -2.0, 0.25}}) {
      // TF's ApplyFtrl(V2) with learning_rate_power -0.5 from accum 0.1, linear 0.
      const double shrunk = g + 2 * shrinkage * start;
      const double accum = 0.1 + g * g;
      const double linear = shrunk - (std::sqrt(accum) - std::sqrt(0.1)) / 0.1 * start;
      const double quadratic = std::sqrt(accum) / 0.1 + 2 * 0.1;
      const double expected =
          std::abs(linear) > 0.01 ? ((linear > 0 ? 0.01 : -0.01) - linear) / quadratic : 0.0;
      CHECK(w[index] == Approx(expected).epsilon(1e-5));
    }
  }
  Model m = LinearModel();
  FtrlOptimizer ftrl(0.1);
  REQUIRE(ftrl.Minimize(m.root, m.loss, {m.w}).ok());
  std::vector<std::string> names;
  for (const Variable& v : ftrl.variables()) names.push_back(v.name());
  CHECK(names == std::vector<std::string>{"w/Ftrl", "w/Ftrl_1"});
}

TEST_CASE("A global step counts the steps") {
  Model m = LinearModel();
  Variable step = Variable::Create(m.root.WithOpName("global_step"), int64_t{0}, false);
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Operation> train = sgd.Minimize(m.root, m.loss, {m.w}, &step);
  REQUIRE(train.ok());
  auto session = ClientSession::Create(m.root);
  REQUIRE(session.ok());
  std::vector<Tensor> none;
  REQUIRE((*session)->Run({}, {}, {InitializeVariables(m.root, {m.w, step})}, &none).ok());
  for (int i = 0; i < 3; ++i) REQUIRE((*session)->Run({}, {}, {*train}, &none).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({step.Read(m.root)}, &out).ok());
  CHECK(out[0].flat<int64_t>()[0] == 3);
}

// TF builds updates and slots under ops.device(var.device): a loss on another device
// must not pull them away from their variable (it used to be a colocation error).
TEST_CASE("Updates and slots go to the variable's device, not the loss's") {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithDevice("/cpu:0").WithOpName("w"), {0.5, 0.25});
  Scope model = root.WithDevice("/cpu:1");
  Output loss = Sum(model, Mul(model, w.value(), {1.0, -2.0}), 0);
  AdamOptimizer adam(0.1);
  absl::StatusOr<Operation> train = adam.Minimize(model, loss, {w});
  REQUIRE(train.ok());
  for (const Node* node : root.graph()->nodes()) {
    if (absl::StrContains(node->name(), "update_w") || absl::StrContains(node->name(), "/Adam")) {
      INFO(node->name());
      CHECK(node->requested_device() == "/cpu:0");
    }
  }
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  auto session = ClientSession::Create(root, config);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {}, {InitializeVariables(root, adam.AllVariables({w}))}, &out)
              .ok());
  REQUIRE((*session)->Run({}, {}, {*train}, &out).ok());
  REQUIRE((*session)->Run({w.Read(root)}, &out).ok());
  CHECK(out[0].flat<double>()[0] == Approx(0.4));  // Adam's first step: lr * sign(grad)
}

TEST_CASE("No gradient for any variable is TF's error") {
  Model m = LinearModel();
  Variable unused = Variable::Create(m.root.WithOpName("unused"), {1.0});
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Operation> train = sgd.Minimize(m.root, m.loss, {unused});
  CHECK(train.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(train.status().message(),
                          "No gradients provided for any variable"));
  CHECK(absl::StrContains(train.status().message(), "[unused]"));
}

TEST_CASE("Initializers: shapes, ranges and Keras' Glorot limit") {
  Scope root = Scope::NewRootScope();
  Output zeros = Zeros(root, {2, 3});
  Output ones = Ones(root, {4}, DT_DOUBLE);
  Output glorot = GlorotUniform(root, {30, 20}, 7);
  Output he = HeNormal(root, {3, 3, 8, 16}, 7);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({zeros, ones, glorot, he}, &out).ok());
  CHECK(ToDoubles(out[0]) == std::vector<double>(6, 0.0));
  CHECK(ToDoubles(out[1]) == std::vector<double>(4, 1.0));
  const double limit = std::sqrt(6.0 / 50.0);
  double max_abs = 0;
  for (double v : ToDoubles(out[2])) max_abs = std::max(max_abs, std::abs(v));
  CHECK(max_abs <= limit);
  CHECK(max_abs > 0.9 * limit);
  const double stddev = std::sqrt(2.0 / 72.0) / 0.87962566103423978;
  for (double v : ToDoubles(out[3])) CHECK(std::abs(v) <= 2 * stddev + 1e-6);
  // A nonzero seed draws the same values in a fresh session.
  auto again = ClientSession::Create(root);
  std::vector<Tensor> out2;
  REQUIRE((*again)->Run({glorot}, &out2).ok());
  CHECK(ToDoubles(out2[0]) == ToDoubles(out[2]));
}

}  // namespace
}  // namespace dflow::testing
