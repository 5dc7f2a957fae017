// The executor's step state for graphs with TF v1 control flow (executor.h, rule 7).
//
// Per (frame, iteration) it keeps the input slots, pending counts and dead counts of the
// frame's nodes; frames are created when their first Enter fires and deleted when all
// Enters have arrived and every iteration is done, which also releases the Exits held
// back as dead. The bookkeeping follows TF's PropagatorState. All of it is guarded by one
// mutex per step: propagation is short next to running a kernel, and one lock keeps the
// nested-frame cases (a frame finishing inside its parent's iteration) simple.
#include <atomic>
#include <exception>
#include <new>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "graph/control_flow.h"
#include "graph/inert_frames.h"
#include "graph/status_macros.h"
#include "runtime/executor.h"
#include "runtime/executor_step.h"

namespace dflow {
namespace {

// FNV-1a over `bytes`, continuing from `hash`.
uint64_t Fnv1a(uint64_t hash, const void* bytes, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

// A stable 64-bit id for the dynamic frame `name` opens in iteration `iter` of the frame
// `parent_id` (kernels see it in frame_iter; every partition computes the same one, so
// it pairs _Send/_Recv keys across devices). O(1) in the nesting depth: TF's dynamic
// frame name "<parent>;<iter>;<name>" grows with depth, and building and hashing it per
// frame made deep nests cubic.
uint64_t ChildFrameId(uint64_t parent_id, int64_t iter, absl::string_view name) {
  uint64_t hash = 1469598103934665603ull;
  hash = Fnv1a(hash, &parent_id, sizeof(parent_id));
  hash = Fnv1a(hash, &iter, sizeof(iter));
  return Fnv1a(hash, name.data(), name.size());
}

// A value handed to successors after its node finished: a loop invariant (constant
// Enter) or a NextIteration output waiting for its iteration to start.
struct StoredValue {
  Tensor value;
  RefSlot* ref = nullptr;
  bool dead = false;
};

}  // namespace

// One iteration of a frame instance: its nodes' input slots, pending and dead counts.
struct Executor::IterationState {
  IterationState(const FrameInfo& info, bool refs)
      : slots(std::make_unique<Tensor[]>(info.num_slots)),
        dead(std::make_unique<bool[]>(info.num_slots)),
        refs(refs ? std::make_unique<RefSlot*[]>(info.num_slots) : nullptr),
        pending(info.initial_pending),
        dead_count(info.initial_pending.size(), 0) {}
  std::unique_ptr<Tensor[]> slots;
  std::unique_ptr<bool[]> dead;
  std::unique_ptr<RefSlot*[]> refs;
  std::vector<int> pending;     // per local node id
  std::vector<int> dead_count;  // per local node id
  int outstanding_ops = 0;      // ready or running nodes of this iteration
  int outstanding_frames = 0;   // child frames started from this iteration
};

struct Executor::FrameInstance {
  const FrameInfo* info;
  uint64_t id = 0;   // 0 for the root
  int static_frame = 0;
  FrameInstance* parent = nullptr;
  int64_t parent_iter = 0;
  int pending_enters = 0;
  int64_t iteration_count = 0;  // the newest iteration started
  int outstanding_iterations = 1;
  // Live iterations in a ring of parallel_iterations + 1 entries.
  std::vector<std::unique_ptr<IterationState>> iterations;
  std::vector<std::pair<int, StoredValue>> invariants;  // (constant Enter, value)
  std::vector<std::pair<int, StoredValue>> deferred;    // (NextIteration, value)
  std::vector<int> dead_exits;  // Exits dead in the newest iteration

  std::unique_ptr<IterationState>& slot(int64_t iter) {
    return iterations[static_cast<size_t>(iter % static_cast<int64_t>(iterations.size()))];
  }
  IterationState* iteration(int64_t iter) { return slot(iter).get(); }
};

// A node made ready in an iteration of a frame instance.
struct Executor::FrameTask {
  int id;
  FrameInstance* frame;
  int64_t iter;
  IterationState* state;
  bool dead;
};

// The step state of a graph with frames; the node-run sequence is ExecutorStep's
// (executor_step.h), tasks carry their frame and iteration.
class Executor::FrameRunState : public ExecutorStep<Executor::FrameRunState, FrameTask> {
 public:
  FrameRunState(const Executor* executor, const Args& args, DoneCallback done)
      : ExecutorStep(executor, args, std::move(done)) {}

