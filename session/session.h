// Session: TensorFlow 1.x's DirectSession for dflow.
//
//   auto session = NewSession(config);           // devices from the ConfigProto
//   session->Create(graph_def);                  // validate + place the whole graph once
//   session->Run(options, feeds, fetches, targets, &outputs, &metadata);
//   session->Close();
//
// Rules:
//  1. Create/Extend validate the whole GraphDef (every problem at once) and place every
//     node (TF's placer rules, ConfigProto.allow_soft_placement); placement errors come
//     from Create, not from the first Run. log_device_placement prints TF's lines to
//     stderr.
//  2. Each (feeds, fetches, targets) signature compiles once into an immutable
//     ExecutionPlan, cached; "x" and "x:0" are the same tensor.
//  3. Run is safe to call from many threads at once: each step has its own call frame,
//     rendezvous and cancellation.
//  4. A step's first error is returned annotated with its node; RunOptions.timeout_in_ms
//     (else ConfigProto.operation_timeout_in_ms) ends a step with DEADLINE_EXCEEDED.
//  5. Close cancels in-flight steps; later calls fail with CANCELLED.
#ifndef DFLOW_SESSION_SESSION_H_
#define DFLOW_SESSION_SESSION_H_

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph.h"
#include "graph/placer.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "runtime/cancellation.h"
#include "runtime/kernel_registry.h"
#include "runtime/rendezvous.h"
#include "runtime/stateful_kernels.h"
#include "runtime/tensor.h"
#include "session/device_factory.h"
#include "session/execution_plan.h"
#include "session/log_sink.h"
#include "session/session_limits.h"

namespace dflow {

// What a feed of a tensor must be: the dtype, and the shape the graph declares or infers
// (unknown dimensions left open). From Session::FeedSpec.
struct FeedSpec {
  DataType dtype = DT_INVALID;
  PartialShape shape;
};

class Session {
 public:
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // A GraphDef with no nodes is accepted and changes nothing (TF's behaviour).
  // ALREADY_EXISTS on a second Create; INVALID_ARGUMENT listing every graph problem or
  // the placement error.
  absl::Status Create(const GraphDef& graph_def);
  // The same, for a caller that will feed `fed_tensors` ("x" or "x:0"): an input naming
  // a fed tensor of a node the GraphDef lacks gets a Placeholder of the consumer's dtype
  // standing in, as TF's import_graph_def(input_map=...) lets a fed tensor replace one.
  absl::Status Create(const GraphDef& graph_def, const std::vector<std::string>& fed_tensors);
  // Adds nodes to the graph and re-places it. INVALID_ARGUMENT when a node name exists.
  absl::Status Extend(const GraphDef& graph_def);

  absl::Status Run(const RunOptions& options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                   RunMetadata* metadata);
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets, std::vector<Tensor>* outputs);

  // Cancels the steps in flight and returns once every call in flight (Create, Extend,
  // Run) on other threads has returned; later calls fail with CANCELLED. Idempotent.
  // The destructor closes the session.
  absl::Status Close();

  // What a feed of tensor `name` must be, by the rules Run checks feeds with: TF's errors
  // for a name that is no tensor of the graph. Lets callers that hold values as text
  // (the dflow command's --feed) parse them to the right dtype without importing the
  // graph themselves.
  absl::StatusOr<FeedSpec> GetFeedSpec(const std::string& name) const;
  // The graph as created or extended (null before Create); immutable.
  std::shared_ptr<const Graph> graph() const;

  std::vector<DeviceAttributes> ListDevices() const;
  const DeviceMgr& devices() const { return *devices_.devices; }
  // The placement of the current graph (empty before Create).
  PlacementResult placement() const;
  const ConfigProto& config() const { return config_; }

 private:
  friend absl::StatusOr<std::unique_ptr<Session>> NewSession(const ConfigProto& config,
                                                              std::shared_ptr<LogSink> log);
  Session(ConfigProto config, SessionLimits limits, SessionDevices devices,
          const KernelRegistry& kernels);

