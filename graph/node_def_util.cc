#include "graph/node_def_util.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

absl::Status AttrError(const NodeDef& node, absl::string_view name, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("Node '", node.name(), "' (", node.op(), "): attr '", name, "' ", why));
}

absl::StatusOr<const AttrValue*> GetAttrOfCase(const NodeDef& node, absl::string_view name,
                                               AttrValue::ValueCase want,
                                               absl::string_view want_name) {
  const AttrValue* value = FindAttr(node, name);
  if (value == nullptr) return AttrError(node, name, "is missing");
  if (value->value_case() != want) {
    return AttrError(node, name,
                     absl::StrCat("has type ", AttrValueTypeName(*value), ", expected ",
                                  want_name));
  }
  return value;
}

std::string ListTypeName(const AttrValue::ListValue& list) {
  if (list.s_size() > 0) return "list(string)";
  if (list.i_size() > 0) return "list(int)";
  if (list.f_size() > 0) return "list(float)";
  if (list.b_size() > 0) return "list(bool)";
  if (list.type_size() > 0) return "list(type)";
  if (list.shape_size() > 0) return "list(shape)";
  if (list.tensor_size() > 0) return "list(tensor)";
  if (list.func_size() > 0) return "list(func)";
  return "list(any)";
}

int ListSize(const AttrValue::ListValue& list) {
  return std::max({list.s_size(), list.i_size(), list.f_size(), list.b_size(),
                   list.type_size(), list.shape_size(), list.tensor_size(),
                   list.func_size()});
}

bool TypeMatches(absl::string_view declared, const AttrValue& value) {
  if (value.value_case() == AttrValue::kPlaceholder) return true;
  const std::string actual = AttrValueTypeName(value);
  if (declared == actual) return true;
  // An empty list is legal for every list type; "any" accepts everything.
  if (actual == "list(any)") return absl::StartsWith(declared, "list(");
  return declared == "any";
}

std::string CheckAllowed(const OpDef::AttrDef& attr, const AttrValue& value) {
  if (!attr.has_allowed_values()) return "";
  const AttrValue::ListValue& allowed = attr.allowed_values().list();
  auto type_ok = [&](int t) {
    return std::find(allowed.type().begin(), allowed.type().end(), t) != allowed.type().end();
  };
  if (attr.type() == "type" && !type_ok(value.type())) {
    std::vector<std::string> names;
    for (int t : allowed.type()) names.push_back(DataTypeString(static_cast<DataType>(t)));
    return absl::StrCat("value ", DataTypeString(value.type()),
                        " is not in the list of allowed values: ", absl::StrJoin(names, ", "));
  }
  if (attr.type() == "list(type)") {
    for (int t : value.list().type()) {
      if (!type_ok(t)) {
        return absl::StrCat("value ", DataTypeString(static_cast<DataType>(t)),
                            " is not in the list of allowed values");
      }
    }
  }
  if (attr.type() == "string" &&
      std::find(allowed.s().begin(), allowed.s().end(), value.s()) == allowed.s().end()) {
    return absl::StrCat("value \"", value.s(), "\" is not in the list of allowed values: \"",
                        absl::StrJoin(allowed.s(), "\", \""), "\"");
  }
  return "";
}

std::string CheckMinimum(const OpDef::AttrDef& attr, const AttrValue& value) {
  if (!attr.has_minimum()) return "";
  if (attr.type() == "int" && value.i() < attr.minimum()) {
    return absl::StrCat("value ", value.i(), " is less than the minimum ", attr.minimum());
  }
  if (absl::StartsWith(attr.type(), "list(") && ListSize(value.list()) < attr.minimum()) {
    return absl::StrCat("has ", ListSize(value.list()), " elements, less than the minimum ",
                        attr.minimum());
  }
  return "";
}

absl::Status AppendArgTypes(const NodeDef& node, const OpDef::ArgDef& arg,
                            DataTypeVector* types) {
  std::vector<DataType> arg_types;
  if (!arg.type_list_attr().empty()) {
    DFLOW_ASSIGN_OR_RETURN(const AttrValue* list,
                           GetAttrOfCase(node, arg.type_list_attr(), AttrValue::kList,
                                         "list(type)"));
    for (int t : list->list().type()) arg_types.push_back(static_cast<DataType>(t));
  } else {
    DataType type = arg.type();
    if (!arg.type_attr().empty()) {
      DFLOW_ASSIGN_OR_RETURN(type, GetTypeAttr(node, arg.type_attr()));
    }
    int64_t count = 1;
    if (!arg.number_attr().empty()) {
      DFLOW_ASSIGN_OR_RETURN(count, GetIntAttr(node, arg.number_attr()));
      if (count < 0 || count > (1 << 20)) {
        return AttrError(node, arg.number_attr(), absl::StrCat("has bad value ", count));
      }
    }
    arg_types.assign(count, type);
  }
  for (DataType t : arg_types) types->push_back(arg.is_ref() ? MakeRefType(t) : t);
  return absl::OkStatus();
}

}  // namespace

