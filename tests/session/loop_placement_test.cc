// While loops whose nodes sit on different devices (graph/partition.h rule 9: per-device
// control loops; rule 10: a device-memory predicate copied to the host on its own
// device): a body op pinned to a simulated GPU under a CPU skeleton, a skeleton on the
// GPU around a CPU-only body op, nested loops split across devices, each against the
// same graph on the CPU alone and over repeated steps. The Keras RNN files TF 2.21 wrote
// (zoo goldens) check placement inside their loop bodies too.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/proto_io.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/scoped_env.h"
#include "tools/npy.h"

namespace dflow {
namespace {

std::string Attr(const std::string& key, const std::string& value) {
  return absl::StrCat(" attr { key: '", key, "' value { ", value, " } }");
}

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& attrs,
                 const std::string& device = "") {
  std::string text = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  if (!device.empty()) absl::StrAppend(&text, " device: '", device, "'");
  for (const std::string& input : inputs) absl::StrAppend(&text, " input: '", input, "'");
  return absl::StrCat(text, attrs, " }\n");
}

std::string Type(const char* type) { return absl::StrCat("type: ", type); }

std::string IntConst(const std::string& name, int value, const std::string& control,
                     const std::string& device) {
  return Node(name, "Const", control.empty() ? std::vector<std::string>{} : std::vector{control},
              Attr("dtype", Type("DT_INT32")) +
                  Attr("value", absl::StrCat("tensor { dtype: DT_INT32 tensor_shape {} int_val: ",
                                             value, " }")),
              device);
}

std::string FloatConst(const std::string& name, float value, const std::string& control,
                       const std::string& device) {
  return Node(name, "Const", control.empty() ? std::vector<std::string>{} : std::vector{control},
              Attr("dtype", Type("DT_FLOAT")) +
                  Attr("value", absl::StrCat("tensor { dtype: DT_FLOAT tensor_shape {} "
                                             "float_val: ", value, " }")),
              device);
}

// The skeleton of a v1 while loop named `p` (TF's layout): an int32 counter from 0 while
// below `trips`, carrying the float `x_in`; the body computes `p/next_x` from `p/ix`
// (the caller adds it). Every skeleton node gets `device`; the counter is created in the
// frame of `counter_control` ("" for the root frame).
std::string Loop(const std::string& p, int trips, const std::string& x_in,
                 const std::string& device, const std::string& counter_control = "",
                 const std::string& less_device = "") {
  const std::string i32 = Attr("T", Type("DT_INT32")), f32 = Attr("T", Type("DT_FLOAT"));
  const std::string frame = Attr("frame_name", absl::StrCat("s: '", p, "'"));
  const std::string two = Attr("N", "i: 2");
  return IntConst(p + "/zero", 0, counter_control, device) +
         Node(p + "/ei", "Enter", {p + "/zero"}, i32 + frame, device) +
         Node(p + "/ex", "Enter", {x_in}, f32 + frame, device) +
         Node(p + "/mi", "Merge", {p + "/ei", p + "/ni"}, i32 + two, device) +
         Node(p + "/mx", "Merge", {p + "/ex", p + "/nx"}, f32 + two, device) +
         IntConst(p + "/limit", trips, "^" + p + "/mi", device) +
         Node(p + "/less", "Less", {p + "/mi", p + "/limit"}, i32,
              less_device.empty() ? device : less_device) +
         Node(p + "/cond", "LoopCond", {p + "/less"}, "", device) +
         Node(p + "/si", "Switch", {p + "/mi", p + "/cond"}, i32, device) +
         Node(p + "/sx", "Switch", {p + "/mx", p + "/cond"}, f32, device) +
         Node(p + "/ii", "Identity", {p + "/si:1"}, i32, device) +
         Node(p + "/ix", "Identity", {p + "/sx:1"}, f32, device) +
         IntConst(p + "/one", 1, "^" + p + "/ii", device) +
         Node(p + "/add", "Add", {p + "/ii", p + "/one"}, i32, device) +
         Node(p + "/ni", "NextIteration", {p + "/add"}, i32, device) +
         Node(p + "/nx", "NextIteration", {p + "/next_x"}, f32, device) +
         Node(p + "/exit", "Exit", {p + "/sx"}, f32, device);
}

std::string Placeholder(const std::string& name) {
  return Node(name, "Placeholder", {}, Attr("dtype", Type("DT_FLOAT")), "/cpu:0");
}

Tensor Vector(std::vector<float> values) {
  Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT,
                               TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.flat<float>()[i] = values[i];
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

struct Opened {
  std::unique_ptr<Session> session;
  std::vector<GraphDef> partitions;  // from the first run
};

// Runs `text` `steps` times feeding x, fetching `fetch`; every run must give `want`.
Opened RunLoop(const std::string& text, const std::string& fetch, const std::vector<float>& x,
               const std::vector<float>& want, int steps = 3) {
  ConfigProto config;
  config.set_allow_soft_placement(true);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  REQUIRE(session.ok());
  absl::Status created = (*session)->Create(testing::GraphFromText(text));
  INFO(created.ToString());
  REQUIRE(created.ok());
  Opened opened{*std::move(session), {}};
  for (int step = 0; step < steps; ++step) {
    RunOptions options;
    options.set_output_partition_graphs(true);
    RunMetadata metadata;
    std::vector<Tensor> out;
    absl::Status run = opened.session->Run(options, {{"x", Vector(x)}}, {fetch}, {}, &out,
                                           &metadata);
    INFO("step " << step << ": " << run.ToString());
    REQUIRE(run.ok());
    CHECK(Values(out[0]) == want);
    if (step == 0) {
      opened.partitions.assign(metadata.partition_graphs().begin(),
                               metadata.partition_graphs().end());
    }
  }
  return opened;
}

// The partition of the device whose name ends in `suffix` ("GPU:0").
const GraphDef& PartitionOf(const Opened& opened, const std::string& suffix) {
  for (const GraphDef& part : opened.partitions) {
    if (part.node_size() > 0 && absl::EndsWith(part.node(0).device(), suffix)) return part;
  }
  FAIL("no partition on " << suffix);
  return opened.partitions.front();
}

std::string DeviceOf(const Opened& opened, const std::string& node) {
  for (const GraphDef& part : opened.partitions) {
    for (const NodeDef& def : part.node()) {
      if (def.name() == node) return def.device();
    }
  }
  return "";
}

int CountOps(const GraphDef& part, const std::string& op) {
  int n = 0;
  for (const NodeDef& node : part.node()) n += node.op() == op ? 1 : 0;
  return n;
}

// The partitioner's control loops in `part` (their Enters are named "_cloop...").
int CountControlLoops(const GraphDef& part) {
  int n = 0;
  for (const NodeDef& node : part.node()) {
    n += node.op() == "Enter" && absl::StartsWith(node.name(), "_cloop") ? 1 : 0;
  }
  return n;
}

TEST_CASE("A loop body op on a simulated GPU runs each iteration under a CPU skeleton",
          "[session][control_flow][sim_gpu]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:1024");
  // x := x * 3 + x, four times, the Mul on the GPU and everything else on the CPU.
  auto graph = [](const std::string& body_device) {
    return Placeholder("x") + Loop("w", 4, "x", "/cpu:0") +
           FloatConst("w/three", 3, "^w/ii", "/cpu:0") +
           Node("w/mul", "Mul", {"w/ix", "w/three"}, Attr("T", Type("DT_FLOAT")), body_device) +
           Node("w/next_x", "AddV2", {"w/mul", "w/ix"}, Attr("T", Type("DT_FLOAT")), "/cpu:0");
  };
  const std::vector<float> want = {256, -512, 0.5f * 256};
  RunLoop(graph("/cpu:0"), "w/exit", {1, -2, 0.5f}, want);
  Opened split = RunLoop(graph("/gpu:0"), "w/exit", {1, -2, 0.5f}, want);
  CHECK(absl::EndsWith(DeviceOf(split, "w/mul"), "GPU:0"));
  const GraphDef& gpu = PartitionOf(split, "GPU:0");
  CHECK(CountOps(gpu, "Enter") == 1);  // the GPU's control loop, nothing else
  CHECK(CountControlLoops(gpu) == 1);
  CHECK(CountOps(gpu, "Merge") == 1);
}

TEST_CASE("A loop skeleton on a simulated GPU runs a CPU-only body op each iteration",
          "[session][control_flow][sim_gpu]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:1024");
  // No devices requested: the skeleton and Mul go to GPU:0 (control flow has GPU kernels),
  // Floor has none and runs on the CPU inside the loop; Less's bool reaches LoopCond's
  // host-memory input through a same-device copy.
  auto graph = [](const std::string& device) {
    return Placeholder("x") + Loop("w", 3, "x", device) +
           FloatConst("w/half", 1.5f, "^w/ii", device) +
           Node("w/mul", "Mul", {"w/ix", "w/half"}, Attr("T", Type("DT_FLOAT")), device) +
           Node("w/next_x", "Floor", {"w/mul"}, Attr("T", Type("DT_FLOAT")), device);
  };
  // 7 -> 10 -> 15 -> 22; -3 -> -5 -> -8 -> -12.
  const std::vector<float> want = {22, -12};
  RunLoop(graph("/cpu:0"), "w/exit", {7, -3}, want);
  Opened split = RunLoop(graph(""), "w/exit", {7, -3}, want);
  for (const char* node : {"w/mx", "w/sx", "w/cond", "w/less", "w/mul", "w/exit"}) {
    INFO(node);
    CHECK(absl::EndsWith(DeviceOf(split, node), "GPU:0"));
  }
  CHECK(absl::EndsWith(DeviceOf(split, "w/next_x"), "CPU:0"));
  const GraphDef& gpu = PartitionOf(split, "GPU:0");
  // Less -> LoopCond goes through a same-device copy into host memory (rule 10).
  bool same_device_copy = false;
  for (const NodeDef& node : gpu.node()) {
    if (node.op() != "_HostRecv") continue;
    const std::string& from = node.attr().at("send_device").s();
    same_device_copy = same_device_copy || from == node.attr().at("recv_device").s();
  }
  CHECK(same_device_copy);
  CHECK(CountControlLoops(PartitionOf(split, "CPU:0")) == 1);
}

