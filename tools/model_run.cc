#include "tools/model_run.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/node_def_util.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/subgraph.h"
#include "session/saved_model.h"
#include "tools/feed_parser.h"
#include "tools/session_feeds.h"

namespace dflow {
namespace {

// Feed tensors outlive the run; so must their allocator.
Allocator* FeedAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// What to run: tensor names, plus the names results are reported under.
struct ModelRun {
  Feeds feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> fetch_names;
  std::vector<std::pair<std::string, TensorInfo>> unfed_inputs;
};

std::string Keys(const google::protobuf::Map<std::string, TensorInfo>& map) {
  std::vector<std::string> keys;
  for (const auto& [key, info] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return absl::StrJoin(keys, ", ");
}

absl::StatusOr<const TensorInfo*> SignatureTensor(
    const google::protobuf::Map<std::string, TensorInfo>& map, const std::string& key,
    absl::string_view flag, const std::string& signature) {
  auto it = map.find(key);
  if (it == map.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " ", key, ": signature '", signature, "' has no ",
                     flag == "feed" ? "input" : "output", " named ", key,
                     "; it has: ", Keys(map)));
  }
  return &it->second;
}

// Rule 2: signature keys to tensor names and dtypes.
absl::StatusOr<ModelRun> SignatureRun(const CliArgs& flags, const SignatureDef& signature,
                                      const std::string& key) {
  ModelRun run;
  std::vector<std::string> fed_keys;
  for (const std::string& flag : flags.GetAll("feed")) {
    DFLOW_ASSIGN_OR_RETURN(FeedFlag feed, SplitFeedFlag(flag));
    DFLOW_ASSIGN_OR_RETURN(const TensorInfo* info,
                           SignatureTensor(signature.inputs(), feed.name, "feed", key));
    DFLOW_ASSIGN_OR_RETURN(Tensor value,
                           ParseFeedValue(feed.name, feed.value, info->dtype(), FeedAllocator()));
    run.feeds.emplace_back(info->name(), std::move(value));
    fed_keys.push_back(feed.name);
  }
  for (const auto& [input, info] : signature.inputs()) {
    if (std::find(fed_keys.begin(), fed_keys.end(), input) == fed_keys.end()) {
      run.unfed_inputs.emplace_back(input, info);
    }
  }
  std::sort(run.unfed_inputs.begin(), run.unfed_inputs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> fetch_keys = flags.GetAll("fetch");
  if (fetch_keys.empty() && flags.GetAll("target").empty()) {
    for (const auto& [output, info] : signature.outputs()) fetch_keys.push_back(output);
    std::sort(fetch_keys.begin(), fetch_keys.end());
  }
  for (const std::string& fetch : fetch_keys) {
    DFLOW_ASSIGN_OR_RETURN(const TensorInfo* info,
                           SignatureTensor(signature.outputs(), fetch, "fetch", key));
    run.fetches.push_back(info->name());
    run.fetch_names.push_back(fetch);
  }
  return run;
}

// Rule 3: tensor names, with feed dtypes read from the session's graph.
absl::StatusOr<ModelRun> TensorNameRun(const CliArgs& flags, const Session& session) {
  ModelRun run;
  for (const std::string& flag : flags.GetAll("feed")) {
    DFLOW_ASSIGN_OR_RETURN(FeedFlag feed, SplitFeedFlag(flag));
    DFLOW_ASSIGN_OR_RETURN(auto parsed, ParseSessionFeed(session, feed, FeedAllocator()));
    run.feeds.emplace_back(feed.name, std::move(parsed.second));
  }
  for (const std::string& fetch : flags.GetAll("fetch")) {
    absl::StatusOr<TensorId> id = ParseTensorName(fetch);
    run.fetches.push_back(fetch);
    run.fetch_names.push_back(id.ok() && !id->IsControl() ? id->ToString() : fetch);
  }
  return run;
}

absl::StatusOr<SavedModelBundle> LoadModel(const CliArgs& flags, const ConfigProto& config) {
  if (flags.Has("saved_model")) {
    if (flags.Has("meta_graph") || flags.Has("graph")) {
      return absl::InvalidArgumentError("--saved_model excludes --graph and --meta_graph");
    }
    const std::vector<std::string> tags =
        absl::StrSplit(flags.Get("tag", kSavedModelTagServe), ',', absl::SkipEmpty());
    return LoadSavedModel(flags.Get("saved_model"), tags, config);
  }
  if (flags.Has("graph")) {
    return absl::InvalidArgumentError("--meta_graph excludes --graph");
  }
  if (!flags.Has("checkpoint")) {
    return absl::InvalidArgumentError("--meta_graph needs --checkpoint=PREFIX");
  }
  return LoadMetaGraphWithCheckpoint(flags.Get("meta_graph"), flags.Get("checkpoint"), config);
}

}  // namespace

bool IsModelRun(const CliArgs& flags) {
  return flags.Has("saved_model") || flags.Has("meta_graph");
}

absl::StatusOr<LoadedModelRun> LoadModelRun(const CliArgs& flags, const ConfigProto& config) {
  LoadedModelRun loaded;
  if (flags.Has("run_options")) {
    DFLOW_RETURN_IF_ERROR(
        ParseTextProto(flags.Get("run_options"), "--run_options", &loaded.run_options));
  }
  DFLOW_ASSIGN_OR_RETURN(SavedModelBundle bundle, LoadModel(flags, config));
  ModelRun run;
  if (flags.Has("saved_model")) {
    const std::string key = flags.Get("signature", kDefaultServingSignatureDefKey);
    DFLOW_ASSIGN_OR_RETURN(const SignatureDef* signature,
                           FindSignature(bundle.meta_graph_def, key));
    DFLOW_ASSIGN_OR_RETURN(run, SignatureRun(flags, *signature, key));
  } else {
    DFLOW_ASSIGN_OR_RETURN(run, TensorNameRun(flags, *bundle.session));
  }
  loaded.session = std::move(bundle.session);
  loaded.feeds = std::move(run.feeds);
  loaded.fetches = std::move(run.fetches);
  loaded.fetch_names = std::move(run.fetch_names);
  loaded.targets = flags.GetAll("target");
  loaded.unfed_inputs = std::move(run.unfed_inputs);
  return loaded;
}

absl::StatusOr<RunResult> RunModel(const CliArgs& flags) {
  ConfigProto config;
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &config));
  }
  DFLOW_ASSIGN_OR_RETURN(LoadedModelRun loaded, LoadModelRun(flags, config));
  RunResult result;
  result.session = std::move(loaded.session);
  result.fetch_names = std::move(loaded.fetch_names);
  DFLOW_RETURN_IF_ERROR(result.session->Run(loaded.run_options, loaded.feeds, loaded.fetches,
                                            loaded.targets, &result.outputs,
                                            flags.Has("run_metadata") ? &result.metadata
                                                                      : nullptr));
  return result;
}

}  // namespace dflow
