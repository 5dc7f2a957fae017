#include "graph/subgraph.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// Canonical "node:k" spellings of `names`; INVALID_ARGUMENT for malformed or control
// names, naming the offending entry.
absl::StatusOr<std::vector<TensorId>> ParseTensorNames(const std::vector<std::string>& names,
                                                       absl::string_view what) {
  std::vector<TensorId> ids;
  ids.reserve(names.size());
  for (const std::string& name : names) {
    absl::StatusOr<TensorId> id = ParseTensorName(name);
    if (!id.ok() || id->IsControl()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '", name, "' is not a valid tensor name"));
    }
    ids.push_back(*std::move(id));
  }
  return ids;
}

// Rule 3: duplicate feeds and fetched feeds.
absl::Status CheckFeedsAndFetches(const std::vector<TensorId>& feeds,
                                  const std::vector<TensorId>& fetches) {
  std::set<std::string> fed;
  for (const TensorId& feed : feeds) {
    if (!fed.insert(feed.ToString()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Endpoint \"", feed.ToString(), "\" fed more than once."));
    }
  }
  for (const TensorId& fetch : fetches) {
    if (fed.count(fetch.ToString()) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(fetch.ToString(), " is both fed and fetched."));
    }
  }
  return absl::OkStatus();
}

// Adds an `_Arg` or `_Retval` node (attrs T, index) assigned to `device`.
absl::StatusOr<Node*> AddCallFrameNode(Graph* graph, std::string name, absl::string_view op,
                                       DataType type, int index, const std::string& device) {
  NodeDef def;
  def.set_name(std::move(name));
  def.set_op(std::string(op));
  (*def.mutable_attr())["T"].set_type(BaseType(type));
  (*def.mutable_attr())["index"].set_i(index);
  DFLOW_ASSIGN_OR_RETURN(Node * node, graph->AddNode(std::move(def)));
  node->set_assigned_device(device);
  return node;
}

// Moves the out-edges of `from` selected by `pick` so that they leave `to` instead
// (data edges from output 0 of `to`, control edges stay control edges).
template <typename Pred>
void MoveOutEdges(Graph* graph, Node* from, Node* to, Pred pick) {
  std::vector<const Edge*> moving;
  for (const Edge* e : from->out_edges()) {
    if (pick(e)) moving.push_back(e);
  }
  for (const Edge* e : moving) {
    if (e->IsControlEdge()) {
      graph->AddControlEdge(to, e->dst);
    } else {
      graph->AddEdge(to, 0, e->dst, e->dst_input);
    }
    graph->RemoveEdge(e);
  }
}

// Rule 4.
absl::StatusOr<std::vector<std::string>> FeedInputs(const std::vector<TensorId>& feeds,
                                                    const std::string& device, Graph* graph) {
  std::vector<std::string> args;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const TensorId& feed = feeds[i];
    const std::string t = feed.ToString();
    Node* node = graph->FindNode(feed.node);
    if (node == nullptr) return TensorNotInGraph(t);
    if (feed.index >= node->num_outputs()) return NoSuchOutput(*node, feed.index);
    DFLOW_ASSIGN_OR_RETURN(
        Node * arg,
        AddCallFrameNode(graph, absl::StrCat("_arg_", feed.node, "_", feed.index, "_", i),
                         "_Arg", node->output_types()[feed.index], static_cast<int>(i),
                         device));
    MoveOutEdges(graph, node, arg, [&](const Edge* e) { return e->src_output == feed.index; });
    if (node->op() == "Placeholder" || node->op() == "PlaceholderV2") {
      MoveOutEdges(graph, node, arg, [](const Edge* e) { return e->IsControlEdge(); });
    }
    args.push_back(arg->name());
  }
  return args;
}

