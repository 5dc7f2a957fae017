// ConvertUnreadNodesToNoOps (graph/dependency_optimizer.h): a pure computation read only
// through control edges becomes a NoOp that keeps the node's name, device and ordering;
// stateful ops, control flow and nodes reading a Switch are left alone. Through a
// Session, the tf.tuple pattern of TF 1 gradients gives the same values with the unread
// MatMul replaced.
#include <catch2/catch.hpp>

#include <memory>
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

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// Imports `text` with every node on the CPU, except those named in `elsewhere`.
std::unique_ptr<Graph> Placed(const char* text, const std::set<std::string>& elsewhere = {}) {
  auto graph = ImportGraphDef(testing::GraphFromText(text));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) {
    node->set_assigned_device(elsewhere.count(node->name()) != 0
                                  ? "/job:localhost/replica:0/task:0/device:CPU:1"
                                  : kCpu);
  }
  return *std::move(graph);
}

int CountOp(const Graph& graph, const std::string& op) {
  int n = 0;
  for (const Node* node : graph.nodes()) n += node->op() == op ? 1 : 0;
  return n;
}

TEST_CASE("A frozen Keras model's wait for its variable reads disappears",
          "[dependency_optimizer]") {
  // TF 2 freezes each ReadVariableOp into an Identity of a Const, and the model's output
  // waits for all of them through one NoOp.
  std::unique_ptr<Graph> g = Placed(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "c1" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
    node { name: "c2" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 2 } } } }
    node { name: "read1" op: "Identity" input: "c1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "read2" op: "Identity" input: "c2" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "uses_c2" op: "Mul" input: "x" input: "c2"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "deps" op: "NoOp" input: "^read1" input: "^read2" }
    node { name: "out" op: "Identity" input: "uses_c2" input: "^deps"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  REQUIRE(ConvertUnreadNodesToNoOps(g.get()).ok());
  CHECK(CountOp(*g, "NoOp") == 4);  // read1, read2, c1 (c2 is read by uses_c2), deps
  CHECK(BypassRelayNoOps(g.get()) == 4);
  CHECK(CountOp(*g, "NoOp") == 0);
  CHECK(ControlInputs(*g, "out") == std::set<std::string>{"c2"});  // through read2, deps
  CHECK(g->FindNode("uses_c2")->op() == "Mul");
}

TEST_CASE("A relay stays where bypassing it adds edges, for a target, or across devices",
          "[dependency_optimizer]") {
  std::unique_ptr<Graph> g = Placed(R"pb(
    node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "c" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "two_by_two" op: "NoOp" input: "^a" input: "^b" }
    node { name: "d" op: "NoOp" input: "^two_by_two" }
    node { name: "e" op: "NoOp" input: "^two_by_two" }
    node { name: "three_by_three" op: "NoOp" input: "^a" input: "^b" input: "^c" }
    node { name: "f" op: "NoOp" input: "^three_by_three" }
    node { name: "g" op: "NoOp" input: "^three_by_three" }
    node { name: "h" op: "NoOp" input: "^three_by_three" }
    node { name: "remote" op: "NoOp" input: "^f" }
    node { name: "after_remote" op: "NoOp" input: "^remote" input: "^g" input: "^h" }
  )pb",
                                    {"remote"});
  BypassRelayNoOps(g.get());
  CHECK(g->FindNode("two_by_two") == nullptr);  // 2 x 2 <= 2 + 2: a, b now precede d, e
  CHECK(ControlInputs(*g, "d") == std::set<std::string>{"a", "b"});
  CHECK(g->FindNode("three_by_three") != nullptr);  // 3 x 3 > 3 + 3
  CHECK(g->FindNode("remote") != nullptr);          // on another device than f
  CHECK(g->FindNode("after_remote") != nullptr);    // nothing waits for it: a target
  // A NoOp without inputs relays nothing: gone, whatever waits for it.
  std::unique_ptr<Graph> sources = Placed(R"pb(
    node { name: "start" op: "NoOp" }
    node { name: "x" op: "Placeholder" input: "^start"
           attr { key: "dtype" value { type: DT_FLOAT } } }
  )pb");
  CHECK(BypassRelayNoOps(sources.get()) == 1);
  CHECK(ControlInputs(*sources, "x").empty());
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
