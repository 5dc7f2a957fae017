#include "graph/partition.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"
#include "graph/device_name.h"
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

// Makes a Const NodeDef produce a float tensor of shape [0]: what a control edge sends
// (rule 4) and what a control loop enters with (rule 9).
void SetEmptyFloatValue(NodeDef* node) {
  (*node->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorProto* value = (*node->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(DT_FLOAT);
  value->mutable_tensor_shape()->add_dim()->set_size(0);
}

// What one `_Send`/`_Recv` pair moves: an edge of the graph, or the predicate a
// control loop reads (rule 9).
struct CopySpec {
  const Node* src = nullptr;
  int slot = 0;                   // kControlSlot: a control edge (rule 4)
  std::string dst_device;
  DataType dtype = DT_FLOAT;      // base dtype; float for control edges
  bool host_send = false;         // rule 8
  bool host_recv = false;
  std::string tensor_name;
  int frame = 0;                  // the frame the value crosses in (rule 9); 0: root
};

// Builds the partitions (rules 1-5, 7-10). One instance per PartitionGraph call.
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

  // The device a node runs on: its assigned device, or rule 11's.
  const std::string& DeviceOf(const Node& node) const { return devices_[node.id()]; }
  // Rule 11 (TF's OptimizeControlFlowColocation), then the check that no loop's
  // non-constant Enter or NextIteration feeds another device.
  void ColocateControlFlow();
  absl::Status CheckIterationEdges() const;
  absl::Status AddNode(const Node& dst);
  // The name dst reads `e` through, creating or reusing a pair (rule 3; rule 10 for a
  // same-device edge). A new ref pair's `_Recv` is appended to `ref_recvs`.
  absl::StatusOr<std::string> ReaderFor(const Edge& e, std::vector<NodeDef*>* ref_recvs);
  CopySpec SpecFor(const Edge& e, bool host_recv);
  absl::StatusOr<CopyPair> AddCopyPair(const CopySpec& spec);
  // Rule 8: whether the edge's source output / destination input is host memory.
  bool SendsFromHost(const Edge& e);
  bool ReceivesIntoHost(const Edge& e);
  // Rule 10: a same-device data edge from device memory into a host-memory input.
  bool NeedsHostCopy(const Edge& e);
  const MemoryTypes& TypesOf(const Node& node);
  // Rule 9: the frame a value of `e` crosses in: the frame `e`'s source hands its
  // outputs to (an Enter's is the loop it opens, an Exit's the loop's parent).
  int EdgeFrame(const Edge& e) const;
  // Rule 9: the Merge of `frame`'s control loop on `device`, built on first use.
  absl::StatusOr<std::string> ControlLoopMerge(int frame, const std::string& device);
  absl::StatusOr<std::string> LoopPredicate(int frame, const std::string& device);
  NodeDef* AddCopyNode(const std::string& device, const std::string& src, const char* op);
  NodeDef* AddLoopNode(const std::string& device, const std::string& prefix, const char* op,
                       std::initializer_list<std::string> inputs);
  void SetSendRecvAttrs(const CopySpec& spec, NodeDef* node) const;
  std::string NewName(const std::string& prefix);

  const PartitionOptions& options_;
  const Graph& graph_;
  std::map<std::string, GraphDef> parts_;
  std::map<CopyKey, std::string> readers_;  // deduped pairs: key -> reader name
  std::map<int, MemoryTypes> memory_types_;  // by node id, computed on first use
  std::set<std::string> new_names_;         // default new_name's names so far
  int name_counter_ = 0;
  // Rule 9: the graph's frames (when it has loops), each frame's LoopCond, and the
  // control loops built so far: (frame, device) -> their Merge.
  std::vector<std::string> devices_;  // by node id
  std::optional<ControlFlowInfo> frames_;
  std::map<int, const Node*> loop_conds_;
  std::map<std::pair<int, std::string>, std::string> control_loops_;
};

absl::StatusOr<std::map<std::string, GraphDef>> Partitioner::Run() {
  for (const Node* node : graph_.nodes()) {
    if (node->assigned_device().empty()) {  // placement's own field, before rule 11
      return absl::InvalidArgumentError(
          absl::StrCat("Node '", node->name(), "' has no assigned device; place the graph ",
                       "before partitioning it"));
    }
  }
  devices_.resize(graph_.num_node_ids());
  for (const Node* node : graph_.nodes()) devices_[node->id()] = node->assigned_device();
  if (HasControlFlow(graph_)) {
    DFLOW_ASSIGN_OR_RETURN(frames_, BuildControlFlowInfo(graph_));
    ColocateControlFlow();
    DFLOW_RETURN_IF_ERROR(CheckIterationEdges());
    for (const Node* node : graph_.nodes()) {
      if (node->op() == "LoopCond") loop_conds_[frames_->node_frame[node->id()]] = node;
    }
  }
  for (const Node* node : graph_.nodes()) DFLOW_RETURN_IF_ERROR(AddNode(*node));
  for (auto& [device, part] : parts_) {
    *part.mutable_versions() = graph_.versions();
    FunctionDefLibrary library = ReachableLibrary(graph_.library(), part);
    if (library.function_size() > 0) *part.mutable_library() = std::move(library);
  }
  return std::move(parts_);
}

// The first data edge out of `node`, or null.
const Edge* FirstDataOut(const Node& node) {
  for (const Edge* e : node.out_edges()) {
    if (!e->IsControlEdge()) return e;
  }
  return nullptr;
}

// Rule 11: a non-ref Enter and a NextIteration run where the node they feed runs, a
// Switch where its data comes from, an Exit where its Switch runs (in that order, so an
// Exit follows its Switch's move).
void Partitioner::ColocateControlFlow() {
  for (const Node* node : graph_.nodes()) {
    const bool enter = IsEnter(*node) && !IsRefType(node->input_types()[0]);
    if (!enter && !IsNextIteration(*node)) continue;
    if (const Edge* out = FirstDataOut(*node)) devices_[node->id()] = DeviceOf(*out->dst);
  }
  for (const Node* node : graph_.nodes()) {
    if (node->op() != "Switch" && node->op() != "RefSwitch") continue;
    if (const Edge* data = node->input_edge(0)) devices_[node->id()] = DeviceOf(*data->src);
  }
  for (const Node* node : graph_.nodes()) {
    if (!IsExit(*node)) continue;
    if (const Edge* data = node->input_edge(0)) devices_[node->id()] = DeviceOf(*data->src);
  }
}

// A non-constant Enter delivers to iteration 0 only and a NextIteration to the next
// iteration, while rule 9's `_Recv`s run in every iteration: such an edge across devices
// would leave a `_Recv` waiting forever. Rule 11 avoids it unless the node feeds two
// devices; then INVALID_ARGUMENT naming both nodes (a clear error, never a hang).
absl::Status Partitioner::CheckIterationEdges() const {
  for (const Node* node : graph_.nodes()) {
    const bool enter = IsEnter(*node) && !IsConstantEnter(*node);
    if (!enter && !IsNextIteration(*node)) continue;
    for (const Edge* e : node->out_edges()) {
      if (DeviceOf(*e->dst) == DeviceOf(*node)) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "Node '", node->name(), "' (", node->op(), ", on ", DeviceOf(*node), ") feeds '",
          e->dst->name(), "' on ", DeviceOf(*e->dst),
          ": a while loop's non-constant Enter and NextIteration must run on the device of "
          "every node they feed; place those nodes on one device"));
    }
  }
  return absl::OkStatus();
}