  // The graph as last created/extended, placed. Immutable once published.
  struct GraphState {
    // As given, merged, when it calls library functions (`graph` holds the inlined
    // bodies); otherwise `graph` holds the same nodes and no GraphDef is kept.
    std::optional<GraphDef> caller_graph_def;
    std::shared_ptr<Graph> graph;  // shared with the plans built from it
    PlacementResult placement;
    // The GraphDef as created or extended, for Extend to merge into.
    GraphDef Definition() const {
      return caller_graph_def.has_value() ? *caller_graph_def : graph->ToGraphDef();
    }
  };
  // Per-step handles that Close() uses to cancel in-flight steps.
  struct StepHandle {
    CancellationToken* cancellation;
    Rendezvous* rendezvous;
  };

  // Counts a public call as in flight for its lifetime, so that Close can wait for it.
  class CallInFlight;
  bool NoCallsInFlight() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return calls_in_flight_ == 0; }

  absl::Status InstallGraph(GraphDef graph_def);
  // The current graph state, or CANCELLED / INVALID_ARGUMENT (closed, never created).
  absl::StatusOr<std::shared_ptr<const GraphState>> CurrentState() const;
  // A Run some of whose fetches are fed: those are answered with the fed values, as TF's
  // Python Session does (its C++ DirectSession refuses them); `fed[i]` is fetch i's feed
  // index or -1.
  absl::Status RunWithFedFetches(const RunOptions& options,
                                 const std::vector<std::pair<std::string, Tensor>>& feeds,
                                 const PlanSignature& signature, const std::vector<int>& fed,
                                 std::vector<Tensor>* outputs, RunMetadata* metadata);
  // TF's errors for feeds naming no tensor of the graph, or of another dtype.
  absl::Status CheckFedTensorsExist(const std::vector<std::string>& names,
                                    const std::vector<Tensor>& values);
  // Prints, once per session, the import warnings not printed before (stderr).
  void WarnAboutDroppedAttrs(const std::vector<std::string>& warnings);
  absl::StatusOr<std::shared_ptr<const ExecutionPlan>> GetPlan(const PlanSignature& signature);
  absl::Status RunPlan(const ExecutionPlan& plan, const RunOptions& options,
                       std::vector<Tensor> feeds, std::vector<Tensor>* outputs,
                       RunMetadata* metadata);
  int64_t TimeoutMs(const RunOptions& options) const;

  const ConfigProto config_;
  const SessionLimits limits_;  // from config_.dflow_limits
  SessionDevices devices_;
  const KernelRegistry& kernels_;
  // Stateful nodes' kernels, shared by all plans (TF's OpSegment); after devices_, so
  // destroyed before them.
  const std::unique_ptr<StatefulKernels> stateful_kernels_ = std::make_unique<StatefulKernels>();

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<LogSink> log_ = StderrLogSink();  // set once, by NewSession
  std::shared_ptr<const GraphState> state_ ABSL_GUARDED_BY(mu_);
  // Create's fed tensors: stand-ins for the fed nodes the GraphDef lacks, kept for Extend.
  std::vector<std::string> fed_tensors_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const ExecutionPlan>> plans_
      ABSL_GUARDED_BY(mu_);
  std::set<StepHandle*> active_steps_ ABSL_GUARDED_BY(mu_);
  // Import warnings already printed: Extend re-imports the whole graph, and a user hears
  // about each dropped attr once.
  std::set<std::string> warned_ ABSL_GUARDED_BY(mu_);
  int calls_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

// Creates a session with the devices `config` asks for. INVALID_ARGUMENT for bad
// ConfigProto values (naming the field).
// `log` receives log_device_placement's lines and warnings; null: stderr (LogSink).
absl::StatusOr<std::unique_ptr<Session>> NewSession(const ConfigProto& config = {},
                                                    std::shared_ptr<LogSink> log = nullptr);

// The "Device mapping:" block TF prints for log_device_placement (accelerators only).
std::string DeviceMappingText(const DeviceMgr& devices);

}  // namespace dflow

#endif  // DFLOW_SESSION_SESSION_H_