  void Start() {
    root_ = NewFrame(&exec_->frames_[0], 0, nullptr, 0);
    const std::vector<int>& roots = exec_->roots_;
    if (roots.empty()) {
      Finish();
      return;
    }
    Iteration* state = root_->iteration(0);
    state->outstanding_ops = static_cast<int>(roots.size());
    outstanding_.store(static_cast<int>(roots.size()), std::memory_order_relaxed);
    ReadyList ready;
    for (int id : roots) ready.push_back({id, root_.get(), 0, state, false});
    ProcessReady(&ready);
  }

 private:
  using Iteration = IterationState;
  using Frame = FrameInstance;
  using Task = FrameTask;

  // What a finished node hands its successors.
  struct Outputs {
    OpKernelContext* context = nullptr;  // a node that ran
    StoredValue* stored = nullptr;       // or a stored single value
    bool node_dead = false;              // a dead node: every output dead

    bool dead(int i) const {
      if (node_dead) return true;
      return context != nullptr ? context->output_is_dead(i) : stored->dead;
    }
    RefSlot* ref(int i) const {
      if (node_dead) return nullptr;
      return context != nullptr ? context->output_ref(i) : stored->ref;
    }
    void Deliver(int i, bool last_use, Tensor* slot) const {
      if (node_dead) {
        slot->Clear();
      } else if (context == nullptr) {
        *slot = stored->value;
      } else if (last_use) {
        *slot = std::move(*context->mutable_output(i));
      } else {
        *slot = *context->mutable_output(i);
      }
    }
  };

  // A frame instance: its parent frame, the parent's iteration, its static frame.
  using FrameKey = std::tuple<const Frame*, int64_t, int>;

  std::unique_ptr<Frame> NewFrame(const FrameInfo* info, int static_frame, Frame* parent,
                                  int64_t parent_iter) {
    auto frame = std::make_unique<Frame>();
    frame->info = info;
    frame->static_frame = static_frame;
    frame->id = parent == nullptr ? 0 : ChildFrameId(parent->id, parent_iter, info->name);
    frame->parent = parent;
    frame->parent_iter = parent_iter;
    frame->pending_enters = info->num_enters;
    frame->iterations.resize(static_cast<size_t>(info->parallel_iterations) + 1);
    frame->slot(0) = std::make_unique<Iteration>(*info, exec_->has_ref_edges_);
    return frame;
  }

  // Runs `body` (a node's run or completion), turning an exception from the executor's
  // own bookkeeping into the step's error: frames and iterations are allocated as loops
  // run, and 4,000 nested loops once ran out of memory there and aborted the process
  // (kernels' own exceptions are caught closer, by ComputeNoThrow). Successors already
  // made ready still run, as aborted nodes, so the step ends.
  template <typename Body>
  void Guard(const Task& task, Body&& body) {
    const std::string& node = exec_->nodes_[task.id].kernel->name();
    try {
      body();
    } catch (const std::bad_alloc&) {
      Fail(absl::ResourceExhaustedError(absl::StrCat(
          "Out of memory in the executor's loop bookkeeping after node '", node,
          "' (frames and iterations of the step); ConfigProto dflow_limits bound the graph")));
    } catch (const std::exception& e) {
      Fail(absl::InternalError(
          absl::StrCat("The executor failed after node '", node, "': ", e.what())));
    }
  }

  // ---- ExecutorStep's hooks ----
  friend class ExecutorStep<FrameRunState, FrameTask>;

  static int NodeOf(const Task& task) { return task.id; }
  static bool KnownDead(const Task& task) { return task.dead; }
  static bool IsDead(const Task& task, const NodeItem&) { return task.dead; }
  static StepSlots SlotsOf(const Task& task) {
    return {task.state->slots.get(), task.state->dead.get(), task.state->refs.get()};
  }
  static void SetFrameIter(const Task& task, OpKernelContext::Params* params) {
    params->frame_iter = FrameAndIter{task.frame->id, task.iter};
  }
  void PropagateDead(const Task& task, ReadyList* made_ready) {
    Outputs dead;
    dead.node_dead = true;
    Propagate(task, dead, made_ready);
  }
  void PropagateOutputs(const Task& task, OpKernelContext* context, ReadyList* made_ready) {
    Outputs outputs;
    outputs.context = context;
    Propagate(task, outputs, made_ready);
  }
  void ReleaseState() {
    absl::MutexLock lock(&flow_mu_);
    held_enters_.clear();
    frames_.clear();
    root_.reset();
  }

  // ---- Propagation between frames and iterations ----

