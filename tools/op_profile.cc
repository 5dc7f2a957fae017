#include "tools/op_profile.h"

#include <algorithm>

#include "session/step_stats_collector.h"

namespace dflow {
namespace {

// The collector fills nanos; micros alone (StepStats from elsewhere) still count.
int64_t NodeNanos(const NodeExecStats& node) {
  if (node.op_end_rel_nanos() > 0) return node.op_end_rel_nanos() - node.op_start_rel_nanos();
  return (node.op_end_rel_micros() - node.op_start_rel_micros()) * 1000;
}

}  // namespace

std::string OpTypeFromTimelineLabel(const std::string& label) {
  const size_t eq = label.find(" = ");
  if (eq == std::string::npos) return "";
  const size_t start = eq + 3;
  const size_t paren = label.find('(', start);
  return label.substr(start, paren == std::string::npos ? std::string::npos : paren - start);
}

void OpProfiler::Add(const StepStats& stats) {
  ++runs_;
  for (const DeviceStepStats& device : stats.dev_stats()) {
    if (IsStreamStats(device)) continue;  // the same nodes, seen from their streams
    for (const NodeExecStats& node : device.node_stats()) {
      NodeTotal& total = nodes_[{device.device(), node.node_name()}];
      if (total.op.empty()) total.op = OpTypeFromTimelineLabel(node.timeline_label());
      ++total.count;
      total.nanos += std::max<int64_t>(0, NodeNanos(node));
    }
  }
}

OpProfile OpProfiler::Summarize(int top_nodes) const {
  OpProfile profile;
  profile.traced_runs = runs_;
  if (runs_ == 0) return profile;
  std::map<std::string, OpTypeRow> by_op;
  for (const auto& [key, total] : nodes_) {
    const std::string op = total.op.empty() ? "(unknown)" : total.op;
    const double us = total.nanos / 1000.0 / runs_;
    OpTypeRow& row = by_op[op];
    row.op = op;
    row.count += static_cast<double>(total.count) / runs_;
    row.avg_us += us;
    profile.total_us += us;
    profile.nodes.push_back({key.second, op, key.first, us});
  }
  for (auto& [op, row] : by_op) profile.ops.push_back(row);
  // Ties by name keep the output stable from run to run.
  std::sort(profile.ops.begin(), profile.ops.end(), [](const OpTypeRow& a, const OpTypeRow& b) {
    return a.avg_us != b.avg_us ? a.avg_us > b.avg_us : a.op < b.op;
  });
  double cumulative = 0;
  for (OpTypeRow& row : profile.ops) {
    row.percent = profile.total_us > 0 ? 100.0 * row.avg_us / profile.total_us : 0;
    cumulative += row.percent;
    row.cumulative_percent = cumulative;
  }
  std::sort(profile.nodes.begin(), profile.nodes.end(), [](const NodeRow& a, const NodeRow& b) {
    return a.avg_us != b.avg_us ? a.avg_us > b.avg_us : a.name < b.name;
  });
  if (static_cast<int>(profile.nodes.size()) > top_nodes) profile.nodes.resize(top_nodes);
  return profile;
}

}  // namespace dflow
