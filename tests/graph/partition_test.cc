// Partitioning: one GraphDef per device, with TF's _Send/_Recv pairs for every
// cross-device tensor and control dependency, deduplicated and deterministic.
#include "graph/partition.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "graph/device_name.h"
#include "graph/graph_def_import.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using testing::GraphFromText;

std::string Cpu(int id) { return FullDeviceName("CPU", id); }

// Assigns every node its requested device as a full name (CPU:0 when none is requested).
void PlaceAsRequested(Graph* graph) {
  for (Node* node : graph->nodes()) {
    absl::StatusOr<DeviceName> spec = ParseDeviceName(node->requested_device());
    REQUIRE(spec.ok());
    node->set_assigned_device(FullDeviceName(spec->type.value_or("CPU"), spec->id.value_or(0)));
  }
}

std::unique_ptr<Graph> PlacedGraphFromText(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(GraphFromText(text));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  PlaceAsRequested(graph->get());
  return *std::move(graph);
}

std::map<std::string, GraphDef> Partition(const Graph& graph,
                                          const PartitionOptions& options = {}) {
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph(options, graph);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  return *std::move(parts);
}

const NodeDef& NodeNamed(const GraphDef& graph, const std::string& name) {
  for (const NodeDef& node : graph.node()) {
    if (node.name() == name) return node;
  }
  FAIL("no node " << name);
  return graph.node(0);
}

std::vector<const NodeDef*> NodesOfOp(const GraphDef& graph, const std::string& op) {
  std::vector<const NodeDef*> nodes;
  for (const NodeDef& node : graph.node()) {
    if (node.op() == op) nodes.push_back(&node);
  }
  return nodes;
}

std::vector<std::string> Inputs(const NodeDef& node) {
  return {node.input().begin(), node.input().end()};
}

std::string DeterministicBytes(const GraphDef& graph) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    REQUIRE(graph.SerializeToCodedStream(&coded));
  }
  return bytes;
}

// Checks the attrs TF puts on both ends of a pair.
void CheckPairAttrs(const NodeDef& node, const std::string& tensor_name,
                    const std::string& send_device, const std::string& recv_device) {
  INFO(node.DebugString());
  CHECK(node.attr().at("tensor_name").s() == tensor_name);
  CHECK(node.attr().at("send_device").s() == send_device);
  CHECK(node.attr().at("send_device_incarnation").i() == 1);
  CHECK(node.attr().at("recv_device").s() == recv_device);
  CHECK(node.attr().at("client_terminated").b() == false);
}

// Consts on CPU:0 feeding a MatMul on CPU:1.
std::shared_ptr<Graph> TwoDeviceMatMul() {
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a").WithDevice("/cpu:0"), {{1.f, 2.f}, {3.f, 4.f}});
  Output b = Const(root.WithOpName("b").WithDevice("/cpu:0"), {{1.f, 0.f}, {0.f, 1.f}});
  MatMul(root.WithOpName("m").WithDevice("/cpu:1"), a, b);
  REQUIRE(root.ok());
  PlaceAsRequested(root.graph());
  return root.graph_as_shared_ptr();
}

// Four towers m_i = MatMul(x, w_i) on CPU:i, with x on CPU:0 and AddN of all on CPU:0.
std::shared_ptr<Graph> FourTowers() {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithOpName("x").WithDevice("/cpu:0"), {{1.f, 2.f}, {3.f, 4.f}});
  std::vector<Output> towers;
  for (int i = 0; i < 4; ++i) {
    Scope tower = root.NewSubScope("tower_" + std::to_string(i))
                      .WithDevice("/cpu:" + std::to_string(i));
    Output w = Const(tower.WithOpName("w"), {{1.f, 0.f}, {0.f, 1.f}});
    towers.push_back(MatMul(tower.WithOpName("m"), x, w));
  }
  AddN(root.WithOpName("sum").WithDevice("/cpu:0"), towers);
  REQUIRE(root.ok());
  PlaceAsRequested(root.graph());
  return root.graph_as_shared_ptr();
}

constexpr char kConstA[] = R"(
  node { name: "a" op: "Const" device: "/cpu:0"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                         float_val: 1 float_val: 2 } } } }
)";