  void Propagate(const Task& task, const Outputs& outputs, ReadyList* ready) {
    absl::MutexLock lock(&flow_mu_);
    const FlowItem& flow = exec_->flow_[task.id];
    Frame* frame = task.frame;
    switch (flow.kind) {
      case FlowKind::kEnter:
        PropagateEnter(task, flow, outputs, ready);
        break;
      case FlowKind::kExit:
        if (outputs.node_dead) {
          // Held back: only the loop's last iteration may deliver (see FrameDone).
          if (task.iter == frame->iteration_count) frame->dead_exits.push_back(task.id);
        } else {
          ActivateNodes(task.id, outputs, frame->parent, frame->parent_iter, ready);
        }
        break;
      case FlowKind::kNextIteration:
        PropagateNextIteration(task, outputs, ready);
        break;
      default:
        ActivateNodes(task.id, outputs, frame, task.iter, ready);
        break;
    }
    DecrementOutstandingOps(frame, task.iter, ready);
  }

  void PropagateEnter(const Task& task, const FlowItem& flow, const Outputs& outputs,
                      ReadyList* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    const FrameKey key{task.frame, task.iter, flow.child_frame};
    const bool may_hold =
        outputs.node_dead || (flow.is_constant_enter && exec_->frames_[flow.child_frame].inert);
    if (may_hold && HoldEnter(key, task.id, outputs, ready)) return;
    Frame* child = FindOrCreateChild(task.frame, task.iter, flow.child_frame);
    // Enters held back while the frame could still be skipped reach it first.
    auto held = held_enters_.find(key);
    if (held != held_enters_.end()) {
      std::vector<std::pair<int, StoredValue>> enters = std::move(held->second);
      held_enters_.erase(held);
      for (auto& [enter, value] : enters) EnterChild(child, enter, StoredOutputs(&value), ready);
    }
    EnterChild(child, task.id, outputs, ready);
  }

  void EnterChild(Frame* child, int enter, const Outputs& outputs, ReadyList* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    if (exec_->flow_[enter].is_constant_enter) {
      AddLoopInvariant(child, enter, outputs, ready);
    } else {
      ActivateNodes(enter, outputs, child, 0, ready);
    }
    if (--child->pending_enters == 0 && CleanupIterations(child, 0, ready)) {
      FrameDone(child, ready);
    }
  }

  // Dead-frame elision: a frame instance whose Enters are ALL dead runs every node dead
  // and only delivers its Exits dead, so it is never built: dead Enters are held back
  // until either a live one arrives (then the frame is built and they enter it first) or
  // the last one is dead (then the Exits go dead to the parent at once). This keeps N
  // nested loops linear: the dead last iteration of loop k used to build a dead chain of
  // its N - k inner loops (issue 15). An inert frame (graph/inert_frames.h) is skipped
  // the same way when only its constant Enters are live, so their values are held too:
  // loops whose limits are constant Enters chained from outside stay linear as well.
  // Frames holding transfer nodes are never elided: a peer device may run its part of
  // the same frame live and wait for them. Returns whether `enter` was held.
  bool HoldEnter(const FrameKey& key, int enter, const Outputs& outputs, ReadyList* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    const FrameInfo& info = exec_->frames_[std::get<2>(key)];
    if (!info.elidable || frames_.count(key) > 0) return false;
    std::vector<std::pair<int, StoredValue>>& held = held_enters_[key];
    held.emplace_back(enter, Store(outputs));
    if (static_cast<int>(held.size()) < info.num_enters) return true;
    held_enters_.erase(key);
    Frame* parent = const_cast<Frame*>(std::get<0>(key));
    Outputs dead;
    dead.node_dead = true;
    for (int exit : info.exits) ActivateNodes(exit, dead, parent, std::get<1>(key), ready);
    return true;
  }

  void PropagateNextIteration(const Task& task, const Outputs& outputs, ReadyList* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    if (outputs.node_dead) return;  // the loop ended in this iteration
    Frame* frame = task.frame;
    if (task.iter == frame->iteration_count &&
        frame->outstanding_iterations == frame->info->parallel_iterations) {
      frame->deferred.emplace_back(task.id, Store(outputs));  // wait for a free iteration
      return;
    }
    if (task.iter == frame->iteration_count) IncrementIteration(frame, ready);
    ActivateNodes(task.id, outputs, frame, task.iter + 1, ready);
  }

  static StoredValue Store(const Outputs& outputs) {
    StoredValue stored;
    stored.dead = outputs.dead(0);
    stored.ref = outputs.ref(0);
    outputs.Deliver(0, /*last_use=*/false, &stored.value);
    return stored;
  }

