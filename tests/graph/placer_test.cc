// Tests for the placer (graph/placer.h): TF 1.x placement rules, error texts, log lines
// and the reason recorded for every node. Devices and kernels are fakes, so nothing here
// touches runtime/.
#include "graph/placer.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/device_name.h"
#include "graph/graph_def_import.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using ::dflow::testing::GraphFromText;
using ::dflow::testing::ReadCorpusText;

std::string Cpu(int id) { return FullDeviceName("CPU", id); }
std::string Gpu(int id) { return FullDeviceName("GPU", id); }

DeviceAttributes Device(const std::string& type, int id) {
  DeviceAttributes device;
  device.set_name(FullDeviceName(type, id));
  device.set_device_type(type);
  return device;
}

// CPU:0..cpus-1 then GPU:0..gpus-1, in DirectSession's device order.
std::vector<DeviceAttributes> Devices(int cpus, int gpus) {
  std::vector<DeviceAttributes> devices;
  for (int i = 0; i < cpus; ++i) devices.push_back(Device("CPU", i));
  for (int i = 0; i < gpus; ++i) devices.push_back(Device("GPU", i));
  return devices;
}

// Every op has a CPU kernel, ops in `gpu` also a GPU kernel; ops in `gpu_only` have only
// a GPU kernel and ops in `none` no kernel at all.
class FakeKernels : public KernelSupport {
 public:
  std::set<std::string> gpu = {"Add",        "AddN",        "Assign",  "Const",
                               "Identity",   "MatMul",      "NoOp",    "Placeholder",
                               "Rank",       "ReadVariableOp", "Shape", "Size",
                               "VarHandleOp", "VariableV2"};
  std::set<std::string> gpu_only;
  std::set<std::string> none;

  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node) const override {
    std::vector<std::string> types;
    if (none.count(node.op()) > 0) return types;
    if (gpu_only.count(node.op()) == 0) types.push_back("CPU");
    if (gpu.count(node.op()) > 0 || gpu_only.count(node.op()) > 0) types.push_back("GPU");
    return types;
  }

  std::string DescribeKernels(absl::string_view op) const override {
    std::string text;
    for (const std::string& type : SupportedDeviceTypes(NodeDefFor(op))) {
      absl::StrAppend(&text, "  device='", type, "'\n");
    }
    return text.empty() ? "  <no registered kernels>\n" : text;
  }

 private:
  static NodeDef NodeDefFor(absl::string_view op) {
    NodeDef def;
    def.set_op(std::string(op));
    return def;
  }
};

absl::StatusOr<PlacementResult> Place(Graph* graph, const PlacementOptions& options = {},
                                      const std::vector<DeviceAttributes>& devices =
                                          Devices(1, 2),
                                      const FakeKernels& kernels = FakeKernels()) {
  return PlaceGraph(options, devices, kernels, graph);
}

PlacementResult PlaceOrFail(Graph* graph, const PlacementOptions& options = {},
                            const std::vector<DeviceAttributes>& devices = Devices(1, 2),
                            const FakeKernels& kernels = FakeKernels()) {
  absl::StatusOr<PlacementResult> result = Place(graph, options, devices, kernels);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return *std::move(result);
}

std::unique_ptr<Graph> ImportOrFail(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(GraphFromText(text));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  return *std::move(graph);
}

const PlacementDecision& Decision(const PlacementResult& result, const std::string& node) {
  for (const PlacementDecision& decision : result.decisions) {
    if (decision.node == node) return decision;
  }
  FAIL("no decision for node " << node);
  return result.decisions.front();  // not reached
}

std::string DeviceOf(const PlacementResult& result, const std::string& node) {
  return Decision(result, node).device;
}

std::string ReasonOf(const PlacementResult& result, const std::string& node) {
  return Decision(result, node).reason;
}

std::string ErrorOf(const absl::StatusOr<PlacementResult>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

// Two constants multiplied: a, b (Const) -> c (MatMul), `c` requesting `device`.
Scope MatMulGraph(const std::string& device = "") {
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f}, {3.f, 4.f}});
  Output b = Const(root.WithOpName("b"), {{1.f, 0.f}, {0.f, 1.f}});
  MatMul(root.WithOpName("c").WithDevice(device), a, b);
  REQUIRE(root.ok());
  return root;
}

constexpr char kVariableGraph[] = R"pb(
  node {
    name: "v"
    op: "VariableV2"
    device: "/gpu:1"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape {} } }
  }
  node {
    name: "init"
    op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } }
  }
  node {
    name: "assign"
    op: "Assign"
    input: "v"
    input: "init"
    device: "/cpu:0"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node {
    name: "read"
    op: "Identity"
    input: "v"
    attr { key: "T" value { type: DT_FLOAT } }
    attr { key: "_class" value { list { s: "loc:@v" } } }
  }
)pb";

