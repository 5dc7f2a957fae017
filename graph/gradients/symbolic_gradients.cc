#include "graph/gradients/symbolic_gradients.h"

#include <deque>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"
#include "graph/gradients/enclosing_loop_grad.h"
#include "graph/gradients/while_grad.h"
#include "graph/ops.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// The gradient of `out` when none reaches it: zeros like it. For a resource handle (a
// variable switched into a conditional's branch), zeros of the variable's shape and of
// the dtype it is read as (TF's ZerosLike for resources), read from the Switch's input
// so they exist whichever branch runs; null when nothing reads it as a variable.
Output ZerosFor(const Scope& scope, const Output& out) {
  if (BaseType(out.dtype()) != DT_RESOURCE) return ZerosLike(scope, out);
  DataType read = DT_INVALID;
  for (const Edge* e : out.node->out_edges()) {
    const AttrValue* dtype = e->IsControlEdge() ? nullptr : e->dst->attr("dtype");
    if (dtype != nullptr && (e->dst->op() == "ReadVariableOp" ||
                             e->dst->op() == "ResourceGather")) {
      read = dtype->type();
    }
  }
  const Edge* source = out.node->input_edge(0);
  if (read == DT_INVALID || source == nullptr) return Output();
  Output handle(source->src, source->src_output);
  Output shape = AddOp(scope, "VariableShape", {handle}).output(0);
  return Fill(scope, shape, Cast(scope, 0, read));
}

// One AddSymbolicGradients call: the nodes between outputs and inputs, the gradients
// collected per tensor, and the walk from the outputs back to the inputs.
//
// While loops: the walk runs in one frame, the outputs' (the "level"). A loop nested in
// it is one step of the walk: once the gradients of all its Exits on the paths are
// summed, AddWhileLoopGradient builds its backward loop and the gradients continue from
// its Enters' inputs; the nodes inside are not visited one by one. Inside a loop's body
// (the backward loop's own call) NextIteration's back edges are cut, so one iteration is
// differentiated.
class GradientBuilder {
 public:
  GradientBuilder(const GradientRegistry& registry, const Scope& scope,
                  const std::vector<Output>& outputs, const std::vector<Output>& inputs,
                  const std::vector<Output>* grad_inputs, const EnclosingLoopGrad* enclosing)
      : registry_(registry),
        scope_(scope),
        grad_scope_(scope.NewSubScope("gradients")),
        outputs_(outputs),
        inputs_(inputs),
        given_grad_inputs_(grad_inputs),
        enclosing_(enclosing) {}

  absl::Status Build(std::vector<Output>* grad_outputs);

 private:
  absl::Status Validate() const;
  // Reads the graph's frames when it has loops; checks outputs and inputs share one.
  absl::Status FindLevel();
  // The frame a tensor lives in (an Exit's is its loop's parent, an Enter's the loop).
  int TensorFrame(const Output& out) const;
  // Whether the walk visits `node`: a node of the level frame, an Exit of a loop nested
  // in it, or an Enter into the level frame (an input of a loop body's gradient).
  bool Visited(const Node& node) const;
  // An Enter from the level frame into a loop nested in it.
  bool EntersChildLoop(const Node& node) const;
  // Whether the frames read at the start know `node` (gradient nodes made since do not).
  bool HasFrame(const Node& node) const {
    return frames_ && node.id() < static_cast<int>(frames_->node_frame.size());
  }
  // A NextIteration of the level frame (its back edge is not followed) or a LoopCond
  // (a loop's predicate has no gradient: nothing flows through it).
  bool IsLevelBackEdge(const Node& node) const;
  // Inside a loop's body (level_ > 0), the walks stay in it: backward they stop at the
  // loop's Enters, forward at its Exits (past them, an enclosing loop leads back round).
  bool LeavesLevel(const Node& node, bool backward) const {
    if (level_ == 0 || !HasFrame(node)) return false;
    if (backward) return IsEnter(node) && frames_->entered_frame[node.id()] == level_;
    return IsExit(node) && frames_->node_frame[node.id()] == level_;
  }
  // All gradients of the loop `frame`'s Exits are in: its backward loop, then its Enters.
  absl::Status BackpropLoop(int frame);
  // Fills between_ (on a path from an input to an output) and pending_ (per node of
  // between_, its data out-edges into between_: the gradients it waits for).
  void FindNodesBetween();
  bool Between(const Node* node) const { return between_[node->id()]; }
  absl::Status ProcessNode(Node* node, std::vector<Output>* grad_outputs);
  // dx flows into `src` (a tensor some node consumed); may make src's node ready.
  void BackpropAlongEdge(const Output& dx, const Output& src);
  // The sum of the gradients collected for `out`; null when there are none.
  Output SumGradients(const Output& out, const Scope& scope);
  // Where the gradient nodes of `node` go (see the header); one sub-scope per node.
  Scope GradScopeFor(const Node& node);

