#include "graph/ops.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/device_name.h"
#include "graph/node_def_util.h"
#include "graph/status_macros.h"
#include "graph/tensor_proto_util.h"

namespace dflow {
namespace {

absl::Status NodeError(const NodeDef& def, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("Node ", SummarizeNode(def), ": ", message));
}

bool IsListArg(const OpDef::ArgDef& arg) {
  return !arg.number_attr().empty() || !arg.type_list_attr().empty();
}

bool HasAttr(const NodeDef& def, const std::string& name) {
  return def.attr().contains(name);
}

absl::Status CheckArity(const OpDef& op_def, const std::vector<OpArg>& args,
                        const NodeDef& def) {
  if (static_cast<int>(args.size()) != op_def.input_arg_size()) {
    return NodeError(def, absl::StrCat("the op takes ", op_def.input_arg_size(),
                                       " inputs but was given ", args.size()));
  }
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    if (IsListArg(arg) != args[i].is_list()) {
      return NodeError(def, absl::StrCat("input '", arg.name(), "' takes ",
                                         IsListArg(arg) ? "a list" : "a single tensor"));
    }
  }
  return absl::OkStatus();
}

// Sets each single-type attr that `def` lacks from the first non-literal input using it.
void InferTypeAttrsFromOutputs(const OpDef& op_def, const std::vector<OpArg>& args,
                               NodeDef* def) {
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const std::string& attr = op_def.input_arg(i).type_attr();
    if (attr.empty() || HasAttr(*def, attr)) continue;
    for (const Input& in : args[i].inputs()) {
      if (in.is_literal()) continue;
      (*def->mutable_attr())[attr] = TypeAttr(BaseType(in.output().dtype()));
      break;
    }
  }
}

// The dtype `arg` expects per `def` so far, or DT_INVALID when not known yet.
DataType KnownArgType(const OpDef::ArgDef& arg, const NodeDef& def) {
  if (arg.type() != DT_INVALID) return arg.type();
  const AttrValue* attr = arg.type_attr().empty() ? nullptr : FindAttr(def, arg.type_attr());
  return attr == nullptr ? DT_INVALID : attr->type();
}

// A Const for `literal` in `scope`, in dtype `want` when it converts.
absl::StatusOr<Output> MaterializeLiteral(const Scope& scope,
                                          const Input::Initializer& literal,
                                          DataType want) {
  DFLOW_RETURN_IF_ERROR(literal.status());
  std::optional<TensorProto> converted;
  if (want != DT_INVALID) converted = literal.ConvertTo(want);
  Output out = Const(scope.WithOpName(""), converted ? *converted : literal.proto());
  if (out.node == nullptr) return scope.status();
  return out;
}

// Flattens `args` into `inputs`, turning literals into Consts, and completes the attrs
// the inputs determine: type attrs still unknown, list(type) attrs and number attrs.
absl::Status ResolveInputs(const Scope& scope, const OpDef& op_def,
                           const std::vector<OpArg>& args, NodeDef* def,
                           std::vector<Output>* inputs) {
  auto& attrs = *def->mutable_attr();
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    AttrValue types;
    for (const Input& in : args[i].inputs()) {
      Output out = in.output();
      if (in.is_literal()) {
        DFLOW_ASSIGN_OR_RETURN(
            out, MaterializeLiteral(scope, in.literal(), KnownArgType(arg, *def)));
        if (!arg.type_attr().empty() && !HasAttr(*def, arg.type_attr())) {
          attrs[arg.type_attr()] = TypeAttr(out.dtype());
        }
      }
      types.mutable_list()->add_type(BaseType(out.dtype()));
      inputs->push_back(out);
    }
    if (!arg.type_list_attr().empty() && !HasAttr(*def, arg.type_list_attr())) {
      attrs[arg.type_list_attr()] = types;
    }
    if (!arg.number_attr().empty()) {
      const int64_t n = args[i].inputs().size();
      if (HasAttr(*def, arg.number_attr()) && attrs[arg.number_attr()].i() != n) {
        return NodeError(*def, absl::StrCat("attr '", arg.number_attr(), "' is ",
                                            attrs[arg.number_attr()].i(), " but input '",
                                            arg.name(), "' has ", n, " tensors"));
      }
      attrs[arg.number_attr()] = IntAttr(n);
    }
  }
  return absl::OkStatus();
}

