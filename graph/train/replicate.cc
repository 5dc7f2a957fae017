#include "graph/train/replicate.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "graph/control_flow.h"
#include "graph/graph_def_import.h"
#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "graph/ops.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using NameSet = absl::flat_hash_set<std::string>;

struct Update {
  int node;       // index in the graph
  int grad_slot;  // which input is the gradient
  TensorId grad;  // that input
  // A sparse update (SparseApply*, ResourceSparseApply*): the rows' indices; slot -1
  // for a dense update.
  int indices_slot = -1;
  TensorId indices;
};

// A sparse gradient an optimizer merges itself, outside its update ops (Adam's sparse
// path: Unique of the indices, UnsortedSegmentSum of the rows by Unique's idx, then
// scatters into its slots and a dense update): the merge is not copied per tower, and
// takes the towers' indices and weighted rows concatenated instead of tower 0's.
struct OptimizerMerge {
  int unique;                   // the Unique node
  TensorId indices;             // its input
  std::vector<int> sums;        // the UnsortedSegmentSums reading unique:1 as segment ids
  std::vector<TensorId> rows;   // their input 0, one per sum
};

// Ops that make a resource living for one step (a v1 loop's stacks, TensorArrays): a tower
// needs its own, so they are copied with the part that uses them.
bool CreatesStepResource(const std::string& op) {
  static const NameSet kCreators = {"StackV2", "Stack", "TensorArrayV3", "TensorArrayV2",
                                    "TensorArray"};
  return kCreators.contains(op);
}

class Replicator {
 public:
  explicit Replicator(const GraphDef& graph) : graph_(graph) {
    for (int i = 0; i < graph.node_size(); ++i) index_[graph.node(i).name()] = i;
  }

  absl::StatusOr<ReplicatedGraph> Run(const std::vector<std::string>& data_tensors,
                                      const std::string& loss, const std::string& train_op,
                                      const std::vector<std::string>& devices);

 private:
  absl::StatusOr<int> NodeOf(const std::string& tensor, const char* what) const;
  // Input names of node i as parsed tensor ids (malformed ones are skipped: import
  // reports them).
  std::vector<TensorId> Inputs(int i) const;
  absl::StatusOr<std::vector<Update>> FindUpdates(int train_op) const;
  // The optimizer merges the train op runs on data-dependent sparse gradients, outside
  // `model` (the loss's and the updates' ancestors).
  std::vector<OptimizerMerge> FindOptimizerMerges(int train_op, const NameSet& model,
                                                  const NameSet& data_dependent) const;
  // Rewires the merges in `out` to the towers' concatenated indices and weighted rows.
  absl::Status FeedMergesAllTowers(const std::vector<OptimizerMerge>& merges, int towers,
                                   const std::vector<std::string>& weights,
                                   GraphDef* out) const;
  NameSet Forward(const std::vector<int>& from, const NameSet& stop) const;
  NameSet Backward(const std::vector<int>& from) const;
  // Adds to R what its copies need of their own: per-step resources R uses (stacks,
  // TensorArrays, the Enters carrying them), and every node of the v1 loop frames R
  // reaches (a copy of part of a loop would read another tower's frame).
  absl::Status CloseOverLoopsAndStepResources();
  // A stateful node the train op runs whose data comes from R (directly or through nodes
  // outside R) but is neither in it nor past an update or an optimizer merge (`stop`)
  // would see tower 0 alone: refused.
  absl::Status CheckStateReadingR(int train_op, const NameSet& stop) const;
  // Why R's node `name` cannot be copied per tower ("" when it can).
  std::string ReplicationProblem(const Node& node) const;
  void Place(NodeDef* node, const std::string& device, const std::string& prefix) const;

  // Tower t >= 1's name of node `name` of R: prefixed, unless tower 0 alone runs it.
  bool Copied(absl::string_view name) const {
    return replicated_.contains(name) && !tower0_only_.contains(name);
  }

