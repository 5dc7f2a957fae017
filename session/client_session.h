// ClientSession: runs graphs built with the C++ builder API (graph/scope.h).
//
//   Scope root = Scope::NewRootScope();
//   auto c = MatMul(root.WithOpName("c"), a, b);
//   auto session = ClientSession::Create(root);
//   std::vector<Tensor> out;
//   (*session)->Run({c}, &out);
//
// Before each Run the session is extended with the nodes added to the scope's graph
// since the last Run (TF's ClientSession behaviour), so a graph can grow between Runs.
// Thread-safety: Run may be called concurrently once the graph stops growing.
#ifndef DFLOW_SESSION_CLIENT_SESSION_H_
#define DFLOW_SESSION_CLIENT_SESSION_H_

#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/scope.h"
#include "session/session.h"

namespace dflow {

class ClientSession {
 public:
  using FeedType = std::unordered_map<Output, Tensor>;

  // `scope` must outlive the ClientSession (it shares the scope's graph).
  static absl::StatusOr<std::unique_ptr<ClientSession>> Create(const Scope& scope,
                                                               const ConfigProto& config = {});

  absl::Status Run(const std::vector<Output>& fetches, std::vector<Tensor>* outputs);
  absl::Status Run(const FeedType& feeds, const std::vector<Output>& fetches,
                   std::vector<Tensor>* outputs);
  absl::Status Run(const FeedType& feeds, const std::vector<Output>& fetches,
                   const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs);
  absl::Status Run(const RunOptions& options, const FeedType& feeds,
                   const std::vector<Output>& fetches, const std::vector<Operation>& run_outputs,
                   std::vector<Tensor>* outputs, RunMetadata* metadata);

  // `outputs` may be null when `fetches` is empty (a run of targets only).

  Session* session() const { return session_.get(); }

 private:
  ClientSession(const Scope& scope, std::unique_ptr<Session> session)
      : scope_(scope), session_(std::move(session)) {}
  // Sends nodes added to the scope since the last call to the session. Serialising the
  // scope's graph costs as much as a small training step (0.8 ms for mnist_train's MLP),
  // so it happens only when the graph has new node ids (as TF's ClientSession checks).
  absl::Status MaybeExtend();

  Scope scope_;
  std::unique_ptr<Session> session_;
  absl::Mutex mu_;
  int nodes_sent_ ABSL_GUARDED_BY(mu_) = 0;
  int node_ids_seen_ ABSL_GUARDED_BY(mu_) = -1;  // the graph's num_node_ids() when sent
};

}  // namespace dflow

#endif  // DFLOW_SESSION_CLIENT_SESSION_H_