// Every declared attr is set to a legal value and no undeclared one is (internal
// attrs, starting with '_', excepted). REQUIRES: default attrs filled.
absl::Status CheckAttrs(const OpDef& op_def, const NodeDef& def) {
  for (const OpDef::AttrDef& attr : op_def.attr()) {
    const AttrValue* value = FindAttr(def, attr.name());
    if (value == nullptr) {
      return NodeError(def, absl::StrCat("missing attr '", attr.name(), "'"));
    }
    std::string problem = CheckAttrValue(attr, *value);
    if (!problem.empty()) {
      return NodeError(def, absl::StrCat("attr '", attr.name(), "': ", problem));
    }
  }
  for (const auto& [name, value] : def.attr()) {
    if (absl::StartsWith(name, "_")) continue;
    bool declared = false;
    for (const OpDef::AttrDef& attr : op_def.attr()) declared |= attr.name() == name;
    if (!declared) return NodeError(def, absl::StrCat("unknown attr '", name, "'"));
  }
  return absl::OkStatus();
}

// `node` is a live node of `graph` (not of another scope tree's graph).
absl::Status CheckInGraph(const Graph& graph, const Node* node, const NodeDef& def,
                          absl::string_view what) {
  if (node == nullptr) {
    return NodeError(def, absl::StrCat(what, " is null (the result of a failed op)"));
  }
  if (graph.FindNodeId(node->id()) != node) {
    return NodeError(def, absl::StrCat(what, " comes from node '", node->name(),
                                       "' of another graph"));
  }
  return absl::OkStatus();
}

// Every Output among `args` and every control dependency is a valid output or node of
// the scope's graph.
absl::Status CheckHandles(const Scope& scope, const std::vector<OpArg>& args,
                          const NodeDef& def) {
  for (size_t i = 0; i < args.size(); ++i) {
    for (const Input& in : args[i].inputs()) {
      if (in.is_literal()) continue;
      const Output& out = in.output();
      DFLOW_RETURN_IF_ERROR(
          CheckInGraph(*scope.graph(), out.node, def, absl::StrCat("input ", i)));
      if (out.index < 0 || out.index >= out.node->num_outputs()) {
        return NodeError(def, absl::StrCat("input ", i, " names output ", out.index,
                                           " of '", out.node->name(), "', which has ",
                                           out.node->num_outputs()));
      }
    }
  }
  for (const Operation& dep : scope.control_deps()) {
    DFLOW_RETURN_IF_ERROR(
        CheckInGraph(*scope.graph(), dep.node, def, "a control dependency"));
  }
  return absl::OkStatus();
}

bool TypeMatches(DataType actual, DataType expected) {
  return IsRefType(expected) ? actual == expected : BaseType(actual) == expected;
}

// Each input's dtype is the one the op declares for its position.
absl::Status CheckInputTypes(const NodeDef& def, const DataTypeVector& expected,
                             const std::vector<Output>& inputs) {
  if (inputs.size() != expected.size()) {
    return NodeError(def, absl::StrCat("the op expects ", expected.size(),
                                       " input tensors but was given ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!TypeMatches(inputs[i].dtype(), expected[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input ", i, " of node ", SummarizeNode(def), " was passed ",
          DataTypeString(inputs[i].dtype()), " from ", inputs[i].name(),
          " incompatible with expected ", DataTypeString(expected[i])));
    }
  }
  return absl::OkStatus();
}