// ---- Defaults and fallbacks -----------------------------------------------------------

TEST_CASE("Placer puts ops with a GPU kernel on GPU:0 by default", "[graph][placer]") {
  Scope root = MatMulGraph();
  PlacementResult result = PlaceOrFail(root.graph());
  CHECK(DeviceOf(result, "c") == Gpu(0));
  CHECK(ReasonOf(result, "c") ==
        "default: highest-priority device with a kernel (GPU before CPU)");
  CHECK(root.graph()->FindNode("c")->assigned_device() == Gpu(0));
}

TEST_CASE("Placer falls back to CPU for ops without a GPU kernel, without soft placement",
          "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithOpName("x"), {4.f, 9.f});
  Sqrt(root.WithOpName("root"), x);
  REQUIRE(root.ok());
  PlacementResult result = PlaceOrFail(root.graph());
  CHECK(DeviceOf(result, "root") == Cpu(0));
  CHECK(ReasonOf(result, "root") == "no GPU kernel for op 'Sqrt'; fell back to CPU");
}

TEST_CASE("Placer uses the CPU when there is no GPU", "[graph][placer]") {
  Scope root = MatMulGraph();
  PlacementResult result = PlaceOrFail(root.graph(), {}, Devices(1, 0));
  CHECK(DeviceOf(result, "c") == Cpu(0));
  CHECK(DeviceOf(result, "a") == Cpu(0));
  CHECK(ReasonOf(result, "c") ==
        "default: highest-priority device with a kernel (GPU before CPU)");
}

// ---- Requested devices ------------------------------------------------------------------

TEST_CASE("Placer honours an explicit device in every spelling", "[graph][placer]") {
  const std::string spelling = GENERATE(
      "/gpu:1", "/GPU:1", "GPU:1", "gpu:1", "/device:GPU:1", "/device:gpu:1",
      "device:GPU:1", "/job:localhost/replica:0/task:0/device:GPU:1",
      "/job:localhost/replica:0/task:0/gpu:1");
  Scope root = MatMulGraph(spelling);
  PlacementResult result = PlaceOrFail(root.graph());
  INFO(spelling);
  CHECK(DeviceOf(result, "c") == Gpu(1));
  CHECK(ReasonOf(result, "c") == absl::StrCat("requested '", spelling, "'"));
}

TEST_CASE("Placer resolves partial specs to the best matching device with a kernel",
          "[graph][placer]") {
  SECTION("any GPU") {
    Scope root = MatMulGraph("/device:GPU:*");
    PlacementResult result = PlaceOrFail(root.graph(), {}, Devices(1, 4));
    CHECK(DeviceOf(result, "c") == Gpu(0));
    CHECK(ReasonOf(result, "c") ==
          "requested '/device:GPU:*'; first of 4 matching devices by type priority, then "
          "name");
  }
  SECTION("any CPU") {
    Scope root = MatMulGraph("/device:CPU:*");
    PlacementResult result = PlaceOrFail(root.graph(), {}, Devices(2, 2));
    CHECK(DeviceOf(result, "c") == Cpu(0));
  }
  SECTION("only a job: GPU for a GPU op") {
    Scope root = MatMulGraph("/job:localhost");
    CHECK(DeviceOf(PlaceOrFail(root.graph()), "c") == Gpu(0));
  }
  SECTION("only a job: CPU for a CPU-only op, without soft placement") {
    Scope root = Scope::NewRootScope();
    Sqrt(root.WithOpName("s").WithDevice("/job:localhost/replica:0"), {1.f});
    PlacementResult result = PlaceOrFail(root.graph());
    CHECK(DeviceOf(result, "s") == Cpu(0));
    CHECK(ReasonOf(result, "s") ==
          "requested '/job:localhost/replica:0'; no GPU kernel for op 'Sqrt'; fell back to "
          "CPU");
  }
}

TEST_CASE("Placer places TF's partial-device-name graph", "[graph][placer]") {
  std::unique_ptr<Graph> graph =
      ImportOrFail(ReadCorpusText("pbtxt/tf_mlir_partial_device_name.pbtxt"));
  PlacementResult result = PlaceOrFail(graph.get(), {}, Devices(2, 1));
  CHECK(DeviceOf(result, "Add") == Gpu(0));  // "/job:localhost/replica:0/task:0"
  CHECK(DeviceOf(result, "Mul") == Cpu(0));  // no Mul GPU kernel in the fake
  CHECK(DeviceOf(result, "Sub") == Cpu(1));  // fully specified
  CHECK(DeviceOf(result, "input0") == Gpu(0));  // its only consumer is Add
  CHECK(ReasonOf(result, "input0") == "generator placed with its consumers");
}

