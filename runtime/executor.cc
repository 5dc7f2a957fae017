#include "runtime/executor.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "graph/control_flow.h"
#include "graph/node_def_util.h"
#include "graph/status_macros.h"
#include "runtime/executor_step.h"

namespace dflow {

absl::Status AttachNodeName(const absl::Status& status, absl::string_view node) {
  if (status.ok() || absl::StrContains(status.message(), "{{node ")) return status;
  std::string message = absl::StrCat(status.message(), " [[{{node ", node, "}}]]");
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    // TF's executor adds this line to every out-of-memory error of a graph step.
    absl::StrAppend(&message, kOomHint);
  }
  return absl::Status(status.code(), message);
}

namespace {

// The NodeDef a kernel keeps (names, inputs for timelines and error messages). A Const's
// kernel decodes `value` while it is constructed (from the graph's own NodeDef, never
// copied) and holds the tensor, so its kept def leaves the value out: a plan holds a
// model's weights once, in its kernels' tensors.
std::shared_ptr<const NodeDef> KeptDef(const Graph& graph, const Node& node) {
  const NodeDef& def = node.def();
  if (!IsConstantOp(def.op())) {
    return std::make_shared<const NodeDef>(graph.NodeDefWithInputs(node));
  }
  auto kept = std::make_shared<NodeDef>();
  kept->set_name(def.name());
  kept->set_op(def.op());
  kept->set_device(def.device());
  for (const auto& [name, value] : def.attr()) {
    if (name != "value") (*kept->mutable_attr())[name] = value;
  }
  graph.SetInputs(node, kept.get());
  return kept;
}

}  // namespace

// The step state of a graph without control flow: one input slot per node input, a
// pending count per node. The node-run sequence is ExecutorStep's (executor_step.h).
class Executor::RunState : public ExecutorStep<Executor::RunState, int> {
 public:
  RunState(const Executor* executor, const Args& args, DoneCallback done)
      : ExecutorStep(executor, args, std::move(done)),
        slots_(std::make_unique<Tensor[]>(executor->num_slots_)),
        dead_(std::make_unique<bool[]>(executor->num_slots_)),
        refs_(executor->has_ref_edges_ ? std::make_unique<RefSlot*[]>(executor->num_slots_)
                                       : nullptr),
        pending_(std::make_unique<std::atomic<int>[]>(executor->nodes_.size())),
        control_dead_(std::make_unique<std::atomic<bool>[]>(executor->nodes_.size())) {
    for (size_t i = 0; i < executor->nodes_.size(); ++i) {
      pending_[i].store(executor->nodes_[i].initial_pending, std::memory_order_relaxed);
      control_dead_[i].store(false, std::memory_order_relaxed);
    }
  }

  void Start() {
    const std::vector<int>& roots = exec_->roots_;
    if (roots.empty()) {
      Finish();
      return;
    }
    outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
    ReadyList ready(roots.begin(), roots.end());
    ProcessReady(&ready);
  }

 private:
  friend class ExecutorStep<RunState, int>;

  // ---- ExecutorStep's hooks: a task is a node id ----
  static int NodeOf(int id) { return id; }
  static bool KnownDead(int) { return false; }
  bool IsDead(int id, const NodeItem& item) const {
    return AnyInputDead(item) || control_dead_[id].load(std::memory_order_relaxed);
  }
  StepSlots SlotsOf(int) const { return {slots_.get(), dead_.get(), refs_.get()}; }
  static void SetFrameIter(int, OpKernelContext::Params*) {}
  template <typename Body>
  static void Guard(int, Body&& body) {
    body();
  }
  void ReleaseState() {
    slots_.reset();
    refs_.reset();
  }

  bool AnyInputDead(const NodeItem& item) const {
    for (int i = 0; i < item.num_inputs; ++i) {
      if (dead_[item.input_start + i]) return true;
    }
    return false;
  }

  void PropagateOutputs(int id, OpKernelContext* context, ReadyList* made_ready) {
    const NodeItem& item = exec_->nodes_[id];
    const bool refs = item.has_ref_outputs;
    for (int e = item.out_start; e < item.out_start + item.num_out_edges; ++e) {
      const OutEdge& edge = exec_->out_edges_[e];
      if (edge.dst_slot >= 0) {
        Tensor* out = context->mutable_output(edge.src_output);
        dead_[edge.dst_slot] = context->output_is_dead(edge.src_output);
        if (refs) refs_[edge.dst_slot] = context->output_ref(edge.src_output);
        if (item.last_use[edge.src_output] == e) {
          slots_[edge.dst_slot] = std::move(*out);  // last consumer takes ownership
        } else {
          slots_[edge.dst_slot] = *out;
        }
      }
      Activate(edge.dst, made_ready);
    }
  }

  void PropagateDead(int id, ReadyList* made_ready) {
    const NodeItem& item = exec_->nodes_[id];
    for (int e = item.out_start; e < item.out_start + item.num_out_edges; ++e) {
      const OutEdge& edge = exec_->out_edges_[e];
      // A dead node's control successors are dead too (TF's rule): a branch's constants
      // hang off its pivot by control edges, also across devices (partition rule 4).
      if (edge.dst_slot >= 0) {
        dead_[edge.dst_slot] = true;
      } else {
        control_dead_[edge.dst].store(true, std::memory_order_relaxed);
      }
      Activate(edge.dst, made_ready);
    }
  }