  const GradientRegistry& registry_;
  const Scope scope_;
  const Scope grad_scope_;
  const std::vector<Output>& outputs_;
  const std::vector<Output>& inputs_;
  // Null: gradients of ones (OnesLike each output), made in Build.
  const std::vector<Output>* given_grad_inputs_;
  // Set when differentiating a loop's body: nested loops' gradients go inside it.
  const EnclosingLoopGrad* enclosing_;
  std::vector<Output> grad_inputs_;

  std::optional<ControlFlowInfo> frames_;  // only for graphs with loops
  int level_ = 0;
  struct LoopGrads {
    int pending_exits = 0;  // Exits between the outputs and inputs not processed yet
    const Node* exit = nullptr;
    NodeGrads exit_grads;
  };
  absl::flat_hash_map<int, LoopGrads> loops_;  // by frame

  std::vector<bool> between_;
  std::vector<int> pending_;
  absl::flat_hash_map<Output, std::vector<Output>> backprops_;
  std::deque<Node*> ready_;
  absl::flat_hash_map<int, Scope> node_scopes_;  // by node id
};

absl::Status GradientBuilder::Validate() const {
  if (given_grad_inputs_ != nullptr && outputs_.size() != given_grad_inputs_->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddSymbolicGradients: ", outputs_.size(), " outputs but ",
        given_grad_inputs_->size(),
        " grad_inputs; they must match one for one"));
  }
  const Graph& graph = *scope_.graph();
  auto check = [&](const Output& out, absl::string_view what, size_t i) -> absl::Status {
    if (out.node == nullptr || graph.FindNodeId(out.node->id()) != out.node ||
        out.index < 0 || out.index >= out.node->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AddSymbolicGradients: ", what, "[", i, "] ",
          out.node == nullptr ? std::string("is null (the result of a failed op)")
                              : absl::StrCat("'", out.name(), "' is not a tensor of this "
                                             "scope's graph")));
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < outputs_.size(); ++i) {
    DFLOW_RETURN_IF_ERROR(check(outputs_[i], "outputs", i));
    if (given_grad_inputs_ != nullptr) {
      DFLOW_RETURN_IF_ERROR(check((*given_grad_inputs_)[i], "grad_inputs", i));
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    DFLOW_RETURN_IF_ERROR(check(inputs_[i], "inputs", i));
  }
  return absl::OkStatus();
}