// Rule 5.
absl::StatusOr<std::vector<Node*>> FetchOutputs(const std::vector<TensorId>& fetches,
                                                const std::string& device, Graph* graph) {
  std::vector<Node*> retvals;
  for (size_t i = 0; i < fetches.size(); ++i) {
    const TensorId& fetch = fetches[i];
    const std::string t = fetch.ToString();
    Node* node = graph->FindNode(fetch.node);
    if (node == nullptr) return TensorNotInGraph(t);
    if (node->num_outputs() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tried to fetch data for '", t,
          "', which produces no output.  To run to a node but not fetch any data, pass '", t,
          "' as an argument to the 'target_node_names' argument of the Session::Run API."));
    }
    if (fetch.index >= node->num_outputs()) return NoSuchOutput(*node, fetch.index);
    DFLOW_ASSIGN_OR_RETURN(
        Node * retval,
        AddCallFrameNode(graph, absl::StrCat("_retval_", fetch.node, "_", fetch.index, "_", i),
                         "_Retval", node->output_types()[fetch.index], static_cast<int>(i),
                         device));
    graph->AddEdge(node, fetch.index, retval, 0);
    retvals.push_back(retval);
  }
  return retvals;
}

// Rule 6: the target nodes, by name with any ":k" suffix dropped.
absl::StatusOr<std::vector<Node*>> FindTargets(const std::vector<std::string>& targets,
                                               const Graph& graph) {
  std::vector<Node*> nodes;
  std::string not_found;
  for (const std::string& target : targets) {
    absl::StatusOr<TensorId> id = ParseTensorName(target);
    Node* node = graph.FindNode(id.ok() ? id->node : target);
    if (node == nullptr) {
      absl::StrAppend(&not_found, target, " ");
    } else {
      nodes.push_back(node);
    }
  }
  if (!not_found.empty()) {
    return absl::NotFoundError(
        absl::StrCat("PruneForTargets: Some target nodes not found: ", not_found));
  }
  return nodes;
}

// Rule 7: removes every node that `roots` do not reach backwards.
void PruneForReverseReachability(std::vector<Node*> roots, Graph* graph) {
  std::vector<bool> visited(graph->num_node_ids(), false);
  for (Node* root : roots) visited[root->id()] = true;
  while (!roots.empty()) {
    Node* node = roots.back();
    roots.pop_back();
    for (const Edge* e : node->in_edges()) {
      if (visited[e->src->id()]) continue;
      visited[e->src->id()] = true;
      roots.push_back(e->src);
    }
  }
  for (Node* node : graph->nodes()) {
    if (!visited[node->id()]) graph->RemoveNode(node);
  }
}

}  // namespace

absl::Status TensorNotInGraph(const std::string& tensor) {
  return absl::InvalidArgumentError(
      absl::StrCat("Tensor ", tensor,
                   ", specified in either feed_devices or fetch_devices was not found in the "
                   "Graph"));
}

absl::Status NoSuchOutput(const Node& node, int index) {
  return absl::OutOfRangeError(absl::StrCat("Node '", node.name(), "' (type: '", node.op(),
                                            "', num of outputs: ", node.num_outputs(),
                                            ") does not have output ", index));
}

absl::StatusOr<RewriteResult> RewriteGraphForExecution(const RewriteSpec& spec,
                                                       Graph* graph) {
  if (spec.fetches.empty() && spec.targets.empty()) {
    return absl::InvalidArgumentError("Must specify at least one target to fetch or execute.");
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<TensorId> feeds, ParseTensorNames(spec.feeds, "Feed"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<TensorId> fetches,
                         ParseTensorNames(spec.fetches, "Fetch"));
  DFLOW_RETURN_IF_ERROR(CheckFeedsAndFetches(feeds, fetches));

  RewriteResult result;
  DFLOW_ASSIGN_OR_RETURN(result.arg_nodes, FeedInputs(feeds, spec.client_device, graph));
  DFLOW_ASSIGN_OR_RETURN(std::vector<Node*> roots,
                         FetchOutputs(fetches, spec.client_device, graph));
  for (const Node* retval : roots) result.retval_nodes.push_back(retval->name());
  DFLOW_ASSIGN_OR_RETURN(std::vector<Node*> targets, FindTargets(spec.targets, *graph));
  roots.insert(roots.end(), targets.begin(), targets.end());
  PruneForReverseReachability(std::move(roots), graph);
  return result;
}

}  // namespace dflow
