#include "graph/gradients/while_grad.h"

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/array_ops.h"
#include "graph/cond_ops.h"
#include "graph/control_flow.h"
#include "graph/gradients/cond_context.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "graph/while_loop_structure.h"

namespace dflow {
namespace {

// Floats and TensorLists (DT_VARIANT): a list carried by the loop gets a list of its
// elements' gradients (graph/gradients/list_grads.cc).
bool IsDifferentiable(DataType t) { return IsFloatOrComplex(t) || BaseType(t) == DT_VARIANT; }

// Marks the lists a loop gradient adds to replay forward values: a later gradient through
// the same loop must not differentiate them (a list of every replayed value, zeros).
constexpr char kAccumulatorAttr[] = "_dflow_loop_gradient_accumulator";

bool IsAccumulator(const Output& initial) {
  if (initial.node == nullptr) return false;
  const AttrValue* mark = initial.node->attr(kAccumulatorAttr);
  return mark != nullptr && mark->b();
}

Output EnterInput(const Node& enter) {
  const Edge* e = enter.input_edge(0);
  return e == nullptr ? Output() : Output(e->src, e->src_output);
}

// The dtype a resource variable invariant is read as inside the loop, through the
// Switches, Identities and Merges that carry the handle into conditionals (DT_INVALID:
// never read as a variable; e.g. a TensorArray's handle, whose gradient flows through
// its flow).
DataType ResourceReadType(const Node& enter) {
  std::vector<const Node*> carriers = {&enter};
  absl::flat_hash_set<const Node*> seen = {&enter};
  while (!carriers.empty()) {
    const Node* node = carriers.back();
    carriers.pop_back();
    for (const Edge* e : node->out_edges()) {
      if (e->IsControlEdge()) continue;
      const Node* dst = e->dst;
      if (dst->op() == "ReadVariableOp" || dst->op() == "ResourceGather") {
        const AttrValue* dtype = dst->attr("dtype");
        if (dtype != nullptr && IsDifferentiable(dtype->type())) return dtype->type();
      } else if (((dst->op() == "Switch" || dst->op() == "Identity") && e->dst_input == 0) ||
                 IsMerge(*dst)) {
        if (seen.insert(dst).second) carriers.push_back(dst);
      }
    }
  }
  return DT_INVALID;
}

// One differentiable value the backward loop carries: a variable's gradient or an
// invariant's running sum.
struct Carried {
  Node* enter = nullptr;  // the forward Enter it belongs to
  LoopVar forward;        // for a loop variable: its forward parts
  Output initial;
  LoopVar var;     // in the backward loop
  Output current;  // the backward body's view of it
};

class WhileGradBuilder {
 public:
  WhileGradBuilder(const GradientRegistry& registry, const Scope& scope,
                   const ControlFlowInfo& info, const EnclosingLoopGrad* enclosing)
      : registry_(registry), scope_(scope.WithNoControlDependencies()),
        graph_(scope.graph()), info_(info), enclosing_(enclosing),
        forward_additions_(enclosing != nullptr ? enclosing->forward_additions
                                                : &own_forward_additions_) {}

  absl::Status Build(const Node& exit, const NodeGrads& exit_grads, NodeGrads* enter_grads);

