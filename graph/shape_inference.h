// Shape inference: the output shapes of every node of a Graph, from its inputs' shapes,
// its attrs and the values of small constant integer inputs (TF's ShapeRefiner).
//
// The pass (InferShapes):
//  1. Visits nodes in topological order over data and control edges, ignoring edges out
//     of NextIteration (loop back edges). Ready nodes are taken first-in first-out,
//     seeded in node-id order, so results and the order of problems are deterministic.
//     Nodes on a cycle that avoids NextIteration keep unknown shapes; one problem names
//     the first of them.
//  2. Runs the op's ShapeFn on an InferenceContext holding the inputs' shapes and, where
//     known, their values. An op without a ShapeFn gets unknown output shapes.
//  3. Tracks the values of small integer tensors (Const, Shape of a known shape, and
//     slices/packs/concats of those) so that shape arguments built at run time, like
//     Keras' Flatten (Shape -> StridedSlice -> Pack -> Reshape), still yield static shapes.
//     A value may be partly known: Shape of [?,3] is {?, 3}, and its "?" remembers that
//     it is dim 0 of that tensor, so Reshape(x, Pack(Shape(x)[0], -1)) of x [?,3,4] is
//     [?,12].
//  4. Loops: on the first sweep a Merge ignores inputs arriving over back edges it has not
//     seen yet; later sweeps feed back the NextIteration shapes of the sweep before, until
//     no shape changes (a fixpoint, so every iteration's shape fits). If that takes too
//     many sweeps, back edges are read as unknown shapes (TF's behaviour) in a last sweep.
//  5. A failing ShapeFn gives INVALID_ARGUMENT "Node 'c' (MatMul): <why> for inputs
//     [2,3] and [4,2]"; the node's outputs become unknown and its consumers continue.
//
// Shapes follow TF: unknown rank and unknown dims (-1) propagate, broadcasting follows
// NumPy, and an error is reported only when the known parts contradict each other.
//
// Thread-safety: InferShapes mutates the graph (output shapes) and needs exclusive access.
// ShapeRegistry is immutable once built; Global() may be used from any thread.
#ifndef DFLOW_GRAPH_SHAPE_INFERENCE_H_
#define DFLOW_GRAPH_SHAPE_INFERENCE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/partial_shape.h"
#include "proto/node_def.pb.h"

namespace dflow {

// A tensor, as the producing node's id and output index.
struct TensorRef {
  int node = -1;
  int output = 0;
  bool operator==(const TensorRef& o) const { return node == o.node && output == o.output; }
};

// What is known about one element of a small integer tensor (a shape, axis or size).
struct ValueElement {
  std::optional<int64_t> value;
  // For an unknown element read from Shape(x): which dim of x it measures. Lets
  // Reshape(x, Pack(Shape(x)[0], -1)) see that its first dim is x's first dim.
  std::optional<TensorRef> dim_of;
  int dim_index = 0;

  static ValueElement Known(int64_t v) { return ValueElement{v, std::nullopt, 0}; }
  static ValueElement Unknown() { return ValueElement{}; }
};

// The elements (row-major) of a small integer tensor as far as they are known. Only
// tensors of at most kMaxTrackedValueElements elements are tracked.
using PartialValue = std::vector<ValueElement>;
inline constexpr int kMaxTrackedValueElements = 256;
// The largest rank a shape may have (TF's limit); larger inferred ranks are errors.
inline constexpr int kMaxShapeRank = 254;

// Everything one op's shape function may look at, and where it puts its results.
// Outputs start unknown; a function sets those it can infer.
class InferenceContext {
 public:
  // What is known about one input tensor.
  struct Input {
    PartialShape shape;
    std::optional<PartialValue> value;
    // The tensor feeding the input; node -1 when the input has no edge.
    TensorRef source;
    // False for a loop back edge whose source has not been inferred yet; such an input
    // reads as unknown and Merge leaves it out.
    bool available = true;
  };

  // `node` is borrowed and must outlive the context.
  InferenceContext(const NodeDef& node, std::vector<Input> inputs, int num_outputs);

