// Building blocks the gradient functions share: a forward op's inputs and attrs, the
// reduction that undoes broadcasting, and the shape a reduction kept.
#ifndef DFLOW_GRAPH_GRADIENTS_GRAD_UTIL_H_
#define DFLOW_GRAPH_GRADIENTS_GRAD_UTIL_H_

#include <initializer_list>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/ops.h"
#include "graph/partial_shape.h"
#include "graph/scope.h"

namespace dflow::grad {

// The tensor feeding input `i` of `op`.
Output In(const Operation& op, int i);
// Output `i` of `op`.
inline Output Out(const Operation& op, int i) { return op.output(i); }

// The named attrs of `op`'s node, copied for a backward op that takes the same ones.
AttrMap CopyAttrs(const Operation& op, std::initializer_list<const char*> names);

// The value of `op`'s int attr / string attr `name` (0 / "" when absent).
int64_t IntAttrOf(const Operation& op, const char* name);
bool BoolAttrOf(const Operation& op, const char* name);

// The integer values of `out` when its node is a Const (nullopt otherwise).
std::optional<std::vector<int64_t>> ConstIntValues(const Output& out);

// For a binary op whose output broadcast `x` against `y`: `gx` and `gy` (gradients of
// the broadcast output's shape) summed back to the shapes of x and y.
void ReduceBroadcastGrads(const Scope& scope, const Output& x, const Output& y,
                          const Output& gx, const Output& gy, std::vector<Output>* dx);
// `grad` (of a broadcast result) summed back to the shape of `x` alone.
Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x);

// The shape of `input` after reducing over `axes` with keep_dims (1 at each reduced
// dimension), as int32: what a reduction's gradient reshapes dy to before broadcasting.
Output KeptDimsShape(const Scope& scope, const Output& input_shape, const Output& axes);

// What shape inference knows of `out`'s shape, running it over the scope's graph when
// the node has not been through it yet (gradients whose formulas differ by shape, as
// Qr's and Svd's in TF, need static matrix dims).
PartialShape StaticShape(const Scope& scope, const Output& out);

// `axes` (int32 or int64, negative ones counting from the end) as int32 in [0, rank).
Output PositiveAxes(const Scope& scope, const Output& axes, const Output& rank);
// `grad` of a reduction over `axes` of an input of `input_shape`: reshaped with those
// dims kept as 1 and broadcast back to the input's shape.
Output BroadcastOverAxes(const Scope& scope, const Output& grad, const Output& input_shape,
                         const Output& axes);

// Range(start, limit, delta) of int32.
Output Range(const Scope& scope, Input start, Input limit, Input delta);

}  // namespace dflow::grad

#endif  // DFLOW_GRAPH_GRADIENTS_GRAD_UTIL_H_
