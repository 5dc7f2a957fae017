// Gradients through TF 1.x conditionals built with Switch and Merge (graph/cond_ops.h):
// numeric checks on both branches, and the exact values of a fed predicate.
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/cond_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "runtime/allocator.h"
#include "session/client_session.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

// pred ? 3 x^2 : Weighted(-x), merged; x is also read after the merge, so its gradient
// sums the taken branch's and the direct path's.
Output Cond(const Scope& s, const Output& x, bool pred) {
  SwitchOutputs sw = Switch(s, x, Const(s, pred));
  Output then_value = Mul(s, Square(s, sw.output_true), 3.0);
  Output else_value = Weighted(s, Neg(s, sw.output_false));
  return Add(s, Merge(s, {else_value, then_value}).output, Mul(s, x, 0.5));
}

TEST_CASE("Switch and Merge: the gradient of the branch taken, either way") {
  for (bool pred : {true, false}) {
    INFO("pred " << pred);
    auto f = [pred](const Scope& s, const Xs& x) -> Xs {
      return {Weighted(s, Cond(s, x[0], pred))};
    };
    CHECK(CheckGradient({{{2, 3}}}, f) < kTol);
  }
}

TEST_CASE("Nested conditionals differentiate through both levels") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    SwitchOutputs outer = Switch(s, x[0], Const(s, true));
    Output inner = Cond(s, outer.output_true, false);  // runs inside the taken branch
    Output merged = Merge(s, {Exp(s, outer.output_false), inner}).output;
    return {Weighted(s, Mul(s, merged, x[1]))};
  };
  CHECK(CheckGradient({{{3}}, {{3}}}, f) < kTol);
}

TEST_CASE("A fed predicate picks the gradient at run time") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output pred = Placeholder(root, DT_BOOL);
  SwitchOutputs sw = Switch(root, x, pred);
  Output y = Merge(root, {Mul(root, sw.output_false, 3.0), Square(root, sw.output_true)}).output;
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  Tensor xs = MakeTensor(DT_DOUBLE, {3}, {1.0, -2.0, 0.5});
  for (bool taken : {true, false}) {
    Tensor p = *Tensor::Allocate(ProcessCpuAllocator(), DT_BOOL, TensorShape());
    p.data<bool>()[0] = taken;
    std::vector<Tensor> out;
    absl::Status status = (*session)->Run({{x, xs}, {pred, p}}, {grads[0]}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    // d/dx x^2 = 2x when true; d/dx 3x = 3 when false.
    CHECK(ToDoubles(out[0]) == (taken ? std::vector<double>{2.0, -4.0, 1.0}
                                      : std::vector<double>{3.0, 3.0, 3.0}));
  }
}

}  // namespace
}  // namespace dflow::testing
