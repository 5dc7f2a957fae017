#include "session/step_stats_collector.h"

#include <pthread.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"

namespace dflow {
namespace {

std::string TimelineLabel(const OpKernel& kernel) {
  std::vector<std::string> inputs;
  for (const std::string& input : kernel.def().input()) {
    if (!input.empty() && input[0] != '^') inputs.push_back(input);
  }
  return absl::StrCat(kernel.name(), " = ", kernel.type_string(), "(",
                      absl::StrJoin(inputs, ", "), ")");
}

void AddOutputs(const OpKernelContext& context, NodeExecStats* stats) {
  if (!context.status().ok()) return;
  for (int i = 0; i < context.num_outputs(); ++i) {
    const Tensor* out = const_cast<OpKernelContext&>(context).mutable_output(i);
    if (!out->IsInitialized()) continue;
    NodeOutput* output = stats->add_output();
    output->set_slot(i);
    TensorDescription* description = output->mutable_tensor_description();
    description->set_dtype(out->dtype());
    *description->mutable_shape() = out->shape().ToProto();
    AllocationDescription* allocation = description->mutable_allocation_description();
    allocation->set_requested_bytes(static_cast<int64_t>(out->TotalBytes()));
    allocation->set_allocator_name(context.allocator()->Name());
  }
}

// TF's per-node memory record: what the node's outputs took from its device's allocator,
// and the allocator's state when the node finished.
void AddMemory(const OpKernelContext& context, NodeExecStats* stats) {
  Allocator* allocator = context.allocator();
  int64_t output_bytes = 0;
  for (const NodeOutput& output : stats->output()) {
    output_bytes += output.tensor_description().allocation_description().requested_bytes();
  }
  const AllocatorStats now = allocator->GetStats();
  AllocatorMemoryUsed* memory = stats->add_memory();
  memory->set_allocator_name(allocator->Name());
  memory->set_total_bytes(output_bytes);
  memory->set_peak_bytes(now.peak_bytes_in_use);
  memory->set_live_bytes(output_bytes);
  memory->set_allocator_bytes_in_use(now.bytes_in_use);
}

NodeExecStats StreamActivityStats(const StreamActivity& activity) {
  NodeExecStats stats;
  stats.set_node_name(activity.node);
  stats.set_all_start_micros(activity.start_ns / 1000);
  stats.set_all_start_nanos(activity.start_ns);
  const int64_t duration = activity.end_ns - activity.start_ns;
  stats.set_op_end_rel_micros(duration / 1000);
  stats.set_op_end_rel_nanos(duration);
  stats.set_all_end_rel_micros(duration / 1000);
  stats.set_all_end_rel_nanos(duration);
  std::string label = absl::StrCat(activity.node, " ", activity.what);
  if (activity.bytes > 0) absl::StrAppend(&label, " ", activity.bytes, " bytes");
  stats.set_timeline_label(absl::StrCat(label, " on ", activity.stream));
  return stats;
}

// A stream's row is named "<device>/stream:<kind>".
constexpr absl::string_view kStreamRowInfix = "/stream:";

}  // namespace

// Collects what a device's streams ran; shared with the traced work, so late reports
// land here and are dropped once the step's stats are taken.
class StepStatsCollector::StreamRecorder final : public StreamTraceSink {
 public:
  void Record(StreamActivity activity) override {
    absl::MutexLock lock(&mu_);
    activities_.push_back(std::move(activity));
  }
  std::vector<StreamActivity> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(activities_);
  }

 private:
  absl::Mutex mu_;
  std::vector<StreamActivity> activities_ ABSL_GUARDED_BY(mu_);
};

class StepStatsCollector::DeviceObserver final : public ExecutorObserver {
 public:
  DeviceObserver(StepStatsCollector* owner, std::string device)
      : owner_(owner), device_(std::move(device)),
        streams_(std::make_shared<StreamRecorder>()) {}

  std::shared_ptr<StreamTraceSink> stream_sink() const override { return streams_; }
  StreamRecorder& streams() { return *streams_; }

  void NodeDone(const OpKernel& kernel, const OpKernelContext& context, int64_t scheduled_ns,
                int64_t start_ns, int64_t end_ns) override {
    NodeExecStats stats;
    stats.set_node_name(kernel.name());
    stats.set_all_start_micros(start_ns / 1000);
    stats.set_all_start_nanos(start_ns);
    stats.set_scheduled_micros(scheduled_ns / 1000);
    stats.set_scheduled_nanos(scheduled_ns);
    stats.set_op_start_rel_micros(0);
    stats.set_op_start_rel_nanos(0);
    stats.set_op_end_rel_micros((end_ns - start_ns) / 1000);
    stats.set_op_end_rel_nanos(end_ns - start_ns);
    stats.set_all_end_rel_micros((end_ns - start_ns) / 1000);
    stats.set_all_end_rel_nanos(end_ns - start_ns);
    stats.set_timeline_label(TimelineLabel(kernel));
    stats.set_thread_id(static_cast<uint32_t>(pthread_self() & 0xffffffff));
    AddOutputs(context, &stats);
    AddMemory(context, &stats);
    owner_->Record(device_, std::move(stats));
  }

 private:
  StepStatsCollector* owner_;
  std::string device_;
  std::shared_ptr<StreamRecorder> streams_;
};

bool IsStreamStats(const DeviceStepStats& stats) {
  return absl::StrContains(stats.device(), kStreamRowInfix);
}

StepStatsCollector::StepStatsCollector() = default;
StepStatsCollector::~StepStatsCollector() = default;

ExecutorObserver* StepStatsCollector::ForDevice(const std::string& device_name) {
  absl::MutexLock lock(&mu_);
  auto& observer = observers_[device_name];
  if (!observer) observer = std::make_unique<DeviceObserver>(this, device_name);
  devices_[device_name].set_device(device_name);
  return observer.get();
}

void StepStatsCollector::Record(const std::string& device, NodeExecStats stats) {
  absl::MutexLock lock(&mu_);
  *devices_[device].add_node_stats() = std::move(stats);
}

void StepStatsCollector::Finish(StepStats* stats) {
  absl::MutexLock lock(&mu_);
  for (auto& [name, observer] : observers_) {
    for (const StreamActivity& activity : observer->streams().Take()) {
      const std::string row_name = absl::StrCat(name, kStreamRowInfix, activity.kind);
      DeviceStepStats& row = devices_[row_name];
      row.set_device(row_name);
      *row.add_node_stats() = StreamActivityStats(activity);
    }
  }
  for (auto& [name, device_stats] : devices_) *stats->add_dev_stats() = std::move(device_stats);
  devices_.clear();
}

}  // namespace dflow