  const NodeDef& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // REQUIRES: 0 <= i < num_inputs() (likewise for the other per-input accessors).
  const PartialShape& input(int i) const { return inputs_[i].shape; }
  bool input_available(int i) const { return inputs_[i].available; }
  const TensorRef& input_source(int i) const { return inputs_[i].source; }
  // The value of input i when every element is known, else nullptr.
  const std::vector<int64_t>* input_value(int i) const;
  // The value of input i as far as it is known, else nullptr.
  const PartialValue* input_partial_value(int i) const;
  // Input i read as a shape (TF's MakeShapeFromShapeTensor): a 1-D tensor whose known
  // elements are dims and whose unknown or -1 elements are unknown dims. Without a value
  // the rank comes from the tensor's length. INVALID_ARGUMENT for a tensor that is not
  // 1-D (a scalar -1 means unknown rank) or for elements below -1.
  absl::StatusOr<PartialShape> InputAsShape(int i) const;

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // REQUIRES: 0 <= i < num_outputs() (likewise for the other per-output accessors).
  const PartialShape& output(int i) const { return outputs_[i]; }
  void set_output(int i, PartialShape shape);
  // Records the (partly) known value of output i; ignored when it has too many elements.
  void set_output_value(int i, PartialValue value);
  const std::optional<PartialValue>& output_value(int i) const { return output_values_[i]; }

 private:
  const NodeDef& node_;
  std::vector<Input> inputs_;
  std::vector<std::optional<std::vector<int64_t>>> exact_values_;  // per input
  std::vector<PartialShape> outputs_;
  std::vector<std::optional<PartialValue>> output_values_;
};

// An op's shape function. Returns INVALID_ARGUMENT (without the node name: the caller
// adds it) when the inputs or attrs contradict each other.
using ShapeFn = std::function<absl::Status(InferenceContext&)>;

// Shape functions by op name.
class ShapeRegistry {
 public:
  ShapeRegistry() = default;

  // The built-in shape functions (RegisterStandardShapeFns), built on first use.
  static const ShapeRegistry& Global();

  // The function for `op`, or nullptr.
  const ShapeFn* Find(absl::string_view op) const;
  // Adds or replaces the function for `op`.
  void Register(absl::string_view op, ShapeFn fn);

 private:
  absl::flat_hash_map<std::string, ShapeFn> fns_;
};

// Registers dflow's shape functions for TF's ops (defined in shape_fns.cc).
void RegisterStandardShapeFns(ShapeRegistry& registry);

// Infers and stores (Node::set_output_shape) the output shapes of every node.
// Every node is inferred either way. Without `problems`, returns the first error.
// With `problems`, appends one message per failing node, keeps going and returns OK.
absl::Status InferShapes(Graph& graph, std::vector<std::string>* problems = nullptr);
absl::Status InferShapes(const ShapeRegistry& registry, Graph& graph,
                         std::vector<std::string>* problems = nullptr);

// --- Shape algebra shared by shape functions (all INVALID_ARGUMENT on contradictions).

// Adds or multiplies dims: unknown if either is unknown (but 0 times anything is 0).
// INVALID_ARGUMENT on int64 overflow.
absl::StatusOr<int64_t> AddDims(int64_t a, int64_t b);
absl::StatusOr<int64_t> MultiplyDims(int64_t a, int64_t b);
// The dim both describe: "Dimensions must be equal, but are 3 and 4".
absl::StatusOr<int64_t> MergeDims(int64_t a, int64_t b);
// The shape both describe (PartialShape::Merge with TF's wording).
absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a, const PartialShape& b);
// The most specific shape that both a and b fit (unknown where they differ).
PartialShape RelaxShapes(const PartialShape& a, const PartialShape& b);
// NumPy broadcasting of two shapes. An unknown dim against 1 stays unknown; an unknown
// dim against n>1 becomes n.
absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a, const PartialShape& b);
// `axis` in [-rank, rank) made non-negative; `what` names it in the error
// ("axis 3 is out of range for a tensor of rank 2").
absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank, absl::string_view what = "axis");
// `shape` when its rank is `rank`, [?,...] of that rank when its rank is unknown, else
// "Shape must be rank 2 but is rank 3".
absl::StatusOr<PartialShape> WithRank(const PartialShape& shape, int rank);
// OK when the rank is unknown or at least `rank`; else "Shape must be at least rank 2 but
// is rank 1".
absl::Status CheckRankAtLeast(const PartialShape& shape, int rank);

}  // namespace dflow

#endif  // DFLOW_GRAPH_SHAPE_INFERENCE_H_