// The scope's device (validated, stored verbatim) and colocation groups.
absl::Status SetPlacement(const Scope& scope, NodeDef* def) {
  if (!scope.device().empty()) {
    absl::StatusOr<DeviceName> parsed = ParseDeviceName(scope.device());
    if (!parsed.ok()) return NodeError(*def, parsed.status().message());
    def->set_device(scope.device());
  }
  std::vector<std::string> groups = scope.ColocationClass();
  if (!groups.empty()) {
    auto* list = (*def->mutable_attr())["_class"].mutable_list();
    for (std::string& group : groups) list->add_s(std::move(group));
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> BuildNode(const Scope& scope, absl::string_view op,
                                const std::vector<OpArg>& args, const AttrMap& attrs) {
  Graph& graph = *scope.graph();
  NodeDef def;
  def.set_name(scope.GetUniqueNameForOp(op));
  def.set_op(std::string(op));
  const OpDef* op_def = graph.FindOpDef(op);
  if (op_def == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Node '", def.name(), "': Op type not registered '", op, "'"));
  }
  if (!IsValidNodeName(def.name(), /*allow_internal=*/false)) {
    return NodeError(def, "invalid node name");
  }
  DFLOW_RETURN_IF_ERROR(CheckArity(*op_def, args, def));
  DFLOW_RETURN_IF_ERROR(CheckHandles(scope, args, def));
  for (const auto& [name, value] : attrs) (*def.mutable_attr())[name] = value;
  InferTypeAttrsFromOutputs(*op_def, args, &def);
  std::vector<Output> inputs;
  DFLOW_RETURN_IF_ERROR(ResolveInputs(scope, *op_def, args, &def, &inputs));
  AddDefaultAttrs(*op_def, &def);
  DFLOW_RETURN_IF_ERROR(CheckAttrs(*op_def, def));
  DataTypeVector in_types, out_types;
  DFLOW_RETURN_IF_ERROR(InOutTypesForNode(def, *op_def, &in_types, &out_types));
  DFLOW_RETURN_IF_ERROR(CheckInputTypes(def, in_types, inputs));
  DFLOW_RETURN_IF_ERROR(SetPlacement(scope, &def));
  DFLOW_ASSIGN_OR_RETURN(Node * node, graph.AddNode(std::move(def)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    graph.AddEdge(inputs[i].node, inputs[i].index, node, static_cast<int>(i));
  }
  for (const Operation& dep : scope.control_deps()) graph.AddControlEdge(dep.node, node);
  return node;
}

Output Unary(const Scope& scope, absl::string_view op, Input x) {
  return AddOp(scope, op, {std::move(x)}).output(0);
}

Output Binary(const Scope& scope, absl::string_view op, Input x, Input y) {
  return AddOp(scope, op, {std::move(x), std::move(y)}).output(0);
}

Output Reduce(const Scope& scope, absl::string_view op, Input input, Input axis,
              bool keep_dims) {
  return AddOp(scope, op, {std::move(input), std::move(axis)},
               {{"keep_dims", BoolAttr(keep_dims)}})
      .output(0);
}

}  // namespace

// ---- Attr makers and the generic builder ----------------------------------------------

AttrValue TypeAttr(DataType type) {
  AttrValue v;
  v.set_type(type);
  return v;
}

AttrValue IntAttr(int64_t value) {
  AttrValue v;
  v.set_i(value);
  return v;
}

AttrValue BoolAttr(bool value) {
  AttrValue v;
  v.set_b(value);
  return v;
}

AttrValue StringAttr(absl::string_view value) {
  AttrValue v;
  v.set_s(std::string(value));
  return v;
}

AttrValue ShapeAttr(const PartialShape& shape) {
  AttrValue v;
  *v.mutable_shape() = shape.ToProto();
  return v;
}

AttrValue TensorAttr(const TensorProto& tensor) {
  AttrValue v;
  *v.mutable_tensor() = tensor;
  return v;
}

AttrValue IntListAttr(const std::vector<int64_t>& values) {
  AttrValue v;
  v.mutable_list();  // an empty list is still a list
  for (int64_t x : values) v.mutable_list()->add_i(x);
  return v;
}

AttrValue TypeListAttr(const std::vector<DataType>& types) {
  AttrValue v;
  for (DataType t : types) v.mutable_list()->add_type(t);
  return v;
}

Operation AddOp(const Scope& scope, absl::string_view op, const std::vector<OpArg>& args,
                const AttrMap& attrs) {
  if (!scope.ok()) return Operation();
  absl::StatusOr<Node*> node = BuildNode(scope, op, args, attrs);
  if (!node.ok()) {
    scope.UpdateStatus(node.status());
    return Operation();
  }
  return Operation(*node);
}

// ---- Constants and placeholders -------------------------------------------------------

Output Const(const Scope& scope, const Input::Initializer& value) {
  if (!value.status().ok()) {
    scope.UpdateStatus(Annotate(value.status(), "Const: "));
    return Output();
  }
  return Const(scope, value.proto());
}

Output Const(const Scope& scope, const TensorProto& value) {
  absl::Status valid = CheckTensorProto(value);
  if (!valid.ok()) {
    scope.UpdateStatus(Annotate(valid, "Const: "));
    return Output();
  }
  return AddOp(scope, "Const", {},
               {{"value", TensorAttr(value)}, {"dtype", TypeAttr(value.dtype())}})
      .output(0);
}

Output Placeholder(const Scope& scope, DataType dtype, const PartialShape& shape) {
  return AddOp(scope, "Placeholder", {},
               {{"dtype", TypeAttr(dtype)}, {"shape", ShapeAttr(shape)}})
      .output(0);
}

Output PlaceholderWithDefault(const Scope& scope, Input input, const PartialShape& shape) {
  return AddOp(scope, "PlaceholderWithDefault", {std::move(input)},
               {{"shape", ShapeAttr(shape)}})
      .output(0);
}

// ---- Identity and grouping ------------------------------------------------------------

Output Identity(const Scope& scope, Input input) {
  return Unary(scope, "Identity", std::move(input));
}

OutputList IdentityN(const Scope& scope, InputList inputs) {
  OutputList outputs(inputs.inputs.size());  // null Outputs when the op fails
  Operation op = AddOp(scope, "IdentityN", {std::move(inputs)});
  for (int i = 0; i < op.num_outputs(); ++i) outputs[i] = op.output(i);
  return outputs;
}

Operation NoOp(const Scope& scope) { return AddOp(scope, "NoOp", {}); }

// ---- Arithmetic -----------------------------------------------------------------------

Output MatMul(const Scope& scope, Input a, Input b, const MatMulAttrs& attrs) {
  return AddOp(scope, "MatMul", {std::move(a), std::move(b)},
               {{"transpose_a", BoolAttr(attrs.transpose_a)},
                {"transpose_b", BoolAttr(attrs.transpose_b)}})
      .output(0);
}

Output Add(const Scope& s, Input x, Input y) { return Binary(s, "Add", x, y); }
Output AddV2(const Scope& s, Input x, Input y) { return Binary(s, "AddV2", x, y); }
Output Sub(const Scope& s, Input x, Input y) { return Binary(s, "Sub", x, y); }
Output Mul(const Scope& s, Input x, Input y) { return Binary(s, "Mul", x, y); }
Output RealDiv(const Scope& s, Input x, Input y) { return Binary(s, "RealDiv", x, y); }
Output Maximum(const Scope& s, Input x, Input y) { return Binary(s, "Maximum", x, y); }
Output Minimum(const Scope& s, Input x, Input y) { return Binary(s, "Minimum", x, y); }
Output SquaredDifference(const Scope& s, Input x, Input y) {
  return Binary(s, "SquaredDifference", x, y);
}

Output AddN(const Scope& scope, InputList inputs) {
  return AddOp(scope, "AddN", {std::move(inputs)}).output(0);
}

Output Neg(const Scope& s, Input x) { return Unary(s, "Neg", x); }
Output Abs(const Scope& s, Input x) { return Unary(s, "Abs", x); }
Output Square(const Scope& s, Input x) { return Unary(s, "Square", x); }
Output Sqrt(const Scope& s, Input x) { return Unary(s, "Sqrt", x); }
Output Rsqrt(const Scope& s, Input x) { return Unary(s, "Rsqrt", x); }
Output Exp(const Scope& s, Input x) { return Unary(s, "Exp", x); }
Output Log(const Scope& s, Input x) { return Unary(s, "Log", x); }
Output Relu(const Scope& s, Input x) { return Unary(s, "Relu", x); }
Output Relu6(const Scope& s, Input x) { return Unary(s, "Relu6", x); }
Output Sigmoid(const Scope& s, Input x) { return Unary(s, "Sigmoid", x); }
Output Tanh(const Scope& s, Input x) { return Unary(s, "Tanh", x); }
Output Softmax(const Scope& s, Input logits) { return Unary(s, "Softmax", logits); }
Output BiasAdd(const Scope& s, Input value, Input bias) {
  return Binary(s, "BiasAdd", value, bias);
}

// ---- Reductions -----------------------------------------------------------------------

Output Sum(const Scope& s, Input input, Input axis, bool keep_dims) {
  return Reduce(s, "Sum", input, axis, keep_dims);
}
Output Mean(const Scope& s, Input input, Input axis, bool keep_dims) {
  return Reduce(s, "Mean", input, axis, keep_dims);
}
Output Max(const Scope& s, Input input, Input axis, bool keep_dims) {
  return Reduce(s, "Max", input, axis, keep_dims);
}
Output Min(const Scope& s, Input input, Input axis, bool keep_dims) {
  return Reduce(s, "Min", input, axis, keep_dims);
}
Output Prod(const Scope& s, Input input, Input axis, bool keep_dims) {
  return Reduce(s, "Prod", input, axis, keep_dims);
}

// ---- Shapes and layout ----------------------------------------------------------------

Output Fill(const Scope& s, Input dims, Input value) { return Binary(s, "Fill", dims, value); }
Output ZerosLike(const Scope& s, Input x) { return Unary(s, "ZerosLike", x); }
Output OnesLike(const Scope& s, Input x) { return Unary(s, "OnesLike", x); }
Output Reshape(const Scope& s, Input tensor, Input shape) {
  return Binary(s, "Reshape", tensor, shape);
}
Output Rank(const Scope& s, Input input) { return Unary(s, "Rank", input); }
Output Transpose(const Scope& s, Input x, Input perm) { return Binary(s, "Transpose", x, perm); }
Output ExpandDims(const Scope& s, Input input, Input axis) {
  return Binary(s, "ExpandDims", input, axis);
}

Output Shape(const Scope& scope, Input input, DataType out_type) {
  return AddOp(scope, "Shape", {std::move(input)}, {{"out_type", TypeAttr(out_type)}})
      .output(0);
}

Output Size(const Scope& scope, Input input, DataType out_type) {
  return AddOp(scope, "Size", {std::move(input)}, {{"out_type", TypeAttr(out_type)}})
      .output(0);
}

Output Cast(const Scope& scope, Input x, DataType dst_type) {
  return AddOp(scope, "Cast", {std::move(x)}, {{"DstT", TypeAttr(dst_type)}}).output(0);
}

Output ConcatV2(const Scope& scope, InputList values, Input axis) {
  return AddOp(scope, "ConcatV2", {std::move(values), std::move(axis)}).output(0);
}

Output Pack(const Scope& scope, InputList values, int64_t axis) {
  return AddOp(scope, "Pack", {std::move(values)}, {{"axis", IntAttr(axis)}}).output(0);
}

Output Squeeze(const Scope& scope, Input input, const std::vector<int64_t>& axes) {
  return AddOp(scope, "Squeeze", {std::move(input)}, {{"squeeze_dims", IntListAttr(axes)}})
      .output(0);
}

}  // namespace dflow
