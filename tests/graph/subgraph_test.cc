// Rewriting a placed graph for one (feeds, fetches, targets) signature: _Arg/_Retval
// nodes, pruning, and TF's exact error texts.
#include "graph/subgraph.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/device_name.h"
#include "graph/graph_def_import.h"
#include "graph/partition.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using testing::GraphFromText;
using testing::StatusText;

const std::string kClient = FullDeviceName("CPU", 0);

// c (Const [3]) -> u = Unique(c) with outputs y (float) and idx (int32); a placeholder x
// read by two Identities; a NoOp after x; an unrelated branch.
constexpr char kGraph[] = R"(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "z" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "after_x" op: "NoOp" input: "^x" }
  node { name: "c" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                         float_val: 1 float_val: 2 float_val: 1 } } } }
  node { name: "u" op: "Unique" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "values" op: "Identity" input: "u" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "indices" op: "Identity" input: "u:1" attr { key: "T" value { type: DT_INT32 } } }
  node { name: "after_u" op: "NoOp" input: "^u" }
  node { name: "unrelated" op: "Identity" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
)";

std::unique_ptr<Graph> PlacedGraph() {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(GraphFromText(kGraph));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) node->set_assigned_device(FullDeviceName("CPU", 1));
  return *std::move(graph);
}

RewriteSpec Spec(std::vector<std::string> feeds, std::vector<std::string> fetches,
                 std::vector<std::string> targets = {}) {
  return {std::move(feeds), std::move(fetches), std::move(targets), kClient};
}

RewriteResult Rewrite(const RewriteSpec& spec, Graph* graph) {
  absl::StatusOr<RewriteResult> result = RewriteGraphForExecution(spec, graph);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return *std::move(result);
}

// The error RewriteGraphForExecution gives for `spec` on a fresh graph.
absl::Status RewriteError(const RewriteSpec& spec) {
  std::unique_ptr<Graph> graph = PlacedGraph();
  absl::StatusOr<RewriteResult> result = RewriteGraphForExecution(spec, graph.get());
  REQUIRE_FALSE(result.ok());
  return result.status();
}

std::vector<std::string> NodeNames(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node* node : graph.nodes()) names.push_back(node->name());
  return names;
}

TEST_CASE("Feeding a Placeholder replaces it with an _Arg read by every consumer",
          "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  RewriteResult result = Rewrite(Spec({"x"}, {"y", "z:0"}, {"after_x"}), graph.get());
  REQUIRE(result.arg_nodes == std::vector<std::string>{"_arg_x_0_0"});
  REQUIRE(result.retval_nodes == std::vector<std::string>{"_retval_y_0_0", "_retval_z_0_1"});

  const Node* arg = graph->FindNode("_arg_x_0_0");
  REQUIRE(arg != nullptr);
  CHECK(arg->op() == "_Arg");
  CHECK(arg->attr("T")->type() == DT_FLOAT);
  CHECK(arg->attr("index")->i() == 0);
  CHECK(arg->assigned_device() == kClient);
  CHECK(graph->FindNode("y")->input_edge(0)->src == arg);
  CHECK(graph->FindNode("z")->input_edge(0)->src == arg);
  // The placeholder's control edge moved to the _Arg, and the placeholder is pruned.
  const Node* after_x = graph->FindNode("after_x");
  REQUIRE(after_x->in_edges().size() == 1);
  CHECK(after_x->in_edges()[0]->src == arg);
  CHECK(graph->FindNode("x") == nullptr);

  const Node* retval = graph->FindNode("_retval_z_0_1");
  REQUIRE(retval != nullptr);
  CHECK(retval->op() == "_Retval");
  CHECK(retval->attr("T")->type() == DT_FLOAT);
  CHECK(retval->attr("index")->i() == 1);
  CHECK(retval->assigned_device() == kClient);
  CHECK(retval->input_edge(0)->src->name() == "z");
  CHECK(graph->FindNode("y")->assigned_device() == FullDeviceName("CPU", 1));
}

TEST_CASE("Feeding output 1 of a multi-output op rewires only that output's consumers",
          "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  RewriteResult result = Rewrite(Spec({"u:1"}, {"values", "indices"}, {"after_u"}), graph.get());
  REQUIRE(result.arg_nodes == std::vector<std::string>{"_arg_u_1_0"});
  const Node* arg = graph->FindNode("_arg_u_1_0");
  REQUIRE(arg != nullptr);
  CHECK(arg->attr("T")->type() == DT_INT32);
  CHECK(graph->FindNode("indices")->input_edge(0)->src == arg);
  const Edge* values_in = graph->FindNode("values")->input_edge(0);
  CHECK(values_in->src->name() == "u");
  CHECK(values_in->src_output == 0);
  // u is not a Placeholder: its control edge stays.
  CHECK(graph->FindNode("after_u")->in_edges()[0]->src->name() == "u");
  CHECK(NodeNames(*graph) == std::vector<std::string>{"c", "u", "values", "indices", "after_u",
                                                      "_arg_u_1_0", "_retval_values_0_0",
                                                      "_retval_indices_0_1"});
}

