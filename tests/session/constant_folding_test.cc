// FoldConstants: stateless CPU nodes on Consts become Consts (named <node>/_folded), the
// nodes they replace go away, stateful and fed nodes stay, a fold that fails leaves the
// graph alone, and a Session computes the same values with folding on and off (L0).
#include <catch2/catch.hpp>

#include "graph/graph_def_import.h"
#include "session/constant_folding.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// x * (Rsqrt(var + eps) * gamma): the shape of a Keras 3 batch norm's scale.
constexpr char kGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "var" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: 3 float_val: 15 } } } }
  node { name: "eps" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
  node { name: "gamma" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: 2 float_val: 8 } } } }
  node { name: "sum" op: "AddV2" input: "var" input: "eps" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "rsqrt" op: "Rsqrt" input: "sum" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "inv" op: "Mul" input: "rsqrt" input: "gamma" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "y" op: "Mul" input: "x" input: "inv" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "noise" op: "RandomUniform" input: "gamma_shape"
         attr { key: "T" value { type: DT_INT32 } } attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "gamma_shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                              int_val: 2 } } } }
  node { name: "z" op: "Mul" input: "noise" input: "inv" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

std::unique_ptr<Graph> ImportOnCpu(const std::string& text) {
  ImportOptions options;
  options.infer_shapes = false;
  auto graph = ImportGraphDef(testing::GraphFromText(text), options);
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) node->set_assigned_device(kCpu);
  return *std::move(graph);
}

TEST_CASE("FoldConstants replaces constant subgraphs by one Const", "[session]") {
  std::unique_ptr<Graph> graph = ImportOnCpu(kGraph);
  absl::StatusOr<int> folded = FoldConstants(graph.get());
  REQUIRE(folded.ok());
  CHECK(*folded >= 3);  // sum, rsqrt, inv (and their Consts var, eps, gamma)
  for (const char* gone : {"sum", "rsqrt", "inv", "var", "eps", "gamma"}) {
    CHECK(graph->FindNode(gone) == nullptr);
  }
  const Node* constant = graph->FindNode("inv/_folded");
  REQUIRE(constant != nullptr);
  CHECK(constant->op() == "Const");
  CHECK(constant->assigned_device() == kCpu);
  const TensorProto& value = constant->attr("value")->tensor();
  CHECK(value.tensor_shape().dim(0).size() == 2);
  // Stateful RandomUniform stays, and both readers of `inv` read the Const.
  CHECK(graph->FindNode("noise") != nullptr);
  CHECK(graph->FindNode("y")->input_edge(1)->src == constant);
  CHECK(graph->FindNode("z")->input_edge(1)->src == constant);
}

TEST_CASE("FoldConstants folds through the Identity a frozen variable is read by",
          "[session]") {
  // A frozen Keras model reads every weight as Const -> Identity (its ReadVariableOp);
  // the batch norm's scale must still become one Const.
  std::string text = kGraph;
  const std::string from = R"(input: "rsqrt" input: "gamma")";
  text.replace(text.find(from), from.size(), R"(input: "rsqrt" input: "gamma_read")");
  text += R"pb(
    node { name: "gamma_read" op: "Identity" input: "gamma"
           attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  std::unique_ptr<Graph> graph = ImportOnCpu(text);
  absl::StatusOr<int> folded = FoldConstants(graph.get());
  REQUIRE(folded.ok());
  for (const char* gone : {"gamma_read", "rsqrt", "inv", "gamma"}) {
    CHECK(graph->FindNode(gone) == nullptr);
  }
  const Node* constant = graph->FindNode("inv/_folded");
  REQUIRE(constant != nullptr);
  CHECK(graph->FindNode("y")->input_edge(1)->src == constant);
}

TEST_CASE("An Identity chain on a Const is bypassed, its value never copied", "[session]") {
  // Rule 0: w -> read -> read2 feeding a computation on x; `after` waits on read2.
  std::unique_ptr<Graph> graph = ImportOnCpu(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
    node { name: "read" op: "Identity" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "read2" op: "Snapshot" input: "read" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "x" input: "read2" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "after" op: "NoOp" input: "^read2" }
    node { name: "ordered" op: "Identity" input: "w" input: "^x"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Mul" input: "x" input: "ordered" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  const Node* w = graph->FindNode("w");
  absl::StatusOr<int> folded = FoldConstants(graph.get());
  REQUIRE(folded.ok());
  CHECK(*folded == 2);
  CHECK(graph->FindNode("read") == nullptr);
  CHECK(graph->FindNode("read2") == nullptr);
  CHECK(graph->FindNode("w") == w);  // the same node: nothing was computed or copied
  CHECK(graph->FindNode("y")->input_edge(1)->src == w);
  bool waits_on_w = false;
  for (const Edge* e : graph->FindNode("after")->in_edges()) waits_on_w |= e->src == w;
  CHECK(waits_on_w);
  CHECK(graph->FindNode("ordered") != nullptr);  // its control input keeps it
}

TEST_CASE("FoldConstants leaves a graph whose constant part fails", "[session]") {
  // Reshape of 2 values to [3]: an error for the step to report, not for folding.
  std::unique_ptr<Graph> graph = ImportOnCpu(R"pb(
    node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                                float_val: 1 } } } }
    node { name: "s" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                                int_val: 3 } } } }
    node { name: "r" op: "Reshape" input: "v" input: "s"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
    node { name: "out" op: "Identity" input: "r" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  absl::StatusOr<int> folded = FoldConstants(graph.get());
  REQUIRE(folded.ok());
  CHECK(*folded == 0);
  CHECK(graph->FindNode("r") != nullptr);
}

TEST_CASE("A Session gives the same values with constant folding on and off", "[session]") {
  const GraphDef graph_def = testing::GraphFromText(kGraph);
  static CpuAllocator allocator;
  Tensor x = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({2}));
  x.flat<float>()[0] = 4;
  x.flat<float>()[1] = -1;
  std::vector<float> results[2];
  for (int off = 0; off < 2; ++off) {
    ConfigProto config;
    if (off) config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(
        OptimizerOptions::L0);
    CHECK(ConstantFoldingEnabled(config) == !off);
    auto session = NewSession(config);
    REQUIRE(session.ok());
    REQUIRE((*session)->Create(graph_def).ok());
    std::vector<Tensor> outputs;
    absl::Status status = (*session)->Run({{"x", x}}, {"y"}, {}, &outputs);
    INFO(status.ToString());
    REQUIRE(status.ok());
    results[off] = {outputs[0].flat<float>()[0], outputs[0].flat<float>()[1]};
  }
  CHECK(results[0] == results[1]);
  CHECK(results[0][0] == Approx(4 * 2 / 2.0f));  // rsqrt(3 + 1) * 2 = 1
  CHECK(results[0][1] == Approx(-1 * 8 / 4.0f));  // rsqrt(15 + 1) * 8 = 2
  ConfigProto off;
  off.mutable_graph_options()->mutable_rewrite_options()->set_constant_folding(RewriterConfig::OFF);
  CHECK(!ConstantFoldingEnabled(off));
}

}  // namespace
}  // namespace dflow
