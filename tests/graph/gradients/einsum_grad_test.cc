// Einsum's gradient (graph/gradients/einsum_grad.cc), checked numerically: contractions,
// batch labels, transposes, labels summed out of one operand alone, ellipses (broadcast
// batch dims included), repeated labels (diagonals and traces), and what is refused.
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
      // Ellipses: batch dims of one shape, broadcast ones, and none on one side.
      {"...ij,...jk->...ik", {{{2, 2, 3}}, {{2, 3, 2}}}},
      {"...ij,...jk->...ik", {{{2, 1, 2, 3}}, {{3, 3, 2}}}},
      {"...ij,jk->...ik", {{{2, 2, 3}}, {{3, 2}}}},
      {"ij,...jk->...ik", {{{2, 3}}, {{2, 3, 2}}}},
      {"b...d,de->b...e", {{{2, 1, 2, 3}}, {{3, 2}}}},
      {"...ij,...jk->ik", {{{2, 3}}, {{3, 2}}}},        // "..." covering no dims
      {"...ij->...ji", {{{2, 2, 3}}}},
      {"i...j->...j", {{{2, 2, 3}}}},
      {"...ij,kj->...k", {{{1, 2, 3}}, {{2, 3}}}},   // i summed out of the first alone
      // A label summed out of an operand whose batch dims the other one broadcast.
      {"...ij,...j->...j", {{{3, 4}}, {{5, 4}}}},
      {"ij,...j->...j", {{{3, 4}}, {{5, 4}}}},
      {"...ij,...j->...j", {{{3, 2, 4}}, {{2, 3, 4}}}},
      // Repeated labels: a diagonal, a trace, one inside a contraction.
      {"ii->i", {{{3, 3}}}},
      {"ii->", {{{3, 3}}}},
      {"iij->j", {{{2, 2, 3}}}},
      {"ii,i->i", {{{3, 3}}, {{3}}}},
      {"iik,kj->ij", {{{2, 2, 3}}, {{3, 2}}}},
      {"...ii->...i", {{{2, 3, 3}}}},
  };
  for (const Case& c : cases) {
    INFO(c.equation);
    auto f = [&](const Scope& s, const Xs& in) -> Xs {
      return {WeightedSum(s, Einsum(s, c.equation, in))};
    };
    CHECK(CheckGradient(c.inputs, f) < kTol);
  }
}

TEST_CASE("Einsum's gradient refuses an equation that does not match the node") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output y = Einsum(root.WithOpName("bad"), "ij,jk->ik", {x});
  Xs grads;
  absl::Status status = AddSymbolicGradients(root, {y}, {x}, &grads);
  CHECK_FALSE(status.ok());
  CHECK_THAT(std::string(status.message()), Catch::Contains("node 'bad'"));
}

}  // namespace
}  // namespace dflow::testing