  Frame* FindOrCreateChild(Frame* parent, int64_t iter, int static_frame)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    const FrameKey key{parent, iter, static_frame};
    auto it = frames_.find(key);
    if (it != frames_.end()) return it->second.get();
    std::unique_ptr<Frame> child = NewFrame(&exec_->frames_[static_frame], static_frame, parent, iter);
    Frame* raw = child.get();
    frames_.emplace(key, std::move(child));
    ++parent->iteration(iter)->outstanding_frames;
    return raw;
  }

  // Makes a constant Enter's value an input of every iteration, present and future.
  void AddLoopInvariant(Frame* frame, int enter, const Outputs& outputs, ReadyList* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    frame->invariants.emplace_back(enter, Store(outputs));
    StoredValue* stored = &frame->invariants.back().second;
    for (int64_t i = 0; i <= frame->iteration_count; ++i) {
      if (frame->iteration(i) == nullptr) continue;
      ActivateNodes(enter, StoredOutputs(stored), frame, i, ready);
    }
  }

  static Outputs StoredOutputs(StoredValue* stored) {
    Outputs outputs;
    outputs.stored = stored;
    outputs.node_dead = stored->dead;
    return outputs;
  }

  void IncrementIteration(Frame* frame, ReadyList* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    const int64_t next = ++frame->iteration_count;
    frame->slot(next) = std::make_unique<Iteration>(*frame->info, exec_->has_ref_edges_);
    ++frame->outstanding_iterations;
    frame->dead_exits.clear();
    std::vector<std::pair<int, StoredValue>> deferred = std::move(frame->deferred);
    frame->deferred.clear();
    for (auto& [node, value] : deferred) ActivateNodes(node, StoredOutputs(&value), frame, next, ready);
    for (auto& [node, value] : frame->invariants) {
      ActivateNodes(node, StoredOutputs(&value), frame, next, ready);
    }
  }

