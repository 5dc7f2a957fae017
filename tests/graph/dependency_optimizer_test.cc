// ConvertUnreadNodesToNoOps (graph/dependency_optimizer.h): a pure computation read only
// through control edges becomes a NoOp that keeps the node's name, device and ordering;
// stateful ops, control flow and nodes reading a Switch are left alone. Through a
// Session, the tf.tuple pattern of TF 1 gradients gives the same values with the unread
// MatMul replaced.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "graph/dependency_optimizer.h"
#include "graph/graph_def_import.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

std::set<std::string> ControlInputs(const Graph& graph, const std::string& name) {
  std::set<std::string> inputs;
  for (const Edge* edge : graph.FindNode(name)->in_edges()) {
    if (edge->IsControlEdge()) inputs.insert(edge->src->name());
  }
  return inputs;
}

constexpr char kTupleGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "dx" op: "MatMul" input: "x" input: "w" device: "/cpu:0"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "transpose_b" value { b: true } } }
  node { name: "neg_dx" op: "Neg" input: "dx" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "dw" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "group_deps" op: "NoOp" input: "^neg_dx" input: "^dw" }
  node { name: "dw_out" op: "Identity" input: "dw" input: "^group_deps"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "shape" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "random" op: "RandomUniform" input: "shape" input: "^dw"
         attr { key: "T" value { type: DT_INT32 } } attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "random_deps" op: "NoOp" input: "^random" }
  node { name: "target" op: "Neg" input: "dw" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

TEST_CASE("Nodes read only through control edges become NoOps, transitively",
          "[dependency_optimizer]") {
  auto graph = ImportGraphDef(testing::GraphFromText(kTupleGraph));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  Graph& g = **graph;
  g.FindNode("dx")->set_assigned_device("/job:localhost/replica:0/task:0/device:CPU:0");
  absl::StatusOr<int> converted = ConvertUnreadNodesToNoOps(&g);
  REQUIRE(converted.ok());
  CHECK(*converted == 2);  // neg_dx, then dx (its only reader became a NoOp)
  const Node* dx = g.FindNode("dx");
  REQUIRE(dx != nullptr);
  CHECK(dx->op() == "NoOp");
  CHECK(dx->requested_device() == "/cpu:0");
  CHECK(dx->assigned_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(ControlInputs(g, "dx") == std::set<std::string>{"x", "w"});
  CHECK(g.FindNode("neg_dx")->op() == "NoOp");
  CHECK(ControlInputs(g, "neg_dx") == std::set<std::string>{"dx"});
  CHECK(ControlInputs(g, "group_deps") == std::set<std::string>{"neg_dx", "dw"});
  CHECK(g.FindNode("dw")->op() == "MatMul");          // read as data
  CHECK(g.FindNode("random")->op() == "RandomUniform");  // stateful
  CHECK(g.FindNode("target")->op() == "Neg");         // nothing depends on it: a target
}

TEST_CASE("Control flow and nodes reading a Switch are left alone", "[dependency_optimizer]") {
  auto graph = ImportGraphDef(testing::GraphFromText(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
    node { name: "sw" op: "Switch" input: "x" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "branch" op: "Neg" input: "sw:1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "after" op: "NoOp" input: "^branch" input: "^sw" }
  )pb"));
  REQUIRE(graph.ok());
  absl::StatusOr<int> converted = ConvertUnreadNodesToNoOps(graph->get());
  REQUIRE(converted.ok());
  CHECK(*converted == 0);
  CHECK((*graph)->FindNode("branch")->op() == "Neg");
  CHECK((*graph)->FindNode("sw")->op() == "Switch");
}

TEST_CASE("dependency_optimization follows the ConfigProto", "[dependency_optimizer]") {
  ConfigProto config;
  CHECK(DependencyOptimizationEnabled(config));
  config.mutable_graph_options()->mutable_rewrite_options()->set_dependency_optimization(
      RewriterConfig::OFF);
  CHECK_FALSE(DependencyOptimizationEnabled(config));
  ConfigProto l0;
  l0.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(OptimizerOptions::L0);
  CHECK_FALSE(DependencyOptimizationEnabled(l0));
}

}  // namespace
}  // namespace dflow
