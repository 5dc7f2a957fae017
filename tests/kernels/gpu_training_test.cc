// Whole training steps on a GPU against the same steps on the CPU: a small MLP (MatMul,
// BiasAdd, Relu, sparse softmax cross-entropy, Mean) with resource variables, trained by
// every optimizer whose update has a GPU kernel, with everything under /gpu:0. The
// variables, their reads and updates, the forward and backward pass must all land on the
// GPU, and the losses and final weights must match the CPU's.
//
// Stateful ops cannot be checked one kernel at a time (gpu_conformance_test.cc leaves
// them out): this is where the GPU table's resource-variable ops are tested.
//
//  - //tests/kernels:gpu_training_test       on a simulated GPU, in every test run;
//  - //tests/kernels:gpu_training_cuda_test  the same on the first real GPU ([cuda],
//    requires-gpu; fails with "no CUDA GPU found" where there is none).
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/nn_ops.h"
#include "graph/ops.h"
#include "graph/train/optimizers.h"
#include "graph/train/variable.h"
#include "session/client_session.h"
#include "session/session.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

// Deterministic values in [-1, 1] (no random op: the CPU and GPU runs must agree).
std::vector<float> Values(int n, float phase) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = std::sin(0.7f * i + phase);
  return v;
}

struct Mlp {
  Scope root = Scope::NewRootScope();
  std::vector<Variable> vars;  // w1, b1, w2, b2
  Output loss;
};

// 8 rows of 5 features -> 6 ReLU units -> 3 classes, every op on `device`.
Mlp BuildMlp(const std::string& device) {
  Mlp m;
  Scope s = m.root.WithDevice(device);
  Output x = Const(s.WithOpName("x"), Input::Initializer(Values(40, 0.3f), {8, 5}));
  Output labels = Const(s.WithOpName("labels"), {0, 2, 1, 1, 0, 2, 2, 1});
  auto var = [&](const char* name, std::vector<float> init, std::vector<int64_t> shape) {
    m.vars.push_back(Variable::Create(s.WithOpName(name), Input::Initializer(init, shape)));
    return m.vars.back().value();
  };
  Output w1 = var("w1", Values(30, 1.1f), {5, 6});
  Output b1 = var("b1", Values(6, 2.0f), {6});
  Output w2 = var("w2", Values(18, 0.5f), {6, 3});
  Output b2 = var("b2", Values(3, 0.9f), {3});
  Output hidden = Relu(s, BiasAdd(s, MatMul(s, x, w1), b1));
  Output logits = BiasAdd(s, MatMul(s, hidden, w2), b2);
  CrossEntropyOutputs xent = SparseSoftmaxCrossEntropyWithLogits(s, logits, labels);
  m.loss = Mean(s.WithOpName("loss"), xent.loss, 0);
  return m;
}

struct Trained {
  std::vector<float> losses;
  std::vector<std::vector<float>> weights;
  std::unique_ptr<ClientSession> session;  // for placement checks
};

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>()>;

// `steps` steps of `make`'s optimizer with every op on `device` (soft placement: shape
// arithmetic without a GPU kernel goes to the CPU, as int32 ops do in TF).
Trained Train(const std::string& device, const MakeOptimizer& make, int steps) {
  Mlp m = BuildMlp(device);
  std::unique_ptr<Optimizer> opt = make();
  Scope s = m.root.WithDevice(device);
  absl::StatusOr<Operation> train = opt->Minimize(s, m.loss, m.vars);
  INFO(train.status().ToString());
  REQUIRE(train.ok());
  Operation init = InitializeVariables(s, opt->AllVariables(m.vars));
  ConfigProto config;
  config.set_allow_soft_placement(true);
  auto session = ClientSession::Create(m.root, config);
  INFO(session.status().ToString());
  REQUIRE(session.ok());
  Trained t;
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {}, {init}, &out).ok());
  for (int i = 0; i < steps; ++i) {
    absl::Status status = (*session)->Run({}, {m.loss}, {*train}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    t.losses.push_back(out[0].scalar<float>());
  }
  for (const Variable& v : m.vars) {
    REQUIRE((*session)->Run({v.Read(m.root)}, &out).ok());
    auto flat = out[0].flat<float>();
    t.weights.emplace_back(flat.begin(), flat.end());
  }
  t.session = std::move(*session);
  return t;
}

void CheckClose(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).epsilon(1e-4).margin(1e-5));
  }
}