 private:
  absl::Status FindLoop(const Node& exit);
  // A value of a branch in the body that reads a differentiable tensor from outside its
  // branch without a Switch would get a gradient that is dead in iterations skipping
  // the branch, and a dead gradient stops the backward loop: refused (TF's cond always
  // switches such tensors into the branch).
  absl::Status CheckBranchReads();
  // For an Exit of a loop nested in the body: the tensors entering that loop.
  std::vector<Output> NestedLoopInputs(const Node& exit);
  // A loop nested in another's body: only inside that loop's gradient, not in a branch.
  absl::Status CheckNesting();
  absl::Status CollectCarried(const NodeGrads& exit_grads);
  void OpenBackwardLoop(const Output& count);
  absl::Status BuildBackwardBody(std::vector<Output>* dx);
  // Rewires the inputs of nodes [first_id, end_id) that read the forward loop.
  absl::Status ReplaceForwardReads(int first_id, int end_id);
  absl::StatusOr<Output> BackwardValue(const Output& forward);
  // Whether BackwardValue would replay `forward` whole through an accumulator.
  bool ReplaysWhole(const Output& forward) const;
  // Zeros of `forward`'s shape in the backward loop, for a ZerosLike of it (a gradient
  // that does not reach a node): only the shape is replayed, not the tensor.
  absl::StatusOr<Output> ZerosInBackward(const Output& forward);
  Output Accumulate(const Output& forward, const CondContext& context);
  // `leaf` applied to `list` inside the branches of `context` from `level` on (each a
  // Switch of the list on the branch's predicate, `preds`), merged back out of them.
  Output RouteThroughBranches(const Scope& s, const Output& list, const CondContext& context,
                              const std::vector<Output>& preds, size_t level,
                              const std::function<Output(const Output&)>& leaf);
  // Nodes made since `first_id` are forward nodes; inside an enclosing loop's body, the
  // inputless ones among them run once per enclosing iteration.
  void MarkForwardAdditions(int first_id);
  Output CopyConst(const Node& node);
  // The forward loop's nodes, its Enters, the Exits of loops nested in it and the
  // forward nodes nested gradients added to it.
  bool InForwardFrame(const Node& node) const;
  // The forward loop's own nodes and Enters, as the frames were read.
  bool InForwardBody(const Node& node) const;

  const GradientRegistry& registry_;
  const Scope scope_;
  Graph* graph_;
  const ControlFlowInfo& info_;
  const EnclosingLoopGrad* enclosing_;
  absl::flat_hash_set<const Node*> own_forward_additions_;
  absl::flat_hash_set<const Node*>* forward_additions_;
  std::unique_ptr<CondContexts> contexts_;
  absl::flat_hash_map<int, std::vector<Output>> nested_inputs_;  // by nested frame
  Output forward_pivot_;  // alive in every forward iteration (the counter's Identity)
  int frame_ = 0;
  WhileLoopStructure forward_;
  WhileLoopStructure backward_;
  std::vector<Carried> vars_;        // per differentiable loop variable
  std::vector<Carried> invariants_;  // per differentiable invariant
  LoopVar counter_;
  Output pivot_;  // the counter inside the backward body
  int backward_start_ = 0;
  absl::flat_hash_map<Output, Output> replaced_;
  absl::flat_hash_map<Output, Output> zeros_;  // ZerosInBackward's, by forward value
};

absl::Status WhileGradBuilder::FindLoop(const Node& exit) {
  frame_ = info_.node_frame[exit.id()];
  DFLOW_ASSIGN_OR_RETURN(forward_, FindWhileLoop(*graph_, info_, frame_));
  contexts_ = std::make_unique<CondContexts>(
      [this](const Node& n) { return InForwardBody(n); }, forward_.frame_name,
      [this](const Node& n) { return NestedLoopInputs(n); });
  DFLOW_RETURN_IF_ERROR(CheckNesting());
  return CheckBranchReads();
}

std::vector<Output> WhileGradBuilder::NestedLoopInputs(const Node& exit) {
  const int id = exit.id();
  if (!IsExit(exit) || id >= static_cast<int>(info_.node_frame.size())) return {};
  const int nested = info_.node_frame[id];
  if (nested == frame_ || info_.frames[nested].parent != frame_) return {};
  auto [it, inserted] = nested_inputs_.try_emplace(nested);
  if (inserted) {
    for (Node* node : graph_->nodes()) {
      if (node->id() < static_cast<int>(info_.entered_frame.size()) &&
          info_.entered_frame[node->id()] == nested && EnterInput(*node).node != nullptr) {
        it->second.push_back(EnterInput(*node));
      }
    }
  }
  return it->second;
}

absl::Status WhileGradBuilder::CheckBranchReads() {
  for (Node* node : graph_->nodes()) {
    const int id = node->id();
    if (id >= static_cast<int>(info_.node_frame.size()) || info_.node_frame[id] != frame_ ||
        IsMerge(*node) || node->op() == "Switch" || node->op() == "RefSwitch") {
      continue;
    }
    DFLOW_ASSIGN_OR_RETURN(CondContext context, contexts_->Of(Output(node, -1)));
    if (context.empty()) continue;
    for (const Edge* e : node->in_edges()) {
      const Output source(e->src, e->src_output);
      if (e->IsControlEdge() || !IsDifferentiable(source.dtype()) ||
          e->src->op() == "Const") {
        continue;
      }
      DFLOW_ASSIGN_OR_RETURN(CondContext outer, contexts_->Of(source));
      if (outer.size() >= context.size()) continue;
      return absl::UnimplementedError(absl::StrCat(
          "the gradient of while loop '", forward_.frame_name, "': '", node->name(),
          "', inside a conditional of the body, reads '", source.name(),
          "' from outside its branch without a Switch; its gradient would be dead in "
          "iterations that skip the branch. Switch it into the branch as TF's cond does"));
    }
  }
  return absl::OkStatus();
}

absl::Status WhileGradBuilder::CheckNesting() {
  const int parent = info_.frames[frame_].parent;
  if (parent == 0) return absl::OkStatus();
  const std::string& parent_name = info_.frames[parent].name;
  if (enclosing_ == nullptr || enclosing_->forward_frame != parent_name) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of while loop '", forward_.frame_name, "', which is nested in while "
        "loop '", parent_name, "', can only be taken as part of that loop's gradient"));
  }
  // A loop runs in one context of the enclosing body: all its Enters are alive in the
  // same iterations, so their inputs say whether it runs inside a branch.
  std::vector<Node*> enters = forward_.invariants;
  for (const LoopVar& var : forward_.vars) enters.push_back(var.enter);
  for (Node* enter : enters) {
    const Output input = EnterInput(*enter);
    if (input.node == nullptr) continue;
    DFLOW_ASSIGN_OR_RETURN(bool conditional, enclosing_->in_conditional(input));
    if (conditional) {
      return absl::UnimplementedError(absl::StrCat(
          "the gradient of while loop '", forward_.frame_name, "', which runs inside a "
          "conditional (Switch/Merge) of while loop '", parent_name, "', is not supported"));
    }
  }
  return absl::OkStatus();
}

