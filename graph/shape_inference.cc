#include "graph/shape_inference.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknownDim;
// Sweeps allowed for loop shapes to settle before back edges are read as unknown.
constexpr int kMaxLoopSweeps = 8;

absl::Status Invalid(absl::string_view message) { return absl::InvalidArgumentError(message); }

}  // namespace

// ---------------------------------------------------------------- InferenceContext

InferenceContext::InferenceContext(const NodeDef& node, std::vector<Input> inputs, int num_outputs)
    : node_(node),
      inputs_(std::move(inputs)),
      exact_values_(inputs_.size()),
      outputs_(num_outputs),
      output_values_(num_outputs) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i].value.has_value()) continue;
    std::vector<int64_t> exact;
    for (const ValueElement& e : *inputs_[i].value) {
      if (!e.value.has_value()) break;
      exact.push_back(*e.value);
    }
    if (exact.size() == inputs_[i].value->size()) exact_values_[i] = std::move(exact);
  }
}

const std::vector<int64_t>* InferenceContext::input_value(int i) const {
  return exact_values_[i].has_value() ? &*exact_values_[i] : nullptr;
}

const PartialValue* InferenceContext::input_partial_value(int i) const {
  return inputs_[i].value.has_value() ? &*inputs_[i].value : nullptr;
}

absl::StatusOr<PartialShape> InferenceContext::InputAsShape(int i) const {
  const PartialShape& shape = inputs_[i].shape;
  const PartialValue* value = input_partial_value(i);
  if (shape.rank_known() && shape.rank() == 0) {
    // A scalar shape argument is legal only as -1, meaning "unknown rank".
    if (value != nullptr && (*value)[0].value.has_value() && *(*value)[0].value != -1) {
      return Invalid(absl::StrCat("Shape argument must be a vector or the scalar -1, got ",
                                  *(*value)[0].value));
    }
    return PartialShape();
  }
  if (shape.rank_known() && shape.rank() != 1) {
    return Invalid(
        absl::StrCat("Shape argument must be a vector but has shape ", shape.ToString()));
  }
  if (value != nullptr) {
    std::vector<int64_t> dims;
    for (const ValueElement& e : *value) {
      const int64_t d = e.value.value_or(kUnknown);
      if (d < kUnknown) return Invalid(absl::StrCat("Shape argument has dimension ", d));
      dims.push_back(d);
    }
    return PartialShape(std::move(dims));
  }
  if (!shape.rank_known() || shape.dim(0) == kUnknown) return PartialShape();
  if (shape.dim(0) > kMaxShapeRank) {
    return Invalid(absl::StrCat("Shape argument has ", shape.dim(0),
                                " elements, above the maximum rank ", kMaxShapeRank));
  }
  return PartialShape::UnknownOfRank(static_cast<int>(shape.dim(0)));
}

void InferenceContext::set_output(int i, PartialShape shape) { outputs_[i] = std::move(shape); }

void InferenceContext::set_output_value(int i, PartialValue value) {
  if (value.size() > static_cast<size_t>(kMaxTrackedValueElements)) return;
  output_values_[i] = std::move(value);
}

// ---------------------------------------------------------------- ShapeRegistry

const ShapeRegistry& ShapeRegistry::Global() {
  static const ShapeRegistry* registry = [] {
    auto* r = new ShapeRegistry;
    RegisterStandardShapeFns(*r);
    return r;
  }();
  return *registry;
}

const ShapeFn* ShapeRegistry::Find(absl::string_view op) const {
  auto it = fns_.find(op);
  return it == fns_.end() ? nullptr : &it->second;
}

void ShapeRegistry::Register(absl::string_view op, ShapeFn fn) { fns_[op] = std::move(fn); }

// ---------------------------------------------------------------- Shape algebra

absl::StatusOr<int64_t> AddDims(int64_t a, int64_t b) {
  if (a == kUnknown || b == kUnknown) return kUnknown;
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    return Invalid(absl::StrCat("Dimension ", a, " + ", b, " overflows int64"));
  }
  return sum;
}

absl::StatusOr<int64_t> MultiplyDims(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a == kUnknown || b == kUnknown) return kUnknown;
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) {
    return Invalid(absl::StrCat("Dimension ", a, " * ", b, " overflows int64"));
  }
  return product;
}

absl::StatusOr<int64_t> MergeDims(int64_t a, int64_t b) {
  if (a == kUnknown) return b;
  if (b == kUnknown || a == b) return a;
  return Invalid(absl::StrCat("Dimensions must be equal, but are ", a, " and ", b));
}

absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known()) return b;
  if (!b.rank_known()) return a;
  if (a.rank() != b.rank()) {
    return Invalid(
        absl::StrCat("Shapes must be equal rank, but are ", a.rank(), " and ", b.rank()));
  }
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) {
    DFLOW_ASSIGN_OR_RETURN(dims[i], MergeDims(a.dim(i), b.dim(i)));
  }
  return PartialShape(std::move(dims));
}

PartialShape RelaxShapes(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return PartialShape();
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) dims[i] = a.dim(i) == b.dim(i) ? a.dim(i) : kUnknown;
  return PartialShape(std::move(dims));
}

namespace {

absl::StatusOr<int64_t> BroadcastDims(int64_t a, int64_t b) {
  // An unknown dim is 1 or the other dim, so the result is the other dim unless that is 1.
  if (a == kUnknown) return b == 1 ? kUnknown : b;
  if (b == kUnknown) return a == 1 ? kUnknown : a;
  if (a == 1) return b;
  if (b == 1 || a == b) return a;
  return Invalid(absl::StrCat("Dimensions must be equal, but are ", a, " and ", b));
}

}  // namespace

absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known()) return PartialShape();
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    DFLOW_ASSIGN_OR_RETURN(dims[i], BroadcastDims(ia < 0 ? 1 : a.dim(ia), ib < 0 ? 1 : b.dim(ib)));
  }
  return PartialShape(std::move(dims));
}

