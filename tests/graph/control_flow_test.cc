// While-loop frames (graph/control_flow.h): which frame each node runs in, malformed
// loops, and loops across devices (placement by kernels, the partitioner's control loops).
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

TEST_CASE("IsV1ControlFlowOp knows every op of TF 1 control flow, a lone Switch too",
          "[graph][control_flow]") {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(testing::GraphFromText(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
    node { name: "sw" op: "Switch" input: "x" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "merge" op: "Merge" input: "sw" input: "sw:1"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
    node { name: "id" op: "Identity" input: "merge" attr { key: "T" value { type: DT_FLOAT } } })"));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  CHECK(IsV1ControlFlowOp(*(*graph)->FindNode("sw")));
  CHECK(IsV1ControlFlowOp(*(*graph)->FindNode("merge")));
  CHECK_FALSE(IsV1ControlFlowOp(*(*graph)->FindNode("id")));
  CHECK_FALSE(IsV1ControlFlowOp(*(*graph)->FindNode("x")));
  std::unique_ptr<Graph> loop = WhileLoopGraph();
  int loop_ops = 0;
  for (const Node* node : loop->nodes()) loop_ops += IsV1ControlFlowOp(*node) ? 1 : 0;
  CHECK(loop_ops > 0);
  CHECK(HasControlFlow(*loop));
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

// The nodes of `part` whose op is `op`.
std::vector<const NodeDef*> NodesOf(const GraphDef& part, const std::string& op) {
  std::vector<const NodeDef*> nodes;
  for (const NodeDef& node : part.node()) {
    if (node.op() == op) nodes.push_back(&node);
  }
  return nodes;
}

const NodeDef* NodeNamed(const GraphDef& part, const std::string& name) {
  for (const NodeDef& node : part.node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

bool HasInput(const NodeDef& node, const std::string& input) {
  for (const std::string& in : node.input()) {
    if (in == input) return true;
  }
  return false;
}

TEST_CASE("A loop split across devices gets a control loop on the other device",
          "[graph][control_flow]") {
  std::unique_ptr<Graph> graph = WhileLoopGraph();
  for (Node* node : graph->nodes()) node->set_assigned_device(FullDeviceName("CPU", 0));
  const std::string gpu = FullDeviceName("GPU", 0);
  graph->FindNode("while/Less")->set_assigned_device(gpu);
  graph->FindNode("while/Less/y")->set_assigned_device(gpu);
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph({}, *graph);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  const GraphDef& on_gpu = parts->at(gpu);
  // The GPU's control loop: Enter (of a root-frame Const) -> Merge -> Switch ->
  // Identity -> NextIteration -> Merge, the Switch reading the CPU's LoopCond.
  std::vector<const NodeDef*> enters = NodesOf(on_gpu, "Enter");
  REQUIRE(enters.size() == 1);
  const NodeDef& enter = *enters[0];
  CHECK(enter.attr().at("frame_name").s() == "while/while/");
  CHECK(enter.attr().at("parallel_iterations").i() == 10);
  CHECK(NodesOf(on_gpu, "Const").size() == 2);  // Less/y and the control loop's
  REQUIRE(NodesOf(on_gpu, "Merge").size() == 1);
  const NodeDef& merge = *NodesOf(on_gpu, "Merge")[0];
  CHECK(merge.input(0) == enter.name());
  REQUIRE(NodesOf(on_gpu, "NextIteration").size() == 1);
  CHECK(merge.input(1) == NodesOf(on_gpu, "NextIteration")[0]->name());
  REQUIRE(NodesOf(on_gpu, "Switch").size() == 1);
  const NodeDef& pivot = *NodesOf(on_gpu, "Switch")[0];
  CHECK(pivot.input(0) == merge.name());
  const NodeDef* pred = NodeNamed(on_gpu, pivot.input(1));
  REQUIRE(pred != nullptr);
  CHECK(pred->op() == "_Recv");
  CHECK(pred->attr().at("tensor_type").type() == DT_BOOL);
  // Every `_Recv` on the GPU runs once per iteration: it waits for the control loop.
  std::vector<const NodeDef*> recvs = NodesOf(on_gpu, "_Recv");
  CHECK(recvs.size() == 3);  // Merge's value, the Less/y control edge, the predicate
  for (const NodeDef* recv : recvs) {
    INFO(recv->name());
    CHECK(HasInput(*recv, "^" + merge.name()));
  }
  // The CPU sends the predicate from its LoopCond; it receives Less's value inside the
  // frame, so it has a control loop too, reading the LoopCond directly.
  const GraphDef& on_cpu = parts->at(FullDeviceName("CPU", 0));
  bool sends_pred = false;
  for (const NodeDef* send : NodesOf(on_cpu, "_Send")) {
    sends_pred = sends_pred || send->input(0) == "while/LoopCond";
  }
  CHECK(sends_pred);
  CHECK(NodesOf(on_cpu, "Enter").size() == 3);
  for (const NodeDef* pivot_on_cpu : NodesOf(on_cpu, "Switch")) {
    CHECK(pivot_on_cpu->input(1) == "while/LoopCond");
  }
}

TEST_CASE("Nested loops split across devices stack their control loops",
          "[graph][control_flow]") {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(testing::GraphFromText(R"(
    node { name: 'n' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
           attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
    node { name: 'o/Enter' op: 'Enter' input: 'n' attr { key: 'T' value { type: DT_INT32 } }
           attr { key: 'frame_name' value { s: 'outer' } } }
    node { name: 'o/Merge' op: 'Merge' input: 'o/Enter' input: 'o/Next'
           attr { key: 'T' value { type: DT_INT32 } } attr { key: 'N' value { i: 2 } } }
    node { name: 'o/Cond' op: 'Cast' input: 'o/Merge' attr { key: 'SrcT' value { type: DT_INT32 } }
           attr { key: 'DstT' value { type: DT_BOOL } } }
    node { name: 'o/LoopCond' op: 'LoopCond' input: 'o/Cond' }
    node { name: 'o/Switch' op: 'Switch' input: 'o/Merge' input: 'o/LoopCond'
           attr { key: 'T' value { type: DT_INT32 } } }
    node { name: 'i/Enter' op: 'Enter' input: 'o/Switch:1' attr { key: 'T' value { type: DT_INT32 } }
           attr { key: 'frame_name' value { s: 'inner' } } }
    node { name: 'i/Merge' op: 'Merge' input: 'i/Enter' input: 'i/Next'
           attr { key: 'T' value { type: DT_INT32 } } attr { key: 'N' value { i: 2 } } }
    node { name: 'i/Cond' op: 'Cast' input: 'i/Merge' attr { key: 'SrcT' value { type: DT_INT32 } }
           attr { key: 'DstT' value { type: DT_BOOL } } }
    node { name: 'i/LoopCond' op: 'LoopCond' input: 'i/Cond' }
    node { name: 'i/Switch' op: 'Switch' input: 'i/Merge' input: 'i/LoopCond'
           attr { key: 'T' value { type: DT_INT32 } } }
    node { name: 'i/Body' op: 'Neg' input: 'i/Switch:1' attr { key: 'T' value { type: DT_INT32 } } }
    node { name: 'i/Next' op: 'NextIteration' input: 'i/Body'
           attr { key: 'T' value { type: DT_INT32 } } }
    node { name: 'i/Exit' op: 'Exit' input: 'i/Switch' attr { key: 'T' value { type: DT_INT32 } } }
    node { name: 'o/Next' op: 'NextIteration' input: 'i/Exit'
           attr { key: 'T' value { type: DT_INT32 } } }
    node { name: 'o/Exit' op: 'Exit' input: 'o/Switch' attr { key: 'T' value { type: DT_INT32 } } }
  )"));
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) node->set_assigned_device(FullDeviceName("CPU", 0));
  const std::string gpu = FullDeviceName("GPU", 0);
  (*graph)->FindNode("i/Body")->set_assigned_device(gpu);
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph({}, **graph);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  const GraphDef& on_gpu = parts->at(gpu);
  // Two control loops: the inner one's Enter reads the outer one's Merge.
  std::vector<const NodeDef*> enters = NodesOf(on_gpu, "Enter");
  REQUIRE(enters.size() == 2);
  const NodeDef* inner = enters[0]->attr().at("frame_name").s() == "inner" ? enters[0] : enters[1];
  const NodeDef* outer = inner == enters[0] ? enters[1] : enters[0];
  CHECK(outer->attr().at("frame_name").s() == "outer");
  const NodeDef* outer_merge = nullptr;
  for (const NodeDef* merge : NodesOf(on_gpu, "Merge")) {
    if (merge->input(0) == outer->name()) outer_merge = merge;
  }
  REQUIRE(outer_merge != nullptr);
  CHECK(inner->input(0) == outer_merge->name());
  CHECK(NodeNamed(on_gpu, outer->input(0))->op() == "Const");
  const NodeDef* inner_merge = nullptr;
  for (const NodeDef* merge : NodesOf(on_gpu, "Merge")) {
    if (merge->input(0) == inner->name()) inner_merge = merge;
  }
  REQUIRE(inner_merge != nullptr);
  // Body's input and the inner predicate run per inner iteration, the outer predicate
  // (the outer control loop's pivot) per outer iteration.
  std::vector<const NodeDef*> recvs = NodesOf(on_gpu, "_Recv");
  REQUIRE(recvs.size() == 3);
  int gated_inner = 0, gated_outer = 0;
  for (const NodeDef* recv : recvs) {
    gated_inner += HasInput(*recv, "^" + inner_merge->name()) ? 1 : 0;
    gated_outer += HasInput(*recv, "^" + outer_merge->name()) ? 1 : 0;
  }
  CHECK(gated_inner == 2);
  CHECK(gated_outer == 1);
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

TEST_CASE("The placer places a loop's nodes by their own kernels, as TF does",
          "[graph][control_flow]") {
  std::unique_ptr<Graph> graph = WhileLoopGraph();
  ArithmeticOnGpu kernels;
  absl::StatusOr<PlacementResult> placed =
      PlaceGraph({}, {Device("CPU"), Device("GPU")}, kernels, graph.get());
  INFO(placed.status().ToString());
  REQUIRE(placed.ok());
  // Less, Add and ConcatV2 inside the loop run on the (preferred) GPU; Enter, Merge and
  // Switch have no GPU kernel here, so they stay on the CPU and the partitioner gives
  // the GPU a control loop.
  for (const char* name : {"while/Less", "while/add", "while/concat"}) {
    INFO(name);
    CHECK(graph->FindNode(name)->assigned_device() == FullDeviceName("GPU", 0));
  }
  for (const char* name : {"while/Enter", "while/Merge", "while/Switch", "while/LoopCond"}) {
    INFO(name);
    CHECK(graph->FindNode(name)->assigned_device() == FullDeviceName("CPU", 0));
  }
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph({}, *graph);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  CHECK(NodesOf(parts->at(FullDeviceName("GPU", 0)), "Enter").size() == 1);
}

}  // namespace
}  // namespace dflow
