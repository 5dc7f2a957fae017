#include "session/saved_model.h"

#include <set>
#include <utility>

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "kernels/io/file_io.h"
#include "proto/saved_model.pb.h"

namespace dflow {
namespace {

constexpr char kInitOpSignatureKey[] = "__saved_model_init_op";
constexpr char kMainOpCollection[] = "saved_model_main_op";
constexpr char kLegacyInitOpCollection[] = "legacy_init_op";
constexpr char kAssetsCollection[] = "saved_model_assets";

using Feeds = std::vector<std::pair<std::string, Tensor>>;

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || name.empty() || name.front() == '/') return name.empty() ? dir : name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir) {
  SavedModel saved_model;
  for (const char* name : {"saved_model.pb", "saved_model.pbtxt"}) {
    const std::string path = JoinPath(export_dir, name);
    if (!FileExists(path)) continue;
    DFLOW_RETURN_IF_ERROR(ReadProtoFile(path, &saved_model));
    return saved_model;
  }
  return absl::NotFoundError(absl::StrCat(
      "Could not find SavedModel .pb or .pbtxt at supplied export directory path: ",
      export_dir));
}

std::string TagSetString(const std::set<std::string>& tags) {
  return absl::StrCat("{ ", absl::StrJoin(tags, ", "), " }");
}

absl::StatusOr<MetaGraphDef> FindMetaGraph(SavedModel saved_model,
                                           const std::vector<std::string>& tags) {
  const std::set<std::string> wanted(tags.begin(), tags.end());
  std::vector<std::string> available;
  for (MetaGraphDef& meta_graph : *saved_model.mutable_meta_graphs()) {
    const auto& have = meta_graph.meta_info_def().tags();
    const std::set<std::string> tag_set(have.begin(), have.end());
    if (tag_set == wanted) return std::move(meta_graph);
    available.push_back(TagSetString(tag_set));
  }
  return absl::NotFoundError(absl::StrCat(
      "Could not find meta graph def matching supplied tags: ", TagSetString(wanted),
      ". Available tag-sets in the SavedModel: ",
      available.empty() ? "none" : absl::StrJoin(available, ", ")));
}

absl::StatusOr<Tensor> StringScalar(Session& session, const std::string& value) {
  DFLOW_ASSIGN_OR_RETURN(
      Tensor tensor, Tensor::Allocate(session.devices().client_device()->allocator(), DT_STRING,
                                      TensorShape({})));
  tensor.scalar<std::string>() = value;
  return tensor;
}

// Each asset tensor fed its file's path (TF 1 collection and TF 2 field alike).
absl::StatusOr<Feeds> AssetFeeds(Session& session, const MetaGraphDef& meta_graph,
                                 const std::string& export_dir) {
  std::vector<AssetFileDef> assets(meta_graph.asset_file_def().begin(),
                                   meta_graph.asset_file_def().end());
  auto collection = meta_graph.collection_def().find(kAssetsCollection);
  if (collection != meta_graph.collection_def().end()) {
    for (const auto& any : collection->second.any_list().value()) {
      AssetFileDef asset;
      if (!asset.ParseFromString(any.value())) {
        return absl::InvalidArgumentError(
            absl::StrCat("Unparseable AssetFileDef in collection ", kAssetsCollection));
      }
      assets.push_back(std::move(asset));
    }
  }
  Feeds feeds;
  for (const AssetFileDef& asset : assets) {
    DFLOW_ASSIGN_OR_RETURN(
        Tensor path,
        StringScalar(session, JoinPath(JoinPath(export_dir, "assets"), asset.filename())));
    feeds.emplace_back(asset.tensor_info().name(), std::move(path));
  }
  return feeds;
}

absl::Status RunRestore(Session& session, const SaverDef& saver, const std::string& prefix,
                        Feeds feeds) {
  DFLOW_ASSIGN_OR_RETURN(Tensor prefix_tensor, StringScalar(session, prefix));
  feeds.emplace_back(saver.filename_tensor_name(), std::move(prefix_tensor));
  std::vector<Tensor> outputs;
  return Annotate(session.Run(feeds, {}, {saver.restore_op_name()}, &outputs),
                  absl::StrCat("Restoring checkpoint ", prefix, ": "));
}

