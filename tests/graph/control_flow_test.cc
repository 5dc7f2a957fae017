// While-loop frames (graph/control_flow.h): which frame each node runs in, malformed
// loops, and keeping each loop on one device (placer colocation, partitioner check).
#include "graph/control_flow.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/device_name.h"
#include "graph/graph_def_import.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

std::unique_ptr<Graph> WhileLoopGraph(const std::string& extra = "") {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(testing::GraphFromText(
      testing::ReadCorpusText("pbtxt/tf_grappler_while_loop_const.pbtxt") + extra));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  return *std::move(graph);
}

int FrameOf(const ControlFlowInfo& info, const Graph& graph, const std::string& name) {
  return info.node_frame[graph.FindNode(name)->id()];
}

TEST_CASE("Nodes get the frame they run in; Enter opens the loop's frame",
          "[graph][control_flow]") {
  std::unique_ptr<Graph> graph = WhileLoopGraph();
  absl::StatusOr<ControlFlowInfo> info = BuildControlFlowInfo(*graph);
  REQUIRE(info.ok());
  REQUIRE(info->frames.size() == 2);
  const StaticFrame& loop = info->frames[1];
  CHECK(loop.name == "while/while/");
  CHECK(loop.parent == 0);
  CHECK(loop.num_enters == 2);
  CHECK(loop.parallel_iterations == 10);
  CHECK(FrameOf(*info, *graph, "Const") == 0);
  CHECK(FrameOf(*info, *graph, "while/Enter") == 0);  // runs in its input's frame
  CHECK(info->entered_frame[graph->FindNode("while/Enter")->id()] == 1);
  for (const char* name : {"while/Merge", "while/Less/y", "while/Switch", "while/add",
                           "while/NextIteration", "while/Exit"}) {
    INFO(name);
    CHECK(FrameOf(*info, *graph, name) == 1);
  }
  CHECK(info->entered_frame[graph->FindNode("while/Merge")->id()] == -1);
  CHECK(OutermostLoop(*info, *graph->FindNode("while/Enter")) == 1);
  CHECK(OutermostLoop(*info, *graph->FindNode("ones")) == 0);
}

TEST_CASE("A node fed from inside and outside a loop is rejected", "[graph][control_flow]") {
  std::unique_ptr<Graph> graph = WhileLoopGraph(
      "node { name: 'mixed' op: 'Add' input: 'while/Identity' input: 'Const'"
      " attr { key: 'T' value { type: DT_INT32 } } }");
  absl::StatusOr<ControlFlowInfo> info = BuildControlFlowInfo(*graph);
  CHECK(info.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(info.status().message(),
                          "Node 'mixed' has inputs from different frames."));
  CHECK(absl::StrContains(info.status().message(), "is in frame 'while/while/'"));
}

TEST_CASE("The partitioner rejects a loop split across devices", "[graph][control_flow]") {
  std::unique_ptr<Graph> graph = WhileLoopGraph();
  for (Node* node : graph->nodes()) node->set_assigned_device(FullDeviceName("CPU", 0));
  REQUIRE(PartitionGraph({}, *graph).ok());
  graph->FindNode("while/Less")->set_assigned_device(FullDeviceName("GPU", 0));
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph({}, *graph);
  CHECK(parts.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(parts.status().message(), "'while/Less' (on /job:localhost/replica:0/task:0/device:GPU:0)"));
  CHECK(absl::StrContains(parts.status().message(),
                          "are in the same while loop (frame 'while/while/'), but dflow runs "
                          "each while loop on one device"));
}

// GPU kernels for the arithmetic but not for the control-flow ops.
class ArithmeticOnGpu : public KernelSupport {
 public:
  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node) const override {
    for (const char* op : {"Add", "Less", "Const", "Identity", "ConcatV2"}) {
      if (node.op() == op) return {"CPU", "GPU"};
    }
    return {"CPU"};
  }
  std::string DescribeKernels(absl::string_view) const override { return ""; }
};

DeviceAttributes Device(const std::string& type) {
  DeviceAttributes device;
  device.set_name(FullDeviceName(type, 0));
  device.set_device_type(type);
  return device;
}

TEST_CASE("The placer keeps a loop's nodes together on a device that runs them all",
          "[graph][control_flow]") {
  std::unique_ptr<Graph> graph = WhileLoopGraph();
  ArithmeticOnGpu kernels;
  absl::StatusOr<PlacementResult> placed =
      PlaceGraph({}, {Device("CPU"), Device("GPU")}, kernels, graph.get());
  INFO(placed.status().ToString());
  REQUIRE(placed.ok());
  absl::StatusOr<ControlFlowInfo> info = BuildControlFlowInfo(*graph);
  REQUIRE(info.ok());
  // Less, Add and Identity inside the loop could run on the (preferred) GPU; Enter,
  // Merge and Switch cannot, so the whole loop stays on the CPU.
  for (const Node* node : graph->nodes()) {
    INFO(node->name());
    if (OutermostLoop(*info, *node) != 0) {
      CHECK(node->assigned_device() == FullDeviceName("CPU", 0));
    }
  }
  CHECK(CheckLoopsOnOneDevice(*graph).ok());
}

}  // namespace
}  // namespace dflow
