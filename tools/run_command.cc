#include "tools/run_command.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/node_def_util.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/subgraph.h"
#include "session/session.h"
#include "tools/cli_args.h"
#include "tools/model_run.h"
#include "tools/session_feeds.h"
#include "tools/tensor_printer.h"

namespace dflow {
namespace {

// Feed tensors live as long as the process; the allocator must outlive them all.
Allocator* FeedAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

std::vector<std::string> CanonicalNames(const std::vector<std::string>& fetches) {
  std::vector<std::string> names;
  for (const std::string& fetch : fetches) {
    absl::StatusOr<TensorId> id = ParseTensorName(fetch);
    names.push_back(id.ok() && !id->IsControl() ? id->ToString() : fetch);
  }
  return names;
}

}  // namespace

absl::StatusOr<RunRequest> RunRequestFromFlags(const CliArgs& flags) {
  RunRequest request;
  DFLOW_ASSIGN_OR_RETURN(std::string path, flags.Require("graph"));
  DFLOW_ASSIGN_OR_RETURN(request.graph_def, ReadGraphDef(path));
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &request.config));
  }
  if (flags.Has("run_options")) {
    DFLOW_RETURN_IF_ERROR(
        ParseTextProto(flags.Get("run_options"), "--run_options", &request.run_options));
  }
  for (const std::string& feed : flags.GetAll("feed")) {
    DFLOW_ASSIGN_OR_RETURN(FeedFlag parsed, SplitFeedFlag(feed));
    request.feeds.push_back(std::move(parsed));
  }
  request.fetches = flags.GetAll("fetch");
  request.targets = flags.GetAll("target");
  request.collect_metadata = flags.Has("run_metadata");
  return request;
}

absl::StatusOr<RunResult> RunGraph(const RunRequest& request) {
  // The session imports the graph once; feeds are parsed to the dtypes it gives them.
  DFLOW_ASSIGN_OR_RETURN(std::vector<std::string> fed, FedTensorNames(request.feeds));
  RunResult result;
  DFLOW_ASSIGN_OR_RETURN(result.session, NewSession(request.config));
  Session* session = result.session.get();
  DFLOW_RETURN_IF_ERROR(session->Create(request.graph_def, fed));
  DFLOW_ASSIGN_OR_RETURN(auto feed_tensors,
                         ParseSessionFeeds(*session, request.feeds, FeedAllocator()));
  for (int i = 0; i < request.warmup_runs; ++i) {
    RunOptions plain = request.run_options;
    plain.set_trace_level(RunOptions::NO_TRACE);
    plain.set_output_partition_graphs(false);
    std::vector<Tensor> ignored;
    DFLOW_RETURN_IF_ERROR(session->Run(plain, feed_tensors, request.fetches, request.targets,
                                       &ignored, nullptr));
  }
  DFLOW_RETURN_IF_ERROR(session->Run(request.run_options, feed_tensors, request.fetches,
                                     request.targets, &result.outputs,
                                     request.collect_metadata ? &result.metadata : nullptr));
  result.fetch_names = CanonicalNames(request.fetches);
  return result;
}

absl::Status RunRunCommand(const std::vector<std::string>& args, std::ostream& out) {
  std::vector<std::string> known = {"graph",        "output", "config", "run_options",
                                    "run_metadata", "feed",   "fetch",  "target"};
  known.insert(known.end(), std::begin(kModelRunFlags), std::end(kModelRunFlags));
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, known));
  const std::string output = flags.Get("output", "text");
  if (output != "json" && output != "text") {
    return absl::InvalidArgumentError(
        absl::StrCat("--output=", output, ": expected json or text"));
  }
  if (flags.Has("run_metadata") && flags.Get("run_metadata").empty()) {
    return absl::InvalidArgumentError("--run_metadata needs a file path");
  }
  RunResult result;
  if (IsModelRun(flags)) {  // --saved_model / --meta_graph (tools/model_run.h)
    DFLOW_ASSIGN_OR_RETURN(result, RunModel(flags));
  } else {
    DFLOW_ASSIGN_OR_RETURN(RunRequest request, RunRequestFromFlags(flags));
    DFLOW_ASSIGN_OR_RETURN(result, RunGraph(request));
  }
  if (flags.Has("run_metadata")) {
    DFLOW_RETURN_IF_ERROR(
        WriteProtoFile(flags.Get("run_metadata"), result.metadata, ProtoFormat::kText));
  }
  if (output == "json") {
    out << OutputsJson(result.fetch_names, result.outputs);
  } else if (result.fetch_names.empty()) {
    out << "ran " << absl::StrJoin(flags.GetAll("target"), ", ") << " (nothing fetched)\n";
  } else {
    out << OutputsText(result.fetch_names, result.outputs);
  }
  return absl::OkStatus();
}

}  // namespace dflow