// Ops that must run on the GPU in a training step (TF places them there too).
const char* const kGpuOps[] = {"VarHandleOp", "ReadVariableOp", "MatMul", "BiasAdd", "Relu",
                               "SparseSoftmaxCrossEntropyWithLogits", "ReluGrad",
                               "BiasAddGrad"};

void CheckPlacement(const Trained& t, const std::string& update_op) {
  const Session* session = t.session->session();
  std::vector<std::string> gpu_ops(std::begin(kGpuOps), std::end(kGpuOps));
  gpu_ops.push_back(update_op);
  for (const std::string& op : gpu_ops) {
    bool seen = false;
    for (const auto& d : session->placement().decisions) {
      if (d.op != op) continue;
      seen = true;
      INFO(d.node << " (" << op << ") on " << d.device);
      CHECK(absl::StrContains(d.device, "GPU:0"));
    }
    INFO(op);
    CHECK(seen);
  }
}

struct Case {
  const char* name;
  const char* update_op;
  MakeOptimizer make;
};

std::vector<Case> Cases() {
  return {
      {"GradientDescent", "ResourceApplyGradientDescent",
       [] { return std::make_unique<GradientDescentOptimizer>(0.5); }},
      {"Momentum", "ResourceApplyMomentum",
       [] { return std::make_unique<MomentumOptimizer>(0.2, 0.9); }},
      {"Nesterov", "ResourceApplyMomentum",
       [] { return std::make_unique<MomentumOptimizer>(0.2, 0.9, true); }},
      {"Adam", "ResourceApplyAdam", [] { return std::make_unique<AdamOptimizer>(0.05); }},
      {"RMSProp", "ResourceApplyRMSProp",
       [] { return std::make_unique<RMSPropOptimizer>(0.02, 0.9, 0.5); }},
      {"centered RMSProp", "ResourceApplyCenteredRMSProp",
       [] { return std::make_unique<RMSPropOptimizer>(0.02, 0.9, 0.5, 1e-7, true); }},
      {"Adagrad", "ResourceApplyAdagrad",
       [] { return std::make_unique<AdagradOptimizer>(0.3); }},
  };
}

void CheckEveryOptimizer() {
  for (const Case& c : Cases()) {
    INFO(c.name);
    Trained cpu = Train("/cpu:0", c.make, 4);
    Trained gpu = Train("/gpu:0", c.make, 4);
    CheckPlacement(gpu, c.update_op);
    CheckClose(gpu.losses, cpu.losses);
    CHECK(gpu.losses.back() < gpu.losses.front());  // it trains
    for (size_t v = 0; v < cpu.weights.size(); ++v) {
      INFO("variable " << v);
      CheckClose(gpu.weights[v], cpu.weights[v]);
    }
  }
}

// A value read in the step that updates it is the value before the update (copy-on-write
// on the device), and AssignAdd/AssignSub/VarIsInitialized work on the GPU.
void CheckReadsAndAssignments() {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice("/gpu:0");
  Variable v = Variable::Create(s.WithOpName("v"), {1.f, 2.f, 3.f});
  Output before = v.Read(s.WithOpName("before"));
  Operation step = AddOp(s.WithControlDependencies(Operation(before)).WithOpName("step"),
                         "ResourceApplyGradientDescent",
                         {v.handle(), Const(s, 0.5f), Const(s, {2.f, 2.f, 2.f})});
  Operation added = AddOp(s.WithOpName("add"), "AssignAddVariableOp",
                          {v.handle(), Const(s, {10.f, 10.f, 10.f})});
  Operation subtracted = AddOp(s.WithOpName("sub"), "AssignSubVariableOp",
                               {v.handle(), Const(s, {1.f, 2.f, 4.f})});
  // An update whose delta is the variable's own value (the same buffer): doubles it.
  Operation doubled = AddOp(s.WithOpName("double"), "AssignAddVariableOp",
                            {v.handle(), v.Read(s.WithOpName("self"))});
  Output initialized = AddOp(s.WithOpName("is_init"), "VarIsInitializedOp", {v.handle()})
                           .output(0);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({initialized}, &out).ok());
  CHECK_FALSE(out[0].scalar<bool>());
  REQUIRE((*session)->Run({}, {}, {v.initializer()}, &out).ok());
  REQUIRE((*session)->Run({initialized}, &out).ok());
  CHECK(out[0].scalar<bool>());
  absl::Status status = (*session)->Run({}, {before}, {step}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CheckClose(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()),
             {1.f, 2.f, 3.f});
  REQUIRE((*session)->Run({}, {}, {added}, &out).ok());
  REQUIRE((*session)->Run({v.Read(root)}, &out).ok());
  CheckClose(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()),
             {10.f, 11.f, 12.f});
  REQUIRE((*session)->Run({}, {}, {subtracted}, &out).ok());
  REQUIRE((*session)->Run({}, {}, {doubled}, &out).ok());
  REQUIRE((*session)->Run({v.Read(root)}, &out).ok());
  CheckClose(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()),
             {18.f, 18.f, 16.f});
}

