#include "graph/scale_shift_fusion.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/constant_inputs.h"
#include "graph/rewrite_match.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// The dims of a float Const's value when it is a per-channel vector: [C], [1, ..., 1, C]
// or a scalar; nullopt otherwise.
std::optional<std::vector<int64_t>> ChannelVectorDims(const Node* value) {
  if (value == nullptr || !HasFloatAttr(*value, "dtype")) return std::nullopt;
  const AttrValue* attr = value->attr("value");
  if (attr == nullptr || !attr->has_tensor()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& dim : attr->tensor().tensor_shape().dim()) dims.push_back(dim.size());
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (dims[i] != 1) return std::nullopt;
  }
  return dims;
}

// One side of a binary node: the value operand and the constant operand.
struct Operands {
  const Edge* value = nullptr;
  const Edge* constant = nullptr;
  std::vector<int64_t> dims;  // the constant's
};

// The operands of a binary node one of whose inputs is a per-channel Const.
std::optional<Operands> SplitOperands(const Node& node) {
  const Edge* a = node.input_edge(0);
  const Edge* b = node.input_edge(1);
  if (a == nullptr || b == nullptr) return std::nullopt;
  for (const auto& [value, constant] : {std::pair{a, b}, std::pair{b, a}}) {
    std::optional<std::vector<int64_t>> dims = ChannelVectorDims(ConstSource(constant));
    if (dims.has_value() && ConstSource(value) == nullptr) {
      return Operands{value, constant, *dims};
    }
  }
  return std::nullopt;
}

struct ScaleShiftChain {
  Node* mul = nullptr;
  Node* add = nullptr;
  Node* activation = nullptr;  // may be null
  Operands scale, shift;

  Node* last() const { return activation != nullptr ? activation : add; }
};

std::optional<ScaleShiftChain> MatchChain(Node* mul) {
  if (mul->op() != "Mul" || !OnCpu(*mul) || !HasFloatAttr(*mul)) return std::nullopt;
  ScaleShiftChain chain;
  chain.mul = mul;
  std::optional<Operands> scale = SplitOperands(*mul);
  const Edge* to_add = SoleConsumer(*mul);
  if (!scale.has_value() || to_add == nullptr) return std::nullopt;
  chain.add = to_add->dst;
  if ((chain.add->op() != "Add" && chain.add->op() != "AddV2") ||
      !IsFusible(*chain.add, mul->assigned_device())) {
    return std::nullopt;
  }
  std::optional<Operands> shift = SplitOperands(*chain.add);
  if (!shift.has_value() || shift->value != to_add || shift->dims != scale->dims) {
    return std::nullopt;
  }
  chain.scale = *scale;
  chain.shift = *shift;
  chain.activation = SoleActivationConsumer(*chain.add);
  return chain;
}

absl::Status Rewrite(Graph* graph, const ScaleShiftChain& chain) {
  NodeDef def;
  def.set_name(chain.last()->name());
  def.set_op("_DflowScaleShift");
  def.set_device(chain.last()->requested_device());
  (*def.mutable_attr())["T"].set_type(DT_FLOAT);
  (*def.mutable_attr())["activation"].set_s(chain.activation != nullptr ? chain.activation->op()
                                                                         : "");
  const std::vector<OutputPort> inputs = {
      {chain.scale.value->src, chain.scale.value->src_output},
      {chain.scale.constant->src, chain.scale.constant->src_output},
      {chain.shift.constant->src, chain.shift.constant->src_output}};
  std::vector<Node*> replaced = {chain.mul, chain.add};
  if (chain.activation != nullptr) replaced.push_back(chain.activation);
  return ReplaceChain(graph, replaced, chain.last(), std::move(def), inputs).status();
}

}  // namespace

absl::Status FuseScaleShift(Graph* graph) {
  return ForEachNodeById(graph, [graph](Node* node) {
    std::optional<ScaleShiftChain> chain = MatchChain(node);
    return chain.has_value() ? Rewrite(graph, *chain) : absl::OkStatus();
  });
}

}  // namespace dflow