TEST_CASE("Enter and NextIteration follow the node they feed; one feeding two devices is "
          "refused, never a hang",
          "[session][control_flow][sim_gpu]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:1024");
  // The skeleton on the GPU, but x's Enter and NextIteration pinned to the CPU: they
  // run on their Merge's device (TF's control-flow colocation), or the GPU's receive of
  // an iteration-0-only value would wait in every iteration.
  const std::string f32 = Attr("T", Type("DT_FLOAT"));
  std::string text = Placeholder("x") + Loop("w", 3, "x", "/gpu:0") +
                     FloatConst("w/two", 2, "^w/ii", "/gpu:0") +
                     Node("w/next_x", "Mul", {"w/ix", "w/two"}, f32, "/gpu:0");
  for (const char* pinned : {"'w/ex' op: 'Enter'", "'w/nx' op: 'NextIteration'"}) {
    const std::string from = absl::StrCat("name: ", pinned, " device: '/gpu:0'");
    const std::string to = absl::StrCat("name: ", pinned, " device: '/cpu:0'");
    REQUIRE(absl::StrContains(text, from));
    text = absl::StrReplaceAll(text, {{from, to}});
  }
  Opened moved = RunLoop(text, "w/exit", {1, -3}, {8, -24});
  CHECK(absl::EndsWith(DeviceOf(moved, "w/ex"), "GPU:0"));
  CHECK(absl::EndsWith(DeviceOf(moved, "w/nx"), "GPU:0"));

  // An Enter read by its Merge on the GPU and by a node on the CPU cannot be placed.
  ConfigProto config;
  config.set_allow_soft_placement(true);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  REQUIRE(session.ok());
  REQUIRE((*session)
              ->Create(testing::GraphFromText(
                  text + Node("w/peek", "Identity", {"w/ex"}, f32, "/cpu:0")))
              .ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({{"x", Vector({1})}}, {"w/exit"}, {"w/peek"}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(status.message(), "Node 'w/ex' (Enter, on "));
  CHECK(absl::StrContains(status.message(), "feeds 'w/peek' on "));
}

