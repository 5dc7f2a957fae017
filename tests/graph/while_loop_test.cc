// BuildWhileLoop (graph/while_loop.h): loops built through a Scope run with the right
// values, read tensors from outside through one invariant each, anchor their constants,
// and report malformed bodies; FindWhileLoop reads the same structure back.
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/control_flow.h"
#include "graph/ops.h"
#include "graph/while_loop.h"
#include "graph/while_loop_structure.h"
#include "proto/config.pb.h"
#include "session/client_session.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {
namespace {

using Outputs = std::vector<Output>;

// The condition v[0] < limit (a literal limit is made inside the loop and anchored).
CondGraphBuilderFn FirstBelow(Input::Initializer limit) {
  return [limit](const Scope& s, const Outputs& v, Output* pred) {
    *pred = Less(s, v[0], Input(limit));
    return s.status();
  };
}

// i < limit: i + 1, x * factor.
absl::Status CountAndScale(const Scope& root, const Output& x, const Output& limit,
                           const Output& factor, Outputs* out) {
  return BuildWhileLoop(
      root, {Const(root, 0), x},
      [&](const Scope& s, const Outputs& v, Output* pred) {
        *pred = Less(s, v[0], limit);
        return s.status();
      },
      [&](const Scope& s, const Outputs& v, Outputs* next) {
        *next = {Add(s, v[0], 1), Mul(s, v[1], factor)};
        return s.status();
      },
      "while", out);
}

std::vector<Tensor> RunOrFail(const Scope& root, const ClientSession::FeedType& feeds,
                              const Outputs& fetches) {
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(feeds, fetches, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return out;
}

Tensor Int32Scalar(int32_t v) { return MakeTensor(DT_INT32, {}, {static_cast<double>(v)}); }

TEST_CASE("BuildWhileLoop runs the body while the condition holds") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output limit = Placeholder(root, DT_INT32);
  Outputs out;
  REQUIRE(CountAndScale(root, x, limit, Const(root, 2.0), &out).ok());
  REQUIRE(out.size() == 2);
  for (int n : {0, 1, 10}) {
    INFO("limit " << n);
    std::vector<Tensor> got = RunOrFail(
        root, {{x, MakeTensor(DT_DOUBLE, {2}, {1.5, -3.0})}, {limit, Int32Scalar(n)}}, out);
    CHECK(got[0].data<int32_t>()[0] == n);
    const double scale = static_cast<double>(1 << n);
    CHECK(ToDoubles(got[1]) == std::vector<double>{1.5 * scale, -3.0 * scale});
  }
}

TEST_CASE("Tensors from outside become one invariant each; constants stay in the loop") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output factor = Const(root, 3.0);  // read by cond (no) and body (twice)
  Outputs out;
  REQUIRE(BuildWhileLoop(
              root, {Const(root, 0), x},
              FirstBelow(3),
              [&](const Scope& s, const Outputs& v, Outputs* next) {
                *next = {Add(s, v[0], 1), Add(s, Mul(s, v[1], factor), Sub(s, factor, 3.0))};
                return s.status();
              },
              "while", &out)
              .ok());
  int invariants = 0;
  for (const Node* node : root.graph()->nodes()) invariants += IsConstantEnter(*node);
  CHECK(invariants == 1);
  REQUIRE(BuildControlFlowInfo(*root.graph()).ok());
  std::vector<Tensor> got = RunOrFail(root, {{x, MakeTensor(DT_DOUBLE, {1}, {2.0})}}, out);
  CHECK(ToDoubles(got[1]) == std::vector<double>{54.0});
}

TEST_CASE("Two loops of one name get distinct frames and FindWhileLoop reads them back") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Outputs first, second;
  REQUIRE(CountAndScale(root, x, Const(root, 2), Const(root, 2.0), &first).ok());
  REQUIRE(CountAndScale(root, first[1], Const(root, 3), Const(root, 0.5), &second).ok());
  auto info = BuildControlFlowInfo(*root.graph());
  REQUIRE(info.ok());
  REQUIRE(info->frames.size() == 3);
  CHECK(info->frames[1].name != info->frames[2].name);
  for (int frame : {1, 2}) {
    auto loop = FindWhileLoop(*root.graph(), *info, frame);
    REQUIRE(loop.ok());
    CHECK(loop->vars.size() == 2);
    CHECK(loop->invariants.size() == 2);  // limit and factor
    for (const LoopVar& var : loop->vars) {
      CHECK(var.exit != nullptr);
      CHECK(var.body_output().node != nullptr);
    }
  }
  std::vector<Tensor> got = RunOrFail(root, {{x, MakeTensor(DT_DOUBLE, {1}, {8.0})}}, second);
  CHECK(ToDoubles(got[1]) == std::vector<double>{4.0});  // 8 * 2^2 / 2^3
}

