#include "graph/while_loop.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"
#include "graph/ops.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "graph/while_loop_structure.h"

namespace dflow {
namespace {

// Moves what a cond or body function read from outside the loop into the loop's frame:
// a data input from before the loop reads one invariant Enter of it instead (one per
// tensor), a control input from before the loop orders the loop's Enters instead, a
// loop variable's Merge read by the body reads the variable's body input instead (the
// same value, on the gradient's path), and nodes reading nothing but invariants (or
// nothing) are anchored to the function's pivot, so they run once per iteration and not
// in the iteration the condition ends (TF's _MaybeAddControlDependency).
class OutsideCapture {
 public:
  OutsideCapture(const Scope& scope, const WhileLoopStructure& loop, int loop_start)
      : scope_(scope.WithNoControlDependencies()), loop_(loop), loop_start_(loop_start) {}

  // The nodes made since `first_id`; `enters` are the loop variables' Enters; `merges`
  // maps each variable's Merge to its body input (empty for the condition).
  void Capture(int first_id, const Output& pivot, const std::vector<Node*>& enters,
               const absl::flat_hash_map<const Node*, Output>& merges) {
    Graph* graph = scope_.graph();
    const int end = graph->num_node_ids();
    for (int id = first_id; id < end; ++id) {
      Node* node = graph->FindNodeId(id);
      if (node == nullptr) continue;
      const std::vector<const Edge*> edges = node->in_edges();
      for (const Edge* e : edges) {
        auto it = merges.find(e->src);
        if (it != merges.end() && e->src_output == 0) {
          const int dst_input = e->dst_input;
          graph->RemoveEdge(e);
          graph->AddEdge(it->second.node, it->second.index, node, dst_input);
          continue;
        }
        if (e->src->id() >= loop_start_) continue;
        Node* src = e->src;
        if (e->IsControlEdge()) {
          for (Node* enter : enters) graph->AddControlEdge(src, enter);
          graph->RemoveEdge(e);
          continue;
        }
        const Output inside = Inside(Output(src, e->src_output));
        const int dst_input = e->dst_input;
        if (inside.node == nullptr) return;  // the scope holds the error
        graph->RemoveEdge(e);
        graph->AddEdge(inside.node, inside.index, node, dst_input);
      }
    }
    for (int id = first_id; id < end; ++id) {
      Node* node = graph->FindNodeId(id);
      if (node != nullptr && ReadsOnlyInvariants(*node)) graph->AddControlEdge(pivot.node, node);
    }
  }

  // A body result that is an invariant (or a tensor from outside) passes through an
  // Identity anchored to `pivot`, so NextIteration does not fire once the loop ends.
  Output Result(const Output& out, const Output& pivot) {
    Output inside = Inside(out);
    if (inside.node == nullptr || !IsInvariant(*inside.node)) return inside;
    return Identity(scope_.WithControlDependencies(Operation(pivot)), inside);
  }

  bool IsInvariant(const Node& node) const {
    return node.id() >= loop_start_ && IsConstantEnter(node);
  }
  bool ReadsOnlyInvariants(const Node& node) const {
    for (const Edge* e : node.in_edges()) {
      if (!IsInvariant(*e->src)) return false;
    }
    return true;  // also for a node without inputs
  }

  // `out` itself when made inside the loop, else its invariant Enter.
  Output Inside(const Output& out) {
    if (out.node == nullptr || out.node->id() >= loop_start_) return out;
    auto it = invariants_.find(out);
    if (it != invariants_.end()) return it->second;
    Output enter = EnterInvariant(scope_, loop_, out);
    invariants_.emplace(out, enter);
    return enter;
  }

