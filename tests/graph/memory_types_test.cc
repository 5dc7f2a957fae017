// Memory types (graph/memory_types.h) and partition rule 8: HostMemory args cross
// devices through _HostSend/_HostRecv, deduplicated separately from device-memory copies.
#include "graph/memory_types.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "graph/device_name.h"
#include "graph/graph_def_import.h"
#include "graph/partition.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

// GPU kernels of Reshape keep `shape`, of Shape `output`, in host memory (TF's HostMemory).
class FakeGpuKernels final : public KernelSupport {
 public:
  std::vector<std::string> SupportedDeviceTypes(const NodeDef&) const override {
    return {"CPU", "GPU"};
  }
  std::string DescribeKernels(absl::string_view) const override { return ""; }
  std::vector<std::string> HostMemoryArgs(const NodeDef& node,
                                          absl::string_view device_type) const override {
    if (device_type != "GPU") return {};
    if (node.op() == "Reshape") return {"shape"};
    if (node.op() == "Shape") return {"output"};
    return {};
  }
};

std::unique_ptr<Graph> PlacedGraph() {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(testing::GraphFromText(R"pb(
    node { name: "x" op: "Placeholder" device: "/cpu:0"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "shape" op: "Const" device: "/cpu:0"
           attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                                int_val: 3 int_val: 2 } } } }
    node { name: "r" op: "Reshape" input: "x" input: "shape" device: "/gpu:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
    node { name: "shape_on_gpu" op: "Identity" input: "shape" device: "/gpu:0"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "s" op: "Shape" input: "r" device: "/gpu:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
    node { name: "n" op: "Neg" input: "s" device: "/cpu:0" attr { key: "T" value { type: DT_INT32 } } }
  )pb"));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) {
    absl::StatusOr<DeviceName> spec = ParseDeviceName(node->requested_device());
    REQUIRE(spec.ok());
    node->set_assigned_device(FullDeviceName(*spec->type, *spec->id));
  }
  return *std::move(graph);
}

std::vector<std::string> OpsOf(const GraphDef& graph, const std::string& prefix) {
  std::vector<std::string> ops;
  for (const NodeDef& node : graph.node()) {
    if (node.op().rfind(prefix, 0) == 0) ops.push_back(node.op() + " " + node.name());
  }
  return ops;
}

TEST_CASE("Host memory types come from the kernel chosen on the node's device",
          "[memory_types]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  FakeGpuKernels kernels;
  MemoryTypes reshape = HostMemoryTypes(kernels, *graph->FindNode("r"));
  CHECK(reshape.host_inputs == std::vector<bool>{false, true});
  CHECK(reshape.host_outputs == std::vector<bool>{false});
  MemoryTypes shape = HostMemoryTypes(kernels, *graph->FindNode("s"));
  CHECK(shape.host_outputs == std::vector<bool>{true});
  MemoryTypes neg = HostMemoryTypes(kernels, *graph->FindNode("n"));  // on the CPU
  CHECK(neg.host_inputs == std::vector<bool>{false});
}

TEST_CASE("Partition rule 8: HostMemory edges use _HostSend/_HostRecv, deduped apart",
          "[memory_types][partition]") {
  std::unique_ptr<Graph> graph = PlacedGraph();
  FakeGpuKernels kernels;
  PartitionOptions options;
  options.kernels = &kernels;
  absl::StatusOr<std::map<std::string, GraphDef>> parts = PartitionGraph(options, *graph);
  REQUIRE(parts.ok());
  const GraphDef& gpu = parts->at(FullDeviceName("GPU", 0));
  const GraphDef& cpu = parts->at(FullDeviceName("CPU", 0));
  // x and shape (for Identity, device memory) arrive by _Recv; shape for Reshape by
  // _HostRecv: the same tensor twice, once per memory type.
  CHECK(OpsOf(gpu, "_Recv").size() == 2);
  CHECK(OpsOf(gpu, "_HostRecv").size() == 1);
  CHECK(OpsOf(gpu, "_HostSend").size() == 1);  // Shape's output
  CHECK(OpsOf(cpu, "_Send").size() == 3);  // x, shape for _Recv, shape for _HostRecv
  CHECK(OpsOf(cpu, "_Recv").size() == 1);

  // Without kernels every edge is device memory.
  absl::StatusOr<std::map<std::string, GraphDef>> plain = PartitionGraph({}, *graph);
  REQUIRE(plain.ok());
  CHECK(OpsOf(plain->at(FullDeviceName("GPU", 0)), "_Host").empty());
  CHECK(OpsOf(plain->at(FullDeviceName("GPU", 0)), "_Recv").size() == 2);
}

}  // namespace
}  // namespace dflow