absl::Status Partitioner::AddNode(const Node& dst) {
  const std::string& device = DeviceOf(dst);
  NodeDef* def = parts_[device].add_node();  // element pointers stay valid as it grows
  *def = dst.def();
  def->set_device(device);
  def->clear_input();
  std::vector<std::string> read_after;  // non-ref inputs a ref `_Recv` must wait for
  std::vector<NodeDef*> ref_recvs;
  for (const Edge* e : OrderedInputs(dst)) {
    const bool direct = DeviceOf(*e->src) == device && !NeedsHostCopy(*e);
    std::string source = e->src->name();
    if (!direct) {
      DFLOW_ASSIGN_OR_RETURN(source, ReaderFor(*e, &ref_recvs));
    }
    const int slot = e->IsControlEdge() ? kControlSlot : (direct ? e->src_output : 0);
    def->add_input(InputName(source, slot));
    if (!IsRefEdge(*e) &&
        std::find(read_after.begin(), read_after.end(), source) == read_after.end()) {
      read_after.push_back(source);
    }
  }
  for (NodeDef* recv : ref_recvs) {
    for (const std::string& name : read_after) recv->add_input(InputName(name, kControlSlot));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Partitioner::ReaderFor(const Edge& e,
                                                   std::vector<NodeDef*>* ref_recvs) {
  if (IsRefEdge(e)) {
    DFLOW_ASSIGN_OR_RETURN(CopyPair pair, AddCopyPair(SpecFor(e, false)));
    ref_recvs->push_back(pair.recv);
    return pair.reader;
  }
  const bool host_recv = ReceivesIntoHost(e);
  const CopyKey key{e.src->id(), e.src_output, DeviceOf(*e.dst), host_recv};
  auto it = readers_.find(key);
  if (it != readers_.end()) return it->second;
  const CopySpec spec = SpecFor(e, host_recv);
  if (spec.frame != 0 && spec.dst_device != DeviceOf(*e.src)) {
    // Building the control loop first: it may make this very pair (the LoopCond's).
    DFLOW_RETURN_IF_ERROR(ControlLoopMerge(spec.frame, spec.dst_device).status());
    it = readers_.find(key);
    if (it != readers_.end()) return it->second;
  }
  DFLOW_ASSIGN_OR_RETURN(CopyPair pair, AddCopyPair(spec));
  readers_.emplace(key, pair.reader);
  return pair.reader;
}

CopySpec Partitioner::SpecFor(const Edge& e, bool host_recv) {
  CopySpec spec;
  spec.src = e.src;
  spec.slot = e.IsControlEdge() ? kControlSlot : e.src_output;
  spec.dst_device = DeviceOf(*e.dst);
  if (!e.IsControlEdge()) spec.dtype = BaseType(e.src->output_types()[e.src_output]);
  spec.host_send = SendsFromHost(e);
  spec.host_recv = host_recv;
  spec.tensor_name = absl::StrCat("edge_", e.id, "_", e.src->name());
  spec.frame = EdgeFrame(e);
  return spec;
}

const MemoryTypes& Partitioner::TypesOf(const Node& node) {
  auto it = memory_types_.find(node.id());
  if (it == memory_types_.end()) {
    it = memory_types_.emplace(node.id(), HostMemoryTypes(*options_.kernels, node, DeviceOf(node)))
             .first;
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

bool Partitioner::NeedsHostCopy(const Edge& e) {
  if (DeviceOf(*e.src) != DeviceOf(*e.dst)) return false;
  return ReceivesIntoHost(e) && !SendsFromHost(e);
}

int Partitioner::EdgeFrame(const Edge& e) const {
  if (!frames_.has_value()) return 0;
  const int id = e.src->id();
  if (IsEnter(*e.src)) return frames_->entered_frame[id];  // control_flow.h rule 2
  const int frame = frames_->node_frame[id];
  return IsExit(*e.src) ? std::max(frames_->frames[frame].parent, 0) : frame;  // rule 3
}

absl::StatusOr<Partitioner::CopyPair> Partitioner::AddCopyPair(const CopySpec& spec) {
  const std::string& src = spec.src->name();
  const std::string& src_device = DeviceOf(*spec.src);
  std::string send_input = InputName(src, spec.slot);
  if (spec.slot == kControlSlot) {  // rule 4: send an empty float tensor after src runs
    NodeDef* dummy = AddCopyNode(src_device, src, "Const");
    SetEmptyFloatValue(dummy);
    dummy->add_input(InputName(src, kControlSlot));
    send_input = dummy->name();
  }
  NodeDef* send = AddCopyNode(src_device, src, spec.host_send ? "_HostSend" : "_Send");
  send->add_input(send_input);
  SetSendRecvAttrs(spec, send);
  (*send->mutable_attr())["T"].set_type(spec.dtype);
  NodeDef* recv = AddCopyNode(spec.dst_device, src, spec.host_recv ? "_HostRecv" : "_Recv");
  SetSendRecvAttrs(spec, recv);
  (*recv->mutable_attr())["tensor_type"].set_type(spec.dtype);
  if (spec.dst_device == src_device) {
    // Rule 10: a same-device pair; the control edge also puts the `_Recv` in the frame.
    recv->add_input(InputName(send->name(), kControlSlot));
  } else if (spec.frame != 0) {
    DFLOW_ASSIGN_OR_RETURN(std::string merge, ControlLoopMerge(spec.frame, spec.dst_device));
    recv->add_input(InputName(merge, kControlSlot));
  }
  if (spec.slot != kControlSlot) return CopyPair{recv->name(), recv};
  NodeDef* identity = AddCopyNode(spec.dst_device, src, "Identity");
  identity->add_input(recv->name());
  (*identity->mutable_attr())["T"].set_type(DT_FLOAT);
  return CopyPair{identity->name(), recv};
}

// Rule 9, TF's AddControlLoop: Enter -> Merge -> Switch(pred) -> Identity ->
// NextIteration -> Merge on `device`, iterating in step with the frame's LoopCond.
absl::StatusOr<std::string> Partitioner::ControlLoopMerge(int frame, const std::string& device) {
  auto found = control_loops_.find({frame, device});
  if (found != control_loops_.end()) return found->second;
  const StaticFrame& info = frames_->frames[frame];
  if (loop_conds_.count(frame) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("A cross-device loop must have a pivot predicate: ", info.name));
  }
  std::string entry;  // what the Enter reads: a root-frame constant or the outer loop's Merge
  if (info.parent > 0) {
    DFLOW_ASSIGN_OR_RETURN(entry, ControlLoopMerge(info.parent, device));
  } else {
    NodeDef* value = AddLoopNode(device, "_cloop", "Const", {});
    SetEmptyFloatValue(value);
    entry = value->name();
  }
  const std::string prefix = absl::StrCat("_cloop", loop_conds_.at(frame)->name());
  NodeDef* enter = AddLoopNode(device, prefix, "Enter", {entry});
  (*enter->mutable_attr())["frame_name"].set_s(info.name);
  (*enter->mutable_attr())["is_constant"].set_b(false);
  (*enter->mutable_attr())["parallel_iterations"].set_i(info.parallel_iterations);
  NodeDef* merge = AddLoopNode(device, prefix, "Merge", {enter->name()});
  (*merge->mutable_attr())["N"].set_i(2);
  control_loops_[{frame, device}] = merge->name();
  DFLOW_ASSIGN_OR_RETURN(std::string pred, LoopPredicate(frame, device));
  NodeDef* pivot = AddLoopNode(device, prefix, "Switch", {merge->name(), pred});
  NodeDef* body = AddLoopNode(device, prefix, "Identity", {InputName(pivot->name(), 1)});
  NodeDef* next = AddLoopNode(device, prefix, "NextIteration", {body->name()});
  merge->add_input(next->name());
  return merge->name();
}

// The frame's LoopCond as `device` reads it: directly, or through a pair (deduped with
// the graph's own edges from the LoopCond) whose `_Recv` waits for the control loop's
// Merge (registered before this is called), so it runs once per iteration.
absl::StatusOr<std::string> Partitioner::LoopPredicate(int frame, const std::string& device) {
  const Node* cond = loop_conds_.at(frame);
  if (DeviceOf(*cond) == device) return cond->name();
  bool host_recv = false;
  if (options_.kernels != nullptr) {
    NodeDef pivot;
    pivot.set_op("Switch");
    (*pivot.mutable_attr())["T"].set_type(DT_FLOAT);
    absl::StatusOr<DeviceName> name = ParseDeviceName(device);
    if (name.ok() && name->type.has_value()) {
      const std::vector<std::string> host = options_.kernels->HostMemoryArgs(pivot, *name->type);
      host_recv = std::find(host.begin(), host.end(), "pred") != host.end();
    }
  }
  const CopyKey key{cond->id(), 0, device, host_recv};
  auto it = readers_.find(key);
  if (it != readers_.end()) return it->second;
  CopySpec spec;
  spec.src = cond;
  spec.dst_device = device;
  spec.dtype = DT_BOOL;
  spec.host_send = options_.kernels != nullptr && TypesOf(*cond).host_outputs[0];
  spec.host_recv = host_recv;
  spec.tensor_name = absl::StrCat("cloop_", cond->id(), "_", cond->name());
  spec.frame = frame;
  DFLOW_ASSIGN_OR_RETURN(CopyPair pair, AddCopyPair(spec));
  readers_.emplace(key, pair.reader);
  return pair.reader;
}

NodeDef* Partitioner::AddCopyNode(const std::string& device, const std::string& src,
                                  const char* op) {
  NodeDef* node = parts_[device].add_node();
  node->set_name(NewName(src));
  node->set_op(op);
  node->set_device(device);
  return node;
}

NodeDef* Partitioner::AddLoopNode(const std::string& device, const std::string& prefix,
                                  const char* op, std::initializer_list<std::string> inputs) {
  NodeDef* node = AddCopyNode(device, prefix, op);
  for (const std::string& input : inputs) node->add_input(input);
  if (std::string(op) != "Const") (*node->mutable_attr())["T"].set_type(DT_FLOAT);
  return node;
}

void Partitioner::SetSendRecvAttrs(const CopySpec& spec, NodeDef* node) const {
  auto& attr = *node->mutable_attr();
  attr["tensor_name"].set_s(spec.tensor_name);
  attr["send_device"].set_s(DeviceOf(*spec.src));
  attr["send_device_incarnation"].set_i(options_.send_device_incarnation);
  attr["recv_device"].set_s(spec.dst_device);
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
