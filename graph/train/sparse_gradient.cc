#include "graph/train/sparse_gradient.h"

#include <vector>

#include "graph/ops.h"

namespace dflow {
namespace {

Output InputOf(const Node& node, int i) {
  const Edge* e = node.input_edge(i);
  return e == nullptr ? Output() : Output(e->src, e->src_output);
}

// UnsortedSegmentSum(rows, indices, GatherV2(VariableShape(var's handle), 0)), as
// graph/gradients/resource_grads.cc writes ResourceGather's gradient.
std::optional<SparseGradient> FromSegmentSum(const Output& sum, const Variable& var) {
  const Node* node = sum.node;
  if (node == nullptr || node->op() != "UnsortedSegmentSum") return std::nullopt;
  const Output num_rows = InputOf(*node, 2);
  if (num_rows.node == nullptr || num_rows.node->op() != "GatherV2") return std::nullopt;
  const Output shape = InputOf(*num_rows.node, 0);
  if (shape.node == nullptr || shape.node->op() != "VariableShape" ||
      InputOf(*shape.node, 0) != var.handle()) {
    return std::nullopt;
  }
  return SparseGradient{InputOf(*node, 0), InputOf(*node, 1), sum};
}

}  // namespace

std::optional<SparseGradient> FindSparseGradient(const Scope& scope, const Output& gradient,
                                                const Variable& var) {
  if (gradient.node == nullptr) return std::nullopt;
  if (gradient.node->op() != "AddN") return FromSegmentSum(gradient, var);
  std::vector<Output> values, indices;
  for (int i = 0; i < gradient.node->num_inputs(); ++i) {
    std::optional<SparseGradient> part = FromSegmentSum(InputOf(*gradient.node, i), var);
    if (!part || (!indices.empty() && part->indices.dtype() != indices[0].dtype())) {
      return std::nullopt;
    }
    values.push_back(part->values);
    indices.push_back(part->indices);
  }
  if (values.empty()) return std::nullopt;
  return SparseGradient{ConcatV2(scope.WithOpName("values"), values, 0),
                        ConcatV2(scope.WithOpName("indices"), indices, 0), gradient};
}

SparseGradient Deduplicated(const Scope& scope, const SparseGradient& gradient) {
  Operation unique = AddOp(scope.WithOpName("unique_indices"), "Unique", {gradient.indices},
                           {{"out_idx", TypeAttr(DT_INT32)}});
  Output count = Size(scope, unique.output(0));
  Output summed = AddOp(scope.WithOpName("summed_values"), "UnsortedSegmentSum",
                        {gradient.values, unique.output(1), count})
                      .output(0);
  return SparseGradient{summed, unique.output(0), gradient.dense};
}

}  // namespace dflow
