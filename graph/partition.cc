#include "graph/partition.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"
#include "graph/memory_types.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// (src node id, src slot, dst device, into host memory): what one pair transfers.
using CopyKey = std::tuple<int, int, std::string, bool>;

// A NodeDef input naming `node`'s output `slot` ("x", "x:1", "^x").
std::string InputName(const std::string& node, int slot) {
  if (slot == kControlSlot) return absl::StrCat("^", node);
  return slot == 0 ? node : absl::StrCat(node, ":", slot);
}

bool IsRefEdge(const Edge& e) {
  return !e.IsControlEdge() && IsRefType(e.src->output_types()[e.src_output]);
}

// `dst`'s in-edges: data edges by input index, then control edges by source id.
std::vector<const Edge*> OrderedInputs(const Node& dst) {
  std::vector<const Edge*> edges = dst.in_edges();
  auto rank = [](const Edge* e) {
    return e->IsControlEdge() ? std::make_pair(1, e->src->id()) : std::make_pair(0, e->dst_input);
  };
  std::sort(edges.begin(), edges.end(),
            [&](const Edge* a, const Edge* b) { return rank(a) < rank(b); });
  return edges;
}

// Names of functions an op name or attr refers to (the op may be a library function).
void AddFunctionRefs(const NodeDef& node, std::vector<std::string>* refs) {
  refs->push_back(node.op());
  for (const auto& [name, value] : node.attr()) {
    if (value.has_func()) refs->push_back(value.func().name());
    for (const NameAttrList& fn : value.list().func()) refs->push_back(fn.name());
  }
}

// Rule 6: the part of `library` reachable from `part`'s nodes, in library order.
FunctionDefLibrary ReachableLibrary(const FunctionDefLibrary& library, const GraphDef& part) {
  std::map<std::string, const FunctionDef*> functions;
  for (const FunctionDef& fn : library.function()) functions[fn.signature().name()] = &fn;
  std::multimap<std::string, std::string> gradients;
  for (const GradientDef& g : library.gradient()) {
    gradients.emplace(g.function_name(), g.gradient_func());
  }
  std::vector<std::string> work;
  for (const NodeDef& node : part.node()) AddFunctionRefs(node, &work);
  std::set<std::string> reached;
  while (!work.empty()) {
    const std::string name = std::move(work.back());
    work.pop_back();
    auto fn = functions.find(name);
    if (fn == functions.end() || !reached.insert(name).second) continue;
    for (const NodeDef& node : fn->second->node_def()) AddFunctionRefs(node, &work);
    auto [begin, end] = gradients.equal_range(name);
    for (auto it = begin; it != end; ++it) work.push_back(it->second);
  }
  FunctionDefLibrary result;
  for (const FunctionDef& fn : library.function()) {
    if (reached.count(fn.signature().name()) > 0) *result.add_function() = fn;
  }
  for (const GradientDef& g : library.gradient()) {
    if (reached.count(g.function_name()) > 0) *result.add_gradient() = g;
  }
  return result;
}

// Builds the partitions (rules 1-5, 7). One instance per PartitionGraph call.
class Partitioner {
 public:
  Partitioner(const PartitionOptions& options, const Graph& graph)
      : options_(options), graph_(graph) {}

  absl::StatusOr<std::map<std::string, GraphDef>> Run();

 private:
  // The copy pair for one edge: the node dst reads (`_Recv`, or `Identity` for control
  // edges) and the `_Recv` itself.
  struct CopyPair {
    std::string reader;
    NodeDef* recv = nullptr;
  };

  void AddNode(const Node& dst);
  // The name dst reads `e` through, creating or reusing a pair (rule 3). A new ref pair's
  // `_Recv` is appended to `ref_recvs`.
  std::string ReaderFor(const Edge& e, std::vector<NodeDef*>* ref_recvs);
  CopyPair AddCopyPair(const Edge& e, bool host_recv);
  // Rule 8: whether the edge's source output / destination input is host memory.
  bool SendsFromHost(const Edge& e);
  bool ReceivesIntoHost(const Edge& e);
  const MemoryTypes& TypesOf(const Node& node);
  NodeDef* AddCopyNode(const std::string& device, const std::string& src, const char* op);
  void SetSendRecvAttrs(const Edge& e, NodeDef* node) const;
  std::string NewName(const std::string& prefix);