absl::Status GradientBuilder::FindLevel() {
  Graph& graph = *scope_.graph();
  if (outputs_.empty() || !HasControlFlow(graph)) return absl::OkStatus();
  if (enclosing_ != nullptr) {
    frames_ = *enclosing_->info;
  } else {
    DFLOW_ASSIGN_OR_RETURN(frames_, BuildControlFlowInfo(graph));
  }
  level_ = TensorFrame(outputs_[0]);
  auto check = [&](const Output& out, absl::string_view what, size_t i) -> absl::Status {
    const int frame = TensorFrame(out);
    if (frame == level_) return absl::OkStatus();
    auto name = [&](int f) {
      return f == 0 ? std::string("the root frame")
                    : absl::StrCat("while loop '", frames_->frames[f].name, "'");
    };
    return absl::UnimplementedError(absl::StrCat(
        "AddSymbolicGradients: ", what, "[", i, "] '", out.name(), "' is in ", name(frame),
        " but outputs[0] is in ", name(level_),
        "; outputs and inputs must be in one frame (take gradients of a loop's results "
        "with respect to what enters it)"));
  };
  for (size_t i = 0; i < outputs_.size(); ++i) {
    DFLOW_RETURN_IF_ERROR(check(outputs_[i], "outputs", i));
  }
  for (size_t i = 0; i < inputs_.size(); ++i) DFLOW_RETURN_IF_ERROR(check(inputs_[i], "inputs", i));
  return absl::OkStatus();
}

int GradientBuilder::TensorFrame(const Output& out) const {
  const int id = out.node->id();
  if (IsEnter(*out.node)) return frames_->entered_frame[id];
  const int frame = frames_->node_frame[id];
  return IsExit(*out.node) ? frames_->frames[frame].parent : frame;
}

bool GradientBuilder::Visited(const Node& node) const {
  if (!frames_) return true;
  if (!HasFrame(node)) return false;  // made since
  const int frame = frames_->node_frame[node.id()];
  if (IsExit(node)) return frames_->frames[frame].parent == level_;
  if (IsEnter(node)) return frames_->entered_frame[node.id()] == level_;
  return frame == level_;
}

bool GradientBuilder::EntersChildLoop(const Node& node) const {
  if (!HasFrame(node) || !IsEnter(node)) return false;
  const int entered = frames_->entered_frame[node.id()];
  return entered > 0 && frames_->frames[entered].parent == level_;
}

bool GradientBuilder::IsLevelBackEdge(const Node& node) const {
  return HasFrame(node) && (IsNextIteration(node) || node.op() == "LoopCond") &&
         frames_->node_frame[node.id()] == level_;
}

void GradientBuilder::FindNodesBetween() {
  const int num_ids = scope_.graph()->num_node_ids();
  std::vector<bool> backward(num_ids, false);
  std::deque<Node*> queue;
  for (const Output& out : outputs_) {
    if (!backward[out.node->id()]) queue.push_back(out.node);
    backward[out.node->id()] = true;
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    if (LeavesLevel(*node, /*backward=*/true)) continue;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge() || backward[e->src->id()] || IsLevelBackEdge(*e->src)) continue;
      backward[e->src->id()] = true;
      queue.push_back(e->src);
    }
  }
  between_.assign(num_ids, false);
  for (const Output& in : inputs_) {
    if (!backward[in.node->id()] || between_[in.node->id()]) continue;
    between_[in.node->id()] = true;
    queue.push_back(in.node);
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    if (IsLevelBackEdge(*node) || LeavesLevel(*node, /*backward=*/false)) continue;
    for (const Edge* e : node->out_edges()) {
      if (e->IsControlEdge() || !backward[e->dst->id()] || between_[e->dst->id()]) continue;
      between_[e->dst->id()] = true;
      queue.push_back(e->dst);
    }
  }
  pending_.assign(num_ids, 0);
  for (Node* node : scope_.graph()->nodes()) {
    if (node->id() >= num_ids || !between_[node->id()] || !Visited(*node)) continue;
    for (const Edge* e : node->out_edges()) {
      const Node& dst = *e->dst;
      if (!e->IsControlEdge() && between_[dst.id()] && (Visited(dst) || EntersChildLoop(dst))) {
        ++pending_[node->id()];
      }
    }
    if (frames_ && IsExit(*node)) ++loops_[frames_->node_frame[node->id()]].pending_exits;
  }
}