std::string TensorId::ToString() const {
  return IsControl() ? absl::StrCat("^", node) : absl::StrCat(node, ":", index);
}

absl::StatusOr<TensorId> ParseTensorName(absl::string_view name) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("Malformed tensor name '", name, "': ", why));
  };
  TensorId id;
  if (absl::ConsumePrefix(&name, "^")) {
    if (name.empty()) return bad("no node name after '^'");
    if (name.find(':') != absl::string_view::npos) return bad("a control input has no index");
    id.node = std::string(name);
    id.index = kControlSlot;
    return id;
  }
  const size_t colon = name.rfind(':');
  if (colon == absl::string_view::npos) {
    if (name.empty()) return bad("empty name");
    id.node = std::string(name);
    return id;
  }
  absl::string_view digits = name.substr(colon + 1);
  if (colon == 0) return bad("no node name before ':'");
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
    return bad("the output index must be a non-negative integer");
  }
  int index = 0;
  if (!absl::SimpleAtoi(digits, &index)) return bad("the output index is too large");
  id.node = std::string(name.substr(0, colon));
  id.index = index;
  return id;
}

bool IsValidNodeName(absl::string_view name, bool allow_internal) {
  if (name.empty()) return false;
  const char first = name[0];
  if (!(absl::ascii_isalnum(first) || first == '.' || (allow_internal && first == '_'))) {
    return false;
  }
  return std::all_of(name.begin() + 1, name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '/' || c == '_';
  });
}

NodeDef* AddNodeDef(GraphDef* graph, const std::string& name, const std::string& op,
                    const std::vector<std::string>& inputs) {
  NodeDef* node = graph->add_node();
  node->set_name(name);
  node->set_op(op);
  for (const std::string& in : inputs) node->add_input(in);
  return node;
}

const AttrValue* FindAttr(const NodeDef& node, absl::string_view name) {
  auto it = node.attr().find(std::string(name));
  return it == node.attr().end() ? nullptr : &it->second;
}

absl::StatusOr<DataType> GetTypeAttr(const NodeDef& node, absl::string_view name) {
  DFLOW_ASSIGN_OR_RETURN(const AttrValue* v,
                         GetAttrOfCase(node, name, AttrValue::kType, "type"));
  return v->type();
}

absl::StatusOr<int64_t> GetIntAttr(const NodeDef& node, absl::string_view name) {
  DFLOW_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfCase(node, name, AttrValue::kI, "int"));
  return v->i();
}

absl::StatusOr<bool> GetBoolAttr(const NodeDef& node, absl::string_view name) {
  DFLOW_ASSIGN_OR_RETURN(const AttrValue* v, GetAttrOfCase(node, name, AttrValue::kB, "bool"));
  return v->b();
}

absl::StatusOr<std::string> GetStringAttr(const NodeDef& node, absl::string_view name) {
  DFLOW_ASSIGN_OR_RETURN(const AttrValue* v,
                         GetAttrOfCase(node, name, AttrValue::kS, "string"));
  return v->s();
}

void AddDefaultAttrs(const OpDef& op, NodeDef* node) {
  for (const OpDef::AttrDef& attr : op.attr()) {
    if (attr.has_default_value() && FindAttr(*node, attr.name()) == nullptr) {
      (*node->mutable_attr())[attr.name()] = attr.default_value();
    }
  }
}

std::string AttrValueTypeName(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    case AttrValue::kList: return ListTypeName(value.list());
    case AttrValue::VALUE_NOT_SET: return "<no value>";
  }
  return "<unknown>";
}

std::string CheckAttrValue(const OpDef::AttrDef& attr, const AttrValue& value) {
  if (!TypeMatches(attr.type(), value)) {
    return absl::StrCat("has type ", AttrValueTypeName(value), ", expected ", attr.type());
  }
  if (value.value_case() == AttrValue::kPlaceholder) return "";
  if (attr.type() == "type" || attr.type() == "list(type)") {
    const bool single = attr.type() == "type";
    std::vector<int> types = single ? std::vector<int>{value.type()}
                                    : std::vector<int>(value.list().type().begin(),
                                                       value.list().type().end());
    for (int t : types) {
      if (!IsKnownDataType(t) || IsRefType(static_cast<DataType>(t))) {
        return absl::StrCat("has invalid data type ", t);
      }
    }
  }
  std::string why = CheckAllowed(attr, value);
  if (!why.empty()) return why;
  return CheckMinimum(attr, value);
}

absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op, DataTypeVector* inputs,
                               DataTypeVector* outputs) {
  for (const auto& arg : op.input_arg()) DFLOW_RETURN_IF_ERROR(AppendArgTypes(node, arg, inputs));
  for (const auto& arg : op.output_arg()) {
    DFLOW_RETURN_IF_ERROR(AppendArgTypes(node, arg, outputs));
  }
  return absl::OkStatus();
}

std::string SummarizeNode(const NodeDef& node) {
  return absl::StrCat("'", node.name(), "' (", node.op(), ")");
}

}  // namespace dflow
