// CondContexts (graph/gradients/cond_context.h): the chain of conditional branches a
// value lives under, on graphs of Switch and Merge built through the builder API.
#include "graph/gradients/cond_context.h"

#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/cond_ops.h"
#include "graph/ops.h"

namespace dflow::testing {
namespace {

CondContexts AllNodes() {
  return CondContexts([](const Node&) { return true; }, "loop");
}

TEST_CASE("A branch's values are under its predicate; the Merge leaves the branch") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_FLOAT);
  Output p = Placeholder(root, DT_BOOL);
  SwitchOutputs sw = Switch(root, x, p);
  Output then_value = Square(root, sw.output_true);
  Output else_value = Neg(root, sw.output_false);
  MergeOutputs merged = Merge(root, {else_value, then_value});
  Output after = Exp(root, merged.output);
  CondContexts contexts = AllNodes();

  auto then_context = contexts.Of(then_value);
  REQUIRE(then_context.ok());
  REQUIRE(then_context->size() == 1);
  CHECK((*then_context)[0].pred == p);
  CHECK((*then_context)[0].branch == 1);
  auto else_context = contexts.Of(else_value);
  REQUIRE(else_context.ok());
  REQUIRE(else_context->size() == 1);
  CHECK((*else_context)[0].branch == 0);
  CHECK(contexts.Of(sw.output_true)->size() == 1);
  CHECK(contexts.Of(merged.output)->empty());
  CHECK(contexts.Of(merged.value_index)->empty());
  CHECK(contexts.Of(after)->empty());
  CHECK(contexts.Of(x)->empty());
}

TEST_CASE("Nested conditionals give a chain, outermost first") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_FLOAT);
  Output p = Placeholder(root, DT_BOOL);
  SwitchOutputs outer = Switch(root, x, p);
  Output q = Greater(root, Sum(root, outer.output_true, 0), 0.0f);  // computed in the branch
  SwitchOutputs inner = Switch(root, outer.output_true, q);
  Output deep = Tanh(root, inner.output_false);
  Output inner_merged = Merge(root, {deep, inner.output_true}).output;
  CondContexts contexts = AllNodes();

  auto deep_context = contexts.Of(deep);
  REQUIRE(deep_context.ok());
  REQUIRE(deep_context->size() == 2);
  CHECK((*deep_context)[0].pred == p);
  CHECK((*deep_context)[0].branch == 1);
  CHECK((*deep_context)[1].pred == q);
  CHECK((*deep_context)[1].branch == 0);
  CHECK(contexts.Of(q)->size() == 1);
  auto merged_context = contexts.Of(inner_merged);
  REQUIRE(merged_context.ok());
  CHECK(merged_context->size() == 1);  // back in the outer branch
}

TEST_CASE("A value from branches of two separate conditionals is refused") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_FLOAT);
  SwitchOutputs a = Switch(root, x, Placeholder(root, DT_BOOL));
  SwitchOutputs b = Switch(root, x, Placeholder(root, DT_BOOL));
  Output both = Mul(root.WithOpName("both"), a.output_true, b.output_true);
  CondContexts contexts = AllNodes();
  auto context = contexts.Of(both);
  CHECK(context.status().code() == absl::StatusCode::kUnimplemented);
  CHECK_THAT(std::string(context.status().message()),
             Catch::Contains("while loop 'loop' needs 'both'"));
}

TEST_CASE("Values outside the body start an empty context") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_FLOAT);
  Output p = Placeholder(root, DT_BOOL);
  SwitchOutputs sw = Switch(root, x, p);
  Output y = Square(root, sw.output_true);
  const Node* outside = sw.output_true.node;  // the Switch itself is taken as outside
  CondContexts contexts([&](const Node& n) { return &n != outside; }, "loop");
  auto context = contexts.Of(y);
  REQUIRE(context.ok());
  CHECK(context->empty());
}

}  // namespace
}  // namespace dflow::testing