// The init op's name, or "" when the model has none.
absl::StatusOr<std::string> InitOpName(const MetaGraphDef& meta_graph,
                                       const std::string& export_dir) {
  auto signature = meta_graph.signature_def().find(kInitOpSignatureKey);
  if (signature != meta_graph.signature_def().end()) {
    auto output = signature->second.outputs().find(kInitOpSignatureKey);
    if (output != signature->second.outputs().end()) return output->second.name();
  }
  for (const char* key : {kMainOpCollection, kLegacyInitOpCollection}) {
    auto collection = meta_graph.collection_def().find(key);
    if (collection == meta_graph.collection_def().end()) continue;
    const auto& nodes = collection->second.node_list().value();
    if (nodes.size() != 1) {
      return absl::FailedPreconditionError(
          absl::StrCat("Expected exactly one main op in : ", export_dir));
    }
    return nodes[0];
  }
  return std::string();
}

ConfigProto LoadingConfig(const ConfigProto& config) {
  ConfigProto loading = config;
  loading.set_allow_soft_placement(true);
  return loading;
}

absl::StatusOr<std::unique_ptr<Session>> CreateSession(const MetaGraphDef& meta_graph,
                                                       const ConfigProto& config) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(LoadingConfig(config)));
  DFLOW_RETURN_IF_ERROR(session->Create(meta_graph.graph_def()));
  return session;
}

}  // namespace

absl::StatusOr<SavedModelBundle> LoadSavedModel(const std::string& export_dir,
                                                const std::vector<std::string>& tags,
                                                const ConfigProto& config) {
  DFLOW_ASSIGN_OR_RETURN(SavedModel saved_model, ReadSavedModel(export_dir));
  SavedModelBundle bundle;
  DFLOW_ASSIGN_OR_RETURN(bundle.meta_graph_def, FindMetaGraph(std::move(saved_model), tags));
  const MetaGraphDef& meta_graph = bundle.meta_graph_def;
  DFLOW_ASSIGN_OR_RETURN(bundle.session, CreateSession(meta_graph, config));
  Session& session = *bundle.session;
  DFLOW_ASSIGN_OR_RETURN(Feeds assets, AssetFeeds(session, meta_graph, export_dir));
  const std::string variables = JoinPath(export_dir, "variables/variables");
  if (meta_graph.has_saver_def() && FileExists(variables + ".index")) {
    DFLOW_RETURN_IF_ERROR(RunRestore(session, meta_graph.saver_def(), variables, assets));
  }
  DFLOW_ASSIGN_OR_RETURN(std::string init_op, InitOpName(meta_graph, export_dir));
  if (!init_op.empty()) {
    std::vector<Tensor> outputs;
    DFLOW_RETURN_IF_ERROR(Annotate(session.Run(assets, {}, {init_op}, &outputs),
                                   absl::StrCat("Running init op ", init_op, ": ")));
  }
  return bundle;
}

absl::StatusOr<SavedModelBundle> LoadMetaGraphWithCheckpoint(const std::string& meta_graph_path,
                                                             const std::string& checkpoint_prefix,
                                                             const ConfigProto& config) {
  SavedModelBundle bundle;
  DFLOW_RETURN_IF_ERROR(ReadProtoFile(meta_graph_path, &bundle.meta_graph_def));
  const MetaGraphDef& meta_graph = bundle.meta_graph_def;
  if (!meta_graph.has_saver_def()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MetaGraphDef ", meta_graph_path,
        " has no saver_def, so no checkpoint can be restored into it"));
  }
  DFLOW_ASSIGN_OR_RETURN(std::string prefix, ResolveCheckpoint(checkpoint_prefix));
  DFLOW_ASSIGN_OR_RETURN(bundle.session, CreateSession(meta_graph, config));
  DFLOW_RETURN_IF_ERROR(RunRestore(*bundle.session, meta_graph.saver_def(), prefix, {}));
  return bundle;
}

absl::StatusOr<std::string> ResolveCheckpoint(const std::string& path) {
  if (!IsDirectory(path)) return path;
  const std::string state_file = JoinPath(path, "checkpoint");
  DFLOW_ASSIGN_OR_RETURN(std::string state, ReadFileToString(state_file));
  for (absl::string_view line : absl::StrSplit(state, '\n')) {
    if (!absl::ConsumePrefix(&line, "model_checkpoint_path:")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
      return JoinPath(path, std::string(line.substr(1, line.size() - 2)));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(state_file, " names no model_checkpoint_path"));
}

absl::StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& meta_graph_def,
                                                  const std::string& key) {
  auto it = meta_graph_def.signature_def().find(key);
  if (it != meta_graph_def.signature_def().end()) return &it->second;
  std::set<std::string> keys;
  for (const auto& [name, signature] : meta_graph_def.signature_def()) keys.insert(name);
  return absl::NotFoundError(absl::StrCat(
      "No signature '", key, "' in the MetaGraphDef; available signatures: ",
      keys.empty() ? "none" : absl::StrJoin(keys, ", ")));
}

}  // namespace dflow