 private:
  const Scope scope_;
  const WhileLoopStructure& loop_;
  const int loop_start_;
  absl::flat_hash_map<Output, Output> invariants_;
};

absl::Status LoopError(const WhileLoopStructure& loop, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("BuildWhileLoop '", loop.frame_name, "': ", what));
}

absl::Status CheckBodyOutputs(const WhileLoopStructure& loop, const std::vector<Output>& inputs,
                              const std::vector<Output>& next) {
  if (next.size() != inputs.size()) {
    return LoopError(loop, absl::StrCat("the body returned ", next.size(), " tensors for ",
                                        inputs.size(), " loop variables"));
  }
  for (size_t i = 0; i < next.size(); ++i) {
    if (next[i].node == nullptr) {
      return LoopError(loop, absl::StrCat("the body's result ", i, " is null"));
    }
    if (BaseType(next[i].dtype()) != BaseType(inputs[i].dtype())) {
      return LoopError(loop, absl::StrCat("the body's result ", i, " '", next[i].name(),
                                          "' is ", DataTypeString(next[i].dtype()),
                                          " but loop variable ", i, " is ",
                                          DataTypeString(inputs[i].dtype())));
    }
  }
  return absl::OkStatus();
}

absl::Status Build(const Scope& scope, const std::vector<Output>& inputs,
                   const CondGraphBuilderFn& cond, const BodyGraphBuilderFn& body,
                   const std::string& frame_name, const WhileLoopOptions& options,
                   std::vector<Output>* outputs) {
  DFLOW_RETURN_IF_ERROR(scope.status());
  // An empty name would keep the parent's prefix: two loops could share a frame.
  const Scope loop_scope = scope.NewSubScope(frame_name.empty() ? "while" : frame_name);
  const Scope inner = loop_scope.WithNoControlDependencies();
  WhileLoopStructure loop;
  loop.frame_name = loop_scope.name_prefix();
  loop.parallel_iterations = options.parallel_iterations;
  if (inputs.empty()) return LoopError(loop, "a while loop needs at least one loop variable");
  Graph* graph = scope.graph();
  const int loop_start = graph->num_node_ids();
  OutsideCapture capture(loop_scope, loop, loop_start);

  std::vector<LoopVar> vars;
  std::vector<Output> merged;
  std::vector<Node*> enters;
  for (const Output& input : inputs) {
    vars.push_back(OpenLoopVar(loop_scope, loop, input));
    merged.push_back(Output(vars.back().merge));
    enters.push_back(vars.back().enter);
  }
  DFLOW_RETURN_IF_ERROR(scope.status());

  const int cond_start = graph->num_node_ids();
  Output pred;
  DFLOW_RETURN_IF_ERROR(cond(inner.NewSubScope("cond"), merged, &pred));
  DFLOW_RETURN_IF_ERROR(scope.status());
  capture.Capture(cond_start, merged[0], enters, {});
  pred = capture.Inside(pred);
  DFLOW_RETURN_IF_ERROR(scope.status());
  if (pred.node == nullptr || BaseType(pred.dtype()) != DT_BOOL) {
    return LoopError(loop, absl::StrCat("the condition must be a bool, not ",
                                        pred.node == nullptr ? std::string("null")
                                                             : DataTypeString(pred.dtype())));
  }
  loop.pred = AddOp(inner.WithOpName("LoopCond"), "LoopCond", {pred}).output(0);

  std::vector<Output> body_inputs;
  for (LoopVar& var : vars) body_inputs.push_back(SwitchLoopVar(inner, loop, &var));
  DFLOW_RETURN_IF_ERROR(scope.status());

  const int body_start = graph->num_node_ids();
  std::vector<Output> next;
  DFLOW_RETURN_IF_ERROR(body(inner.NewSubScope("body"), body_inputs, &next));
  DFLOW_RETURN_IF_ERROR(scope.status());
  DFLOW_RETURN_IF_ERROR(CheckBodyOutputs(loop, inputs, next));
  absl::flat_hash_map<const Node*, Output> merges;
  for (size_t i = 0; i < vars.size(); ++i) merges[vars[i].merge] = body_inputs[i];
  capture.Capture(body_start, body_inputs[0], enters, merges);
  for (size_t i = 0; i < vars.size(); ++i) {
    auto it = merges.find(next[i].node);
    const Output result = it != merges.end() && next[i].index == 0 ? it->second : next[i];
    CloseLoopVar(inner, &loop, vars[i], capture.Result(result, body_inputs[0]));
  }
  DFLOW_RETURN_IF_ERROR(scope.status());
  outputs->clear();
  for (const LoopVar& var : loop.vars) outputs->push_back(var.exit_output());
  return absl::OkStatus();
}

}  // namespace

absl::Status BuildWhileLoop(const Scope& scope, const std::vector<Output>& inputs,
                            const CondGraphBuilderFn& cond, const BodyGraphBuilderFn& body,
                            const std::string& frame_name, std::vector<Output>* outputs,
                            const WhileLoopOptions& options) {
  absl::Status status = Build(scope, inputs, cond, body, frame_name, options, outputs);
  if (!status.ok()) {
    scope.UpdateStatus(status);
    outputs->clear();
  }
  return status;
}

}  // namespace dflow
