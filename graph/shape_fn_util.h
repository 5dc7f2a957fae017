// Helpers shared by the shape functions of the shape_fns_*.cc files, and the per-family
// registration functions that RegisterStandardShapeFns (shape_fns.cc) calls.
//
// Shape functions live in one file per op family:
//   shape_fns_math.cc          element-wise ops, MatMul and BatchMatMul, reductions
//   shape_fns_nn.cc            BiasAdd, Softmax, convolution and pooling
//   shape_fns_array.cc         shape arguments, Reshape, rearranging dims, slicing, Split
//   shape_fns_state.cc         sources (Const, Placeholder) and state (Variable, Assign)
//   shape_fns_control_flow.cc  forwarding ops, Switch, Merge and ops without outputs
//   shape_fns_linalg.cc        matrix decompositions (Qr, Svd, SelfAdjointEigV2)
//   shape_fns_sparse.cc        SparseToDense, SparseTensorDenseMatMul, candidate sampling
// A new shape function goes into its family's file and is registered in that file's
// Register*ShapeFns. A helper only one family needs stays in that family's file.
//
// Everything here is stateless and thread-safe. Errors are INVALID_ARGUMENT without the
// node name (InferShapes adds it).
#ifndef DFLOW_GRAPH_SHAPE_FN_UTIL_H_
#define DFLOW_GRAPH_SHAPE_FN_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/partial_shape.h"
#include "graph/shape_inference.h"

namespace dflow {
namespace shape_fn_util {

using Ctx = InferenceContext;
inline constexpr int64_t kUnknown = PartialShape::kUnknownDim;

// absl::InvalidArgumentError(message).
inline absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// --- Attrs. AddNode fills declared defaults, so the fallbacks only cover NodeDefs that
// bypassed it.

// The int, bool or string attr `name`; `fallback` when absent or of another kind.
int64_t IntAttr(const Ctx& c, absl::string_view name, int64_t fallback);
bool BoolAttr(const Ctx& c, absl::string_view name, bool fallback);
std::string StringAttr(const Ctx& c, absl::string_view name, absl::string_view fallback);
// The list(int) attr `name`; empty when absent.
std::vector<int64_t> IntListAttr(const Ctx& c, absl::string_view name);
// The shape attr `name`; unknown when absent.
absl::StatusOr<PartialShape> ShapeAttr(const Ctx& c, absl::string_view name);

// --- Values of small integer tensors.

// The value of a scalar (or one-element) argument such as an axis, when known.
std::optional<int64_t> ScalarValue(const Ctx& c, int input);
// Sets output `output`'s value to input `input`'s, when that is (partly) known.
void ForwardValue(Ctx& c, int input, int output);

// --- Shapes.

// `s` with `dim` inserted before dim `axis`, with dim `axis` removed, or with dim `axis`
// replaced by `dim`. REQUIRES: the rank of `s` is known and `axis` is in range.
PartialShape Inserted(const PartialShape& s, int axis, int64_t dim);
PartialShape Removed(const PartialShape& s, int axis);
PartialShape Replaced(const PartialShape& s, int axis, int64_t dim);
// Which of `rank` dims `axes` name (negative axes count from the end).
absl::StatusOr<std::vector<bool>> AxisSet(const std::vector<int64_t>& axes, int rank,
                                          absl::string_view what);

// --- Shape functions and registration shared by several families.

// Output 0 is input 0's shape (element-wise unary ops).
absl::Status UnchangedShape(Ctx& c);
// Registers `fn` for every op in `ops`.
void RegisterAll(ShapeRegistry& registry, std::initializer_list<const char*> ops,
                 const ShapeFn& fn);

// The families RegisterStandardShapeFns is made of, one per file (see above).
void RegisterMathShapeFns(ShapeRegistry& registry);
void RegisterNNShapeFns(ShapeRegistry& registry);
void RegisterArrayShapeFns(ShapeRegistry& registry);
void RegisterStateShapeFns(ShapeRegistry& registry);
void RegisterControlFlowShapeFns(ShapeRegistry& registry);
void RegisterLinalgShapeFns(ShapeRegistry& registry);
void RegisterSparseShapeFns(ShapeRegistry& registry);

}  // namespace shape_fn_util
}  // namespace dflow

#endif  // DFLOW_GRAPH_SHAPE_FN_UTIL_H_