void GradientBuilder::BackpropAlongEdge(const Output& dx, const Output& src) {
  if (!Between(src.node)) return;
  if (dx.node != nullptr) backprops_[src].push_back(dx);
  if (--pending_[src.node->id()] == 0) ready_.push_back(src.node);
}

Output GradientBuilder::SumGradients(const Output& out, const Scope& scope) {
  auto it = backprops_.find(out);
  if (it == backprops_.end() || it->second.empty()) return Output();
  if (it->second.size() == 1) return it->second[0];
  return AddN(scope.WithOpName("AddN"), it->second);
}

Scope GradientBuilder::GradScopeFor(const Node& node) {
  auto it = node_scopes_.find(node.id());
  if (it != node_scopes_.end()) return it->second;
  Scope scope = grad_scope_.NewSubScope(absl::StrCat(node.name(), "_grad"));
  if (scope_.device().empty()) scope = scope.WithDevice(node.requested_device());
  node_scopes_.emplace(node.id(), scope);
  return scope;
}

absl::Status GradientBuilder::ProcessNode(Node* node, std::vector<Output>* grad_outputs) {
  const Scope scope = GradScopeFor(*node);
  std::vector<Output> dy(node->num_outputs());
  int num_with_grad = 0;
  for (int i = 0; i < node->num_outputs(); ++i) {
    dy[i] = SumGradients(Output(node, i), scope);
    if (dy[i].node != nullptr) ++num_with_grad;
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (inputs_[k] == Output(node, i)) (*grad_outputs)[k] = dy[i];
    }
  }
  if (frames_ && IsExit(*node)) {
    const int frame = frames_->node_frame[node->id()];
    LoopGrads& loop = loops_[frame];
    loop.exit = node;
    loop.exit_grads[node] = dy[0];
    return --loop.pending_exits == 0 ? BackpropLoop(frame) : absl::OkStatus();
  }
  bool feeds_between = false;
  for (const Edge* e : node->in_edges()) {
    feeds_between |= !e->IsControlEdge() && Between(e->src);
  }
  if (!feeds_between) return absl::OkStatus();  // an input at the top of the paths

  std::vector<Output> dx(node->num_inputs());
  // No gradient reaches the node (e.g. only through StopGradient): nothing flows back,
  // whether or not its op has a gradient function (TF's NoGradient).
  const GradFunc* func = num_with_grad == 0 ? nullptr : registry_.Find(node->op());
  if (func != nullptr) {
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (dy[i].node == nullptr) dy[i] = ZerosFor(scope, Output(node, i));
    }
    DFLOW_RETURN_IF_ERROR((*func)(scope, Operation(node), dy, &dx));
    DFLOW_RETURN_IF_ERROR(scope.status());
    if (static_cast<int>(dx.size()) != node->num_inputs()) {
      return absl::InternalError(absl::StrCat(
          "the gradient of op ", node->op(), " (node '", node->name(), "') returned ",
          dx.size(), " gradients for ", node->num_inputs(), " inputs"));
    }
  } else if (num_with_grad > 0 && !registry_.HasNoGradient(node->op())) {
    return absl::NotFoundError(absl::StrCat("No gradient defined for op: ", node->op(),
                                            " (node '", node->name(), "')"));
  }
  for (const Edge* e : node->in_edges()) {
    if (e->IsControlEdge()) continue;
    BackpropAlongEdge(dx[e->dst_input], Output(e->src, e->src_output));
  }
  return absl::OkStatus();
}