TEST_CASE("A control dependency from outside orders the loop's entry") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output side = Identity(root, x);
  Outputs out;
  REQUIRE(BuildWhileLoop(
              root, {x},
              FirstBelow(10.0),
              [&](const Scope& s, const Outputs& v, Outputs* next) {
                *next = {Add(s.WithControlDependencies(Operation(side)), v[0], 4.0)};
                return s.status();
              },
              "while", &out)
              .ok());
  REQUIRE(BuildControlFlowInfo(*root.graph()).ok());
  std::vector<Tensor> got = RunOrFail(root, {{x, MakeTensor(DT_DOUBLE, {}, {1.0})}}, out);
  CHECK(ToDoubles(got[0]) == std::vector<double>{13.0});
}

TEST_CASE("A body result read from outside, or computed from invariants only, ends") {
  // Without the pivot anchor, NextIteration(invariant) would fire in the iteration the
  // condition ends too, and the loop would never stop.
  Scope root = Scope::NewRootScope();
  Output w = Placeholder(root, DT_DOUBLE);
  Outputs out;
  REQUIRE(BuildWhileLoop(
              root, {Const(root, 0), Const(root, 0.0), Const(root, 0.0)},
              FirstBelow(3),
              [&](const Scope& s, const Outputs& v, Outputs* next) {
                *next = {Add(s, v[0], 1), w, Square(s, w)};
                return s.status();
              },
              "while", &out)
              .ok());
  RunOptions options;
  options.set_timeout_in_ms(20000);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> got;
  absl::Status status = (*session)->Run(
      options, {{w, MakeTensor(DT_DOUBLE, {}, {1.5})}}, out, {}, &got, nullptr);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ToDoubles(got[1]) == std::vector<double>{1.5});
  CHECK(ToDoubles(got[2]) == std::vector<double>{2.25});
}

TEST_CASE("A Merge output kept from the condition reads as the body input") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Outputs merged, out;
  REQUIRE(BuildWhileLoop(
              root, {x},
              [&](const Scope& s, const Outputs& v, Output* pred) {
                merged = v;
                *pred = Less(s, v[0], 100.0);
                return s.status();
              },
              [&](const Scope& s, const Outputs& v, Outputs* next) {
                *next = {Mul(s, v[0], merged[0])};  // x * x
                return s.status();
              },
              "while", &out)
              .ok());
  const Node* mul = root.graph()->FindNode("while/body/Mul");
  REQUIRE(mul != nullptr);
  CHECK(mul->input_edge(1)->src->op() == "Identity");
  std::vector<Tensor> got = RunOrFail(root, {{x, MakeTensor(DT_DOUBLE, {}, {3.0})}}, out);
  CHECK(ToDoubles(got[0]) == std::vector<double>{6561.0});  // 3 -> 9 -> 81 -> 6561
}

TEST_CASE("Malformed loops are reported, naming the loop") {
  const CondGraphBuilderFn cond = FirstBelow(3.0);
  SECTION("a body returning too few tensors") {
    Scope root = Scope::NewRootScope();
    Outputs out;
    absl::Status status = BuildWhileLoop(
        root, {Const(root, 0.0), Const(root, 1.0)}, cond,
        [](const Scope& s, const Outputs& v, Outputs* next) {
          *next = {v[0]};
          return s.status();
        },
        "loop", &out);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(status.message()) ==
          "BuildWhileLoop 'loop': the body returned 1 tensors for 2 loop variables");
    CHECK(root.status() == status);
  }
  SECTION("a body changing a variable's dtype") {
    Scope root = Scope::NewRootScope();
    Outputs out;
    absl::Status status = BuildWhileLoop(
        root, {Const(root, 0.0)}, cond,
        [](const Scope& s, const Outputs& v, Outputs* next) {
          *next = {Cast(s, v[0], DT_FLOAT)};
          return s.status();
        },
        "loop", &out);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains("result 0 'loop/body/Cast:0' is float but loop variable 0 is "
                               "double"));
  }
  SECTION("a condition that is not a bool, and no loop variables") {
    Scope root = Scope::NewRootScope();
    Outputs out;
    absl::Status status = BuildWhileLoop(
        root, {Const(root, 0.0)},
        [](const Scope& s, const Outputs& v, Output* pred) {
          *pred = v[0];
          return s.status();
        },
        [](const Scope& s, const Outputs& v, Outputs* next) {
          *next = v;
          return s.status();
        },
        "loop", &out);
    CHECK(std::string(status.message()) ==
          "BuildWhileLoop 'loop': the condition must be a bool, not double");
    Scope other = Scope::NewRootScope();
    CHECK(BuildWhileLoop(other, {}, cond, nullptr, "empty", &out).code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace dflow::testing