  const PartitionOptions& options_;
  const Graph& graph_;
  std::map<std::string, GraphDef> parts_;
  std::map<CopyKey, std::string> readers_;  // deduped pairs: key -> reader name
  std::map<int, MemoryTypes> memory_types_;  // by node id, computed on first use
  std::set<std::string> new_names_;         // default new_name's names so far
  int name_counter_ = 0;
};

absl::StatusOr<std::map<std::string, GraphDef>> Partitioner::Run() {
  for (const Node* node : graph_.nodes()) {
    if (node->assigned_device().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Node '", node->name(), "' has no assigned device; place the graph ",
                       "before partitioning it"));
    }
  }
  DFLOW_RETURN_IF_ERROR(CheckLoopsOnOneDevice(graph_));
  for (const Node* node : graph_.nodes()) AddNode(*node);
  for (auto& [device, part] : parts_) {
    *part.mutable_versions() = graph_.versions();
    FunctionDefLibrary library = ReachableLibrary(graph_.library(), part);
    if (library.function_size() > 0) *part.mutable_library() = std::move(library);
  }
  return std::move(parts_);
}

void Partitioner::AddNode(const Node& dst) {
  const std::string& device = dst.assigned_device();
  NodeDef* def = parts_[device].add_node();  // element pointers stay valid as it grows
  *def = dst.def();
  def->set_device(device);
  def->clear_input();
  std::vector<std::string> read_after;  // non-ref inputs a ref `_Recv` must wait for
  std::vector<NodeDef*> ref_recvs;
  for (const Edge* e : OrderedInputs(dst)) {
    const bool local = e->src->assigned_device() == device;
    const std::string source = local ? e->src->name() : ReaderFor(*e, &ref_recvs);
    const int slot = e->IsControlEdge() ? kControlSlot : (local ? e->src_output : 0);
    def->add_input(InputName(source, slot));
    if (!IsRefEdge(*e) &&
        std::find(read_after.begin(), read_after.end(), source) == read_after.end()) {
      read_after.push_back(source);
    }
  }
  for (NodeDef* recv : ref_recvs) {
    for (const std::string& name : read_after) recv->add_input(InputName(name, kControlSlot));
  }
}

std::string Partitioner::ReaderFor(const Edge& e, std::vector<NodeDef*>* ref_recvs) {
  if (IsRefEdge(e)) {
    CopyPair pair = AddCopyPair(e, false);
    ref_recvs->push_back(pair.recv);
    return pair.reader;
  }
  const bool host_recv = ReceivesIntoHost(e);
  const CopyKey key{e.src->id(), e.src_output, e.dst->assigned_device(), host_recv};
  auto it = readers_.find(key);
  if (it == readers_.end()) it = readers_.emplace(key, AddCopyPair(e, host_recv).reader).first;
  return it->second;
}

const MemoryTypes& Partitioner::TypesOf(const Node& node) {
  auto it = memory_types_.find(node.id());
  if (it == memory_types_.end()) {
    it = memory_types_.emplace(node.id(), HostMemoryTypes(*options_.kernels, node)).first;
  }
  return it->second;
}

bool Partitioner::SendsFromHost(const Edge& e) {
  if (options_.kernels == nullptr || e.IsControlEdge() || IsRefEdge(e)) return false;
  return TypesOf(*e.src).host_outputs[e.src_output];
}

bool Partitioner::ReceivesIntoHost(const Edge& e) {
  if (options_.kernels == nullptr || e.IsControlEdge() || IsRefEdge(e)) return false;
  return TypesOf(*e.dst).host_inputs[e.dst_input];
}

