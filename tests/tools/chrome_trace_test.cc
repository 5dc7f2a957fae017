#include "tools/chrome_trace.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// The fields of one event, checked against the Trace Event Format: what chrome://tracing
// and ui.perfetto.dev need to load it. Returns what is wrong, or "".
std::string EventProblem(const Struct& event) {
  const auto& f = event.fields();
  auto has = [&](const char* key, Value::KindCase kind) {
    auto it = f.find(key);
    return it != f.end() && it->second.kind_case() == kind;
  };
  if (!has("name", Value::kStringValue)) return "no string name";
  if (!has("ph", Value::kStringValue)) return "no string ph";
  if (!has("pid", Value::kNumberValue)) return "no numeric pid";
  const std::string ph = f.at("ph").string_value();
  if (ph == "M") {
    if (!has("args", Value::kStructValue)) return "metadata without args";
    return "";
  }
  if (!has("ts", Value::kNumberValue) || f.at("ts").number_value() < 0) return "bad ts";
  if (ph == "X") {
    if (!has("tid", Value::kNumberValue)) return "X without tid";
    if (!has("cat", Value::kStringValue)) return "X without cat";
    if (!has("dur", Value::kNumberValue) || f.at("dur").number_value() < 0) return "bad dur";
    return "";
  }
  if (ph == "C") {
    if (!has("args", Value::kStructValue)) return "counter without args";
    for (const auto& [key, value] : f.at("args").struct_value().fields()) {
      if (value.kind_case() != Value::kNumberValue) return "counter value not a number";
    }
    return "";
  }
  if (ph == "s" || ph == "f") {
    if (!has("id", Value::kNumberValue) || !has("tid", Value::kNumberValue)) return "bad flow";
    return "";
  }
  return "unknown ph " + ph;
}

// Parses `json` and checks every event; returns the events.
std::vector<Struct> ValidTrace(const std::string& json) {
  Struct trace;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &trace);
  INFO(json.substr(0, 2000));
  REQUIRE(status.ok());
  REQUIRE(trace.fields().count("traceEvents") == 1);
  REQUIRE(trace.fields().at("traceEvents").kind_case() == Value::kListValue);
  std::vector<Struct> events;
  for (const Value& value : trace.fields().at("traceEvents").list_value().values()) {
    REQUIRE(value.kind_case() == Value::kStructValue);
    INFO(value.DebugString());
    CHECK(EventProblem(value.struct_value()).empty());
    events.push_back(value.struct_value());
  }
  return events;
}

std::string Str(const Struct& event, const char* key) {
  auto it = event.fields().find(key);
  return it == event.fields().end() ? "" : it->second.string_value();
}

NodeExecStats* AddNode(DeviceStepStats* device, const std::string& label, int64_t start_ns,
                       int64_t duration_ns, uint32_t thread) {
  NodeExecStats* node = device->add_node_stats();
  node->set_node_name(label.substr(0, label.find(' ')));
  node->set_timeline_label(label);
  node->set_all_start_nanos(start_ns);
  node->set_all_end_rel_nanos(duration_ns);
  node->set_scheduled_nanos(start_ns - 500);
  node->set_thread_id(thread);
  return node;
}

