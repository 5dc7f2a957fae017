// Where a step's time goes: per-op-type and per-node averages over traced runs, from the
// StepStats a FULL_TRACE Session::Run records (session/step_stats_collector.h), as TF's
// benchmark_model --enable_op_profiling reports them.
//
// A node's time is its wall time from start to end (op_end_rel_nanos); nodes that ran on
// parallel threads overlap, so the summed node time can exceed the step's latency.
#ifndef DFLOW_TOOLS_OP_PROFILE_H_
#define DFLOW_TOOLS_OP_PROFILE_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "proto/step_stats.pb.h"

namespace dflow {

struct OpTypeRow {
  std::string op;
  double count = 0;  // nodes run per step (fractional for nodes in loops)
  double avg_us = 0;  // summed over those nodes, per step
  double percent = 0;  // of the summed node time
  double cumulative_percent = 0;
};

struct NodeRow {
  std::string name;
  std::string op;
  std::string device;
  double avg_us = 0;  // per step, summed over the node's executions in that step
};

struct OpProfile {
  int traced_runs = 0;
  double total_us = 0;  // summed node time per step
  std::vector<OpTypeRow> ops;  // every op type, time descending
  std::vector<NodeRow> nodes;  // the top nodes, time descending
};

// "MatMul" from TF's timeline label "mm = MatMul(a, b)"; "" when the label has no op.
std::string OpTypeFromTimelineLabel(const std::string& label);

// Accumulates the StepStats of traced runs.
class OpProfiler {
 public:
  void Add(const StepStats& stats);
  // Every op type and the `top_nodes` slowest nodes, averaged over the runs added.
  OpProfile Summarize(int top_nodes) const;

 private:
  struct NodeTotal {
    std::string op;
    int64_t count = 0;
    int64_t nanos = 0;
  };
  int runs_ = 0;
  std::map<std::pair<std::string, std::string>, NodeTotal> nodes_;  // (device, name)
};

}  // namespace dflow

#endif  // DFLOW_TOOLS_OP_PROFILE_H_