absl::Status WhileGradBuilder::CollectCarried(const NodeGrads& exit_grads) {
  for (const LoopVar& var : forward_.vars) {
    const Output input = EnterInput(*var.enter);
    if (!IsDifferentiable(input.dtype()) || IsAccumulator(input)) continue;
    Carried c{var.enter, var, Output(), {}, {}};
    auto it = var.exit == nullptr ? exit_grads.end() : exit_grads.find(var.exit);
    if (it != exit_grads.end() && it->second.node != nullptr) {
      c.initial = it->second;
    } else {
      c.initial = ZerosLike(scope_, var.exit != nullptr ? var.exit_output() : input);
    }
    vars_.push_back(c);
  }
  for (Node* enter : forward_.invariants) {
    const Output input = EnterInput(*enter);
    Output zeros;
    if (IsDifferentiable(input.dtype())) {
      zeros = ZerosLike(scope_, input);
    } else if (BaseType(input.dtype()) == DT_RESOURCE) {
      const DataType read = ResourceReadType(*enter);
      if (read == DT_INVALID) continue;
      zeros = ZerosLike(scope_, AddOp(scope_, "ReadVariableOp", {input},
                                      {{"dtype", TypeAttr(read)}}).output(0));
    } else {
      continue;
    }
    invariants_.push_back({enter, {}, zeros, {}, {}});
  }
  return scope_.status();
}