TEST_CASE("ChromeTraceJson: a process per device, a row per thread, nodes, memory, copies",
          "[tools][trace]") {
  const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
  const std::string cpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
  RunMetadata metadata;
  DeviceStepStats* d0 = metadata.mutable_step_stats()->add_dev_stats();
  d0->set_device(cpu0);
  AddNode(d0, "a = Const()", 1'000'000, 2'000, 7);
  NodeExecStats* send = AddNode(d0, "send_a = _Send(a)", 1'003'000, 1'000, 8);
  AllocatorMemoryUsed* memory = send->add_memory();
  memory->set_allocator_name("cpu");
  memory->set_allocator_bytes_in_use(4096);
  DeviceStepStats* d1 = metadata.mutable_step_stats()->add_dev_stats();
  d1->set_device(cpu1);
  NodeExecStats* c = AddNode(d1, "c = MatMul(recv_a, b)", 1'004'500, 10'000, 9);
  TensorDescription* out = c->add_output()->mutable_tensor_description();
  out->set_dtype(DT_FLOAT);
  out->mutable_shape()->add_dim()->set_size(2);
  out->mutable_shape()->add_dim()->set_size(2);
  out->mutable_allocation_description()->set_requested_bytes(16);
  AddNode(d1, "recv_a = _Recv()", 1'001'000, 3'500, 9);
  // The partition graphs give the pair its rendezvous key.
  for (const auto& [name, op, device] : {std::tuple{"send_a", "_Send", cpu0},
                                         std::tuple{"recv_a", "_Recv", cpu1}}) {
    NodeDef* node = metadata.add_partition_graphs()->add_node();
    node->set_name(name);
    node->set_op(op);
    (*node->mutable_attr())["tensor_name"].set_s("a:0");
    (*node->mutable_attr())["send_device"].set_s(cpu0);
    (*node->mutable_attr())["recv_device"].set_s(cpu1);
  }

  const std::vector<Struct> events = ValidTrace(ChromeTraceJson(metadata));
  std::map<std::string, const Struct*> nodes;
  std::set<std::string> processes;
  int flow_starts = 0, flow_ends = 0, counters = 0;
  for (const Struct& event : events) {
    const std::string ph = Str(event, "ph");
    if (ph == "X") nodes[Str(event, "name")] = &event;
    if (ph == "M" && Str(event, "name") == "process_name") {
      processes.insert(event.fields().at("args").struct_value().fields().at("name")
                           .string_value());
    }
    if (ph == "s") ++flow_starts;
    if (ph == "f") ++flow_ends;
    if (ph == "C") ++counters;
  }
  CHECK(processes == std::set<std::string>{cpu0, cpu1});
  REQUIRE(nodes.size() == 4);
  // Times are microseconds from the first node's start.
  CHECK(nodes["a"]->fields().at("ts").number_value() == 0);
  CHECK(nodes["c"]->fields().at("ts").number_value() == Approx(4.5));
  CHECK(nodes["c"]->fields().at("dur").number_value() == Approx(10.0));
  CHECK(Str(*nodes["c"], "cat") == "MatMul");
  const auto& args = nodes["c"]->fields().at("args").struct_value().fields();
  CHECK(args.at("outputs").string_value() == "float32[2,2] 16 B");
  CHECK(args.at("inputs").string_value() == "recv_a, b");
  CHECK(args.at("scheduled_wait_us").number_value() == Approx(0.5));
  CHECK(Str(*nodes["send_a"], "cat") == "copy");
  CHECK(Str(*nodes["recv_a"], "cat") == "copy");
  CHECK(flow_starts == 1);
  CHECK(flow_ends == 1);
  CHECK(counters == 1);
  // Two threads on CPU:0 are two rows there.
  CHECK(nodes["a"]->fields().at("tid").number_value() !=
        nodes["send_a"]->fields().at("tid").number_value());
}

TEST_CASE("ChromeTraceJson of an empty step is a valid, empty trace", "[tools][trace]") {
  CHECK(ValidTrace(ChromeTraceJson(RunMetadata())).empty());
}

// The RunMetadata of one traced step of c = MatMul(a, a), `a` a Const on /cpu:0 and `c`
// on `c_device`, in a session made with `config`.
RunMetadata TracedMatMulStep(const std::string& c_device, const ConfigProto& config) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  REQUIRE(session.ok());
  const GraphDef graph = testing::GraphFromText(absl::StrCat(R"(
    node { name: "a" op: "Const" device: "/cpu:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 }
                  dim { size: 2 } } float_val: 1 float_val: 2 float_val: 3 float_val: 4 } } } }
    node { name: "c" op: "MatMul" input: "a" input: "a" device: ")", c_device, R"("
           attr { key: "T" value { type: DT_FLOAT } } }
  )"));
  REQUIRE((*session)->Create(graph).ok());
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  options.set_output_partition_graphs(true);
  std::vector<Tensor> outputs;
  RunMetadata metadata;
  const absl::Status status = (*session)->Run(options, {}, {"c"}, {}, &outputs, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return metadata;
}

TEST_CASE("A real step on two CPU devices traces every node and joins its copy",
          "[tools][trace]") {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  const RunMetadata metadata = TracedMatMulStep("/cpu:1", config);

  const std::vector<Struct> events = ValidTrace(ChromeTraceJson(metadata));
  std::set<std::string> names, copy_nodes;
  int flows = 0;
  for (const Struct& event : events) {
    if (Str(event, "ph") == "X") names.insert(Str(event, "name"));
    if (Str(event, "ph") == "X" && Str(event, "cat") == "copy") {
      copy_nodes.insert(Str(event, "name"));
    }
    if (Str(event, "ph") == "s") ++flows;
  }
  CHECK(names.count("a") == 1);
  CHECK(names.count("c") == 1);
  CHECK(copy_nodes.size() >= 2);  // the _Send on CPU:0 and the _Recv on CPU:1
  CHECK(flows >= 1);
}

TEST_CASE("A real step on a simulated GPU has valid stream rows", "[tools][trace]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1");
  const RunMetadata metadata = TracedMatMulStep("/gpu:0", ConfigProto());

  const std::vector<Struct> events = ValidTrace(ChromeTraceJson(metadata));
  std::map<double, std::string> processes;
  for (const Struct& event : events) {
    if (Str(event, "name") == "process_name") {
      processes[event.fields().at("pid").number_value()] =
          event.fields().at("args").struct_value().fields().at("name").string_value();
    }
  }
  std::set<std::string> stream_rows;
  bool matmul_on_compute = false;
  for (const Struct& event : events) {
    if (Str(event, "ph") != "X" || Str(event, "cat") != "stream") continue;
    const std::string& process = processes[event.fields().at("pid").number_value()];
    stream_rows.insert(process.substr(process.find("/stream:")));
    if (Str(event, "name") == "c" && absl::EndsWith(process, "GPU:0/stream:compute")) {
      matmul_on_compute = true;
    }
  }
  CHECK(matmul_on_compute);
  CHECK(stream_rows.count("/stream:host_to_device") == 1);
  CHECK(stream_rows.count("/stream:device_to_host") == 1);
}

}  // namespace
}  // namespace dflow
