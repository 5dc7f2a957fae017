// StatefulKernels (runtime/stateful_kernels.h): a session's executors share the kernels
// of stateful nodes, so a seeded random op continues one stream across run signatures,
// as TF's DirectSession does (a loss-only run between training steps draws from the same
// generator as the training run); distinct nodes keep their own; transfers and stateless
// ops are never shared.
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "graph/op_registry.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/stateful_kernels.h"
#include "session/client_session.h"

namespace dflow {
namespace {

Output SeededUniform(const Scope& s, const char* name) {
  return AddOp(s.WithOpName(name), "RandomUniform", {Const(s, {3})},
               {{"dtype", TypeAttr(DT_FLOAT)}, {"seed", IntAttr(7)}, {"seed2", IntAttr(11)}})
      .output(0);
}

std::vector<float> Values(const Tensor& t) {
  auto flat = t.flat<float>();
  return std::vector<float>(flat.begin(), flat.end());
}

// Three draws of `r`: each fetching `fetch_for(i)` (r itself, or something computed from
// it), in one session.
std::vector<std::vector<float>> Draws(bool alternate_signatures) {
  Scope root = Scope::NewRootScope();
  Output r = SeededUniform(root, "r");
  Output r_again = Identity(root.WithOpName("r_again"), r);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<std::vector<float>> draws;
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out;
    const Output fetch = alternate_signatures && i == 1 ? r_again : r;
    REQUIRE((*session)->Run({fetch}, &out).ok());
    draws.push_back(Values(out[0]));
  }
  return draws;
}

TEST_CASE("A seeded random op continues one stream across run signatures", "[runtime]") {
  const std::vector<std::vector<float>> one_signature = Draws(false);
  const std::vector<std::vector<float>> two_signatures = Draws(true);
  CHECK(one_signature[0] != one_signature[1]);
  CHECK(two_signatures == one_signature);
}

TEST_CASE("Distinct stateful nodes keep their own kernels", "[runtime]") {
  Scope root = Scope::NewRootScope();
  Output a = SeededUniform(root, "a");
  Output b = SeededUniform(root, "b");  // same seeds: the same numbers, its own stream
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> first, second;
  REQUIRE((*session)->Run({a}, &first).ok());
  REQUIRE((*session)->Run({b}, &second).ok());
  CHECK(Values(first[0]) == Values(second[0]));
}

TEST_CASE("Only stateful ops other than transfers are shared", "[runtime]") {
  const OpRegistry& ops = OpRegistry::Global();
  CHECK(StatefulKernels::Shares(*ops.Find("RandomUniform")));
  CHECK(StatefulKernels::Shares(*ops.Find("VarHandleOp")));
  CHECK_FALSE(StatefulKernels::Shares(*ops.Find("_Recv")));
  CHECK_FALSE(StatefulKernels::Shares(*ops.Find("_Send")));
  CHECK_FALSE(StatefulKernels::Shares(*ops.Find("MatMul")));
}

}  // namespace
}  // namespace dflow
