// MarkConstantInputs: Const inputs, read directly or through Identity chains, are marked;
// fed, computed and received inputs are not.
#include <catch2/catch.hpp>

#include "graph/constant_inputs.h"
#include "graph/graph_def_import.h"
#include "graph/node_def_util.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

std::vector<int64_t> Marked(const Graph& graph, const std::string& node) {
  const AttrValue* attr = FindAttr(graph.FindNode(node)->def(), kConstantInputsAttr);
  if (attr == nullptr) return {};
  return std::vector<int64_t>(attr->list().i().begin(), attr->list().i().end());
}

TEST_CASE("Const inputs are marked directly and through Identity chains", "[constant_inputs]") {
  auto graph = ImportGraphDef(testing::GraphFromText(R"pb(
    node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1 } } } }
    node { name: "w/read" op: "Identity" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "w/read2" op: "Snapshot" input: "w/read" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "x/read" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "neg" op: "Neg" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "mm" op: "MatMul" input: "x/read" input: "w/read2" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "mm2" op: "MatMul" input: "w" input: "neg" input: "^x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "mm3" op: "MatMul" input: "x" input: "x/read" attr { key: "T" value { type: DT_FLOAT } } }
  )pb"));
  REQUIRE(graph.ok());
  MarkConstantInputs(graph->get());
  const Graph& g = **graph;
  CHECK(Marked(g, "mm") == std::vector<int64_t>{1});        // through Identity and Snapshot
  CHECK(Marked(g, "mm2") == std::vector<int64_t>{0});       // a computed input is not constant
  CHECK(Marked(g, "mm3").empty());                          // fed, directly and through Identity
  CHECK(Marked(g, "w/read") == std::vector<int64_t>{0});
  CHECK(Marked(g, "neg") == std::vector<int64_t>{0});
}

}  // namespace
}  // namespace dflow