absl::Status GradientBuilder::BackpropLoop(int frame) {
  const LoopGrads& loop = loops_[frame];
  NodeGrads enter_grads;
  DFLOW_RETURN_IF_ERROR(AddWhileLoopGradient(registry_, GradScopeFor(*loop.exit), *frames_,
                                             *loop.exit, loop.exit_grads, enclosing_,
                                             &enter_grads));
  for (Node* node : scope_.graph()->nodes()) {
    if (!HasFrame(*node) || frames_->entered_frame[node->id()] != frame || !Between(node)) {
      continue;
    }
    auto it = enter_grads.find(node);
    const Edge* in = node->input_edge(0);
    BackpropAlongEdge(it == enter_grads.end() ? Output() : it->second,
                      Output(in->src, in->src_output));
  }
  return absl::OkStatus();
}

absl::Status GradientBuilder::Build(std::vector<Output>* grad_outputs) {
  DFLOW_RETURN_IF_ERROR(scope_.status());
  DFLOW_RETURN_IF_ERROR(Validate());
  DFLOW_RETURN_IF_ERROR(FindLevel());
  if (given_grad_inputs_ != nullptr) {
    grad_inputs_ = *given_grad_inputs_;
  } else {
    for (const Output& out : outputs_) {
      grad_inputs_.push_back(OnesLike(GradScopeFor(*out.node).WithOpName("OnesLike"), out));
    }
    DFLOW_RETURN_IF_ERROR(scope_.status());
  }
  FindNodesBetween();
  grad_outputs->assign(inputs_.size(), Output());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (Between(outputs_[i].node)) backprops_[outputs_[i]].push_back(grad_inputs_[i]);
  }
  int num_between = 0;
  for (Node* node : scope_.graph()->nodes()) {
    if (node->id() >= static_cast<int>(between_.size()) || !Between(node) || !Visited(*node)) {
      continue;
    }
    ++num_between;
    if (pending_[node->id()] == 0) ready_.push_back(node);
  }
  int processed = 0;
  while (!ready_.empty()) {
    Node* node = ready_.front();
    ready_.pop_front();
    ++processed;
    DFLOW_RETURN_IF_ERROR(ProcessNode(node, grad_outputs));
  }
  if (processed != num_between) {
    for (Node* node : scope_.graph()->nodes()) {
      if (node->id() < static_cast<int>(between_.size()) && Between(node) &&
          Visited(*node) && pending_[node->id()] > 0) {
        return absl::UnimplementedError(absl::StrCat(
            "AddSymbolicGradients: node '", node->name(), "' (", node->op(),
            ") is on a cycle between the outputs and the inputs that is not a while loop"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status AddGradients(const GradientRegistry& registry, const Scope& scope,
                          const std::vector<Output>& outputs,
                          const std::vector<Output>& inputs,
                          const std::vector<Output>* grad_inputs,
                          const EnclosingLoopGrad* enclosing,
                          std::vector<Output>* grad_outputs) {
  GradientBuilder builder(registry, scope, outputs, inputs, grad_inputs, enclosing);
  absl::Status status = builder.Build(grad_outputs);
  if (!status.ok()) {
    scope.UpdateStatus(status);
    grad_outputs->assign(inputs.size(), Output());
  }
  return status;
}

}  // namespace

absl::Status AddLoopBodyGradients(const GradientRegistry& registry, const Scope& scope,
                                  const std::vector<Output>& ys, const std::vector<Output>& xs,
                                  const std::vector<Output>& dys,
                                  const EnclosingLoopGrad& enclosing, std::vector<Output>* dx) {
  return AddGradients(registry, scope, ys, xs, &dys, &enclosing, dx);
}

absl::Status AddSymbolicGradients(const GradientRegistry& registry, const Scope& scope,
                                  const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs) {
  return AddGradients(registry, scope, outputs, inputs, &grad_inputs, nullptr,
                      grad_outputs);
}

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs) {
  return AddGradients(GradientRegistry::Default(), scope, outputs, inputs, &grad_inputs,
                      nullptr, grad_outputs);
}

absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  std::vector<Output>* grad_outputs) {
  return AddGradients(GradientRegistry::Default(), scope, outputs, inputs, nullptr, nullptr,
                      grad_outputs);
}

}  // namespace dflow