TEST_CASE("A MatMul on another device than its inputs gets one Send/Recv pair per tensor",
          "[graph][partition]") {
  std::shared_ptr<Graph> graph = TwoDeviceMatMul();
  std::map<std::string, GraphDef> parts = Partition(*graph);
  REQUIRE(parts.size() == 2);
  const GraphDef& p0 = parts.at(Cpu(0));
  const GraphDef& p1 = parts.at(Cpu(1));
  CHECK(p0.node_size() == 4);
  CHECK(p1.node_size() == 3);
  CHECK(NodesOfOp(p0, "_Send").size() == 2);
  CHECK(NodesOfOp(p0, "_Recv").empty());
  CHECK(NodesOfOp(p1, "_Recv").size() == 2);
  CHECK(NodesOfOp(p1, "_Send").empty());

  // Names come from "<src>/_N", N counting in the order Send, Recv per pair.
  const Node* m = graph->FindNode("m");
  const std::string tensor_a = "edge_" + std::to_string(m->input_edge(0)->id) + "_a";
  const NodeDef& send_a = NodeNamed(p0, "a/_0");
  const NodeDef& recv_a = NodeNamed(p1, "a/_1");
  CHECK(send_a.op() == "_Send");
  CHECK(Inputs(send_a) == std::vector<std::string>{"a"});
  CHECK(send_a.attr().at("T").type() == DT_FLOAT);
  CHECK(send_a.device() == Cpu(0));
  CheckPairAttrs(send_a, tensor_a, Cpu(0), Cpu(1));
  CHECK(recv_a.op() == "_Recv");
  CHECK(recv_a.input_size() == 0);
  CHECK(recv_a.attr().at("tensor_type").type() == DT_FLOAT);
  CHECK(recv_a.attr().count("T") == 0);
  CHECK(recv_a.device() == Cpu(1));
  CheckPairAttrs(recv_a, tensor_a, Cpu(0), Cpu(1));
  CHECK(NodeNamed(p0, "b/_2").op() == "_Send");
  CHECK(NodeNamed(p1, "b/_3").op() == "_Recv");

  const NodeDef& matmul = NodeNamed(p1, "m");
  CHECK(matmul.device() == Cpu(1));
  CHECK(Inputs(matmul) == std::vector<std::string>{"a/_1", "b/_3"});
  CHECK(NodeNamed(p0, "a").device() == Cpu(0));
}

TEST_CASE("Consumers on one device share a Recv; consumers on two devices get two pairs",
          "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(std::string(kConstA) + R"(
    node { name: "i1" op: "Identity" input: "a" device: "/cpu:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "i2" op: "Identity" input: "a" device: "/cpu:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "i3" op: "Identity" input: "a" device: "/cpu:2"
           attr { key: "T" value { type: DT_FLOAT } } }
  )");
  std::map<std::string, GraphDef> parts = Partition(*graph);
  REQUIRE(parts.size() == 3);
  CHECK(NodesOfOp(parts.at(Cpu(0)), "_Send").size() == 2);
  std::vector<const NodeDef*> recvs1 = NodesOfOp(parts.at(Cpu(1)), "_Recv");
  REQUIRE(recvs1.size() == 1);
  CHECK(Inputs(NodeNamed(parts.at(Cpu(1)), "i1")) == std::vector<std::string>{recvs1[0]->name()});
  CHECK(Inputs(NodeNamed(parts.at(Cpu(1)), "i2")) == std::vector<std::string>{recvs1[0]->name()});
  std::vector<const NodeDef*> recvs2 = NodesOfOp(parts.at(Cpu(2)), "_Recv");
  REQUIRE(recvs2.size() == 1);
  CHECK(recvs2[0]->attr().at("recv_device").s() == Cpu(2));
  CHECK(recvs1[0]->attr().at("tensor_name").s() != recvs2[0]->attr().at("tensor_name").s());

  std::vector<CrossDeviceCopy> copies = ListCrossDeviceCopies(*graph);
  REQUIRE(copies.size() == 2);
  CHECK(copies[0].tensor == "a:0");
  CHECK(copies[0].src_device == Cpu(0));
  CHECK(copies[0].dst_device == Cpu(1));
  CHECK(copies[0].dtype == DT_FLOAT);
  CHECK(copies[0].consumers == std::vector<std::string>{"i1", "i2"});
  CHECK(copies[1].dst_device == Cpu(2));
  CHECK(copies[1].consumers == std::vector<std::string>{"i3"});
}