TEST_CASE("Pruning keeps what fetches and targets reach and drops the rest",
          "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  RewriteResult result = Rewrite(Spec({}, {}, {"values:0"}), graph.get());
  CHECK(result.arg_nodes.empty());
  CHECK(result.retval_nodes.empty());
  // The ":0" suffix of a target is ignored; nothing was added.
  CHECK(NodeNames(*graph) == std::vector<std::string>{"c", "u", "values"});
}

TEST_CASE("A fetch without feeds keeps its whole input cone", "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  RewriteResult result = Rewrite(Spec({}, {"u:1"}), graph.get());
  CHECK(result.retval_nodes == std::vector<std::string>{"_retval_u_1_0"});
  CHECK(graph->FindNode("_retval_u_1_0")->attr("T")->type() == DT_INT32);
  CHECK(NodeNames(*graph) == std::vector<std::string>{"c", "u", "_retval_u_1_0"});
}

TEST_CASE("The rewritten graph exports and re-imports", "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  Rewrite(Spec({"x", "u:1"}, {"y", "indices", "values"}, {"after_x"}), graph.get());
  absl::StatusOr<std::unique_ptr<Graph>> back = ImportGraphDef(graph->ToGraphDef());
  INFO(back.status().ToString());
  CHECK(back.ok());
}

TEST_CASE("A rewritten graph partitions with its _Arg and _Retval on the client device",
          "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  Rewrite(Spec({"x"}, {"y"}), graph.get());
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph({}, *graph);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 2);
  const GraphDef& client = parts->at(kClient);
  const GraphDef& worker = parts->at(FullDeviceName("CPU", 1));
  // _arg -> Send, Recv -> _retval on the client; Recv -> y -> Send on CPU:1.
  CHECK(client.node_size() == 4);
  CHECK(worker.node_size() == 3);
}

TEST_CASE("An _Arg nobody needs is pruned but keeps its index", "[graph][subgraph]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  RewriteResult result = Rewrite(Spec({"x", "c"}, {"y"}), graph.get());
  CHECK(result.arg_nodes == std::vector<std::string>{"_arg_x_0_0", "_arg_c_0_1"});
  CHECK(graph->FindNode("_arg_c_0_1") == nullptr);
  CHECK(NodeNames(*graph) == std::vector<std::string>{"y", "_arg_x_0_0", "_retval_y_0_0"});
}

TEST_CASE("Rewrite errors carry TF's codes and texts", "[graph][subgraph]") {
  using absl::StatusCode;
  struct Case {
    RewriteSpec spec;
    StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {Spec({"x"}, {}), StatusCode::kInvalidArgument,
       "Must specify at least one target to fetch or execute."},
      {Spec({"x", "x:0"}, {"y"}), StatusCode::kInvalidArgument,
       "Endpoint \"x:0\" fed more than once."},
      {Spec({"x"}, {"y", "x:0"}), StatusCode::kInvalidArgument, "x:0 is both fed and fetched."},
      {Spec({"x:0"}, {"x"}), StatusCode::kInvalidArgument, "x:0 is both fed and fetched."},
      // TF 2.21's DirectSession codes and texts (checked through its C API).
      {Spec({"nope"}, {"y"}), StatusCode::kInvalidArgument,
       "Tensor nope:0, specified in either feed_devices or fetch_devices was not found in "
       "the Graph"},
      {Spec({"x:1"}, {"y"}), StatusCode::kOutOfRange,
       "Node 'x' (type: 'Placeholder', num of outputs: 1) does not have output 1"},
      {Spec({}, {"nope:2"}), StatusCode::kInvalidArgument,
       "Tensor nope:2, specified in either feed_devices or fetch_devices was not found in "
       "the Graph"},
      {Spec({}, {"after_x"}), StatusCode::kInvalidArgument,
       "Tried to fetch data for 'after_x:0', which produces no output.  To run to a node but "
       "not fetch any data, pass 'after_x:0' as an argument to the 'target_node_names' "
       "argument of the Session::Run API."},
      {Spec({}, {"u:2"}), StatusCode::kOutOfRange,
       "Node 'u' (type: 'Unique', num of outputs: 2) does not have output 2"},
      {Spec({}, {"y"}, {"p", "after_x", "q:1"}), StatusCode::kNotFound,
       "PruneForTargets: Some target nodes not found: p q:1 "},
      {Spec({"x:"}, {"y"}), StatusCode::kInvalidArgument,
       "Feed: 'x:' is not a valid tensor name"},
      {Spec({}, {"^y"}), StatusCode::kInvalidArgument, "Fetch: '^y' is not a valid tensor name"},
  };
  for (const Case& c : cases) {
    absl::Status status = RewriteError(c.spec);
    INFO(status.ToString());
    CHECK(status.code() == c.code);
    CHECK(StatusText(status) == c.message);
  }
}

}  // namespace
}  // namespace dflow
