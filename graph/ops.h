// Op functions for building graphs through a Scope (TensorFlow's cc/ops wrappers,
// written as plain functions), and the generic builder `AddOp` they all use.
//
// Each function adds one node (plus an implicit Const per literal input) named after
// the op type unless the scope says otherwise (`scope.WithOpName`), and returns its
// output(s). On an errored scope, or when this op is misused, the scope's status records
// the first error and the result is a null Output/Operation (see scope.h).
//
// Attrs not passed here keep the OpDef's defaults (filled by Graph::AddNode). Type
// attrs such as `T` are inferred from the inputs' dtypes.
//
// Thread-safety: as the Scope; build from one thread.
#ifndef DFLOW_GRAPH_OPS_H_
#define DFLOW_GRAPH_OPS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/partial_shape.h"
#include "graph/scope.h"
#include "graph/types.h"
#include "proto/attr_value.pb.h"
#include "proto/tensor.pb.h"

namespace dflow {

// ---- The generic builder ------------------------------------------------------------

// AttrValue makers for AddOp's attr map.
AttrValue TypeAttr(DataType type);
AttrValue IntAttr(int64_t value);
AttrValue BoolAttr(bool value);
AttrValue StringAttr(absl::string_view value);
AttrValue ShapeAttr(const PartialShape& shape);
AttrValue TensorAttr(const TensorProto& tensor);
AttrValue IntListAttr(const std::vector<int64_t>& values);
AttrValue TypeListAttr(const std::vector<DataType>& types);

using AttrMap = std::map<std::string, AttrValue>;

// One input argument of an op, as the OpDef declares it: a single tensor, or a list for
// an arg with a number_attr (`N`) or type_list_attr.
class OpArg {
 public:
  OpArg(const Output& out) : inputs_{Input(out)} {}             // NOLINT
  OpArg(Input in) : inputs_{std::move(in)} {}                   // NOLINT
  OpArg(InputList list) : inputs_(std::move(list.inputs)), is_list_(true) {}  // NOLINT

  const std::vector<Input>& inputs() const { return inputs_; }
  bool is_list() const { return is_list_; }

 private:
  std::vector<Input> inputs_;
  bool is_list_ = false;
};

// Adds a node running `op` with `args` (one per OpDef input arg, in order) and `attrs`:
//   1. names it `scope.GetUniqueNameForOp(op)`;
//   2. infers each type attr an arg uses and `attrs` leaves out from the first
//      non-literal input of that arg (a list(type) attr from all of them), then
//      materialises literal inputs as Const nodes (see Input), and lets them decide
//      type attrs still unknown;
//   3. sets each list arg's number attr (`N`) to the list's length;
//   4. checks arity, each input's dtype against the declared one, attr values against
//      the OpDef (allowed values, minimums) and the scope's device spec;
//   5. creates the node with the scope's device and `_class` colocation, then adds its
//      data edges and the scope's control dependencies.
// Any failure is recorded in the scope (INVALID_ARGUMENT naming the node) and gives a
// null Operation; on an errored scope nothing happens.
Operation AddOp(const Scope& scope, absl::string_view op, const std::vector<OpArg>& args,
                const AttrMap& attrs = {});

// ---- Constants and placeholders -----------------------------------------------------

// A Const holding `value`: a scalar, 1-D or 2-D braced list of float, double, int32,
// int64 or bool, e.g. `Const(s, {{1.f, 2.f}, {3.f, 4.f}})`.
Output Const(const Scope& scope, const Input::Initializer& value);
// A Const holding any tensor (checked with CheckTensorProto).
Output Const(const Scope& scope, const TensorProto& value);
// A value fed at run time; `shape` (default: unknown rank) becomes the `shape` attr.
Output Placeholder(const Scope& scope, DataType dtype,
                   const PartialShape& shape = PartialShape());
// `input` unless fed; `shape` is the shape a feed must have.
Output PlaceholderWithDefault(const Scope& scope, Input input,
                              const PartialShape& shape = PartialShape());

// ---- Identity and grouping ----------------------------------------------------------

Output Identity(const Scope& scope, Input input);
OutputList IdentityN(const Scope& scope, InputList inputs);
// A node doing nothing, to hang control dependencies on.
Operation NoOp(const Scope& scope);

// ---- Arithmetic ---------------------------------------------------------------------

struct MatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, Input a, Input b, const MatMulAttrs& attrs = {});

// Element-wise binary ops with broadcasting (AddV2 is the one TF 2 emits for `+`).
Output Add(const Scope& scope, Input x, Input y);
Output AddV2(const Scope& scope, Input x, Input y);
Output Sub(const Scope& scope, Input x, Input y);
Output Mul(const Scope& scope, Input x, Input y);
Output RealDiv(const Scope& scope, Input x, Input y);
Output Maximum(const Scope& scope, Input x, Input y);
Output Minimum(const Scope& scope, Input x, Input y);
Output SquaredDifference(const Scope& scope, Input x, Input y);
// Sum of one or more tensors of one shape and dtype.
Output AddN(const Scope& scope, InputList inputs);

// Element-wise unary ops.
Output Neg(const Scope& scope, Input x);
Output Abs(const Scope& scope, Input x);
Output Square(const Scope& scope, Input x);
Output Sqrt(const Scope& scope, Input x);
Output Rsqrt(const Scope& scope, Input x);
Output Exp(const Scope& scope, Input x);
Output Log(const Scope& scope, Input x);
Output Relu(const Scope& scope, Input x);
Output Relu6(const Scope& scope, Input x);
Output Sigmoid(const Scope& scope, Input x);
Output Tanh(const Scope& scope, Input x);
// Softmax over the last dimension.
Output Softmax(const Scope& scope, Input logits);
// `value + bias`, `bias` 1-D along the last (NHWC) dimension.
Output BiasAdd(const Scope& scope, Input value, Input bias);

// ---- Reductions (over `axis`: a scalar or 1-D int32/int64) --------------------------

Output Sum(const Scope& scope, Input input, Input axis, bool keep_dims = false);
Output Mean(const Scope& scope, Input input, Input axis, bool keep_dims = false);
Output Max(const Scope& scope, Input input, Input axis, bool keep_dims = false);
Output Min(const Scope& scope, Input input, Input axis, bool keep_dims = false);
Output Prod(const Scope& scope, Input input, Input axis, bool keep_dims = false);

// ---- Shapes and layout --------------------------------------------------------------

// A tensor of shape `dims` (1-D int32/int64) filled with the scalar `value`.
Output Fill(const Scope& scope, Input dims, Input value);
Output ZerosLike(const Scope& scope, Input x);
Output OnesLike(const Scope& scope, Input x);
Output Reshape(const Scope& scope, Input tensor, Input shape);
Output Shape(const Scope& scope, Input input, DataType out_type = DT_INT32);
Output Size(const Scope& scope, Input input, DataType out_type = DT_INT32);
Output Rank(const Scope& scope, Input input);
Output Cast(const Scope& scope, Input x, DataType dst_type);
Output Transpose(const Scope& scope, Input x, Input perm);
// Joins two or more tensors along `axis`.
Output ConcatV2(const Scope& scope, InputList values, Input axis);
// Stacks tensors of one shape along a new dimension `axis`.
Output Pack(const Scope& scope, InputList values, int64_t axis = 0);
Output ExpandDims(const Scope& scope, Input input, Input axis);
// Removes the size-1 dimensions listed in `axes` (all of them when empty).
Output Squeeze(const Scope& scope, Input input, const std::vector<int64_t>& axes = {});

}  // namespace dflow

#endif  // DFLOW_GRAPH_OPS_H_