TEST_CASE("Placer uses a second CPU only when asked", "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithOpName("x"), {4.f});
  Sqrt(root.WithOpName("on_cpu1").WithDevice("/cpu:1"), x);
  Sqrt(root.WithOpName("anywhere"), x);
  REQUIRE(root.ok());
  PlacementResult result = PlaceOrFail(root.graph(), {}, Devices(2, 0));
  CHECK(DeviceOf(result, "on_cpu1") == Cpu(1));
  CHECK(DeviceOf(result, "anywhere") == Cpu(0));
  CHECK(DeviceOf(result, "x") == Cpu(0));  // consumers disagree: candidates[0]
}

TEST_CASE("Placer sorts same-type devices by name, so GPU:10 comes before GPU:2",
          "[graph][placer]") {
  Scope root = MatMulGraph("/device:GPU:*");
  std::vector<DeviceAttributes> devices = {Device("CPU", 0), Device("GPU", 2),
                                           Device("GPU", 10)};
  PlacementResult result = PlaceOrFail(root.graph(), {}, devices);
  CHECK(DeviceOf(result, "c") == Gpu(10));
}

TEST_CASE("Placer reports a device that does not exist with TF's text and the devices",
          "[graph][placer]") {
  Scope root = MatMulGraph("/gpu:2");
  const std::string error = ErrorOf(Place(root.graph()));
  CHECK_THAT(error, Catch::StartsWith("Cannot assign a device for operation c: Could not "
                                      "satisfy explicit device specification '/gpu:2'"));
  CHECK_THAT(error, Catch::Contains(absl::StrCat(
                        "{{node c}} was explicitly assigned to /gpu:2 but available devices "
                        "are [ ", Cpu(0), ", ", Gpu(0), ", ", Gpu(1),
                        " ]. Make sure the device specification refers to a valid device.")));
  CHECK_THAT(error, Catch::Contains("Hint: set allow_soft_placement"));
  CHECK_THAT(error, Catch::EndsWith("\n\t [[c]]"));
  CHECK(root.graph()->FindNode("c")->assigned_device().empty());  // graph untouched
}

TEST_CASE("Placer says when a requested GPU is missing because there is no GPU",
          "[graph][placer]") {
  Scope root = MatMulGraph("/device:GPU:0");
  const std::string error = ErrorOf(Place(root.graph(), {}, Devices(1, 0)));
  CHECK_THAT(error, Catch::Contains("The requested device appears to be a GPU, but"));
}

TEST_CASE("Soft placement moves a node whose requested device does not exist",
          "[graph][placer]") {
  Scope root = MatMulGraph("/gpu:2");
  PlacementOptions options;
  options.allow_soft_placement = true;
  PlacementResult result = PlaceOrFail(root.graph(), options);
  CHECK(DeviceOf(result, "c") == Gpu(0));
  CHECK(ReasonOf(result, "c") ==
        "soft placement: requested '/gpu:2' does not exist; fell back to GPU:0");
}

TEST_CASE("Soft placement cannot fix a job that does not exist", "[graph][placer]") {
  Scope root = MatMulGraph("/job:worker/device:GPU:0");
  PlacementOptions options;
  options.allow_soft_placement = true;
  const std::string error = ErrorOf(Place(root.graph(), options));
  CHECK_THAT(error, Catch::Contains("was explicitly assigned to /job:worker/device:GPU:0 but "
                                    "available devices are ["));
  CHECK_THAT(error, !Catch::Contains("Hint:"));
}