absl::StatusOr<int> CanonicalAxis(int64_t axis, int rank, absl::string_view what) {
  if (axis < -rank || axis >= rank) {
    return Invalid(absl::StrCat(what, " ", axis, " is out of range for a tensor of rank ", rank,
                                " (expected [", -rank, ", ", rank, "))"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<PartialShape> WithRank(const PartialShape& shape, int rank) {
  if (!shape.rank_known()) return PartialShape::UnknownOfRank(rank);
  if (shape.rank() != rank) {
    return Invalid(absl::StrCat("Shape must be rank ", rank, " but is rank ", shape.rank()));
  }
  return shape;
}

absl::Status CheckRankAtLeast(const PartialShape& shape, int rank) {
  if (shape.rank_known() && shape.rank() < rank) {
    return Invalid(
        absl::StrCat("Shape must be at least rank ", rank, " but is rank ", shape.rank()));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- InferShapes

namespace {

bool IsBackEdge(const Edge* e) {
  return e->src->op() == "NextIteration" || e->src->op() == "RefNextIteration";
}

// Kahn's algorithm over data and control edges minus loop back edges, seeded in id
// order. Nodes on a cycle that avoids NextIteration end up in `stuck`.
std::vector<Node*> TopologicalOrder(const Graph& graph, std::vector<Node*>* stuck) {
  std::vector<int> pending(graph.num_node_ids(), 0);
  std::deque<Node*> ready;
  for (Node* node : graph.nodes()) {
    for (const Edge* e : node->in_edges()) pending[node->id()] += IsBackEdge(e) ? 0 : 1;
    if (pending[node->id()] == 0) ready.push_back(node);
  }
  std::vector<Node*> order;
  while (!ready.empty()) {
    Node* node = ready.front();
    ready.pop_front();
    order.push_back(node);
    for (const Edge* e : node->out_edges()) {
      if (!IsBackEdge(e) && --pending[e->dst->id()] == 0) ready.push_back(e->dst);
    }
  }
  for (Node* node : graph.nodes()) {
    if (pending[node->id()] > 0) stuck->push_back(node);
  }
  return order;
}

std::string DescribeInputs(const InferenceContext& c) {
  if (c.num_inputs() == 0) return "";
  std::vector<std::string> shapes;
  for (int i = 0; i < c.num_inputs(); ++i) shapes.push_back(c.input(i).ToString());
  if (shapes.size() == 1) return absl::StrCat(" for input ", shapes[0]);
  const std::string last = shapes.back();
  shapes.pop_back();
  return absl::StrCat(" for inputs ", absl::StrJoin(shapes, ", "), " and ", last);
}

absl::Status CheckOutputRanks(const InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) {
    if (c.output(i).rank_known() && c.output(i).rank() > kMaxShapeRank) {
      return Invalid(absl::StrCat("Output ", i, " has rank ", c.output(i).rank(),
                                  ", above the maximum ", kMaxShapeRank));
    }
  }
  return absl::OkStatus();
}

// How a sweep reads a loop back edge whose source it has not reached yet.
enum class BackEdges {
  kSkip,      // first sweep: unavailable (Merge leaves it out)
  kFeedBack,  // the source's shape from the sweep before
  kUnknown,   // an unknown shape (TF's behaviour; always sound)
};

class ShapeInferrer {
 public:
  ShapeInferrer(const ShapeRegistry& registry, Graph& graph)
      : registry_(registry), graph_(graph), values_(graph.num_node_ids()) {}

  // Infers every node of `order`; returns the errors in that order.
  std::vector<absl::Status> Sweep(const std::vector<Node*>& order, BackEdges mode) {
    done_.assign(graph_.num_node_ids(), false);
    std::vector<absl::Status> errors;
    for (Node* node : order) {
      absl::Status status = InferNode(node, mode);
      if (!status.ok()) errors.push_back(std::move(status));
      done_[node->id()] = true;
    }
    return errors;
  }

 private:
  InferenceContext::Input InputFor(const Edge* e, BackEdges mode) const {
    InferenceContext::Input in;
    in.source = TensorRef{e->src->id(), e->src_output};
    if (!done_[e->src->id()]) {  // a back edge
      in.available = mode != BackEdges::kSkip;
      if (mode == BackEdges::kFeedBack) in.shape = e->src->output_shapes()[e->src_output];
      return in;
    }
    in.shape = e->src->output_shapes()[e->src_output];
    in.value = values_[e->src->id()][e->src_output];
    return in;
  }

  absl::Status InferNode(Node* node, BackEdges mode) {
    std::vector<InferenceContext::Input> inputs(node->num_inputs());
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge() || e->dst_input >= node->num_inputs()) continue;
      inputs[e->dst_input] = InputFor(e, mode);
    }
    InferenceContext c(node->def(), std::move(inputs), node->num_outputs());
    absl::Status status;
    if (const ShapeFn* fn = registry_.Find(node->op())) status = (*fn)(c);
    if (status.ok()) status = CheckOutputRanks(c);
    auto& values = values_[node->id()];
    values.assign(node->num_outputs(), std::nullopt);
    for (int i = 0; i < node->num_outputs(); ++i) {
      node->set_output_shape(i, status.ok() ? c.output(i) : PartialShape());
      if (status.ok()) values[i] = c.output_value(i);
    }
    if (status.ok()) return status;
    return absl::InvalidArgumentError(absl::StrCat("Node '", node->name(), "' (", node->op(),
                                                   "): ", status.message(), DescribeInputs(c)));
  }

  const ShapeRegistry& registry_;
  Graph& graph_;
  std::vector<std::vector<std::optional<PartialValue>>> values_;  // by node id, output
  std::vector<bool> done_;                                        // by node id
};

std::vector<std::vector<PartialShape>> SnapshotShapes(const std::vector<Node*>& order) {
  std::vector<std::vector<PartialShape>> shapes;
  shapes.reserve(order.size());
  for (const Node* node : order) shapes.push_back(node->output_shapes());
  return shapes;
}

bool HasBackEdges(const std::vector<Node*>& order) {
  for (const Node* node : order) {
    for (const Edge* e : node->in_edges()) {
      if (IsBackEdge(e)) return true;
    }
  }
  return false;
}

// Sweeps until loop shapes settle (see the header's rule 4); returns the last errors.
std::vector<absl::Status> SweepToFixpoint(ShapeInferrer& inferrer,
                                          const std::vector<Node*>& order) {
  std::vector<absl::Status> errors = inferrer.Sweep(order, BackEdges::kSkip);
  if (!HasBackEdges(order)) return errors;
  for (int sweep = 1; sweep < kMaxLoopSweeps; ++sweep) {
    auto before = SnapshotShapes(order);
    errors = inferrer.Sweep(order, BackEdges::kFeedBack);
    if (SnapshotShapes(order) == before) return errors;
  }
  return inferrer.Sweep(order, BackEdges::kUnknown);
}

}  // namespace

absl::Status InferShapes(Graph& graph, std::vector<std::string>* problems) {
  return InferShapes(ShapeRegistry::Global(), graph, problems);
}

absl::Status InferShapes(const ShapeRegistry& registry, Graph& graph,
                         std::vector<std::string>* problems) {
  std::vector<Node*> stuck;
  const std::vector<Node*> order = TopologicalOrder(graph, &stuck);
  ShapeInferrer inferrer(registry, graph);
  std::vector<absl::Status> errors = SweepToFixpoint(inferrer, order);
  for (Node* node : stuck) {
    for (int i = 0; i < node->num_outputs(); ++i) node->set_output_shape(i, PartialShape());
  }
  if (!stuck.empty()) {
    errors.push_back(absl::InvalidArgumentError(
        absl::StrCat("Node '", stuck[0]->name(), "' (", stuck[0]->op(),
                     "): is on a cycle that does not pass through NextIteration")));
  }
  if (problems == nullptr) return errors.empty() ? absl::OkStatus() : errors[0];
  for (const absl::Status& error : errors) problems->emplace_back(error.message());
  return absl::OkStatus();
}

}  // namespace dflow