TEST_CASE("A control edge across devices becomes dummy Const, Send, Recv and Identity",
          "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(R"(
    node { name: "a" op: "NoOp" device: "/cpu:0" }
    node { name: "b" op: "NoOp" input: "^a" device: "/cpu:1" }
    node { name: "c" op: "NoOp" input: "^a" device: "/cpu:1" }
  )");
  std::map<std::string, GraphDef> parts = Partition(*graph);
  REQUIRE(parts.size() == 2);
  const GraphDef& p0 = parts.at(Cpu(0));
  const GraphDef& p1 = parts.at(Cpu(1));

  const NodeDef& dummy = NodeNamed(p0, "a/_0");
  CHECK(dummy.op() == "Const");
  CHECK(Inputs(dummy) == std::vector<std::string>{"^a"});
  CHECK(dummy.attr().at("dtype").type() == DT_FLOAT);
  const TensorProto& value = dummy.attr().at("value").tensor();
  CHECK(value.dtype() == DT_FLOAT);
  REQUIRE(value.tensor_shape().dim_size() == 1);
  CHECK(value.tensor_shape().dim(0).size() == 0);
  const std::string tensor_name =
      "edge_" + std::to_string(graph->FindNode("b")->in_edges()[0]->id) + "_a";
  const NodeDef& send = NodeNamed(p0, "a/_1");
  CHECK(send.op() == "_Send");
  CHECK(Inputs(send) == std::vector<std::string>{"a/_0"});
  CHECK(send.attr().at("T").type() == DT_FLOAT);
  CheckPairAttrs(send, tensor_name, Cpu(0), Cpu(1));

  const NodeDef& recv = NodeNamed(p1, "a/_2");
  CHECK(recv.op() == "_Recv");
  CHECK(recv.attr().at("tensor_type").type() == DT_FLOAT);
  CheckPairAttrs(recv, tensor_name, Cpu(0), Cpu(1));
  const NodeDef& identity = NodeNamed(p1, "a/_3");
  CHECK(identity.op() == "Identity");
  CHECK(Inputs(identity) == std::vector<std::string>{"a/_2"});
  CHECK(identity.attr().at("T").type() == DT_FLOAT);
  // Both control consumers on CPU:1 share the one pair.
  CHECK(Inputs(NodeNamed(p1, "b")) == std::vector<std::string>{"^a/_3"});
  CHECK(Inputs(NodeNamed(p1, "c")) == std::vector<std::string>{"^a/_3"});
  CHECK(p0.node_size() == 3);
  CHECK(p1.node_size() == 4);
  CHECK(ListCrossDeviceCopies(*graph).empty());
}

TEST_CASE("Four towers with an AddN on CPU:0 need one pair per tensor and device",
          "[graph][partition]") {
  std::shared_ptr<Graph> graph = FourTowers();
  std::map<std::string, GraphDef> parts = Partition(*graph);
  REQUIRE(parts.size() == 4);
  // x goes to CPU:1..3; each tower's product comes back to CPU:0.
  CHECK(NodesOfOp(parts.at(Cpu(0)), "_Send").size() == 3);
  CHECK(NodesOfOp(parts.at(Cpu(0)), "_Recv").size() == 3);
  for (int i = 1; i < 4; ++i) {
    INFO("device " << i);
    CHECK(NodesOfOp(parts.at(Cpu(i)), "_Send").size() == 1);
    CHECK(NodesOfOp(parts.at(Cpu(i)), "_Recv").size() == 1);
    CHECK(parts.at(Cpu(i)).node_size() == 4);  // w, m, Send, Recv
  }
  const NodeDef& sum = NodeNamed(parts.at(Cpu(0)), "sum");
  REQUIRE(sum.input_size() == 4);
  CHECK(sum.input(0) == "tower_0/m");
  for (int i = 1; i < 4; ++i) {
    CHECK(NodeNamed(parts.at(Cpu(0)), sum.input(i)).op() == "_Recv");
  }
  std::vector<CrossDeviceCopy> copies = ListCrossDeviceCopies(*graph);
  CHECK(copies.size() == 6);
}

TEST_CASE("A graph on one device gives one partition without sends or receives",
          "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(std::string(kConstA) + R"(
    node { name: "i" op: "Identity" input: "a" input: "^n" device: "/cpu:0"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "n" op: "NoOp" }
    versions { producer: 27 }
  )");
  std::map<std::string, GraphDef> parts = Partition(*graph);
  REQUIRE(parts.size() == 1);
  const GraphDef& part = parts.at(Cpu(0));
  CHECK(part.node_size() == 3);
  CHECK(NodesOfOp(part, "_Send").empty());
  CHECK(NodesOfOp(part, "_Recv").empty());
  CHECK(Inputs(NodeNamed(part, "i")) == std::vector<std::string>{"a", "^n"});
  CHECK(NodeNamed(part, "n").device() == Cpu(0));
  CHECK(part.versions().producer() == 27);
  CHECK(ListCrossDeviceCopies(*graph).empty());
}

TEST_CASE("Partitioning the same graph twice gives byte-identical GraphDefs",
          "[graph][partition]") {
  std::shared_ptr<Graph> graph = FourTowers();
  std::map<std::string, GraphDef> first = Partition(*graph);
  std::map<std::string, GraphDef> second = Partition(*graph);
  REQUIRE(first.size() == second.size());
  for (const auto& [device, part] : first) {
    INFO(device);
    CHECK(DeterministicBytes(part) == DeterministicBytes(second.at(device)));
  }
}