TEST_CASE("Placer rejects a requested device type without a kernel for the op",
          "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Sqrt(root.WithOpName("s").WithDevice("/device:GPU:0"), {1.f});
  REQUIRE(root.ok());

  SECTION("an error without soft placement") {
    const std::string error = ErrorOf(Place(root.graph()));
    CHECK_THAT(error, Catch::StartsWith(
                          "Cannot assign a device for operation s: Could not satisfy explicit "
                          "device specification '/device:GPU:0' because no supported kernel "
                          "for GPU devices is available.\nColocation Debug Info:\n"));
    CHECK_THAT(error, Catch::Contains("supported_device_types_=[CPU]"));
    CHECK_THAT(error, Catch::Contains("\nSqrt: CPU \n"));
    CHECK_THAT(error, Catch::Contains("\n  s (Sqrt) /device:GPU:0\n"));
    CHECK_THAT(error, Catch::Contains("\nOp: Sqrt\nNode attrs: T=DT_FLOAT\n"
                                      "Registered kernels:\n  device='CPU'\n"));
    CHECK_THAT(error, Catch::Contains("Hint: no GPU kernel for op 'Sqrt'"));
    CHECK_THAT(error, Catch::EndsWith("\n\t [[{{node s}}]]"));
  }
  SECTION("a CPU fallback with soft placement") {
    PlacementOptions options;
    options.allow_soft_placement = true;
    PlacementResult result = PlaceOrFail(root.graph(), options);
    CHECK(DeviceOf(result, "s") == Cpu(0));
    CHECK(ReasonOf(result, "s") ==
          "soft placement: requested '/device:GPU:0' is unusable: no GPU kernel for op "
          "'Sqrt'; fell back to CPU:0");
  }
}

TEST_CASE("Placer reports a typeless spec whose devices lack kernels with TF's text",
          "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Sqrt(root.WithOpName("s").WithDevice("/device:*:1"), {1.f});
  REQUIRE(root.ok());
  const std::string error = ErrorOf(Place(root.graph()));
  // TF never closes this quote.
  CHECK_THAT(error, Catch::StartsWith("Cannot assign a device for operation s: Could not "
                                      "satisfy explicit device specification "
                                      "'/device:*:1\nColocation Debug Info:"));
}

TEST_CASE("Placer reports ops with no kernel on any device with TF's text",
          "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Sqrt(root.WithOpName("s"), {1.f});
  REQUIRE(root.ok());
  FakeKernels kernels;
  kernels.none = {"Sqrt"};
  PlacementOptions options;
  options.allow_soft_placement = GENERATE(false, true);
  const std::string error = ErrorOf(Place(root.graph(), options, Devices(1, 1), kernels));
  CHECK(error ==
        "No OpKernel was registered to support Op 'Sqrt' used by {{node s}}with these "
        "attrs: [T=DT_FLOAT]\nRegistered devices: [CPU, GPU]\nRegistered kernels:\n"
        "  <no registered kernels>\n\n\t [[s]]");
}

TEST_CASE("Placer rejects malformed device specifications", "[graph][placer]") {
  Scope root = MatMulGraph();
  root.graph()->FindNode("c")->mutable_def()->set_device("/gpu:x");
  const std::string error = ErrorOf(Place(root.graph()));
  CHECK_THAT(error,
             Catch::StartsWith("Malformed device specification '/gpu:x' in node: c (MatMul)"));
  CHECK_THAT(error, Catch::EndsWith("[[{{node c}}]]"));
}

TEST_CASE("Placer rejects bad device lists and pre-assigned devices it does not know",
          "[graph][placer]") {
  Scope root = MatMulGraph();
  SECTION("a device list entry that is not a full name") {
    DeviceAttributes bad;
    bad.set_name("/gpu:0");
    bad.set_device_type("GPU");
    CHECK_THAT(ErrorOf(Place(root.graph(), {}, {bad})),
               Catch::Contains("'/gpu:0', which is not a full device name"));
  }
  SECTION("no devices at all") {
    CHECK_THAT(ErrorOf(Place(root.graph(), {}, {})), Catch::Contains("no devices"));
  }
  SECTION("an assigned device outside the device list") {
    root.graph()->FindNode("c")->set_assigned_device(Gpu(7));
    CHECK_THAT(ErrorOf(Place(root.graph())),
               Catch::Contains(absl::StrCat("Assigned device '", Gpu(7),
                                            "' does not match any device")));
  }
  SECTION("an assigned device without a kernel for the op") {
    Scope sqrt_root = Scope::NewRootScope();
    Sqrt(sqrt_root.WithOpName("s"), {1.f});
    sqrt_root.graph()->FindNode("s")->set_assigned_device(Gpu(0));
    CHECK_THAT(ErrorOf(Place(sqrt_root.graph())),
               Catch::Contains("does not have registered OpKernel support for Sqrt"));
  }
}

// ---- Colocation -------------------------------------------------------------------------

TEST_CASE("Placer puts a _class group on the device one member requested",
          "[graph][placer]") {
  Scope root = MatMulGraph("/gpu:1");
  Operation c(root.graph()->FindNode("c"));
  Identity(root.WithOpName("follower").ColocateWith(c), Output(c.node));
  REQUIRE(root.ok());
  PlacementResult result = PlaceOrFail(root.graph());
  CHECK(DeviceOf(result, "follower") == Gpu(1));
  CHECK(ReasonOf(result, "follower") == "colocated with 'c' (_class loc:@c)");
}