void WhileGradBuilder::OpenBackwardLoop(const Output& count) {
  backward_.frame_name = scope_.name_prefix();
  backward_.parallel_iterations = forward_.parallel_iterations;
  backward_start_ = graph_->num_node_ids();
  counter_ = OpenLoopVar(scope_, backward_, count);
  for (std::vector<Carried>* list : {&vars_, &invariants_}) {
    for (Carried& c : *list) c.var = OpenLoopVar(scope_, backward_, c.initial);
  }
  const int cond_start = graph_->num_node_ids();
  Output more = Greater(scope_, Output(counter_.merge), 0);
  AnchorInputlessNodes(graph_, cond_start, Output(counter_.merge));
  backward_.pred = AddOp(scope_.WithOpName("LoopCond"), "LoopCond", {more}).output(0);
  pivot_ = SwitchLoopVar(scope_, backward_, &counter_);
  for (std::vector<Carried>* list : {&vars_, &invariants_}) {
    for (Carried& c : *list) c.current = SwitchLoopVar(scope_, backward_, &c.var);
  }
}

absl::Status WhileGradBuilder::BuildBackwardBody(std::vector<Output>* dx) {
  std::vector<Output> ys, xs, dys;
  for (const Carried& c : vars_) {
    ys.push_back(c.forward.body_output());
    xs.push_back(c.forward.body_input());
    dys.push_back(c.current);
  }
  for (const Carried& c : invariants_) xs.push_back(Output(c.enter, 0));
  const int first_id = graph_->num_node_ids();
  EnclosingLoopGrad enclosing;
  enclosing.info = &info_;
  enclosing.forward_frame = forward_.frame_name;
  enclosing.forward_pivot = forward_pivot_;
  enclosing.forward_additions = forward_additions_;
  enclosing.in_conditional = [this](const Output& value) -> absl::StatusOr<bool> {
    DFLOW_ASSIGN_OR_RETURN(CondContext context, contexts_->Of(value));
    return !context.empty();
  };
  DFLOW_RETURN_IF_ERROR(AddLoopBodyGradients(registry_, scope_, ys, xs, dys, enclosing, dx));
  const int end_id = graph_->num_node_ids();
  DFLOW_RETURN_IF_ERROR(ReplaceForwardReads(first_id, end_id));
  AnchorInputlessNodes(graph_, first_id, pivot_, end_id);
  return scope_.status();
}

bool WhileGradBuilder::InForwardBody(const Node& node) const {
  const int id = node.id();
  if (id >= static_cast<int>(info_.node_frame.size())) return false;
  return info_.node_frame[id] == frame_ || info_.entered_frame[id] == frame_;
}

bool WhileGradBuilder::InForwardFrame(const Node& node) const {
  if (InForwardBody(node) || forward_additions_->contains(&node)) return true;
  const int id = node.id();
  if (id >= static_cast<int>(info_.node_frame.size()) || !IsExit(node)) return false;
  return info_.frames[info_.node_frame[id]].parent == frame_;  // a nested loop's result
}

void WhileGradBuilder::MarkForwardAdditions(int first_id) {
  const int end = graph_->num_node_ids();
  if (enclosing_ != nullptr) AnchorInputlessNodes(graph_, first_id, enclosing_->forward_pivot);
  for (int id = first_id; id < end; ++id) {
    if (Node* node = graph_->FindNodeId(id)) forward_additions_->insert(node);
  }
}

