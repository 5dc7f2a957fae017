#include "tools/graph_dot.h"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/graph_def_import.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

// a (2x2 Const) on the CPU feeds c = MatMul(a, a) on the GPU; d runs after c on the GPU.
std::unique_ptr<Graph> PlacedGraph() {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(testing::GraphFromText(R"(
    node { name: "a" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 }
                  dim { size: 2 } } float_val: 1 } } } }
    node { name: "c" op: "MatMul" input: "a" input: "a"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "scope/d" op: "NoOp" input: "^c" }
  )"));
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) {
    node->set_assigned_device(node->name() == "a" ? kCpu0 : kGpu0);
  }
  return *std::move(graph);
}

TEST_CASE("PlacedGraphDot: a cluster and colour per device, copies in red with their size",
          "[tools][graph]") {
  const std::string dot = PlacedGraphDot(*PlacedGraph());
  INFO(dot);
  CHECK(absl::StartsWith(dot, "digraph dflow {"));
  CHECK(absl::StrContains(dot, "subgraph cluster_0 {\n    label=\"" + std::string(kCpu0)));
  CHECK(absl::StrContains(dot, "subgraph cluster_1 {\n    label=\"" + std::string(kGpu0)));
  CHECK(absl::StrContains(dot, "fillcolor=\"#cfe2f3\""));  // CPU:0, the first colour
  CHECK(absl::StrContains(dot, "fillcolor=\"#d9ead3\""));  // GPU:0, the second
  // Both inputs of c cross devices: two copy edges, each with dtype, shape and bytes.
  CHECK(absl::StrContains(dot, "label=\"copy float32[2,2] 16 B\""));
  CHECK(absl::StrContains(dot, "color=\"#cc0000\""));
  CHECK(absl::StrContains(dot, "2 cross-device edge(s)"));
  CHECK(absl::StrContains(dot, "style=dashed"));       // the control edge c -> d
  CHECK(absl::StrContains(dot, "label=\"scope/d\\nNoOp\""));  // name, then op
  CHECK(absl::StrContains(dot, "3 nodes on 2 device(s)"));
}

}  // namespace
}  // namespace dflow