TEST_CASE("Placer keeps a _class group on a device type every member supports",
          "[graph][placer]") {
  Scope root = MatMulGraph();
  Operation c(root.graph()->FindNode("c"));
  Sqrt(root.WithOpName("cpu_only").ColocateWith(c), Output(c.node));
  REQUIRE(root.ok());
  PlacementResult result = PlaceOrFail(root.graph());
  CHECK(DeviceOf(result, "c") == Cpu(0));
  CHECK(ReasonOf(result, "c") ==
        "no GPU kernel for colocated node 'cpu_only' (op 'Sqrt'); fell back to CPU");
  CHECK(DeviceOf(result, "cpu_only") == Cpu(0));
}

TEST_CASE("A node named by another node's _class joins that node's group",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(R"pb(
    node {
      name: "first"
      op: "NoOp"
      device: "/gpu:1"
      attr { key: "_class" value { list { s: "loc:@second" s: "other" } } }
    }
    node { name: "second" op: "NoOp" }
  )pb");
  PlacementResult result = PlaceOrFail(graph.get());
  CHECK(DeviceOf(result, "second") == Gpu(1));
  CHECK(ReasonOf(result, "second") == "colocated with 'first' ('first' has _class loc:@second)");
}

TEST_CASE("Placer reports colocation conflicts unless soft placement is on",
          "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Operation a = NoOp(root.WithOpName("a").WithDevice("/device:GPU:0"));
  NoOp(root.WithOpName("b").WithDevice("/device:CPU:0").ColocateWith(a));
  REQUIRE(root.ok());

  SECTION("an error without soft placement") {
    const std::string error = ErrorOf(Place(root.graph()));
    CHECK_THAT(error, Catch::StartsWith(
                          "Cannot colocate nodes {{colocation_node b}} and {{colocation_node "
                          "a}}: Cannot merge devices with incompatible types: "
                          "'/device:CPU:0' and '/device:GPU:0'"));
    CHECK_THAT(error, Catch::Contains("\nHint: remove one of the conflicting device requests, "
                                      "or set allow_soft_placement to relax the colocation."));
    CHECK_THAT(error, Catch::EndsWith("\n\t [[{{node b}}]]"));
  }
  SECTION("soft placement drops the conflicting types and keeps the group") {
    PlacementOptions options;
    options.allow_soft_placement = true;
    PlacementResult result = PlaceOrFail(root.graph(), options);
    CHECK(DeviceOf(result, "a") == Gpu(0));
    CHECK(DeviceOf(result, "b") == Gpu(0));
    CHECK_THAT(ReasonOf(result, "b"), Catch::StartsWith("colocated with 'a' (_class loc:@a)"));
    CHECK_THAT(ReasonOf(result, "b"),
               Catch::Contains("soft placement dropped the conflicting device type/id"));
  }
}

TEST_CASE("Placer reports colocated nodes with no common device type unless soft placement "
          "is on",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(R"pb(
    node { name: "a" op: "Sqrt" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node {
      name: "x"
      op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 4 } } }
    }
    node {
      name: "b"
      op: "MatMul"
      input: "y"
      input: "y"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "_class" value { list { s: "loc:@a" } } }
    }
    node {
      name: "y"
      op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr {
        key: "value"
        value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } }
                         float_val: 1 } }
      }
    }
  )pb");
  FakeKernels gpu_matmul;
  gpu_matmul.gpu_only = {"MatMul"};

  SECTION("an error without soft placement") {
    const std::string error = ErrorOf(Place(graph.get(), {}, Devices(1, 1), gpu_matmul));
    CHECK_THAT(error, Catch::StartsWith(
                          "Cannot colocate nodes {{colocation_node b}} and {{colocation_node "
                          "a}} because no device type supports both of those nodes and the "
                          "other nodes colocated with them.\nColocation Debug Info:"));
  }
  SECTION("soft placement ignores the colocation and logs it") {
    PlacementOptions options;
    options.allow_soft_placement = true;
    options.log_device_placement = true;
    PlacementResult result = PlaceOrFail(graph.get(), options, Devices(1, 1), gpu_matmul);
    CHECK(DeviceOf(result, "a") == Cpu(0));
    CHECK(DeviceOf(result, "b") == Gpu(0));
    REQUIRE_FALSE(result.log_lines.empty());
    CHECK_THAT(result.log_lines[0],
               Catch::StartsWith("Ignoring request to colocate node 'b' with nodes in "
                                 "colocation group 'a' because soft placement is on and an "
                                 "attempt at doing so resulted in the following error: "
                                 "INVALID_ARGUMENT: Cannot colocate nodes"));
    CHECK_THAT(ReasonOf(result, "b"),
               Catch::EndsWith("; soft placement ignored its colocation with group 'a'"));
  }
}

