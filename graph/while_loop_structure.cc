#include "graph/while_loop_structure.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/cond_ops.h"
#include "graph/ops.h"

namespace dflow {
namespace {

Node* DataConsumer(const Node& node, int output, absl::string_view op) {
  for (const Edge* e : node.out_edges()) {
    if (e->src_output == output && e->dst->op() == op) return e->dst;
  }
  return nullptr;
}

absl::Status BadLoop(const WhileLoopStructure& loop, const Node& node, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("while loop '", loop.frame_name,
                                                 "': loop variable entered by '", node.name(),
                                                 "' ", what));
}

// The Switch of `merge` that reads a LoopCond; fills loop->pred from the first one.
absl::StatusOr<Node*> FindLoopSwitch(WhileLoopStructure* loop, const Node& enter,
                                     const Node& merge) {
  for (const Edge* e : merge.out_edges()) {
    if (e->IsControlEdge() || e->dst->op() != "Switch" || e->dst_input != 0) continue;
    const Edge* pred = e->dst->input_edge(1);
    if (pred == nullptr || pred->src->op() != "LoopCond") continue;
    Output pred_out(pred->src, pred->src_output);
    if (loop->pred.node == nullptr) loop->pred = pred_out;
    if (loop->pred != pred_out) {
      return BadLoop(*loop, enter, "is switched by another LoopCond than the loop's first");
    }
    return e->dst;
  }
  return BadLoop(*loop, enter, "has no Switch on a LoopCond after its Merge");
}

absl::StatusOr<LoopVar> FindLoopVar(WhileLoopStructure* loop, Node* enter) {
  LoopVar var;
  var.enter = enter;
  var.merge = DataConsumer(*enter, 0, "Merge");
  if (var.merge == nullptr) return BadLoop(*loop, *enter, "feeds no Merge");
  for (const Edge* e : var.merge->in_edges()) {
    if (!e->IsControlEdge() && IsNextIteration(*e->src)) var.next_iteration = e->src;
  }
  if (var.next_iteration == nullptr) {
    return BadLoop(*loop, *enter, "has no NextIteration back into its Merge");
  }
  auto sw = FindLoopSwitch(loop, *enter, *var.merge);
  if (!sw.ok()) return sw.status();
  var.switch_node = *sw;
  var.exit = DataConsumer(*var.switch_node, 0, "Exit");
  return var;
}

}  // namespace

Output LoopVar::body_output() const {
  const Edge* e = next_iteration == nullptr ? nullptr : next_iteration->input_edge(0);
  return e == nullptr ? Output() : Output(e->src, e->src_output);
}

absl::StatusOr<WhileLoopStructure> FindWhileLoop(const Graph& graph,
                                                 const ControlFlowInfo& info, int frame) {
  WhileLoopStructure loop;
  loop.frame_name = info.frames[frame].name;
  loop.parallel_iterations = info.frames[frame].parallel_iterations;
  for (Node* node : graph.nodes()) {
    if (node->id() >= static_cast<int>(info.entered_frame.size()) ||
        info.entered_frame[node->id()] != frame) {
      continue;
    }
    if (IsConstantEnter(*node)) {
      loop.invariants.push_back(node);
      continue;
    }
    auto var = FindLoopVar(&loop, node);
    if (!var.ok()) return var.status();
    loop.vars.push_back(*var);
  }
  if (loop.vars.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("while loop '", loop.frame_name, "' has no loop variables"));
  }
  return loop;
}

Output EnterInvariant(const Scope& scope, const WhileLoopStructure& loop, const Output& value) {
  return AddOp(scope.WithOpName("Enter"), "Enter", {value},
               {{"frame_name", StringAttr(loop.frame_name)},
                {"is_constant", BoolAttr(true)},
                {"parallel_iterations", IntAttr(loop.parallel_iterations)}})
      .output(0);
}

LoopVar OpenLoopVar(const Scope& scope, const WhileLoopStructure& loop, const Output& initial) {
  LoopVar var;
  var.enter = AddOp(scope.WithOpName("Enter"), "Enter", {initial},
                    {{"frame_name", StringAttr(loop.frame_name)},
                     {"is_constant", BoolAttr(false)},
                     {"parallel_iterations", IntAttr(loop.parallel_iterations)}})
                  .node;
  const Scope inner = scope.WithNoControlDependencies();
  // The back edge is rewired to NextIteration by CloseLoopVar.
  var.merge = Merge(inner, {Output(var.enter), Output(var.enter)}).output.node;
  return var;
}

Output SwitchLoopVar(const Scope& scope, const WhileLoopStructure& loop, LoopVar* var) {
  const Scope inner = scope.WithNoControlDependencies();
  SwitchOutputs sw = Switch(inner, Output(var->merge), loop.pred);
  var->switch_node = sw.output_false.node;
  var->exit = AddOp(inner.WithOpName("Exit"), "Exit", {sw.output_false}).node;
  return Identity(inner, sw.output_true);
}

void CloseLoopVar(const Scope& scope, WhileLoopStructure* loop, LoopVar var, const Output& next) {
  const Scope inner = scope.WithNoControlDependencies();
  var.next_iteration = AddOp(inner.WithOpName("NextIteration"), "NextIteration", {next}).node;
  if (!scope.ok() || var.merge == nullptr || var.next_iteration == nullptr) return;
  Graph* graph = scope.graph();
  graph->RemoveEdge(var.merge->input_edge(1));
  graph->AddEdge(var.next_iteration, 0, var.merge, 1);
  loop->vars.push_back(var);
}

LoopVar AddLoopVar(const Scope& scope, WhileLoopStructure* loop, const Output& initial,
                   const std::function<Output(const Scope&, const Output&)>& next) {
  const size_t num_vars = loop->vars.size();
  LoopVar var = OpenLoopVar(scope, *loop, initial);
  Output body_input = SwitchLoopVar(scope, *loop, &var);
  if (!scope.ok()) return var;
  const int first_id = scope.graph()->num_node_ids();
  const Scope inner = scope.WithNoControlDependencies();
  Output next_value = next(inner, body_input);
  AnchorInputlessNodes(scope.graph(), first_id, body_input);
  CloseLoopVar(scope, loop, var, next_value);
  return loop->vars.size() > num_vars ? loop->vars.back() : var;
}

void AnchorInputlessNodes(Graph* graph, int first_id, const Output& pivot, int end_id) {
  if (pivot.node == nullptr) return;
  const int end = end_id < 0 ? graph->num_node_ids() : end_id;
  for (int id = first_id; id < end; ++id) {
    Node* node = graph->FindNodeId(id);
    if (node != nullptr && node->in_edges().empty()) graph->AddControlEdge(pivot.node, node);
  }
}

}  // namespace dflow
