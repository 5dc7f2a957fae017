// AddSymbolicGradients itself: which nodes it walks, how gradients meet, where the new
// nodes go, and its errors.
#include "graph/gradients/symbolic_gradients.h"

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/nn_ops.h"
#include "graph/ops.h"
#include "session/client_session.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {
namespace {

std::vector<double> RunOne(const Scope& root, const ClientSession::FeedType& feeds,
                           const Output& fetch) {
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(feeds, {fetch}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return ToDoubles(out[0]);
}

TEST_CASE("Gradients along several paths are summed") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output y = Add(root, Mul(root, x, x), Mul(root, x, 3.0));  // dy/dx = 2x + 3
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  CHECK(RunOne(root, {{x, MakeTensor(DT_DOUBLE, {2}, {1.0, -2.0})}}, grads[0]) ==
        std::vector<double>{5.0, -1.0});
}

TEST_CASE("Several outputs with given grad_inputs") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output a = Mul(root, x, 2.0);
  Output b = Square(root, x);
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {a, b}, {x},
                               {Const(root, {10.0}), Const(root, {1.0})}, &grads)
              .ok());
  // 10 * 2 + 1 * 2x at x = 4.
  CHECK(RunOne(root, {{x, MakeTensor(DT_DOUBLE, {1}, {4.0})}}, grads[0]) ==
        std::vector<double>{28.0});
}

TEST_CASE("Inputs may depend on each other; nothing above them is differentiated") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  // Cumprod has no gradient function: reaching it would fail.
  Output above = AddOp(root, "Cumprod", {x, Input(0)}).output(0);
  Output y = Mul(root, above, 3.0);
  Output z = Add(root, Mul(root, y, y), above);
  std::vector<Output> grads;
  absl::Status status = AddSymbolicGradients(root, {z}, {y, above}, &grads);
  INFO(status.ToString());
  REQUIRE(status.ok());
  // dz/dy = 2y; dz/dabove = 1 + 2y * 3 (through y as well).
  ClientSession::FeedType feeds = {{x, MakeTensor(DT_DOUBLE, {2}, {1.0, 2.0})}};
  CHECK(RunOne(root, feeds, grads[0]) == std::vector<double>{6.0, 12.0});
  CHECK(RunOne(root, feeds, grads[1]) == std::vector<double>{19.0, 37.0});
}

TEST_CASE("A path cut by StopGradient needs no gradient functions") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  // Cumprod has no gradient function, but no gradient reaches it.
  Output cut = StopGradient(root, AddOp(root, "Cumprod", {x, Input(0)}).output(0));
  Output y = Add(root, cut, Mul(root, x, 2.0));
  std::vector<Output> grads;
  absl::Status status = AddSymbolicGradients(root, {y}, {x}, &grads);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(RunOne(root, {{x, MakeTensor(DT_DOUBLE, {2}, {1.0, 3.0})}}, grads[0]) ==
        std::vector<double>{2.0, 2.0});
}

TEST_CASE("An input no output depends on gets a null gradient") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output unused = Placeholder(root, DT_DOUBLE);
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {Square(root, x)}, {x, unused}, &grads).ok());
  CHECK(grads[0].node != nullptr);
  CHECK(grads[1].node == nullptr);
}

TEST_CASE("Integer paths carry no gradient (Shape, Cast from int)") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output n = Cast(root, Size(root, x), DT_DOUBLE);
  Output y = Mul(root, Sum(root, x, 0), n);  // d/dx = n, the size does not vary
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  CHECK(RunOne(root, {{x, MakeTensor(DT_DOUBLE, {3}, {1.0, 2.0, 3.0})}}, grads[0]) ==
        std::vector<double>{3.0, 3.0, 3.0});
}

TEST_CASE("Gradient nodes are named under gradients/ and follow the forward device") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = Relu(root.WithOpName("tower_1/relu").WithDevice("/device:CPU:1"), x);
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  CHECK(grads[0].node->name() == "gradients/tower_1/relu_grad/ReluGrad");
  CHECK(grads[0].node->requested_device() == "/device:CPU:1");
  // A scope's own device wins.
  std::vector<Output> on_cpu0;
  REQUIRE(AddSymbolicGradients(root.WithDevice("/device:CPU:0"), {y}, {x}, &on_cpu0).ok());
  CHECK(on_cpu0[0].node->requested_device() == "/device:CPU:0");
  CHECK(absl::StartsWith(on_cpu0[0].node->name(), "gradients_1/"));
}