  void Activate(int dst, ReadyList* made_ready) {
    if (pending_[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      outstanding_.fetch_add(1, std::memory_order_relaxed);
      made_ready->push_back(dst);
    }
  }

  std::unique_ptr<Tensor[]> slots_;
  std::unique_ptr<bool[]> dead_;
  std::unique_ptr<RefSlot*[]> refs_;  // null unless the graph has ref edges
  std::unique_ptr<std::atomic<int>[]> pending_;
  // Per node: a control input came from a dead node. Set before Activate's acq_rel
  // decrement, so the thread that finds the node ready sees it.
  std::unique_ptr<std::atomic<bool>[]> control_dead_;
};

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, Device* device,
                                                           const KernelRegistry& kernels,
                                                           StatefulKernels* shared) {
  std::unique_ptr<Executor> executor(new Executor(device));
  DFLOW_RETURN_IF_ERROR(executor->Build(graph, kernels, shared));
  return executor;
}

absl::Status Executor::Build(const Graph& graph, const KernelRegistry& kernels,
                             StatefulKernels* shared) {
  std::vector<Node*> nodes = graph.nodes();
  std::vector<int> index(graph.num_node_ids(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]->id()] = static_cast<int>(i);
  nodes_.resize(nodes.size());
  if (HasControlFlow(graph)) DFLOW_RETURN_IF_ERROR(BuildFlowInfo(graph, nodes));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* node = nodes[i];
    NodeItem& item = nodes_[i];
    // Kernels see their inputs by name (timeline labels, error messages).
    // Attrs are read from the graph's NodeDef in place; the kernel keeps KeptDef's.
    auto make = [&]() {
      return kernels.CreateKernel(node->def(), KeptDef(graph, *node), node->op_def(),
                                  node->input_types(), node->output_types(), device_);
    };
    absl::StatusOr<std::shared_ptr<OpKernel>> kernel =
        shared != nullptr && StatefulKernels::Shares(node->op_def())
            ? shared->FindOrCreate(device_->name(), node->def(), make)
            : absl::StatusOr<std::shared_ptr<OpKernel>>(make());
    if (!kernel.ok()) return AttachNodeName(kernel.status(), node->name());
    item.kernel = *std::move(kernel);
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.expensive = !device_->IsAccelerator() && item.kernel->IsExpensive();
    // Transfers run dead too, so the receiver learns the value is dead (TF's
    // IsTransferNode): the host-memory twins as well, or a dead predicate sent from a
    // GPU's LoopCond would leave the other device's control loop waiting.
    item.runs_when_dead = node->op() == "_Send" || node->op() == "_Recv" ||
                          node->op() == "_HostSend" || node->op() == "_HostRecv";
    item.num_inputs = node->num_inputs();
    item.num_outputs = node->num_outputs();
    item.input_start = AllocateInputSlots(static_cast<int>(i), item.num_inputs);
    item.initial_pending = InitialPending(*node, static_cast<int>(i));
    if (item.initial_pending == 0) roots_.push_back(static_cast<int>(i));
    BuildRefInfo(*node, &item);
    has_ref_edges_ = has_ref_edges_ || item.has_ref_outputs;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeItem& item = nodes_[i];
    item.out_start = static_cast<int>(out_edges_.size());
    item.last_use.assign(item.num_outputs, -1);
    for (const Edge* e : nodes[i]->out_edges()) {
      const int dst = index[e->dst->id()];
      if (e->IsControlEdge()) {
        out_edges_.push_back({dst, -1, -1});
        continue;
      }
      item.last_use[e->src_output] = static_cast<int>(out_edges_.size());
      out_edges_.push_back({dst, nodes_[dst].input_start + e->dst_input, e->src_output});
    }
    item.num_out_edges = static_cast<int>(out_edges_.size()) - item.out_start;
  }
  return absl::OkStatus();
}

// Input slots are step-wide for flat graphs and per frame iteration with control flow.
int Executor::AllocateInputSlots(int node, int count) {
  int* next = flow_.empty() ? &num_slots_ : &frames_[flow_[node].frame].num_slots;
  const int start = *next;
  *next += count;
  return start;
}

// Every in-edge, except for Merge (rule 7): bit 0 waits for one live data input and
// each control input counts 2.
int Executor::InitialPending(const Node& node, int index) {
  int pending = static_cast<int>(node.in_edges().size());
  if (flow_.empty()) return pending;
  const FlowItem& flow = flow_[index];
  if (flow.kind == FlowKind::kMerge) {
    int controls = 0;
    for (const Edge* e : node.in_edges()) controls += e->IsControlEdge() ? 1 : 0;
    pending = 1 + 2 * controls;
  }
  frames_[flow.frame].initial_pending[flow.local_id] = pending;
  return pending;
}

// Rule 6, decided once: which outputs carry refs and which inputs read them.
void Executor::BuildRefInfo(const Node& node, NodeItem* item) {
  for (DataType type : node.output_types()) {
    if (IsRefType(type)) item->has_ref_outputs = true;
  }
  for (const Edge* e : node.in_edges()) {
    if (e->IsControlEdge()) continue;
    if (IsRefType(e->src->output_types()[e->src_output]) &&
        !IsRefType(node.input_types()[e->dst_input])) {
      item->deref_inputs.push_back(e->dst_input);
    }
  }
}

void Executor::RunAsync(const Args& args, DoneCallback done) const {
  if (!flow_.empty()) {
    RunAsyncWithFrames(args, std::move(done));
    return;
  }
  std::make_shared<RunState>(this, args, std::move(done))->Start();
}

absl::Status Executor::Run(const Args& args) const {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  absl::Status result;
  RunAsync(args, [&](const absl::Status& status) {
    std::lock_guard<std::mutex> lock(mu);
    result = status;
    finished = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return finished; });
  return result;
}

}  // namespace dflow