TEST_CASE("Placer names the group's request when a colocated node cannot satisfy it",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(R"pb(
    node { name: "cpu_only" op: "Sqrt" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node {
      name: "x"
      op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 4 } } }
    }
    node {
      name: "pinned"
      op: "NoOp"
      device: "/device:GPU:0"
      attr { key: "_class" value { list { s: "loc:@cpu_only" } } }
    }
  )pb");
  const std::string error = ErrorOf(Place(graph.get()));
  CHECK_THAT(error, Catch::StartsWith(absl::StrCat(
                        "Cannot assign a device for operation cpu_only: Could not satisfy "
                        "explicit device specification '' because the node {{colocation_node "
                        "cpu_only}} was colocated with a group of nodes that required "
                        "incompatible device '/device:GPU:0'. All available devices [",
                        Cpu(0), ", ", Gpu(0), ", ", Gpu(1), "]. \nColocation Debug Info:")));
  CHECK_THAT(error, Catch::Contains("\n  pinned (NoOp) /device:GPU:0"));
}

// ---- Reference and resource edges -------------------------------------------------------

TEST_CASE("Placer keeps reference-edge neighbours on the variable's device",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(kVariableGraph);
  PlacementOptions options;
  options.log_device_placement = true;
  PlacementResult result = PlaceOrFail(graph.get(), options);
  CHECK(DeviceOf(result, "v") == Gpu(1));
  CHECK(ReasonOf(result, "v") == "requested '/gpu:1'");
  CHECK(DeviceOf(result, "assign") == Gpu(1));  // its "/cpu:0" is silently replaced
  CHECK(ReasonOf(result, "assign") ==
        "colocated with 'v' (reference input from 'v'); request '/device:CPU:0' ignored: "
        "the reference input from 'v' requires '/device:GPU:1'");
  CHECK(DeviceOf(result, "read") == Gpu(1));
  CHECK(ReasonOf(result, "read") == "colocated with 'v' (_class loc:@v)");
  CHECK(DeviceOf(result, "init") == Gpu(1));
  CHECK(result.log_lines ==
        std::vector<std::string>{
            "Ignoring device specification /device:CPU:0 for node 'assign' because the "
            "input edge from 'v' is a reference connection and already has a device field "
            "set to /device:GPU:1",
            "v: (VariableV2): " + Gpu(1), "assign: (Assign): " + Gpu(1),
            "read: (Identity): " + Gpu(1), "init: (Const): " + Gpu(1)});
}

TEST_CASE("Placer ignores a reference edge's device conflict even without soft placement",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(kVariableGraph);
  PlacementResult result = PlaceOrFail(graph.get());
  CHECK(DeviceOf(result, "assign") == Gpu(1));
  CHECK(result.log_lines.empty());
}

TEST_CASE("Placer keeps a resource handle and its readers together", "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(R"pb(
    node {
      name: "h"
      op: "VarHandleOp"
      device: "/device:GPU:1"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape {} } }
    }
    node {
      name: "r"
      op: "ReadVariableOp"
      input: "h"
      attr { key: "dtype" value { type: DT_FLOAT } }
    }
  )pb");
  PlacementResult result = PlaceOrFail(graph.get());
  CHECK(DeviceOf(result, "r") == Gpu(1));
  CHECK(ReasonOf(result, "r") == "colocation group requires '/device:GPU:1'");
  CHECK(DeviceOf(result, "h") == Gpu(1));  // a generator, placed second
  CHECK(ReasonOf(result, "h") == "colocated with 'r' (resource edge to 'r')");
}

TEST_CASE("Placer rejects a reference edge between incompatible resource devices",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(R"pb(
    node {
      name: "v1"
      op: "VariableV2"
      device: "/gpu:0"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape {} } }
    }
    node {
      name: "v2"
      op: "VariableV2"
      device: "/cpu:0"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape {} } }
    }
    node {
      name: "m"
      op: "RefMerge"
      input: "v1"
      input: "v2"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "N" value { i: 2 } }
    }
  )pb");
  PlacementOptions options;
  options.allow_soft_placement = GENERATE(false, true);
  CHECK(ErrorOf(Place(graph.get(), options)) ==
        "Cannot place the graph because a reference or resource edge connects colocation "
        "groups with incompatible resource devices: /device:CPU:0 vs /device:GPU:0. The "
        "edge src node is v2 , and the dst node is m");
}