  // Hands node `id`'s outputs to its successors in (frame, iter) and collects the ones
  // that become ready (TF's ActivateNodes, with Merge's special readiness).
  void ActivateNodes(int id, const Outputs& outputs, Frame* frame, int64_t iter,
                     ReadyList* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    const NodeItem& item = exec_->nodes_[id];
    const bool src_is_enter = exec_->flow_[id].kind == FlowKind::kEnter;
    Iteration* state = frame->iteration(iter);
    for (int e = item.out_start; e < item.out_start + item.num_out_edges; ++e) {
      const OutEdge& edge = exec_->out_edges_[e];
      const FlowItem& dst = exec_->flow_[edge.dst];
      int& pending = state->pending[dst.local_id];
      int& dead_count = state->dead_count[dst.local_id];
      const int num_inputs = exec_->nodes_[edge.dst].num_inputs;
      const bool control = edge.dst_slot < 0;
      bool dst_ready = false;
      bool dst_dead = false;
      bool need_input = false;
      if (dst.kind == FlowKind::kMerge) {
        if (control) {
          pending -= 2;
          dst_dead = dead_count == num_inputs;
          dst_ready = pending == 0 || (pending == 1 && dst_dead);
        } else if (!outputs.dead(edge.src_output)) {
          const int count = pending;
          pending &= ~1;  // a live input has arrived
          dst_ready = count == 1;
          need_input = (count & 1) == 1;  // only the first live input is taken
        } else {
          ++dead_count;
          // A dead Enter means the loop is on an untaken branch: its back edge never fires.
          dst_dead = dead_count == num_inputs || src_is_enter;
          dst_ready = pending == 1 && dst_dead;
        }
      } else {
        if (outputs.node_dead || (!control && outputs.dead(edge.src_output))) ++dead_count;
        dst_ready = --pending == 0;
        dst_dead = dead_count > 0;
        need_input = !control;
      }
      if (need_input) {
        outputs.Deliver(edge.src_output, item.last_use[edge.src_output] == e,
                        &state->slots[edge.dst_slot]);
        state->dead[edge.dst_slot] = outputs.dead(edge.src_output);
        if (state->refs != nullptr) state->refs[edge.dst_slot] = outputs.ref(edge.src_output);
      }
      if (dst_ready) {
        if (dst.is_control_trigger) dst_dead = false;
        // Pushed before it is counted: if the push runs out of memory nothing is counted
        // (Guard), and the step can still end.
        ready->push_back({edge.dst, frame, iter, state, dst_dead});
        ++state->outstanding_ops;
        outstanding_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  void DecrementOutstandingOps(Frame* frame, int64_t iter, ReadyList* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    if (--frame->iteration(iter)->outstanding_ops != 0) return;
    if (frame->parent == nullptr) return;  // root: the step ends when nothing is outstanding
    if (CleanupIterations(frame, iter, ready)) FrameDone(frame, ready);
  }

  bool IsIterationDone(Frame* frame, int64_t iter) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    Iteration* state = frame->iteration(iter);
    if (state == nullptr || state->outstanding_ops != 0 || state->outstanding_frames != 0) {
      return false;
    }
    // Iteration 0 may still get Enter inputs; later ones finish in order.
    return iter == 0 ? frame->pending_enters == 0 : frame->iteration(iter - 1) == nullptr;
  }

  // Deletes finished iterations from `iter` on, starting a deferred one for each;
  // returns whether the whole frame is done.
  bool CleanupIterations(Frame* frame, int64_t iter, ReadyList* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    for (int64_t i = iter; i <= frame->iteration_count && IsIterationDone(frame, i); ++i) {
      frame->slot(i).reset();
      --frame->outstanding_iterations;
      if (!frame->deferred.empty()) IncrementIteration(frame, ready);
    }
    return frame->pending_enters == 0 && frame->outstanding_iterations == 0;
  }

  // Releases the held-back dead Exits into the parent, deletes `frame`, and lets the
  // parent iteration finish in turn.
  void FrameDone(Frame* frame, ReadyList* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flow_mu_) {
    Frame* parent = frame->parent;
    const int64_t parent_iter = frame->parent_iter;
    Outputs dead;
    dead.node_dead = true;
    for (int exit : frame->dead_exits) ActivateNodes(exit, dead, parent, parent_iter, ready);
    frames_.erase(FrameKey{parent, parent_iter, frame->static_frame});  // deletes `frame`
    --parent->iteration(parent_iter)->outstanding_frames;
    if (parent->parent != nullptr && CleanupIterations(parent, parent_iter, ready)) {
      FrameDone(parent, ready);
    }
  }

  absl::Mutex flow_mu_;
  std::unique_ptr<Frame> root_;
  // Live child frames by (parent frame, parent iteration, static frame).
  absl::flat_hash_map<FrameKey, std::unique_ptr<Frame>> frames_ ABSL_GUARDED_BY(flow_mu_);
  // Enters of frame instances not built yet (HoldEnter): dead ones, and the constant
  // ones of inert frames with their values.
  absl::flat_hash_map<FrameKey, std::vector<std::pair<int, StoredValue>>> held_enters_
      ABSL_GUARDED_BY(flow_mu_);
};

void Executor::RunAsyncWithFrames(const Args& args, DoneCallback done) const {
  std::make_shared<FrameRunState>(this, args, std::move(done))->Start();
}

// Rule 7, decided once: each node's frame, local id and kind; each frame's attributes.
absl::Status Executor::BuildFlowInfo(const Graph& graph, const std::vector<Node*>& nodes) {
  DFLOW_ASSIGN_OR_RETURN(const ControlFlowInfo info, BuildControlFlowInfo(graph));
  for (const StaticFrame& frame : info.frames) {
    FrameInfo built;
    built.name = frame.name;
    built.parent = frame.parent;
    built.num_enters = frame.num_enters;
    built.parallel_iterations = frame.parallel_iterations;
    frames_.push_back(std::move(built));
  }
  flow_.resize(nodes.size());
  // A frame holding a transfer node, and every frame around it, is never elided.
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string& op = nodes[i]->op();
    if (op != "_Send" && op != "_Recv" && op != "_HostSend" && op != "_HostRecv") continue;
    for (int f = info.node_frame[nodes[i]->id()]; f > 0; f = frames_[f].parent) {
      frames_[f].elidable = false;
    }
  }
  const std::vector<bool> inert = InertFrames(graph, info);
  for (size_t f = 0; f < frames_.size(); ++f) frames_[f].inert = frames_[f].elidable && inert[f];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    FlowItem& flow = flow_[i];
    flow.frame = info.node_frame[node.id()];
    std::vector<int>& pending = frames_[flow.frame].initial_pending;
    flow.local_id = static_cast<int>(pending.size());
    pending.push_back(0);  // set by InitialPending
    flow.is_control_trigger = node.op() == "ControlTrigger";
    if (IsMerge(node)) {
      flow.kind = FlowKind::kMerge;
    } else if (IsEnter(node)) {
      flow.kind = FlowKind::kEnter;
      flow.child_frame = info.entered_frame[node.id()];
      flow.is_constant_enter = IsConstantEnter(node);
    } else if (IsExit(node)) {
      flow.kind = FlowKind::kExit;
      frames_[flow.frame].exits.push_back(static_cast<int>(i));
    } else if (IsNextIteration(node)) {
      flow.kind = FlowKind::kNextIteration;
      if (flow.frame == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NextIteration node '", node.name(), "' is not inside a while loop frame"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
