// A variable's gradient that only touches some rows: what TF calls IndexedSlices, read
// back from the dense gradient AddSymbolicGradients builds for ResourceGather (rows
// summed into the variable's shape by UnsortedSegmentSum over VariableShape's first
// dim), so optimizers can update the rows alone as TF's sparse paths do
// (ResourceSparseApply*, Adam's scatters).
#ifndef DFLOW_GRAPH_TRAIN_SPARSE_GRADIENT_H_
#define DFLOW_GRAPH_TRAIN_SPARSE_GRADIENT_H_

#include <optional>

#include "graph/scope.h"
#include "graph/train/variable.h"

namespace dflow {

struct SparseGradient {
  Output values;   // [n, ...]: one gradient row per index
  Output indices;  // [n]: rows of the variable, possibly repeated
  Output dense;    // the same gradient as a tensor of the variable's shape
};

// The rows of `gradient` when it is ResourceGather's gradient for `var`, or the sum
// (AddN) of several of them (their rows concatenated under `scope`); nullopt otherwise
// (a dense read contributes, or the gradient was built some other way, e.g. averaged
// over towers).
std::optional<SparseGradient> FindSparseGradient(const Scope& scope, const Output& gradient,
                                                const Variable& var);

// Repeated indices merged, their rows summed (TF's _deduplicate_indexed_slices: Unique +
// UnsortedSegmentSum), for the updates that need each row once.
SparseGradient Deduplicated(const Scope& scope, const SparseGradient& gradient);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_SPARSE_GRADIENT_H_