  const GraphDef& graph_;
  std::unique_ptr<Graph> imported_;  // graph_ imported: frames and input dtypes
  absl::flat_hash_map<std::string, int> index_;
  NameSet replicated_;
  NameSet tower0_only_;  // variable writers in R (batch-norm moving averages)
};

absl::StatusOr<int> Replicator::NodeOf(const std::string& tensor, const char* what) const {
  DFLOW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(tensor));
  auto it = index_.find(id.node);
  if (it == index_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices: the ", what, " '", tensor, "' is not in the graph"));
  }
  return it->second;
}

std::vector<TensorId> Replicator::Inputs(int i) const {
  std::vector<TensorId> ids;
  for (const std::string& in : graph_.node(i).input()) {
    absl::StatusOr<TensorId> id = ParseTensorName(in);
    if (id.ok() && index_.contains(id->node)) ids.push_back(*id);
  }
  return ids;
}

absl::StatusOr<std::vector<Update>> Replicator::FindUpdates(int train_op) const {
  std::vector<Update> updates;
  for (const std::string& name : Backward({train_op})) {
    const int i = index_.at(name);
    const NodeDef& node = graph_.node(i);
    const OpDef* def = OpRegistry::Global().Find(node.op());
    // An update writes its variable: a stateful op, or a ref-variable op (TF does not
    // mark those stateful: they write through the ref).
    if (def == nullptr || def->input_arg_size() == 0 ||
        (!def->is_stateful() && !def->input_arg(0).is_ref())) {
      continue;
    }
    for (int a = 0; a < def->input_arg_size(); ++a) {
      const std::string& arg = def->input_arg(a).name();
      if (arg != "grad" && arg != "delta") continue;
      absl::StatusOr<TensorId> grad =
          a < node.input_size() ? ParseTensorName(node.input(a))
                                : absl::InvalidArgumentError("missing");
      if (!grad.ok() || grad->IsControl() || !index_.contains(grad->node)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--devices: update '", name, "' (", node.op(), ") has no valid input ", a,
            " (its ", arg, ")"));
      }
      Update update{i, a, *grad};
      for (int k = 0; k < def->input_arg_size() && k < node.input_size(); ++k) {
        if (def->input_arg(k).name() != "indices") continue;
        absl::StatusOr<TensorId> indices = ParseTensorName(node.input(k));
        if (!indices.ok() || indices->IsControl() || !index_.contains(indices->node)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--devices: sparse update '", name, "' (", node.op(),
              ") has no valid input ", k, " (its indices)"));
        }
        update.indices_slot = k;
        update.indices = *indices;
      }
      updates.push_back(update);
    }
  }
  if (updates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--devices: the train op '", graph_.node(train_op).name(),
        "' runs no optimizer update (an op with a grad or delta input)"));
  }
  return updates;
}

NameSet Replicator::Forward(const std::vector<int>& from, const NameSet& stop) const {
  absl::flat_hash_map<std::string, std::vector<int>> consumers;
  for (int i = 0; i < graph_.node_size(); ++i) {
    for (const TensorId& id : Inputs(i)) consumers[id.node].push_back(i);
  }
  NameSet seen;
  std::deque<int> queue(from.begin(), from.end());
  for (int i : from) seen.insert(graph_.node(i).name());
  while (!queue.empty()) {
    const int i = queue.front();
    queue.pop_front();
    for (int c : consumers[graph_.node(i).name()]) {
      const std::string& name = graph_.node(c).name();
      if (stop.contains(name) || !seen.insert(name).second) continue;
      queue.push_back(c);
    }
  }
  return seen;
}

NameSet Replicator::Backward(const std::vector<int>& from) const {
  NameSet seen;
  std::deque<int> queue(from.begin(), from.end());
  for (int i : from) seen.insert(graph_.node(i).name());
  while (!queue.empty()) {
    const int i = queue.front();
    queue.pop_front();
    for (const TensorId& id : Inputs(i)) {
      if (seen.insert(id.node).second) queue.push_back(index_.at(id.node));
    }
  }
  return seen;
}

