// Helpers over NodeDef + OpDef: tensor-name syntax, attr lookup, default attrs, and the
// input/output dtypes an op declares for a node (TF's InOutTypesForNode).
#ifndef DFLOW_GRAPH_NODE_DEF_UTIL_H_
#define DFLOW_GRAPH_NODE_DEF_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/types.h"
#include "proto/graph.pb.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace dflow {

inline constexpr int kControlSlot = -1;

// A parsed NodeDef input or tensor name: "x" -> {x, 0}, "x:2" -> {x, 2}, "^x" -> {x, -1}.
struct TensorId {
  std::string node;
  int index = 0;
  bool IsControl() const { return index == kControlSlot; }
  std::string ToString() const;  // "x:0", "^x"
};

// Parses an input/tensor name. INVALID_ARGUMENT for "", ":1", "x:", "x:-1", "x:abc",
// "^x:0" and indices beyond int32.
absl::StatusOr<TensorId> ParseTensorName(absl::string_view name);

// True when `name` is a valid node name: first char letter/digit/'.' (or '_' when
// `allow_internal` is set), then letters, digits, '-', '.', '/', '_'.
bool IsValidNodeName(absl::string_view name, bool allow_internal);

// A constant's op: "Const", or "HostConst" (a constant kept in host memory).
inline bool IsConstantOp(absl::string_view op) { return op == "Const" || op == "HostConst"; }

// Appends a node named `name` running `op` on `inputs` (tensor names, "^x" for control)
// to `graph`, for passes that write GraphDefs; attrs are the caller's to set.
NodeDef* AddNodeDef(GraphDef* graph, const std::string& name, const std::string& op,
                    const std::vector<std::string>& inputs);

// The attr named `name` of `node`, or nullptr.
const AttrValue* FindAttr(const NodeDef& node, absl::string_view name);

// Attr getters: INVALID_ARGUMENT naming node and attr when missing or of another type.
absl::StatusOr<DataType> GetTypeAttr(const NodeDef& node, absl::string_view name);
absl::StatusOr<int64_t> GetIntAttr(const NodeDef& node, absl::string_view name);
absl::StatusOr<bool> GetBoolAttr(const NodeDef& node, absl::string_view name);
absl::StatusOr<std::string> GetStringAttr(const NodeDef& node, absl::string_view name);

// Adds every attr that `op` declares with a default and `node` does not set.
void AddDefaultAttrs(const OpDef& op, NodeDef* node);

// Name of the AttrValue oneof case TF would print for `value` ("int", "list(type)", ...).
std::string AttrValueTypeName(const AttrValue& value);

// Checks that `value` is a legal value for `attr`: the declared type, allowed values
// and minimum. Returns a message for the first problem, "" when the value is legal.
std::string CheckAttrValue(const OpDef::AttrDef& attr, const AttrValue& value);

// The dtypes of the node's inputs and outputs as the op declares them (ref args as
// `_ref` types). REQUIRES: type/number attrs the args use are present.
absl::Status InOutTypesForNode(const NodeDef& node, const OpDef& op,
                               DataTypeVector* inputs, DataTypeVector* outputs);

// "name = Op[attr=value, ...](input, ...)" shortened for error messages.
std::string SummarizeNode(const NodeDef& node);

}  // namespace dflow

#endif  // DFLOW_GRAPH_NODE_DEF_UTIL_H_