// Update ops no builder optimizer emits (Keras momentum, AdagradV2, Adagrad without slot
// updates, Adam with Nesterov), 3 steps on `device`: the variable and its slots after.
std::vector<std::vector<float>> ApplyRaw(const std::string& device, const std::string& op,
                                         const AttrMap& attrs) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice(device);
  Variable var = Variable::Create(s.WithOpName("var"), {1.f, -2.f, 3.f});
  Variable a = Variable::Create(s.WithOpName("a"), {0.1f, 0.2f, 0.3f});
  Variable b = Variable::Create(s.WithOpName("b"), {0.5f, 0.25f, 0.125f});
  Output grad = Const(s, {0.3f, -0.6f, 0.9f});
  std::vector<OpArg> args;
  if (op == "ResourceApplyKerasMomentum") {
    args = {var.handle(), a.handle(), Const(s, 0.1f), grad, Const(s, 0.9f)};
  } else if (op == "ResourceApplyAdagradV2") {
    args = {var.handle(), a.handle(), Const(s, 0.1f), Const(s, 1e-3f), grad};
  } else if (op == "ResourceApplyAdagrad") {
    args = {var.handle(), a.handle(), Const(s, 0.1f), grad};
  } else {  // ResourceApplyAdam
    args = {var.handle(), a.handle(), b.handle(), Const(s, 0.9f), Const(s, 0.999f),
            Const(s, 0.01f), Const(s, 0.9f), Const(s, 0.999f), Const(s, 1e-7f), grad};
  }
  Operation step = AddOp(s.WithOpName("step"), op, args, attrs);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {}, {var.initializer(), a.initializer(), b.initializer()}, &out)
              .ok());
  for (int i = 0; i < 3; ++i) {
    absl::Status status = (*session)->Run({}, {}, {step}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
  }
  std::vector<std::vector<float>> values;
  for (const Variable& v : {var, a, b}) {
    REQUIRE((*session)->Run({v.Read(root)}, &out).ok());
    values.emplace_back(out[0].flat<float>().begin(), out[0].flat<float>().end());
  }
  return values;
}

void CheckRawApplyOps() {
  const std::vector<std::pair<std::string, AttrMap>> cases = {
      {"ResourceApplyKerasMomentum", {{"use_nesterov", BoolAttr(false)}}},
      {"ResourceApplyKerasMomentum", {{"use_nesterov", BoolAttr(true)}}},
      {"ResourceApplyAdagradV2", {}},
      {"ResourceApplyAdagrad", {{"update_slots", BoolAttr(false)}}},
      {"ResourceApplyAdam", {{"use_nesterov", BoolAttr(true)}}},
  };
  for (const auto& [op, attrs] : cases) {
    INFO(op);
    std::vector<std::vector<float>> cpu = ApplyRaw("/cpu:0", op, attrs);
    std::vector<std::vector<float>> gpu = ApplyRaw("/gpu:0", op, attrs);
    for (size_t v = 0; v < cpu.size(); ++v) {
      INFO("variable " << v);
      CheckClose(gpu[v], cpu[v]);
    }
    CHECK(cpu[0] != std::vector<float>{1.f, -2.f, 3.f});  // it moved
  }
}

TEST_CASE("Training steps on a simulated GPU match the CPU, variables on the GPU",
          "[gpu_training][sim]") {
  testing::ScopedEnv env("DFLOW_SIMULATED_GPUS", "1");
  CheckEveryOptimizer();
  CheckReadsAndAssignments();
  CheckRawApplyOps();
}

TEST_CASE("Training steps on a CUDA GPU match the CPU, variables on the GPU", "[.][cuda]") {
  // Whatever real GPUs the session's device factory finds; simulated ones do not count.
  testing::ScopedEnv env("DFLOW_SIMULATED_GPUS", std::nullopt);
  CheckEveryOptimizer();
  CheckReadsAndAssignments();
  CheckRawApplyOps();
}

}  // namespace
}  // namespace dflow
