// ExecutionPlan: everything one (feeds, fetches, targets) signature needs, compiled once.
//
// Built from the session's placed graph:
//  1. copy the placed graph (nodes keep their assigned devices);
//  2. rewrite feeds to _Arg and fetches to _Retval, prune to what they need;
//  3. partition per device with _Send/_Recv pairs;
//  4. import each partition and instantiate its kernels in an Executor.
// Immutable afterwards: concurrent Runs share a plan and keep per-step state elsewhere.
#ifndef DFLOW_SESSION_EXECUTION_PLAN_H_
#define DFLOW_SESSION_EXECUTION_PLAN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/kernel_registry.h"

namespace dflow {

struct PlanSignature {
  std::vector<std::string> feeds;    // canonical "node:k"
  std::vector<std::string> fetches;  // canonical "node:k"
  std::vector<std::string> targets;  // node names
  // "feeds->fetches/targets": the plan cache key.
  std::string Key() const;
};

class ExecutionPlan {
 public:
  struct Partition {
    Device* device = nullptr;
    // For RunMetadata.partition_graphs, without the values of the Consts named in
    // `bare_consts` (big ones): the kernels hold those decoded and the placed graph holds
    // them encoded; a third copy per plan would only serve output_partition_graphs.
    GraphDef graph_def;
    std::vector<std::string> bare_consts;
    std::unique_ptr<Executor> executor;
  };

  // `devices` and `kernels` are only read during Build and must outlive the plan; the
  // plan keeps `placed_graph` (shared, immutable) for PartitionGraphDef. The registered
  // graph passes (graph/graph_pass_registry.h) run with `config`. With `shared`, the
  // kernels of stateful nodes are the session's (runtime/stateful_kernels.h).
  static absl::StatusOr<std::unique_ptr<ExecutionPlan>> Build(
      std::shared_ptr<const Graph> placed_graph, const PlanSignature& signature,
      const DeviceMgr& devices, const KernelRegistry& kernels,
      const ConfigProto& config = ConfigProto(), StatefulKernels* shared = nullptr);

  const std::vector<Partition>& partitions() const { return partitions_; }
  // Whether a step needs a rendezvous: several partitions, or one holding a same-device
  // `_Send`/`_Recv` pair (graph/partition.h rule 10).
  bool needs_rendezvous() const { return needs_rendezvous_; }
  // `partition`'s GraphDef, complete (as TF's RunMetadata.partition_graphs has it).
  GraphDef PartitionGraphDef(const Partition& partition) const;
  // The dtype each feed must have (the _Arg's T).
  const std::vector<DataType>& feed_types() const { return feed_types_; }
  // The shape each fed tensor is known to have (a Placeholder's `shape` attr, or what
  // shape inference found); fed values must be compatible with it.
  const std::vector<PartialShape>& feed_shapes() const { return feed_shapes_; }
  const std::vector<std::string>& feed_names() const { return feed_names_; }
  int num_fetches() const { return num_fetches_; }
  // Names of the fetched tensors as given, for error messages.
  const std::vector<std::string>& fetch_names() const { return fetch_names_; }

 private:
  ExecutionPlan() = default;

  std::shared_ptr<const Graph> placed_graph_;
  std::vector<Partition> partitions_;
  std::vector<DataType> feed_types_;
  std::vector<PartialShape> feed_shapes_;
  std::vector<std::string> feed_names_;
  std::vector<std::string> fetch_names_;
  int num_fetches_ = 0;
  bool needs_rendezvous_ = false;
};

// "x" -> "x:0"; INVALID_ARGUMENT for malformed names.
absl::StatusOr<std::string> CanonicalTensorName(absl::string_view name);

}  // namespace dflow

#endif  // DFLOW_SESSION_EXECUTION_PLAN_H_
