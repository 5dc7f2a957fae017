#include "tools/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/types.h"
#include "session/step_stats_collector.h"
#include "tools/tensor_printer.h"

namespace dflow {
namespace {

// A node's start in nanoseconds (TF fills the micros fields; dflow both).
int64_t StartNanos(const NodeExecStats& node) {
  return node.all_start_nanos() != 0 ? node.all_start_nanos() : node.all_start_micros() * 1000;
}

int64_t DurationNanos(const NodeExecStats& node) {
  return node.all_end_rel_nanos() != 0 ? node.all_end_rel_nanos()
                                       : node.all_end_rel_micros() * 1000;
}

int64_t ScheduledNanos(const NodeExecStats& node) {
  return node.scheduled_nanos() != 0 ? node.scheduled_nanos() : node.scheduled_micros() * 1000;
}

// Microseconds, with the nanoseconds kept as a fraction.
std::string Micros(int64_t nanos) { return FormatDouble(static_cast<double>(nanos) / 1000.0); }

// "c = MatMul(a, b)" -> op "MatMul", inputs "a, b".
void SplitLabel(const std::string& label, std::string* op, std::string* inputs) {
  const size_t eq = label.find(" = ");
  const size_t open = label.find('(', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || open == std::string::npos) {
    *op = "";
    *inputs = "";
    return;
  }
  *op = label.substr(eq + 3, open - eq - 3);
  const size_t close = label.rfind(')');
  *inputs = close > open ? label.substr(open + 1, close - open - 1) : "";
}

std::string OutputsText(const NodeExecStats& node) {
  std::vector<std::string> outputs;
  for (const NodeOutput& output : node.output()) {
    const TensorDescription& tensor = output.tensor_description();
    std::vector<std::string> dims;
    for (const auto& dim : tensor.shape().dim()) dims.push_back(absl::StrCat(dim.size()));
    outputs.push_back(absl::StrCat(DataTypeNumpyName(tensor.dtype()), "[",
                                   absl::StrJoin(dims, ","), "] ",
                                   tensor.allocation_description().requested_bytes(), " B"));
  }
  return absl::StrJoin(outputs, "; ");
}

bool IsTransfer(const std::string& op) {
  return op == "_Send" || op == "_Recv" || op == "_HostSend" || op == "_HostRecv";
}

bool IsSend(const std::string& op) { return op == "_Send" || op == "_HostSend"; }

// (tensor, send device, receive device): what pairs a send with its receive.
using RendezvousKey = std::tuple<std::string, std::string, std::string>;

// Each transfer node's key, by (device of its partition, node name), from the partition
// graphs (rule 3). Empty when the metadata has none.
std::map<std::pair<std::string, std::string>, RendezvousKey> TransferKeys(
    const RunMetadata& metadata) {
  std::map<std::pair<std::string, std::string>, RendezvousKey> keys;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      if (!IsTransfer(node.op())) continue;
      auto attr = [&](const char* name) {
        auto it = node.attr().find(name);
        return it == node.attr().end() ? std::string() : it->second.s();
      };
      const std::string device = IsSend(node.op()) ? attr("send_device") : attr("recv_device");
      keys[{device, node.name()}] = {attr("tensor_name"), attr("send_device"),
                                     attr("recv_device")};
    }
  }
  return keys;
}

class TraceWriter {
 public:
  explicit TraceWriter(const RunMetadata& metadata)
      : metadata_(metadata), keys_(TransferKeys(metadata)) {}

  std::string Write() {
    origin_ = StepOrigin();
    for (int pid = 0; pid < metadata_.step_stats().dev_stats_size(); ++pid) {
      WriteDevice(pid, metadata_.step_stats().dev_stats(pid));
    }
    WriteFlows();
    return absl::StrCat("{\"traceEvents\": [\n", absl::StrJoin(events_, ",\n"),
                        "\n], \"displayTimeUnit\": \"ns\"}\n");
  }

 private:
  struct Transfer {
    int pid;
    int tid;
    int64_t start;
    int64_t end;
  };

  int64_t StepOrigin() const {
    int64_t origin = std::numeric_limits<int64_t>::max();
    for (const DeviceStepStats& device : metadata_.step_stats().dev_stats()) {
      for (const NodeExecStats& node : device.node_stats()) {
        origin = std::min(origin, StartNanos(node));
      }
    }
    return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
  }