TEST_CASE("Placer rejects a reference edge between nodes with no common device type",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(kVariableGraph);
  FakeKernels kernels;
  kernels.gpu_only = {"VariableV2"};
  kernels.gpu.erase("Assign");
  const std::string error = ErrorOf(Place(graph.get(), {}, Devices(1, 2), kernels));
  CHECK_THAT(error, Catch::StartsWith(
                        "Nodes were connected by a reference connection (requiring them to be "
                        "on the same device), but the two nodes were assigned two different "
                        "devices: Cannot colocate nodes {{colocation_node v}} and "
                        "{{colocation_node assign}} because no device type supports both"));
  CHECK_THAT(error, Catch::EndsWith("[[{{node assign}}]]"));
}

TEST_CASE("Soft placement moves a resource whose users have no kernel on its device",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(kVariableGraph);
  FakeKernels kernels;
  kernels.gpu.erase("Assign");

  SECTION("an error without soft placement, naming the node without the kernel") {
    const std::string error = ErrorOf(Place(graph.get(), {}, Devices(1, 2), kernels));
    CHECK_THAT(error, Catch::StartsWith(
                          "Cannot assign a device for operation v: Could not satisfy explicit "
                          "device specification '/gpu:1' because no supported kernel for GPU "
                          "devices is available."));
    CHECK_THAT(error, Catch::Contains("Hint: no GPU kernel for colocated node 'assign' (op "
                                      "'Assign')"));
  }
  SECTION("soft placement moves the whole group to CPU and warns") {
    PlacementOptions options;
    options.allow_soft_placement = true;
    PlacementResult result = PlaceOrFail(graph.get(), options, Devices(1, 2), kernels);
    for (const char* node : {"v", "assign", "read", "init"}) {
      INFO(node);
      CHECK(DeviceOf(result, node) == Cpu(0));
    }
    CHECK(ReasonOf(result, "v") ==
          "soft placement: requested '/gpu:1' is unusable: no GPU kernel for colocated node "
          "'assign' (op 'Assign'); moved off resource device '/device:GPU:1'; fell back to "
          "CPU:0");
    REQUIRE(result.log_lines.size() == 1);  // the warning is logged either way
    CHECK_THAT(result.log_lines[0],
               Catch::StartsWith("Failed to place the graph without changing the devices of "
                                 "some resources."));
  }
}

TEST_CASE("Placer lets a library function call run on any device type", "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(R"pb(
    library {
      function {
        signature {
          name: "Seven"
          output_arg { name: "y" type: DT_FLOAT }
        }
        node_def {
          name: "c"
          op: "Const"
          attr { key: "dtype" value { type: DT_FLOAT } }
          attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 7 } } }
        }
        ret { key: "y" value: "c:output:0" }
      }
    }
    node { name: "call" op: "Seven" }
  )pb");
  FakeKernels kernels;
  kernels.none = {"Seven"};  // never asked: function calls have no kernels
  PlacementResult result = PlaceOrFail(graph.get(), {}, Devices(1, 1), kernels);
  CHECK(DeviceOf(result, "call") == Gpu(0));
}

// ---- Heuristics ---------------------------------------------------------------------------

TEST_CASE("Metadata ops follow their input's device", "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithOpName("x"), {4.f, 9.f});
  Output on_cpu = Sqrt(root.WithOpName("on_cpu"), x);
  Output on_gpu = Identity(root.WithOpName("on_gpu").WithDevice("/gpu:1"), x);
  Shape(root.WithOpName("shape_cpu"), on_cpu);
  Size(root.WithOpName("size_gpu"), on_gpu);
  Rank(root.WithOpName("rank_cpu"), on_cpu);
  REQUIRE(root.ok());
  PlacementResult result = PlaceOrFail(root.graph());
  CHECK(DeviceOf(result, "shape_cpu") == Cpu(0));
  CHECK(ReasonOf(result, "shape_cpu") ==
        "metadata op follows its input's device (input 'on_cpu')");
  CHECK(DeviceOf(result, "size_gpu") == Gpu(1));
  CHECK(DeviceOf(result, "rank_cpu") == Cpu(0));
}

