// Einsum's gradient (graph/gradients/einsum_grad.cc), checked numerically: contractions,
// batch labels, transposes, labels summed out of one operand alone, and what is refused.
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

Output Einsum(const Scope& s, const std::string& equation, const Xs& operands) {
  return AddOp(s, "Einsum", {InputList(operands)}, {{"equation", StringAttr(equation)}})
      .output(0);
}

TEST_CASE("Einsum's gradient for one and two operands") {
  struct Case {
    std::string equation;
    std::vector<GradInput> inputs;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{{2, 3}}, {{3, 4}}}},
      {"bij,bjk->bik", {{{2, 2, 3}}, {{2, 3, 2}}}},
      {"ij,jk->i", {{{2, 3}}, {{3, 4}}}},    // k summed out of the second operand alone
      {"ijk,j->ik", {{{2, 3, 2}}, {{3}}}},
      {"ij,kj->", {{{2, 3}}, {{4, 3}}}},      // i and k each summed alone
      {"ijk->kj", {{{2, 3, 4}}}},             // one operand: transpose and sum
      {"ij->", {{{2, 3}}}},
  };
  for (const Case& c : cases) {
    INFO(c.equation);
    auto f = [&](const Scope& s, const Xs& in) -> Xs {
      return {WeightedSum(s, Einsum(s, c.equation, in))};
    };
    CHECK(CheckGradient(c.inputs, f) < kTol);
  }
}

TEST_CASE("Einsum with an ellipsis or a repeated label is refused, naming the node") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output y = Einsum(root.WithOpName("diag"), "ii->i", {x});
  Xs grads;
  absl::Status status = AddSymbolicGradients(root, {y}, {x}, &grads);
  CHECK(status.code() == absl::StatusCode::kUnimplemented);
  CHECK_THAT(std::string(status.message()), Catch::Contains("Einsum 'ii->i' (node 'diag')"));
}

}  // namespace
}  // namespace dflow::testing
