// Rewriting a placed graph for one (feeds, fetches, targets) signature: TF's
// `subgraph::RewriteGraphForExecution` for Run/MakeCallable (graph/subgraph.cc), with
// TF 2.21's codes and texts.
//
// Rules, applied in this order (errors are reported in the same order, first one wins):
//  1. No fetches and no targets: INVALID_ARGUMENT
//     `Must specify at least one target to fetch or execute.`
//  2. Tensor names are canonicalised to "node:k" (`x` and `x:0` name the same tensor);
//     that spelling is what every message below prints as <t>. A malformed name (or a
//     control name `^x`) is INVALID_ARGUMENT.
//  3. A tensor fed twice: INVALID_ARGUMENT `Endpoint "<t>" fed more than once.`
//     A fetched feed: INVALID_ARGUMENT `<t> is both fed and fetched.` (as TF's C++
//     DirectSession; dflow's Session answers such a fetch with the fed value first, as
//     TF's Python Session does, so only direct callers of this rewrite see it).
//  4. Feed i of output `node:k` becomes an `_Arg` node `_arg_<node>_<k>_<i>` (attrs
//     T = base dtype of the output, index = i). Every consumer of that output is rewired
//     to it; when `node` is a Placeholder or PlaceholderV2 its outgoing control edges
//     move to the `_Arg` too. Errors: INVALID_ARGUMENT `Tensor <t>, specified in either
//     feed_devices or fetch_devices was not found in the Graph`; OUT_OF_RANGE
//     `Node '<node>' (type: '<op>', num of outputs: N) does not have output k`.
//  5. Fetch i of `node:k` adds a `_Retval` node `_retval_<node>_<k>_<i>` (attrs T, index)
//     reading it. Errors: as for feeds for an unknown node; for an op with no
//     outputs INVALID_ARGUMENT `Tried to fetch data for '<t>', which produces no output.
//     To run to a node but not fetch any data, pass '<t>' as an argument to the
//     'target_node_names' argument of the Session::Run API.`; otherwise OUT_OF_RANGE as
//     for feeds.
//  6. Targets are node names; a `:k` suffix is accepted and ignored. Unknown names give
//     NOT_FOUND `PruneForTargets: Some target nodes not found: a b ` (names as given,
//     space-separated, trailing space).
//  7. The graph is pruned to the nodes that the `_Retval` nodes and the targets reach
//     backwards over data and control edges. A fed node no one else needs disappears.
//  8. Every node added here is assigned `client_device`.
//
// Not done here (TF does them elsewhere or not at all for DirectSession): Grappler,
// partial-run `_Recv`/`_Send` feeds, feed shape checks (TF never checks them in C++).
#ifndef DFLOW_GRAPH_SUBGRAPH_H_
#define DFLOW_GRAPH_SUBGRAPH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace dflow {

// One call signature. Feeds and fetches are tensor names ("x" or "x:k"); targets are node
// names ("x:k" is accepted, the suffix ignored). `client_device` is the full device name
// the new `_Arg`/`_Retval` nodes are assigned to (normally CPU:0).
struct RewriteSpec {
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::string client_device;
};

// Names of the nodes the rewrite added, by feed and fetch index. An `_Arg` that no
// fetch or target needs is pruned (rule 7, as in TF), so its name may be absent from the
// graph; the call frame still has a slot for it.
struct RewriteResult {
  std::vector<std::string> arg_nodes;
  std::vector<std::string> retval_nodes;
};

// Applies rules 1-8 to `graph` in place. On error the graph may be partly rewritten
// (callers rewrite a copy, as DirectSession does).
// REQUIRES: `graph` is non-null.
[[nodiscard]] absl::StatusOr<RewriteResult> RewriteGraphForExecution(const RewriteSpec& spec,
                                                                     Graph* graph);

// TF 2.21's errors for a feed or fetch `tensor` ("node:k") whose node the graph lacks
// (INVALID_ARGUMENT), and for an output `index` that `node` does not have (OUT_OF_RANGE).
absl::Status TensorNotInGraph(const std::string& tensor);
absl::Status NoSuchOutput(const Node& node, int index);

}  // namespace dflow

#endif  // DFLOW_GRAPH_SUBGRAPH_H_