TEST_CASE("Generators are placed with their consumers when they agree", "[graph][placer]") {
  Scope root = Scope::NewRootScope();
  Output to_cpu = Const(root.WithOpName("to_cpu"), {4.f});
  Output shared = Const(root.WithOpName("shared"), {4.f});
  Const(root.WithOpName("unused"), {4.f});
  Sqrt(root.WithOpName("cpu_op"), to_cpu);
  Sqrt(root.WithOpName("cpu_op2"), shared);
  Identity(root.WithOpName("gpu_op"), shared);
  REQUIRE(root.ok());
  PlacementResult result = PlaceOrFail(root.graph());
  CHECK(DeviceOf(result, "to_cpu") == Cpu(0));
  CHECK(ReasonOf(result, "to_cpu") == "generator placed with its consumers");
  CHECK(DeviceOf(result, "shared") == Gpu(0));
  CHECK(ReasonOf(result, "shared") ==
        "default: highest-priority device with a kernel (GPU before CPU)");
  CHECK(DeviceOf(result, "unused") == Gpu(0));
}

// ---- Pre-assigned nodes, logging, reasons, determinism -----------------------------------

TEST_CASE("Placer keeps already-assigned nodes and pins their group", "[graph][placer]") {
  Scope root = MatMulGraph();
  Operation c(root.graph()->FindNode("c"));
  Identity(root.WithOpName("follower").ColocateWith(c), Output(c.node));
  REQUIRE(root.ok());
  root.graph()->FindNode("c")->set_assigned_device(Gpu(1));
  PlacementOptions options;
  options.log_device_placement = true;
  PlacementResult result = PlaceOrFail(root.graph(), options);
  CHECK(DeviceOf(result, "c") == Gpu(1));
  CHECK(ReasonOf(result, "c") == "assigned before placement; kept");
  CHECK(DeviceOf(result, "follower") == Gpu(1));
  CHECK(ReasonOf(result, "follower") == "colocated with 'c' (_class loc:@c)");
  CHECK(DeviceOf(result, "a") == Gpu(1));  // its consumer is on GPU:1
  CHECK(result.log_lines.front() == "c: (MatMul): " + Gpu(1));  // kept nodes are logged
}

TEST_CASE("Placer logs one line per node in TF's format and order", "[graph][placer]") {
  Scope root = MatMulGraph();
  PlacementOptions options;
  options.log_device_placement = GENERATE(false, true);
  PlacementResult result = PlaceOrFail(root.graph(), options);
  if (!options.log_device_placement) {
    CHECK(result.log_lines.empty());
  } else {
    // First-pass nodes in id order, then the generators.
    CHECK(result.log_lines == std::vector<std::string>{"c: (MatMul): " + Gpu(0),
                                                       "a: (Const): " + Gpu(0),
                                                       "b: (Const): " + Gpu(0)});
  }
}

TEST_CASE("Placer records a decision with a reason for every node, in node-id order",
          "[graph][placer]") {
  std::unique_ptr<Graph> graph = ImportOrFail(kVariableGraph);
  PlacementResult result = PlaceOrFail(graph.get());
  REQUIRE(result.decisions.size() == 4);
  const std::vector<Node*> nodes = graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PlacementDecision& decision = result.decisions[i];
    INFO(decision.node);
    CHECK(decision.node == nodes[i]->name());
    CHECK(decision.op == nodes[i]->op());
    CHECK(decision.device == nodes[i]->assigned_device());
    CHECK_FALSE(decision.reason.empty());
  }
}

TEST_CASE("Placing the same graph twice gives the same result", "[graph][placer]") {
  auto place = [] {
    std::unique_ptr<Graph> graph = ImportOrFail(kVariableGraph);
    PlacementOptions options;
    options.log_device_placement = true;
    return PlaceOrFail(graph.get(), options, Devices(2, 4));
  };
  PlacementResult first = place();
  PlacementResult second = place();
  REQUIRE(first.decisions.size() == second.decisions.size());
  for (size_t i = 0; i < first.decisions.size(); ++i) {
    CHECK(first.decisions[i].node == second.decisions[i].node);
    CHECK(first.decisions[i].device == second.decisions[i].device);
    CHECK(first.decisions[i].reason == second.decisions[i].reason);
  }
  CHECK(first.log_lines == second.log_lines);
}

TEST_CASE("Placer ranks device types GPU > CPU > XLA > unknown", "[graph][placer]") {
  CHECK(DeviceTypePriority("GPU") == 210);
  CHECK(DeviceTypePriority("CPU") == 70);
  CHECK(DeviceTypePriority("XLA_CPU") == 50);
  CHECK(DeviceTypePriority("XLA_GPU") == 50);
  CHECK(DeviceTypePriority("TPU_SYSTEM") == -1);
}

}  // namespace
}  // namespace dflow