  void WriteDevice(int pid, const DeviceStepStats& device) {
    events_.push_back(absl::StrCat("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": ", pid,
                                   ", \"args\": {\"name\": ", JsonString(device.device()),
                                   "}}"));
    events_.push_back(absl::StrCat("{\"name\": \"process_sort_index\", \"ph\": \"M\", ",
                                   "\"pid\": ", pid, ", \"args\": {\"sort_index\": ", pid,
                                   "}}"));
    std::map<uint32_t, int> tids;
    std::vector<const NodeExecStats*> nodes;
    for (const NodeExecStats& node : device.node_stats()) nodes.push_back(&node);
    std::stable_sort(nodes.begin(), nodes.end(), [](const auto* a, const auto* b) {
      return StartNanos(*a) < StartNanos(*b);
    });
    for (const NodeExecStats* node : nodes) {
      auto [it, added] = tids.emplace(node->thread_id(), static_cast<int>(tids.size()) + 1);
      if (added) {
        const std::string row = IsStreamStats(device) ? std::string("stream")
                                                      : absl::StrCat("thread ", it->second);
        events_.push_back(absl::StrCat(
            "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": ", pid, ", \"tid\": ",
            it->second, ", \"args\": {\"name\": ", JsonString(row), "}}"));
      }
      WriteNode(pid, it->second, device, *node);
    }
  }

  void WriteNode(int pid, int tid, const DeviceStepStats& device, const NodeExecStats& node) {
    std::string op, inputs;
    SplitLabel(node.timeline_label(), &op, &inputs);
    const int64_t start = StartNanos(node) - origin_;
    const int64_t duration = DurationNanos(node);
    const int64_t waited = ScheduledNanos(node) > 0 ? StartNanos(node) - ScheduledNanos(node) : 0;
    const bool stream = IsStreamStats(device);
    if (stream) op = node.timeline_label();  // "<node> kernel on <stream>", ...
    const std::string category =
        stream ? "stream" : IsTransfer(op) ? "copy" : (op.empty() ? "op" : op);
    events_.push_back(absl::StrCat(
        "{\"name\": ", JsonString(node.node_name()), ", \"cat\": ", JsonString(category),
        ", \"ph\": \"X\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"ts\": ", Micros(start),
        ", \"dur\": ", Micros(duration), ", \"args\": {\"op\": ", JsonString(op),
        ", \"inputs\": ", JsonString(inputs), ", \"outputs\": ", JsonString(OutputsText(node)),
        ", \"scheduled_wait_us\": ", Micros(std::max<int64_t>(waited, 0)), "}}"));
    for (const AllocatorMemoryUsed& memory : node.memory()) {
      events_.push_back(absl::StrCat(
          "{\"name\": ", JsonString("memory " + memory.allocator_name()),
          ", \"ph\": \"C\", \"pid\": ", pid, ", \"ts\": ", Micros(start + duration),
          ", \"args\": {\"bytes in use\": ", memory.allocator_bytes_in_use(), "}}"));
    }
    auto key = keys_.find({device.device(), node.node_name()});
    if (key != keys_.end()) {
      auto& list = IsSend(op) ? sends_[key->second] : receives_[key->second];
      list.push_back({pid, tid, start, start + duration});
    }
  }

  // Rule 3: the k-th send of a key feeds its k-th receive (one per loop iteration).
  void WriteFlows() {
    int id = 0;
    for (auto& [key, sends] : sends_) {
      auto it = receives_.find(key);
      if (it == receives_.end()) continue;
      const std::vector<Transfer>& receives = it->second;
      for (size_t i = 0; i < sends.size() && i < receives.size(); ++i) {
        ++id;
        const std::string name = JsonString(std::get<0>(key));
        events_.push_back(absl::StrCat("{\"name\": ", name, ", \"cat\": \"copy\", \"ph\": ",
                                       "\"s\", \"id\": ", id, ", \"pid\": ", sends[i].pid,
                                       ", \"tid\": ", sends[i].tid, ", \"ts\": ",
                                       Micros(sends[i].start), "}"));
        events_.push_back(absl::StrCat(
            "{\"name\": ", name, ", \"cat\": \"copy\", \"ph\": \"f\", \"bp\": \"e\", ",
            "\"id\": ", id, ", \"pid\": ", receives[i].pid, ", \"tid\": ", receives[i].tid,
            ", \"ts\": ", Micros(std::max(receives[i].start, sends[i].start)), "}"));
      }
    }
  }

  const RunMetadata& metadata_;
  const std::map<std::pair<std::string, std::string>, RendezvousKey> keys_;
  int64_t origin_ = 0;
  std::vector<std::string> events_;
  std::map<RendezvousKey, std::vector<Transfer>> sends_;
  std::map<RendezvousKey, std::vector<Transfer>> receives_;
};

}  // namespace

std::string ChromeTraceJson(const RunMetadata& metadata) {
  return TraceWriter(metadata).Write();
}

}  // namespace dflow