TEST_CASE("A resource variable's handle gets the sum of its reads' gradients") {
  Scope root = Scope::NewRootScope();
  Output handle = AddOp(root.WithOpName("v"), "VarHandleOp", {},
                        {{"dtype", TypeAttr(DT_DOUBLE)},
                         {"shape", ShapeAttr(PartialShape({2}))},
                         {"shared_name", StringAttr("v")}})
                      .output(0);
  Output init = Const(root, {3.0, 4.0});
  Operation assign = AddOp(root, "AssignVariableOp", {handle, init});
  auto read = [&] {
    return AddOp(root.WithControlDependencies(assign), "ReadVariableOp", {handle},
                 {{"dtype", TypeAttr(DT_DOUBLE)}})
        .output(0);
  };
  Output y = Add(root, Mul(root, read(), read()), read());  // 2v + 1
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {handle}, &grads).ok());
  CHECK(grads[0].dtype() == DT_DOUBLE);
  CHECK(RunOne(root, {}, grads[0]) == std::vector<double>{7.0, 9.0});
}

TEST_CASE("Errors name what is wrong and leave the scope errored") {
  SECTION("an op without a gradient on the path") {
    Scope root = Scope::NewRootScope();
    Output x = Placeholder(root, DT_DOUBLE);
    Output y = AddOp(root.WithOpName("running"), "Cumprod", {x, Input(0)}).output(0);
    std::vector<Output> grads;
    absl::Status status = AddSymbolicGradients(root, {y}, {x}, &grads);
    CHECK(status.code() == absl::StatusCode::kNotFound);
    CHECK(std::string(status.message()) ==
          "No gradient defined for op: Cumprod (node 'running')");
    CHECK(root.status() == status);
    CHECK(grads.size() == 1);
    CHECK(grads[0].node == nullptr);
  }
  SECTION("grad_inputs of the wrong length") {
    Scope root = Scope::NewRootScope();
    Output x = Placeholder(root, DT_DOUBLE);
    std::vector<Output> grads;
    absl::Status status = AddSymbolicGradients(root, {Square(root, x)}, {x}, {}, &grads);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(status.message(), "1 outputs but 0 grad_inputs"));
  }
  SECTION("a null output") {
    Scope root = Scope::NewRootScope();
    Output x = Placeholder(root, DT_DOUBLE);
    std::vector<Output> grads;
    absl::Status status = AddSymbolicGradients(root, {Output()}, {x}, &grads);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(status.message(), "outputs[0] is null"));
  }
  SECTION("a tensor of another graph") {
    Scope root = Scope::NewRootScope();
    Scope other = Scope::NewRootScope();
    Output x = Placeholder(root, DT_DOUBLE);
    Output foreign = Placeholder(other, DT_DOUBLE);
    std::vector<Output> grads;
    absl::Status status = AddSymbolicGradients(root, {Square(root, x)}, {foreign}, &grads);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(status.message(), "is not a tensor of this scope's graph"));
  }
}

TEST_CASE("Every op the builder API makes has a gradient or is declared to have none") {
  const GradientRegistry& registry = GradientRegistry::Default();
  // The op types of ops.h, nn_ops.h and array_ops.h, plus resource variables.
  for (const char* op :
       {"Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "NoOp",
        "MatMul", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
        "SquaredDifference", "AddN", "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log",
        "Relu", "Relu6", "Sigmoid", "Tanh", "Softmax", "BiasAdd", "Sum", "Mean", "Max",
        "Min", "Prod", "Fill", "ZerosLike", "OnesLike", "Reshape", "Shape", "Size", "Rank",
        "Cast", "Transpose", "ConcatV2", "Pack", "ExpandDims", "Squeeze", "Conv2D",
        "DepthwiseConv2dNative", "MaxPool", "AvgPool", "LogSoftmax", "Elu", "Selu",
        "Softplus", "Softsign", "LeakyRelu", "SoftmaxCrossEntropyWithLogits",
        "SparseSoftmaxCrossEntropyWithLogits", "L2Loss", "RandomUniform", "GreaterEqual",
        "Slice", "StridedSlice", "GatherV2", "Tile", "Pad", "Unpack", "SelectV2",
        "StopGradient", "OneHot", "BroadcastTo", "Equal", "NotEqual", "Less", "LessEqual",
        "Greater", "ArgMax", "ArgMin", "VarHandleOp", "ReadVariableOp", "ResourceGather",
        "AssignVariableOp", "Pow", "Reciprocal", "Log1p"}) {
    INFO(op);
    CHECK((registry.Find(op) != nullptr || registry.HasNoGradient(op)));
  }
  CHECK(registry.OpsWithGradients().size() > 60);
}

}  // namespace
}  // namespace dflow::testing