TEST_CASE("Nested loops split across devices stack per-device control loops",
          "[session][control_flow][sim_gpu]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:1024");
  // Outer: 2 trips; inner: 3 trips of x := x * 2 with the Mul on `mul_device`.
  auto graph = [](const std::string& mul_device) {
    return Placeholder("x") + Loop("o", 2, "x", "/cpu:0") +
           Loop("o/i", 3, "o/ix", "/cpu:0", "^o/ii") + Node("o/next_x", "Identity", {"o/i/exit"},
                                                            Attr("T", Type("DT_FLOAT")), "/cpu:0") +
           FloatConst("o/i/two", 2, "^o/i/ii", "/cpu:0") +
           Node("o/i/next_x", "Mul", {"o/i/ix", "o/i/two"}, Attr("T", Type("DT_FLOAT")),
                mul_device);
  };
  const std::vector<float> want = {64, -128};
  RunLoop(graph("/cpu:0"), "o/exit", {1, -2}, want);
  Opened split = RunLoop(graph("/gpu:0"), "o/exit", {1, -2}, want);
  CHECK(CountControlLoops(PartitionOf(split, "GPU:0")) == 2);
  // The other way round: both skeletons on the GPU, both predicates computed on the CPU.
  const std::string gpu_skeletons =
      Placeholder("x") + Loop("o", 2, "x", "/gpu:0", "", "/cpu:0") +
      Loop("o/i", 3, "o/ix", "/gpu:0", "^o/ii", "/cpu:0") +
      Node("o/next_x", "Identity", {"o/i/exit"}, Attr("T", Type("DT_FLOAT")), "/gpu:0") +
      FloatConst("o/i/two", 2, "^o/i/ii", "/gpu:0") +
      Node("o/i/next_x", "Mul", {"o/i/ix", "o/i/two"}, Attr("T", Type("DT_FLOAT")), "/gpu:0");
  Opened flipped = RunLoop(gpu_skeletons, "o/exit", {1, -2}, want);
  CHECK(CountControlLoops(PartitionOf(flipped, "CPU:0")) == 2);
}