absl::Status WhileGradBuilder::ReplaceForwardReads(int first_id, int end_id) {
  for (int id = first_id; id < end_id; ++id) {
    Node* node = graph_->FindNodeId(id);
    if (node == nullptr || forward_additions_->contains(node)) continue;
    const std::vector<const Edge*> edges = node->in_edges();
    for (const Edge* e : edges) {
      // Made for the backward loop: skip. A nested gradient's forward additions are made
      // after backward_start_ too, but are forward values (e.g. its accumulators' Exits).
      if (e->src->id() >= backward_start_ && !forward_additions_->contains(e->src)) {
        continue;
      }
      if (e->IsControlEdge()) {
        graph_->RemoveEdge(e);  // ordering within the forward loop means nothing here
        continue;
      }
      const Output forward(e->src, e->src_output);
      Output value;
      if (node->op() == "ZerosLike" && ReplaysWhole(forward) && !replaced_.contains(forward)) {
        DFLOW_ASSIGN_OR_RETURN(value, ZerosInBackward(forward));
      } else {
        DFLOW_ASSIGN_OR_RETURN(value, BackwardValue(forward));
      }
      const int dst_input = e->dst_input;
      graph_->RemoveEdge(e);
      graph_->AddEdge(value.node, value.index, node, dst_input);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Output> WhileGradBuilder::BackwardValue(const Output& forward) {
  auto it = replaced_.find(forward);
  if (it != replaced_.end()) return it->second;
  const Node& node = *forward.node;
  Output value;
  if (!InForwardFrame(node)) {
    value = EnterInvariant(scope_, backward_, forward);  // a tensor from outside
  } else if (IsEnter(node)) {
    if (!IsConstantEnter(node)) {
      return absl::UnimplementedError(absl::StrCat(
          "the gradient of while loop '", forward_.frame_name, "' reads '", node.name(),
          "', the Enter of a loop variable; only its value inside the loop can be used"));
    }
    value = EnterInvariant(scope_, backward_, EnterInput(node));
  } else if (node.op() == "Const") {
    value = CopyConst(node);
  } else {
    DFLOW_ASSIGN_OR_RETURN(CondContext context, contexts_->Of(forward));
    value = Accumulate(forward, context);
  }
  DFLOW_RETURN_IF_ERROR(scope_.status());
  replaced_.emplace(forward, value);
  return value;
}

bool WhileGradBuilder::ReplaysWhole(const Output& forward) const {
  const Node& node = *forward.node;
  const DataType dtype = BaseType(forward.dtype());
  return InForwardFrame(node) && !IsEnter(node) && node.op() != "Const" &&
         dtype != DT_VARIANT && dtype != DT_RESOURCE && dtype != DT_STRING;
}

absl::StatusOr<Output> WhileGradBuilder::ZerosInBackward(const Output& forward) {
  auto it = zeros_.find(forward);
  if (it != zeros_.end()) return it->second;
  const int forward_start = graph_->num_node_ids();
  Output shape = Shape(scope_.NewSubScope("zeros_shape"), forward);
  MarkForwardAdditions(forward_start);
  DFLOW_ASSIGN_OR_RETURN(CondContext context, contexts_->Of(forward));
  Output popped = Accumulate(shape, context);
  const int backward_start = graph_->num_node_ids();
  Output zeros = Fill(scope_, popped, Cast(scope_, 0, BaseType(forward.dtype())));
  AnchorInputlessNodes(graph_, backward_start, pivot_);
  DFLOW_RETURN_IF_ERROR(scope_.status());
  zeros_.emplace(forward, zeros);
  return zeros;
}

Output WhileGradBuilder::CopyConst(const Node& node) {
  Output copy = Const(scope_.WithOpName(node.name()), node.attr("value")->tensor());
  if (copy.node != nullptr) graph_->AddControlEdge(pivot_.node, copy.node);
  return copy;
}

Output WhileGradBuilder::RouteThroughBranches(const Scope& s, const Output& list,
                                              const CondContext& context,
                                              const std::vector<Output>& preds, size_t level,
                                              const std::function<Output(const Output&)>& leaf) {
  if (level == context.size()) return leaf(list);
  SwitchOutputs sw = Switch(s, list, preds[level]);
  const bool taken_true = context[level].branch == 1;
  Output taken = taken_true ? sw.output_true : sw.output_false;
  Output other = taken_true ? sw.output_false : sw.output_true;
  Output done = RouteThroughBranches(s, taken, context, preds, level + 1, leaf);
  return Merge(s, {done, other}).output;
}

Output WhileGradBuilder::Accumulate(const Output& forward, const CondContext& context) {
  std::vector<Output> forward_preds, backward_preds;
  for (const CondBranch& b : context) {
    forward_preds.push_back(b.pred);
    absl::StatusOr<Output> pred = BackwardValue(b.pred);
    if (!pred.ok()) {
      scope_.UpdateStatus(pred.status());
      return Output();
    }
    backward_preds.push_back(*pred);
  }
  const DataType dtype = BaseType(forward.dtype());
  const AttrMap element = {{"element_dtype", TypeAttr(dtype)}};
  const Scope s = scope_.NewSubScope("accumulator");
  const int forward_start = graph_->num_node_ids();
  AttrMap marked = element;
  marked[kAccumulatorAttr] = BoolAttr(true);
  Output empty = AddOp(s, "EmptyTensorList", {Input(-1), Input(-1)}, marked).output(0);
  LoopVar pushed = AddLoopVar(s, &forward_, empty, [&](const Scope& in, const Output& list) {
    return RouteThroughBranches(in, list, context, forward_preds, 0, [&](const Output& l) {
      return AddOp(in, "TensorListPushBack", {l, forward}, element).output(0);
    });
  });
  MarkForwardAdditions(forward_start);
  Output popped;
  AddLoopVar(s, &backward_, pushed.exit_output(), [&](const Scope& in, const Output& list) {
    return RouteThroughBranches(in, list, context, backward_preds, 0, [&](const Output& l) {
      Operation pop = AddOp(in, "TensorListPopBack", {l, Input(-1)}, element);
      popped = pop.output(1);
      return pop.output(0);
    });
  });
  return popped;
}

absl::Status WhileGradBuilder::Build(const Node& exit, const NodeGrads& exit_grads,
                                     NodeGrads* enter_grads) {
  DFLOW_RETURN_IF_ERROR(FindLoop(exit));
  DFLOW_RETURN_IF_ERROR(CollectCarried(exit_grads));
  bool any = false;
  for (const auto& [node, grad] : exit_grads) any |= grad.node != nullptr;
  if (!any || (vars_.empty() && invariants_.empty())) return absl::OkStatus();

  const int forward_start = graph_->num_node_ids();
  LoopVar count = AddLoopVar(scope_.NewSubScope("forward_count"), &forward_,
                             Const(scope_, 0), [this](const Scope& s, const Output& i) {
                               forward_pivot_ = i;
                               return Add(s, i, 1);
                             });
  MarkForwardAdditions(forward_start);
  OpenBackwardLoop(count.exit_output());
  DFLOW_RETURN_IF_ERROR(scope_.status());
  std::vector<Output> dx;
  DFLOW_RETURN_IF_ERROR(BuildBackwardBody(&dx));

  const int next_start = graph_->num_node_ids();
  CloseLoopVar(scope_, &backward_, counter_, Sub(scope_, pivot_, 1));
  AnchorInputlessNodes(graph_, next_start, pivot_);
  for (size_t i = 0; i < vars_.size(); ++i) {
    Carried& c = vars_[i];
    Output next = dx[i].node != nullptr ? dx[i] : ZerosLike(scope_, c.current);
    CloseLoopVar(scope_, &backward_, c.var, next);
  }
  for (size_t j = 0; j < invariants_.size(); ++j) {
    Carried& c = invariants_[j];
    const Output& d = dx[vars_.size() + j];
    // AddN: the sum of lists too.
    CloseLoopVar(scope_, &backward_, c.var,
                 d.node != nullptr ? AddN(scope_, {c.current, d}) : c.current);
  }
  DFLOW_RETURN_IF_ERROR(scope_.status());
  for (std::vector<Carried>* list : {&vars_, &invariants_}) {
    for (const Carried& c : *list) (*enter_grads)[c.enter] = c.var.exit_output();
  }
  return absl::OkStatus();
}

}  // namespace

bool DifferentiatedAsLoop(absl::string_view op) {
  for (absl::string_view loop_op : {"Enter", "Exit", "NextIteration", "LoopCond", "RefEnter",
                                    "RefExit", "RefNextIteration"}) {
    if (op == loop_op) return true;
  }
  return false;
}

absl::Status AddWhileLoopGradient(const GradientRegistry& registry, const Scope& scope,
                                  const ControlFlowInfo& info, const Node& exit,
                                  const NodeGrads& exit_grads,
                                  const EnclosingLoopGrad* enclosing, NodeGrads* enter_grads) {
  WhileGradBuilder builder(registry, scope, info, enclosing);
  absl::Status status = builder.Build(exit, exit_grads, enter_grads);
  if (!status.ok()) scope.UpdateStatus(status);
  return status;
}

}  // namespace dflow
