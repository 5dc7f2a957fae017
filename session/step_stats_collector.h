// StepStatsCollector: an ExecutorObserver that records TF's StepStats for one step
// (RunOptions.trace_level = FULL_TRACE): per device, per node, start/end times, outputs
// with their shapes and bytes, and the thread; and, for accelerators, what each stream
// ran for which node (runtime/stream_trace.h), as a DeviceStepStats per stream named
// "<device>/stream:<kind>" (TF's GPU tracer names its rows "<device>/stream:<id>").
//
// Thread-safety: NodeDone may be called from many executor threads at once.
#ifndef DFLOW_SESSION_STEP_STATS_COLLECTOR_H_
#define DFLOW_SESSION_STEP_STATS_COLLECTOR_H_

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "proto/step_stats.pb.h"
#include "runtime/executor.h"

namespace dflow {

// Whether `stats` is a stream's row ("<device>/stream:<kind>"), not a device's nodes:
// what its streams ran, for timelines; summaries of node time skip it.
bool IsStreamStats(const DeviceStepStats& stats);

class StepStatsCollector {
 public:
  StepStatsCollector();
  ~StepStatsCollector();
  // An observer recording the nodes of `device_name`; owned by the collector.
  ExecutorObserver* ForDevice(const std::string& device_name);
  // Moves the collected stats into `stats` (devices in name order).
  void Finish(StepStats* stats);

 private:
  class DeviceObserver;
  class StreamRecorder;
  void Record(const std::string& device, NodeExecStats stats);

  absl::Mutex mu_;
  std::map<std::string, DeviceStepStats> devices_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<DeviceObserver>> observers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_SESSION_STEP_STATS_COLLECTOR_H_
