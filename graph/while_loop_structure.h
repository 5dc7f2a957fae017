// The parts of a TF 1.x while loop, found in a graph or made one loop variable at a time.
//
// Per loop variable (TF's layout, which tf.while_loop and BuildWhileLoop both write):
//
//   initial -> Enter -> Merge -> Switch(pred) --false--> Exit -> (after the loop)
//                         ^           |
//                         |         true -> Identity -> body ... -> NextIteration
//                         +-----------------------------------------------+
//
// `pred` is a LoopCond every Switch of the loop reads. A loop invariant is an Enter with
// is_constant (no Merge): the same value in every iteration.
//
// FindWhileLoop reads this structure off any graph (loops written by TensorFlow too);
// AddLoopVar grows a loop by one variable, which is how BuildWhileLoop makes its
// variables and how a loop's gradient adds its iteration counter and the accumulators of
// forward values (graph/gradients/while_grad.h).
#ifndef DFLOW_GRAPH_WHILE_LOOP_STRUCTURE_H_
#define DFLOW_GRAPH_WHILE_LOOP_STRUCTURE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/control_flow.h"
#include "graph/graph.h"
#include "graph/scope.h"

namespace dflow {

struct LoopVar {
  Node* enter = nullptr;
  Node* merge = nullptr;
  Node* switch_node = nullptr;
  Node* exit = nullptr;            // null for a variable nothing reads after the loop
  Node* next_iteration = nullptr;  // null until the variable is closed

  // The value an iteration starts with (Switch's true output).
  Output body_input() const { return Output(switch_node, 1); }
  // The value the iteration hands to the next (NextIteration's input).
  Output body_output() const;
  // The value after the loop (null without an Exit).
  Output exit_output() const { return Output(exit, 0); }
};

struct WhileLoopStructure {
  std::string frame_name;
  int parallel_iterations = 10;
  Output pred;  // LoopCond's output
  std::vector<LoopVar> vars;
  std::vector<Node*> invariants;  // constant Enters
};

// The loop whose frame is `frame` (an index into info.frames, not the root).
// INVALID_ARGUMENT naming the frame and node when a variable lacks its Merge, Switch or
// NextIteration or the Switches read different predicates.
absl::StatusOr<WhileLoopStructure> FindWhileLoop(const Graph& graph,
                                                 const ControlFlowInfo& info, int frame);

// An Enter of `value` into the loop as an invariant (is_constant).
Output EnterInvariant(const Scope& scope, const WhileLoopStructure& loop, const Output& value);

// Opens a variable: Enter(initial) and a Merge whose back edge still reads the Enter.
// Its merge output is what the loop condition sees.
LoopVar OpenLoopVar(const Scope& scope, const WhileLoopStructure& loop, const Output& initial);
// The variable's Switch on loop.pred, the Identity of its true output (returned: the body
// sees it) and its Exit.
Output SwitchLoopVar(const Scope& scope, const WhileLoopStructure& loop, LoopVar* var);
// NextIteration(next) becomes the Merge's back edge; the variable joins loop->vars.
void CloseLoopVar(const Scope& scope, WhileLoopStructure* loop, LoopVar var, const Output& next);

// All three: a new variable starting at `initial`; `next` builds the value of the next
// iteration from this one (in the loop's frame; constants it makes are anchored there).
// Returns the variable (its Exit holds the final value). Errors go to the scope.
LoopVar AddLoopVar(const Scope& scope, WhileLoopStructure* loop, const Output& initial,
                   const std::function<Output(const Scope&, const Output&)>& next);

// Gives every node with an id in [first_id, end_id) (end_id -1: to the last) that has no
// inputs at all (a Const) a control edge from `pivot`, so it runs in `pivot`'s frame and
// iteration (TF's pivot rule).
void AnchorInputlessNodes(Graph* graph, int first_id, const Output& pivot, int end_id = -1);

}  // namespace dflow

#endif  // DFLOW_GRAPH_WHILE_LOOP_STRUCTURE_H_