Partitioner::CopyPair Partitioner::AddCopyPair(const Edge& e, bool host_recv) {
  const std::string& src = e.src->name();
  const std::string& src_device = e.src->assigned_device();
  const std::string& dst_device = e.dst->assigned_device();
  DataType dtype = DT_FLOAT;
  std::string send_input = InputName(src, e.src_output);
  if (e.IsControlEdge()) {  // rule 4: send an empty float tensor after src runs
    NodeDef* dummy = AddCopyNode(src_device, src, "Const");
    (*dummy->mutable_attr())["dtype"].set_type(DT_FLOAT);
    TensorProto* value = (*dummy->mutable_attr())["value"].mutable_tensor();
    value->set_dtype(DT_FLOAT);
    value->mutable_tensor_shape()->add_dim()->set_size(0);
    dummy->add_input(InputName(src, kControlSlot));
    send_input = dummy->name();
  } else {
    dtype = BaseType(e.src->output_types()[e.src_output]);
  }
  NodeDef* send = AddCopyNode(src_device, src, SendsFromHost(e) ? "_HostSend" : "_Send");
  send->add_input(send_input);
  SetSendRecvAttrs(e, send);
  (*send->mutable_attr())["T"].set_type(dtype);
  NodeDef* recv = AddCopyNode(dst_device, src, host_recv ? "_HostRecv" : "_Recv");
  SetSendRecvAttrs(e, recv);
  (*recv->mutable_attr())["tensor_type"].set_type(dtype);
  if (!e.IsControlEdge()) return {recv->name(), recv};
  NodeDef* identity = AddCopyNode(dst_device, src, "Identity");
  identity->add_input(recv->name());
  (*identity->mutable_attr())["T"].set_type(DT_FLOAT);
  return {identity->name(), recv};
}

NodeDef* Partitioner::AddCopyNode(const std::string& device, const std::string& src,
                                  const char* op) {
  NodeDef* node = parts_[device].add_node();
  node->set_name(NewName(src));
  node->set_op(op);
  node->set_device(device);
  return node;
}

void Partitioner::SetSendRecvAttrs(const Edge& e, NodeDef* node) const {
  auto& attr = *node->mutable_attr();
  attr["tensor_name"].set_s(absl::StrCat("edge_", e.id, "_", e.src->name()));
  attr["send_device"].set_s(e.src->assigned_device());
  attr["send_device_incarnation"].set_i(options_.send_device_incarnation);
  attr["recv_device"].set_s(e.dst->assigned_device());
  attr["client_terminated"].set_b(false);
}

std::string Partitioner::NewName(const std::string& prefix) {
  if (options_.new_name) return options_.new_name(prefix);
  std::string name;
  do {
    name = absl::StrCat(prefix, "/_", name_counter_++);
  } while (graph_.FindNode(name) != nullptr || !new_names_.insert(name).second);
  return name;
}

}  // namespace

absl::StatusOr<std::map<std::string, GraphDef>> PartitionGraph(const PartitionOptions& options,
                                                               const Graph& graph) {
  return Partitioner(options, graph).Run();
}

std::vector<CrossDeviceCopy> ListCrossDeviceCopies(const Graph& graph) {
  std::vector<CrossDeviceCopy> copies;
  std::map<CopyKey, size_t> deduped;  // non-ref copies -> position in `copies`
  for (const Node* dst : graph.nodes()) {
    for (const Edge* e : OrderedInputs(*dst)) {
      if (e->IsControlEdge() || e->src->assigned_device() == dst->assigned_device()) continue;
      const CopyKey key{e->src->id(), e->src_output, dst->assigned_device(), false};
      auto it = deduped.find(key);
      size_t pos = it == deduped.end() || IsRefEdge(*e) ? copies.size() : it->second;
      if (pos == copies.size()) {
        copies.push_back({absl::StrCat(e->src->name(), ":", e->src_output),
                          e->src->assigned_device(), dst->assigned_device(),
                          BaseType(e->src->output_types()[e->src_output]), {}});
        if (!IsRefEdge(*e)) deduped[key] = pos;
      }
      std::vector<std::string>& consumers = copies[pos].consumers;
      if (consumers.empty() || consumers.back() != dst->name()) consumers.push_back(dst->name());
    }
  }
  return copies;
}

}  // namespace dflow