// `node` (a member of R or its copy) on `device`, its inputs and colocation inside R
// renamed with `prefix`, colocation outside R dropped, loop frames made its own.
void Replicator::Place(NodeDef* node, const std::string& device,
                       const std::string& prefix) const {
  node->set_device(device);
  for (std::string& in : *node->mutable_input()) {
    absl::StatusOr<TensorId> id = ParseTensorName(in);
    if (!id.ok() || !(prefix.empty() ? replicated_.contains(id->node) : Copied(id->node))) {
      continue;
    }
    in = absl::StrCat(id->IsControl() ? "^" : "", prefix, id->node,
                      id->index > 0 ? absl::StrCat(":", id->index) : "");
  }
  auto& attrs = *node->mutable_attr();
  if (auto it = attrs.find("_class"); it != attrs.end()) {
    AttrValue kept;
    for (const std::string& entry : it->second.list().s()) {
      absl::string_view group = entry;
      if (absl::ConsumePrefix(&group, "loc:@") &&
          (prefix.empty() ? replicated_.contains(group) : Copied(group))) {
        kept.mutable_list()->add_s(absl::StrCat("loc:@", prefix, group));
      }
    }
    if (kept.list().s_size() == 0) {
      attrs.erase(it);
    } else {
      it->second = kept;
    }
  }
  if (auto it = attrs.find("frame_name"); it != attrs.end() && !prefix.empty()) {
    it->second.set_s(prefix + it->second.s());
  }
  node->set_name(prefix + node->name());
}

// Why node `op` cannot be replicated ("" when it can): each tower would write a variable
// or push into a shared per-step resource (a stack, a TensorArray) once, or it belongs
// to a v1 while loop, whose frames the copies would share.
// Assign* ops: a variable written from the data, such as a batch-norm moving average.
// Tower 0 alone runs them (TF 1's multi-tower example keeps the first tower's updates).
bool IsVariableAssign(const std::string& op) { return absl::StartsWith(op, "Assign"); }

std::string Replicator::ReplicationProblem(const Node& node) const {
  static const NameSet kReads = {"ReadVariableOp", "ResourceGather", "ResourceGatherNd",
                                 "VariableShape"};
  const OpDef& def = node.op_def();
  const bool writes = def.is_stateful() && !kReads.contains(node.op());
  for (const Edge* e : node.in_edges()) {
    if (e->IsControlEdge()) continue;
    const DataType type = node.input_types()[e->dst_input];
    if (IsRefType(type) && !writes) {
      return "it writes a variable through a ref";
    }
    // A stateful op on a resource made outside R writes what every tower shares; on one
    // made in R (a loop's stack or TensorArray) it writes its tower's own.
    if (writes && (type == DT_RESOURCE || IsRefType(type)) &&
        !replicated_.contains(e->src->name())) {
      return "it writes a variable or a shared resource (e.g. batch-norm moving averages)";
    }
  }
  return "";
}

