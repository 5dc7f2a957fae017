// Graph passes: the rewrites a session makes to every plan it builds (constant folding,
// CPU fusion, ...), chosen through a registry. A pass registers itself in its own file
// with DFLOW_REGISTER_GRAPH_PASS (its library alwayslink), so adding a pass touches only
// the folder it lives in; the session runs whatever is registered, in order. Registration
// happens during static initialization: nothing may build a plan before main().
//
//   DFLOW_REGISTER_GRAPH_PASS(cpu_fusion, "cpu_fusion", GraphPassPhase::kPartition, 100,
//                             [](const GraphPassContext&, Graph* g) { return FuseCpuOps(g); });
#ifndef DFLOW_GRAPH_GRAPH_PASS_REGISTRY_H_
#define DFLOW_GRAPH_GRAPH_PASS_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph.h"
#include "proto/config.pb.h"

namespace dflow {

enum class GraphPassPhase {
  // The graph of one (feeds, fetches, targets) signature: placed, pruned to what the
  // signature needs, feeds and fetches rewritten; before it is split per device.
  kPrunedGraph,
  // One device's partition, before its executor is built.
  kPartition,
};

// What a pass may consult.
struct GraphPassContext {
  const ConfigProto& config;  // the session's
  std::string device_type;    // kPartition: the partition's ("CPU", "GPU"); else ""
};

struct GraphPass {
  std::string name;
  GraphPassPhase phase;
  int order;  // passes of a phase run by ascending order, then name
  std::function<absl::Status(const GraphPassContext&, Graph*)> run;
};

class GraphPassRegistry {
 public:
  // The process's registry, which DFLOW_REGISTER_GRAPH_PASS fills.
  static GraphPassRegistry& Global();

  // ALREADY_EXISTS when a pass of that name is registered; INVALID_ARGUMENT without a
  // name or a function.
  absl::Status Register(GraphPass pass);
  // The passes of `phase`, in the order they run.
  std::vector<GraphPass> Passes(GraphPassPhase phase) const;
  // Runs the passes of `phase` on `graph`; stops at the first error and returns it as the
  // pass gave it.
  absl::Status Run(GraphPassPhase phase, const GraphPassContext& context, Graph* graph) const;

 private:
  mutable absl::Mutex mu_;
  std::vector<GraphPass> passes_ ABSL_GUARDED_BY(mu_);
};

namespace internal {
// Registers at static initialization; a name registered twice is a programming error
// and aborts with a message.
struct GraphPassRegistrar {
  explicit GraphPassRegistrar(GraphPass pass);
};
}  // namespace internal

#define DFLOW_REGISTER_GRAPH_PASS(id, name, phase, order, fn)                        \
  static const ::dflow::internal::GraphPassRegistrar dflow_graph_pass_registrar_##id( \
      ::dflow::GraphPass{name, phase, order, fn})

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRAPH_PASS_REGISTRY_H_