TEST_CASE("Every partition re-imports as a valid graph", "[graph][partition]") {
  std::shared_ptr<Graph> towers = FourTowers();
  std::unique_ptr<Graph> control = PlacedGraphFromText(std::string(kConstA) + R"(
    node { name: "i" op: "Identity" input: "a" input: "^n" device: "/cpu:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "n" op: "NoOp" device: "/cpu:2" }
  )");
  for (const Graph* graph : {static_cast<const Graph*>(towers.get()),
                             static_cast<const Graph*>(control.get())}) {
    for (const auto& [device, part] : Partition(*graph)) {
      absl::StatusOr<std::unique_ptr<Graph>> back = ImportGraphDef(part);
      INFO(device << ": " << back.status().ToString());
      CHECK(back.ok());
    }
  }
}

TEST_CASE("Partitioning uses the caller's name function and incarnation",
          "[graph][partition]") {
  std::shared_ptr<Graph> graph = TwoDeviceMatMul();
  int counter = 100;
  PartitionOptions options;
  options.new_name = [&counter](const std::string& prefix) {
    return prefix + "/_" + std::to_string(counter++);
  };
  options.send_device_incarnation = 7;
  std::map<std::string, GraphDef> parts = Partition(*graph, options);
  const NodeDef& send = NodeNamed(parts.at(Cpu(0)), "a/_100");
  CHECK(send.attr().at("send_device_incarnation").i() == 7);
  CHECK(NodeNamed(parts.at(Cpu(1)), "a/_101").attr().at("send_device_incarnation").i() == 7);
  CHECK(counter == 104);
}

TEST_CASE("Default copy names skip names the graph already uses", "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(std::string(kConstA) + R"(
    node { name: "a/_0" op: "Identity" input: "a" device: "/cpu:1"
           attr { key: "T" value { type: DT_FLOAT } } }
  )");
  std::map<std::string, GraphDef> parts = Partition(*graph);
  CHECK(NodeNamed(parts.at(Cpu(0)), "a/_1").op() == "_Send");
  CHECK(NodeNamed(parts.at(Cpu(1)), "a/_2").op() == "_Recv");
}

TEST_CASE("Ref edges are never deduplicated and their Recv waits for other inputs",
          "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(R"(
    node { name: "v" op: "VariableV2" device: "/cpu:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "c" op: "Const" device: "/cpu:1"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                                float_val: 1 float_val: 2 } } } }
    node { name: "assign" op: "Assign" input: "v" input: "c" device: "/cpu:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "read" op: "Identity" input: "v" device: "/cpu:1"
           attr { key: "T" value { type: DT_FLOAT } } }
  )");
  std::map<std::string, GraphDef> parts = Partition(*graph);
  const GraphDef& p1 = parts.at(Cpu(1));
  REQUIRE(NodesOfOp(p1, "_Recv").size() == 2);
  CHECK(NodesOfOp(parts.at(Cpu(0)), "_Send").size() == 2);
  const NodeDef& assign = NodeNamed(p1, "assign");
  CHECK(Inputs(NodeNamed(p1, assign.input(0))) == std::vector<std::string>{"^c"});
  const NodeDef& read = NodeNamed(p1, "read");
  CHECK(NodeNamed(p1, read.input(0)).input_size() == 0);
  CHECK(NodeNamed(p1, read.input(0)).attr().at("tensor_type").type() == DT_FLOAT);
  CHECK(ListCrossDeviceCopies(*graph).size() == 2);
}

TEST_CASE("Each partition carries only the library functions it reaches",
          "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(std::string(kConstA) + R"(
    library {
      function {
        signature { name: "Used" input_arg { name: "x" type: DT_FLOAT }
                    output_arg { name: "y" type: DT_FLOAT } }
        node_def { name: "i" op: "Helper" input: "x" }
        ret { key: "y" value: "i:y:0" }
      }
      function {
        signature { name: "Helper" input_arg { name: "x" type: DT_FLOAT }
                    output_arg { name: "y" type: DT_FLOAT } }
        ret { key: "y" value: "x" }
      }
      function {
        signature { name: "Unused" input_arg { name: "x" type: DT_FLOAT }
                    output_arg { name: "y" type: DT_FLOAT } }
        ret { key: "y" value: "x" }
      }
    }
    node { name: "call" op: "Used" input: "a" device: "/cpu:1" }
  )");
  std::map<std::string, GraphDef> parts = Partition(*graph);
  CHECK(parts.at(Cpu(0)).library().function_size() == 0);
  const FunctionDefLibrary& library = parts.at(Cpu(1)).library();
  REQUIRE(library.function_size() == 2);
  CHECK(library.function(0).signature().name() == "Used");
  CHECK(library.function(1).signature().name() == "Helper");
}

TEST_CASE("Partitioning an unplaced node is an error naming it", "[graph][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraphFromText(kConstA);
  graph->FindNode("a")->set_assigned_device("");
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph({}, *graph);
  REQUIRE(parts.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(testing::StatusText(parts.status()), Catch::Contains("'a'"));
}

}  // namespace
}  // namespace dflow