absl::Status Replicator::CheckStateReadingR(int train_op, const NameSet& stop) const {
  static const NameSet kChecksOnly = {"Assert", "Print", "PrintV2"};
  const NameSet run = Backward({train_op});
  // Walk R's data outward, up to the updates and the optimizer merges (`stop`), keeping
  // for each node reached the node of R its data comes from.
  absl::flat_hash_map<const Node*, std::string> origin;
  std::deque<const Node*> queue;
  for (const std::string& name : replicated_) {
    if (const Node* node = imported_->FindNode(name)) queue.push_back(node);
  }
  while (!queue.empty()) {
    const Node* node = queue.front();
    queue.pop_front();
    const std::string& from =
        replicated_.contains(node->name()) ? node->name() : origin.at(node);
    for (const Edge* e : node->out_edges()) {
      const Node* dst = e->dst;
      if (e->IsControlEdge() || replicated_.contains(dst->name()) ||
          stop.contains(dst->name()) || !run.contains(dst->name()) ||
          !origin.emplace(dst, from).second) {
        continue;
      }
      // Variable assigns outside R (moving averages the train op groups without the loss
      // waiting for them) see tower 0's statistics, as TF 1's multi-tower example keeps
      // the first tower's updates; Assert and Print only check or log.
      if (IsVariableAssign(dst->op()) || kChecksOnly.contains(dst->op())) continue;
      if (dst->op_def().is_stateful()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--devices: '", dst->name(), "' (", dst->op(), ") writes state from '", from,
            "', which each tower computes from its own data; towers combine only the "
            "gradients of optimizer updates (ops with a grad or delta input) and the sparse "
            "gradients optimizers merge themselves (Unique + UnsortedSegmentSum), so this "
            "one would see tower 0 alone"));
      }
      queue.push_back(dst);
    }
  }
  return absl::OkStatus();
}