// Runs zoo golden `name` (tests/data/zoo) on one simulated GPU, checks TF's answers and
// returns the partitions.
Opened RunZooGolden(const std::string& name) {
  const std::string root = "tests/data/zoo/";
  absl::StatusOr<std::string> text = ReadFileToString(root + "goldens/" + name + ".json");
  REQUIRE(text.ok());
  google::protobuf::Struct golden;
  REQUIRE(google::protobuf::util::JsonStringToMessage(*text, &golden).ok());
  const auto& fields = golden.fields();
  absl::StatusOr<GraphDef> graph = ReadGraphDef(root + fields.at("file").string_value());
  REQUIRE(graph.ok());
  ConfigProto config;
  config.set_allow_soft_placement(true);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(*graph).ok());
  static CpuAllocator allocator;
  auto npy = [&](const google::protobuf::Value& entry) {
    absl::StatusOr<Tensor> t =
        ReadNpyFile(root + entry.struct_value().fields().at("npy").string_value(), &allocator);
    REQUIRE(t.ok());
    return *t;
  };
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [feed, entry] : fields.at("feeds").struct_value().fields()) {
    feeds.emplace_back(feed, npy(entry));
  }
  std::vector<std::string> fetches;
  std::vector<Tensor> want;
  for (const auto& [fetch, entry] : fields.at("fetches").struct_value().fields()) {
    fetches.push_back(fetch);
    want.push_back(npy(entry));
  }
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> got;
  absl::Status run = (*session)->Run(options, feeds, fetches, {}, &got, &metadata);
  INFO(run.ToString());
  REQUIRE(run.ok());
  for (size_t i = 0; i < fetches.size(); ++i) {
    INFO(fetches[i]);
    REQUIRE(got[i].shape() == want[i].shape());
    for (int64_t j = 0; j < got[i].NumElements(); ++j) {
      CHECK(got[i].flat<float>()[j] == Approx(want[i].flat<float>()[j]).margin(1e-5));
    }
  }
  Opened opened{*std::move(session), {}};
  opened.partitions.assign(metadata.partition_graphs().begin(),
                           metadata.partition_graphs().end());
  return opened;
}

// Whether `part` holds a node of `op` whose name contains "while" (a loop body's).
bool HasLoopBodyOp(const GraphDef& part, const std::string& op) {
  for (const NodeDef& node : part.node()) {
    if (node.op() == op && absl::StrContains(node.name(), "while")) return true;
  }
  return false;
}

TEST_CASE("Keras RNNs and dynamic_rnn run their loop bodies' MatMuls on a simulated GPU",
          "[session][control_flow][sim_gpu][zoo]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:4096");
  // As TF places them: the loop skeleton and the cell's MatMuls on GPU:0; the
  // TensorList/TensorArray ops (no GPU kernel) on the CPU, inside the same loop.
  for (const char* name : {"rnn_lstm", "rnn_lstm_lowered", "rnn_gru_lowered", "tf1_dynamic_rnn"}) {
    INFO(name);
    Opened opened = RunZooGolden(name);
    const GraphDef& gpu = PartitionOf(opened, "GPU:0");
    CHECK(HasLoopBodyOp(gpu, "MatMul"));
    CHECK(HasLoopBodyOp(gpu, "LoopCond"));
    CHECK(HasLoopBodyOp(gpu, "Merge"));
    CHECK(CountControlLoops(PartitionOf(opened, "CPU:0")) >= 1);
  }
}

}  // namespace
}  // namespace dflow
