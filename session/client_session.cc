#include "session/client_session.h"

#include "graph/status_macros.h"

namespace dflow {

absl::StatusOr<std::unique_ptr<ClientSession>> ClientSession::Create(const Scope& scope,
                                                                     const ConfigProto& config) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config));
  return std::unique_ptr<ClientSession>(new ClientSession(scope, std::move(session)));
}

absl::Status ClientSession::MaybeExtend() {
  absl::MutexLock lock(&mu_);
  // Node ids only grow as the scope adds nodes, so an unchanged count means nothing new.
  const int node_ids = scope_.graph()->num_node_ids();
  if (node_ids == node_ids_seen_ && scope_.ok()) return absl::OkStatus();
  GraphDef full;
  DFLOW_RETURN_IF_ERROR(scope_.ToGraphDef(&full));
  if (full.node_size() == nodes_sent_) {
    node_ids_seen_ = node_ids;
    return absl::OkStatus();
  }
  GraphDef added;
  *added.mutable_versions() = full.versions();
  *added.mutable_library() = full.library();
  for (int i = nodes_sent_; i < full.node_size(); ++i) *added.add_node() = full.node(i);
  DFLOW_RETURN_IF_ERROR(session_->Extend(added));
  nodes_sent_ = full.node_size();
  node_ids_seen_ = node_ids;
  return absl::OkStatus();
}

absl::Status ClientSession::Run(const std::vector<Output>& fetches,
                                std::vector<Tensor>* outputs) {
  return Run(FeedType(), fetches, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& feeds, const std::vector<Output>& fetches,
                                std::vector<Tensor>* outputs) {
  return Run(feeds, fetches, {}, outputs);
}

absl::Status ClientSession::Run(const FeedType& feeds, const std::vector<Output>& fetches,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs) {
  return Run(RunOptions(), feeds, fetches, run_outputs, outputs, nullptr);
}

absl::Status ClientSession::Run(const RunOptions& options, const FeedType& feeds,
                                const std::vector<Output>& fetches,
                                const std::vector<Operation>& run_outputs,
                                std::vector<Tensor>* outputs, RunMetadata* metadata) {
  DFLOW_RETURN_IF_ERROR(MaybeExtend());
  std::vector<std::pair<std::string, Tensor>> feed_list;
  for (const auto& [output, tensor] : feeds) feed_list.emplace_back(output.name(), tensor);
  std::vector<std::string> fetch_names;
  for (const Output& output : fetches) fetch_names.push_back(output.name());
  std::vector<std::string> targets;
  for (const Operation& op : run_outputs) targets.push_back(op.name());
  // A null `outputs` is fine for a run of targets only (a training step).
  std::vector<Tensor> unused;
  if (outputs == nullptr && !fetches.empty()) {
    return absl::InvalidArgumentError("ClientSession::Run: fetches given but outputs is null");
  }
  return session_->Run(options, feed_list, fetch_names, targets,
                       outputs == nullptr ? &unused : outputs, metadata);
}

}  // namespace dflow