absl::Status Replicator::CloseOverLoopsAndStepResources() {
  std::vector<int> creators, members;
  for (int i = 0; i < graph_.node_size(); ++i) {
    if (CreatesStepResource(graph_.node(i).op())) creators.push_back(i);
    if (replicated_.contains(graph_.node(i).name())) members.push_back(i);
  }
  if (!creators.empty()) {
    const NameSet carriers = Forward(creators, {});
    for (const std::string& name : Backward(members)) {
      if (carriers.contains(name)) replicated_.insert(name);
    }
  }
  if (!HasControlFlow(*imported_)) return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(*imported_));
  absl::flat_hash_set<int> frames;
  for (const std::string& name : replicated_) {
    const Node* node = imported_->FindNode(name);
    for (int f = node == nullptr ? 0 : info.node_frame[node->id()]; f > 0;
         f = info.frames[f].parent) {
      frames.insert(f);
    }
  }
  for (const Node* node : imported_->nodes()) {
    if (frames.contains(info.node_frame[node->id()]) ||
        frames.contains(info.entered_frame[node->id()])) {
      replicated_.insert(node->name());
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> WeightedTerms(GraphDef* graph, const std::string& scope,
                                       const std::vector<std::string>& tensors,
                                       const std::vector<std::string>& weights,
                                       DataType dtype);

// The weighted sum of the towers' `tensors` (weight_t * tensor_t, the weights fed per
// step; TrainingLoopOptions::tower_weights), named under `scope`.
std::string AddWeightedSum(GraphDef* graph, const std::string& scope,
                           const std::vector<std::string>& tensors,
                           const std::vector<std::string>& weights, DataType dtype) {
  std::vector<std::string> terms = WeightedTerms(graph, scope, tensors, weights, dtype);
  NodeDef* sum = AddNodeDef(graph, scope + "/mean", "AddN", terms);
  (*sum->mutable_attr())["T"] = TypeAttr(dtype);
  (*sum->mutable_attr())["N"] = IntAttr(static_cast<int64_t>(terms.size()));
  return sum->name();
}

// weight_t * tensor_t per tower (the weights cast to `dtype`).
std::vector<std::string> WeightedTerms(GraphDef* graph, const std::string& scope,
                                       const std::vector<std::string>& tensors,
                                       const std::vector<std::string>& weights,
                                       DataType dtype) {
  std::vector<std::string> terms;
  for (size_t t = 0; t < tensors.size(); ++t) {
    std::string weight = weights[t];
    if (dtype != DT_FLOAT) {
      NodeDef* cast = AddNodeDef(graph, absl::StrCat(scope, "/weight_", t), "Cast", {weight});
      (*cast->mutable_attr())["SrcT"] = TypeAttr(DT_FLOAT);
      (*cast->mutable_attr())["DstT"] = TypeAttr(dtype);
      weight = cast->name();
    }
    NodeDef* term = AddNodeDef(graph, absl::StrCat(scope, "/term_", t), "Mul",
                            {tensors[t], weight});
    (*term->mutable_attr())["T"] = TypeAttr(dtype);
    terms.push_back(term->name());
  }
  return terms;
}

// ConcatV2 of `tensors` (of `dtype`) along axis 0.
std::string AddConcat(GraphDef* graph, const std::string& name,
                      const std::vector<std::string>& tensors, DataType dtype) {
  NodeDef* axis = AddNodeDef(graph, name + "/axis", "Const", {});
  TensorProto zero;
  zero.set_dtype(DT_INT32);
  zero.mutable_tensor_shape();
  zero.add_int_val(0);
  (*axis->mutable_attr())["dtype"] = TypeAttr(DT_INT32);
  (*axis->mutable_attr())["value"] = TensorAttr(zero);
  std::vector<std::string> inputs = tensors;
  inputs.push_back(axis->name());
  NodeDef* concat = AddNodeDef(graph, name, "ConcatV2", inputs);
  (*concat->mutable_attr())["T"] = TypeAttr(dtype);
  (*concat->mutable_attr())["N"] = IntAttr(static_cast<int64_t>(tensors.size()));
  (*concat->mutable_attr())["Tidx"] = TypeAttr(DT_INT32);
  return concat->name();
}

// The towers' sparse gradients (rows `values`, their `indices`) as one: the weighted rows
// concatenated and rows of one index summed (Unique + UnsortedSegmentSum, as TF's
// optimizers merge repeated indices), so the update sees each index once.
std::pair<std::string, std::string> AddWeightedSparseSum(
    GraphDef* graph, const std::string& scope, const std::vector<std::string>& values,
    const std::vector<std::string>& indices, const std::vector<std::string>& weights,
    DataType dtype, DataType index_type) {
  const std::string rows =
      AddConcat(graph, scope + "/rows", WeightedTerms(graph, scope, values, weights, dtype),
                dtype);
  const std::string all = AddConcat(graph, scope + "/indices", indices, index_type);
  NodeDef* unique = AddNodeDef(graph, scope + "/unique", "Unique", {all});
  (*unique->mutable_attr())["T"] = TypeAttr(index_type);
  (*unique->mutable_attr())["out_idx"] = TypeAttr(DT_INT32);
  NodeDef* count = AddNodeDef(graph, scope + "/count", "Size", {unique->name()});
  (*count->mutable_attr())["T"] = TypeAttr(index_type);
  (*count->mutable_attr())["out_type"] = TypeAttr(DT_INT32);
  NodeDef* sum = AddNodeDef(graph, scope + "/sum", "UnsortedSegmentSum",
                            {rows, unique->name() + ":1", count->name()});
  (*sum->mutable_attr())["T"] = TypeAttr(dtype);
  (*sum->mutable_attr())["Tindices"] = TypeAttr(DT_INT32);
  (*sum->mutable_attr())["Tnumsegments"] = TypeAttr(DT_INT32);
  return {sum->name(), unique->name()};
}

// The towers' weights: PlaceholderWithDefault 1/towers, fed share / batch per step.
std::vector<std::string> AddWeights(GraphDef* graph, int towers) {
  std::vector<std::string> names;
  for (int t = 0; t < towers; ++t) {
    const std::string base = absl::StrCat("dflow_towers/weight_", t);
    NodeDef* value = AddNodeDef(graph, base + "/default", "Const", {});
    TensorProto scalar;
    scalar.set_dtype(DT_FLOAT);
    scalar.mutable_tensor_shape();
    scalar.add_float_val(1.0f / static_cast<float>(towers));
    (*value->mutable_attr())["dtype"] = TypeAttr(DT_FLOAT);
    (*value->mutable_attr())["value"] = TensorAttr(scalar);
    NodeDef* weight = AddNodeDef(graph, base, "PlaceholderWithDefault", {value->name()});
    (*weight->mutable_attr())["dtype"] = TypeAttr(DT_FLOAT);
    (*weight->mutable_attr())["shape"] = ShapeAttr(PartialShape::Scalar());
    names.push_back(base);
  }
  return names;
}

// The dtype of output 0 of `node` when its attrs say it (T, dtype, DstT).
absl::StatusOr<DataType> TypeOf(const NodeDef& node) {
  for (const char* attr : {"T", "dtype", "DstT"}) {
    auto it = node.attr().find(attr);
    if (it != node.attr().end()) {
      if (it->second.type() == DT_FLOAT || it->second.type() == DT_DOUBLE) {
        return it->second.type();
      }
      break;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--devices: cannot average '", node.name(), "' (", node.op(),
      ") over towers: only float and double losses and gradients are averaged"));
}

std::string Prefixed(const std::string& prefix, const std::string& tensor) {
  absl::StatusOr<TensorId> id = ParseTensorName(tensor);
  return id.ok() ? absl::StrCat(prefix, id->ToString()) : prefix + tensor;
}

std::vector<OptimizerMerge> Replicator::FindOptimizerMerges(
    int train_op, const NameSet& model, const NameSet& data_dependent) const {
  std::vector<OptimizerMerge> merges;
  for (const std::string& name : Backward({train_op})) {
    const Node* unique = imported_->FindNode(name);
    if (unique == nullptr || unique->op() != "Unique" || model.contains(name)) continue;
    const Edge* in = unique->input_edge(0);
    if (in == nullptr || !data_dependent.contains(in->src->name())) continue;
    OptimizerMerge merge{index_.at(name), TensorId{in->src->name(), in->src_output}, {}, {}};
    // Every reader of the positions (unique:1) must be a sum of data-dependent rows: the
    // positions will index all towers' rows, so any other reader would be misled.
    bool all_sums = true;
    for (const Edge* e : unique->out_edges()) {
      if (e->IsControlEdge() || e->src_output != 1) continue;
      const Edge* rows = e->dst->input_edge(0);
      if (e->dst_input != 1 || e->dst->op() != "UnsortedSegmentSum" || rows == nullptr ||
          !data_dependent.contains(rows->src->name())) {
        all_sums = false;
        break;
      }
      merge.sums.push_back(index_.at(e->dst->name()));
      merge.rows.push_back(TensorId{rows->src->name(), rows->src_output});
    }
    if (all_sums && !merge.sums.empty()) merges.push_back(std::move(merge));
  }
  // In graph order, so the nodes added for them come out the same on every run.
  std::sort(merges.begin(), merges.end(), [](const OptimizerMerge& a, const OptimizerMerge& b) {
    return a.unique < b.unique;
  });
  return merges;
}

absl::Status Replicator::FeedMergesAllTowers(const std::vector<OptimizerMerge>& merges,
                                             int towers,
                                             const std::vector<std::string>& weights,
                                             GraphDef* out) const {
  auto all_towers = [&](const TensorId& id) {
    std::vector<std::string> names;
    for (int t = 0; t < towers; ++t) {
      names.push_back(Prefixed(t == 0 ? "" : absl::StrCat("tower_", t, "/"), id.ToString()));
    }
    return names;
  };
  for (const OptimizerMerge& m : merges) {
    NodeDef* unique = out->mutable_node(m.unique);
    DFLOW_ASSIGN_OR_RETURN(DataType index_type, GetTypeAttr(*unique, "T"));
    *unique->mutable_input(0) = AddConcat(out, "dflow_towers/" + unique->name() + "/indices",
                                          all_towers(m.indices), index_type);
    for (size_t k = 0; k < m.sums.size(); ++k) {
      NodeDef* sum = out->mutable_node(m.sums[k]);
      DFLOW_ASSIGN_OR_RETURN(DataType dtype, TypeOf(*sum));
      const std::string scope = "dflow_towers/" + sum->name();
      *sum->mutable_input(0) = AddConcat(
          out, scope + "/rows", WeightedTerms(out, scope, all_towers(m.rows[k]), weights, dtype),
          dtype);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ReplicatedGraph> Replicator::Run(const std::vector<std::string>& data_tensors,
                                                const std::string& loss,
                                                const std::string& train_op,
                                                const std::vector<std::string>& devices) {
  if (devices.size() < 2) {
    return absl::InvalidArgumentError("--devices needs at least two devices");
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices: device ", i, " is empty (\"a,,b\"?)"));
    }
  }
  std::vector<int> data;
  for (const std::string& t : data_tensors) {
    DFLOW_ASSIGN_OR_RETURN(int i, NodeOf(t, "data tensor"));
    data.push_back(i);
  }
  // Each tower gets a share of the batch, so the graph must take any batch size (a graph
  // built for a fixed batch bakes it into shapes of its loss and gradients too).
  for (size_t d = 0; d < data.size(); ++d) {
    const auto& attrs = graph_.node(data[d]).attr();
    auto it = attrs.find("shape");
    if (it != attrs.end() && it->second.shape().dim_size() > 0 &&
        it->second.shape().dim(0).size() >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: the data tensor '", data_tensors[d], "' has a fixed batch dimension (",
          it->second.shape().dim(0).size(), "); splitting batches over towers needs a graph "
          "built for any batch size (placeholder shape [None, ...])"));
    }
  }
  DFLOW_ASSIGN_OR_RETURN(imported_, ImportGraphDef(graph_));
  DFLOW_ASSIGN_OR_RETURN(int train, NodeOf(train_op, "train op"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<Update> updates, FindUpdates(train));
  NameSet stop = {graph_.node(train).name()};
  std::vector<int> targets;
  for (const Update& u : updates) {
    stop.insert(graph_.node(u.node).name());
    targets.push_back(index_.at(u.grad.node));
    if (u.indices_slot >= 0) targets.push_back(index_.at(u.indices.node));
  }
  int loss_node = -1;
  if (!loss.empty()) {
    DFLOW_ASSIGN_OR_RETURN(loss_node, NodeOf(loss, "loss"));
    targets.push_back(loss_node);
  }
  const std::vector<OptimizerMerge> merges =
      FindOptimizerMerges(train, Backward(targets), Forward(data, stop));
  for (const OptimizerMerge& m : merges) {
    stop.insert(graph_.node(m.unique).name());
    targets.push_back(index_.at(m.indices.node));
    for (int sum : m.sums) stop.insert(graph_.node(sum).name());
    for (const TensorId& rows : m.rows) targets.push_back(index_.at(rows.node));
  }
  const NameSet forward = Forward(data, stop);
  for (const std::string& name : Backward(targets)) {
    if (forward.contains(name) && !stop.contains(name)) replicated_.insert(name);
  }
  DFLOW_RETURN_IF_ERROR(CloseOverLoopsAndStepResources());
  DFLOW_RETURN_IF_ERROR(CheckStateReadingR(train, stop));
  for (const std::string& name : replicated_) {
    const NodeDef& node = graph_.node(index_.at(name));
    if (IsVariableAssign(node.op())) {
      tower0_only_.insert(name);
      continue;
    }
    const std::string problem = ReplicationProblem(*imported_->FindNode(name));
    if (!problem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: '", name, "' (", node.op(), ") depends on the data and cannot be "
          "copied per tower: ", problem));
    }
  }
  for (const Update& u : updates) {
    if (!replicated_.contains(u.grad.node)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: the gradient '", u.grad.ToString(), "' of '",
          graph_.node(u.node).name(), "' does not depend on the data"));
    }
    if (u.indices_slot >= 0 && !replicated_.contains(u.indices.node)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: the indices '", u.indices.ToString(), "' of sparse update '",
          graph_.node(u.node).name(), "' do not depend on the data"));
    }
  }
  for (size_t d = 0; d < data.size(); ++d) {
    if (!replicated_.contains(graph_.node(data[d]).name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: the data tensor '", data_tensors[d],
          "' feeds neither the loss nor a gradient"));
    }
  }
  if (loss_node >= 0 && !replicated_.contains(graph_.node(loss_node).name())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--devices: the loss '", loss, "' does not depend on the data"));
  }

  ReplicatedGraph out;
  out.graph = graph_;
  out.replicated_nodes = static_cast<int>(replicated_.size());
  const int towers = static_cast<int>(devices.size());
  auto prefix = [](int t) { return t == 0 ? std::string() : absl::StrCat("tower_", t, "/"); };
  for (NodeDef& node : *out.graph.mutable_node()) {
    if (replicated_.contains(node.name())) Place(&node, devices[0], "");
  }
  for (int t = 1; t < towers; ++t) {
    for (const NodeDef& node : graph_.node()) {
      if (!Copied(node.name())) continue;
      NodeDef* copy = out.graph.add_node();
      *copy = out.graph.node(index_.at(node.name()));
      Place(copy, devices[t], prefix(t));
    }
  }
  out.tower_weights = AddWeights(&out.graph, towers);
  for (const Update& u : updates) {
    const std::string name = graph_.node(u.node).name();
    DFLOW_ASSIGN_OR_RETURN(DataType dtype, TypeOf(graph_.node(u.node)));
    const std::string grad = graph_.node(u.node).input(u.grad_slot);
    std::vector<std::string> grads;
    for (int t = 0; t < towers; ++t) grads.push_back(Prefixed(prefix(t), grad));
    NodeDef* update = out.graph.mutable_node(u.node);
    if (u.indices_slot < 0) {
      *update->mutable_input(u.grad_slot) =
          AddWeightedSum(&out.graph, "dflow_towers/" + name, grads, out.tower_weights, dtype);
      continue;
    }
    const std::string indices = graph_.node(u.node).input(u.indices_slot);
    std::vector<std::string> all_indices;
    for (int t = 0; t < towers; ++t) all_indices.push_back(Prefixed(prefix(t), indices));
    DFLOW_ASSIGN_OR_RETURN(DataType index_type, GetTypeAttr(graph_.node(u.node), "Tindices"));
    auto [rows, unique] = AddWeightedSparseSum(&out.graph, "dflow_towers/" + name, grads,
                                               all_indices, out.tower_weights, dtype,
                                               index_type);
    *update->mutable_input(u.grad_slot) = rows;
    *update->mutable_input(u.indices_slot) = unique;
  }
  DFLOW_RETURN_IF_ERROR(FeedMergesAllTowers(merges, towers, out.tower_weights, &out.graph));
  if (loss_node >= 0) {
    DFLOW_ASSIGN_OR_RETURN(DataType dtype, TypeOf(graph_.node(loss_node)));
    std::vector<std::string> losses;
    for (int t = 0; t < towers; ++t) losses.push_back(Prefixed(prefix(t), loss));
    out.loss = AddWeightedSum(&out.graph, "dflow_towers/loss", losses, out.tower_weights,
                              dtype) + ":0";
  }
  for (int t = 0; t < towers; ++t) {
    std::vector<std::string> names;
    for (const std::string& d : data_tensors) names.push_back(Prefixed(prefix(t), d));
    out.data_tensors.push_back(std::move(names));
  }
  return out;
}

}  // namespace

absl::StatusOr<ReplicatedGraph> ReplicateForTowers(const GraphDef& graph,
                                                   const std::vector<std::string>& data_tensors,
                                                   const std::string& loss,
                                                   const std::string& train_op,
                                                   const std::vector<std::string>& devices) {
  return Replicator(graph).Run(data_tensors, loss, train_op, devices);
}

}  // namespace dflow
