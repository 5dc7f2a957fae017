#include "tools/trace_command.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "session/step_stats_collector.h"
#include "tools/chrome_trace.h"
#include "tools/cli_args.h"
#include "tools/model_run.h"
#include "tools/run_command.h"

namespace dflow {
namespace {

// Rule 3's options for the traced step.
void TraceOptions(RunOptions* options) {
  options->set_trace_level(RunOptions::FULL_TRACE);
  options->set_output_partition_graphs(true);
}

absl::StatusOr<int> WarmupRuns(const CliArgs& flags) {
  int runs = 1;
  if (flags.Has("warmup") && (!absl::SimpleAtoi(flags.Get("warmup"), &runs) || runs < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--warmup=", flags.Get("warmup"), ": expected a count >= 0"));
  }
  return runs;
}

// A SavedModel or MetaGraphDef (tools/model_run.h): warm-ups, then the traced step.
absl::StatusOr<RunMetadata> TraceModel(const CliArgs& flags, int warmup) {
  ConfigProto config;
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &config));
  }
  DFLOW_ASSIGN_OR_RETURN(LoadedModelRun model, LoadModelRun(flags, config));
  std::vector<Tensor> outputs;
  for (int i = 0; i < warmup; ++i) {
    DFLOW_RETURN_IF_ERROR(model.session->Run(model.run_options, model.feeds, model.fetches,
                                             model.targets, &outputs, nullptr));
  }
  RunOptions options = model.run_options;
  TraceOptions(&options);
  RunMetadata metadata;
  DFLOW_RETURN_IF_ERROR(model.session->Run(options, model.feeds, model.fetches, model.targets,
                                           &outputs, &metadata));
  return metadata;
}

absl::StatusOr<RunMetadata> TraceGraph(const CliArgs& flags, int warmup) {
  DFLOW_ASSIGN_OR_RETURN(RunRequest request, RunRequestFromFlags(flags));
  TraceOptions(&request.run_options);
  request.collect_metadata = true;
  request.warmup_runs = warmup;
  DFLOW_ASSIGN_OR_RETURN(RunResult result, RunGraph(request));
  return std::move(result.metadata);
}

// Rule 4's summary line.
std::string Summary(const std::string& path, const StepStats& stats) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = 0, nodes = 0, devices = 0;
  for (const DeviceStepStats& device : stats.dev_stats()) {
    if (IsStreamStats(device)) continue;
    ++devices;
    for (const NodeExecStats& node : device.node_stats()) {
      ++nodes;
      first = std::min(first, node.all_start_nanos());
      last = std::max(last, node.all_start_nanos() + node.all_end_rel_nanos());
    }
  }
  const double step_ms = nodes == 0 ? 0.0 : static_cast<double>(last - first) / 1e6;
  return absl::StrFormat(
      "wrote %s: %d node runs on %d devices, step %.3f ms (open it in chrome://tracing or "
      "ui.perfetto.dev)\n",
      path, nodes, devices, step_ms);
}

}  // namespace

absl::Status RunTraceCommand(const std::vector<std::string>& args, std::ostream& out) {
  std::vector<std::string> known = {"graph", "config", "run_options", "feed",
                                    "fetch", "target", "out",         "warmup"};
  known.insert(known.end(), std::begin(kModelRunFlags), std::end(kModelRunFlags));
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, known));
  DFLOW_ASSIGN_OR_RETURN(std::string path, flags.Require("out"));
  DFLOW_ASSIGN_OR_RETURN(int warmup, WarmupRuns(flags));
  RunMetadata metadata;
  if (IsModelRun(flags)) {
    DFLOW_ASSIGN_OR_RETURN(metadata, TraceModel(flags, warmup));
  } else {
    DFLOW_ASSIGN_OR_RETURN(metadata, TraceGraph(flags, warmup));
  }
  DFLOW_RETURN_IF_ERROR(WriteStringToFile(path, ChromeTraceJson(metadata)));
  out << Summary(path, metadata.step_stats());
  return absl::OkStatus();
}

}  // namespace dflow
