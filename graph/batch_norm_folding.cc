#include "graph/batch_norm_folding.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/constant_inputs.h"
#include "graph/device_name.h"
#include "graph/node_def_util.h"
#include "graph/rewrite_match.h"
#include "graph/status_macros.h"
#include "graph/tensor_proto_util.h"

namespace dflow {
namespace {

// Weights above this many elements are left alone (decoding copies them).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 28;

// The float values and dims of the Const that `edge` carries (through Identity).
struct ConstValue {
  std::vector<float> values;
  std::vector<int64_t> dims;
};
std::optional<ConstValue> FloatConst(const Edge* edge) {
  const Node* src = ConstSource(edge);
  if (src == nullptr) return std::nullopt;
  const AttrValue* value = src->attr("value");
  if (value == nullptr || !value->has_tensor()) return std::nullopt;
  absl::StatusOr<std::vector<float>> values =
      TensorProtoToFloats(value->tensor(), kMaxFoldedElements);
  if (!values.ok()) return std::nullopt;
  ConstValue out;
  out.values = std::move(*values);
  for (const auto& dim : value->tensor().tensor_shape().dim()) out.dims.push_back(dim.size());
  return out;
}

// A matched convolution [-> bias] -> batch norm.
// The folded layer computes ((conv + bias) * factor + shift) per output channel.
struct Match {
  Node* conv = nullptr;
  Node* bias = nullptr;  // optional BiasAdd/Add between them
  Node* mul = nullptr;   // the Mul of a Mul -> Add pair (Keras 3's batch norm)
  Node* norm = nullptr;  // the last node replaced: the batch norm, or the pair's Add
  ConstValue filter;
  std::vector<float> bias_values;  // empty without a bias
  std::vector<double> factor, shift;
};

int64_t OutChannels(const Node& conv, const std::vector<int64_t>& filter_dims) {
  if (filter_dims.size() != 4) return -1;
  return conv.op() == "Conv2D" ? filter_dims[3] : filter_dims[2] * filter_dims[3];
}

// The bias vector of `add` (reading the convolution on `in`), when it is a Const of
// `channels` values added per channel in the convolution's layout.
std::optional<std::vector<float>> MatchBiasValues(const Node& conv, const Edge* in,
                                                  int64_t channels) {
  const Node& add = *in->dst;
  const std::string layout = StringAttrOr(conv, "data_format", "NHWC");
  const Edge* other = nullptr;
  if (add.op() == "BiasAdd") {
    if (in->dst_input != 0 || StringAttrOr(add, "data_format", "NHWC") != layout) {
      return std::nullopt;
    }
    other = add.input_edge(1);
  } else if ((add.op() == "Add" || add.op() == "AddV2") && layout == "NHWC") {
    other = add.input_edge(1 - in->dst_input);
  } else {
    return std::nullopt;
  }
  std::optional<ConstValue> bias = FloatConst(other);
  if (!bias.has_value() || bias->dims.size() != 1 || bias->dims[0] != channels) {
    return std::nullopt;
  }
  return bias->values;
}

bool IsInferenceBatchNorm(const Node& node) {
  if (node.op() != "FusedBatchNorm" && node.op() != "FusedBatchNormV2" &&
      node.op() != "FusedBatchNormV3") {
    return false;
  }
  absl::StatusOr<bool> training = GetBoolAttr(node.def(), "is_training");
  if (!training.ok() || *training) return false;
  if (!HasFloatAttr(node, "T")) return false;
  if (node.op() != "FusedBatchNorm" && !HasFloatAttr(node, "U")) return false;
  for (const Edge* e : node.out_edges()) {
    if (!e->IsControlEdge() && e->src_output != 0) return false;  // statistics are read
  }
  return true;
}

// The batch norm's four per-channel Consts, each of `channels` values, as the factor
// scale / sqrt(variance + epsilon) and the shift offset - mean * factor.
bool ReadStatistics(const Node& norm, int64_t channels, Match* match) {
  std::vector<float> stats[4];  // scale, offset, mean, variance
  for (int i = 0; i < 4; ++i) {
    std::optional<ConstValue> value = FloatConst(norm.input_edge(i + 1));
    if (!value.has_value() || value->dims.size() != 1 || value->dims[0] != channels) {
      return false;
    }
    stats[i] = std::move(value->values);
  }
  const AttrValue* epsilon_attr = norm.attr("epsilon");
  const double epsilon = epsilon_attr != nullptr ? epsilon_attr->f() : 0.001f;
  for (int64_t k = 0; k < channels; ++k) {
    const double factor = stats[0][k] / std::sqrt(static_cast<double>(stats[3][k]) + epsilon);
    match->factor.push_back(factor);
    match->shift.push_back(stats[1][k] - stats[2][k] * factor);
  }
  return true;
}

// The per-channel Const that `op` (Mul, or Add/AddV2) applies to the value on `in`, in
// NHWC: dims [C], or [1, ..., 1, C].
std::optional<std::vector<float>> PerChannelOperand(const Edge* in, const char* op,
                                                    int64_t channels) {
  const Node& node = *in->dst;
  const bool matches = std::string(op) == "Mul" ? node.op() == "Mul"
                                                 : node.op() == "Add" || node.op() == "AddV2";
  if (!matches || !HasFloatAttr(node, "T") || in->dst_input > 1) return std::nullopt;
  std::optional<ConstValue> value = FloatConst(node.input_edge(1 - in->dst_input));
  if (!value.has_value() || value->dims.empty() || value->dims.back() != channels) {
    return std::nullopt;
  }
  for (size_t i = 0; i + 1 < value->dims.size(); ++i) {
    if (value->dims[i] != 1) return std::nullopt;
  }
  return value->values;
}

// Conv [-> bias] -> Mul(per-channel) -> Add(per-channel), NHWC: `next` reads the
// convolution (or bias).
bool MatchMulAdd(const Edge* next, int64_t channels, const std::string& device, Match* match) {
  if (StringAttrOr(*match->conv, "data_format", "NHWC") != "NHWC") return false;
  std::optional<std::vector<float>> factor = PerChannelOperand(next, "Mul", channels);
  if (!factor.has_value()) return false;
  const Edge* to_add = SoleConsumer(*next->dst);
  if (to_add == nullptr || to_add->dst->assigned_device() != device) return false;
  std::optional<std::vector<float>> shift = PerChannelOperand(to_add, "Add", channels);
  if (!shift.has_value()) return false;
  match->mul = next->dst;
  match->norm = to_add->dst;
  match->factor.assign(factor->begin(), factor->end());
  match->shift.assign(shift->begin(), shift->end());
  return true;
}

std::optional<Match> MatchFold(Node* conv) {
  if ((conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative") || !OnCpu(*conv) ||
      !HasFloatAttr(*conv, "T")) {
    return std::nullopt;
  }
  Match match;
  match.conv = conv;
  std::optional<ConstValue> filter = FloatConst(conv->input_edge(1));
  if (!filter.has_value()) return std::nullopt;
  match.filter = std::move(*filter);
  const int64_t channels = OutChannels(*conv, match.filter.dims);
  if (channels <= 0) return std::nullopt;
  const std::string device = conv->assigned_device();
  const Edge* next = SoleConsumer(*conv);
  if (next == nullptr || next->dst->assigned_device() != device) return std::nullopt;
  if (MatchMulAdd(next, channels, device, &match)) return match;
  if (!IsInferenceBatchNorm(*next->dst)) {
    std::optional<std::vector<float>> bias = MatchBiasValues(*conv, next, channels);
    if (!bias.has_value() || !HasFloatAttr(*next->dst, "T")) return std::nullopt;
    match.bias = next->dst;
    match.bias_values = std::move(*bias);
    next = SoleConsumer(*match.bias);
    if (next == nullptr || next->dst->assigned_device() != device) return std::nullopt;
    if (MatchMulAdd(next, channels, device, &match)) return match;
    if (!IsInferenceBatchNorm(*next->dst)) return std::nullopt;
  }
  if (next->dst_input != 0) return std::nullopt;
  match.norm = next->dst;
  if (StringAttrOr(*match.norm, "data_format", "NHWC") != StringAttrOr(*conv, "data_format", "NHWC")) {
    return std::nullopt;
  }
  if (!ReadStatistics(*match.norm, channels, &match)) return std::nullopt;
  return match;
}

NodeDef FloatConstDef(const std::string& name, const std::vector<float>& values,
                      const std::vector<int64_t>& dims, const std::string& device) {
  NodeDef def;
  def.set_name(name);
  def.set_op("Const");
  def.set_device(device);
  auto& attrs = *def.mutable_attr();
  attrs["dtype"].set_type(DT_FLOAT);
  TensorProto* tensor = attrs["value"].mutable_tensor();
  tensor->set_dtype(DT_FLOAT);
  for (int64_t dim : dims) tensor->mutable_tensor_shape()->add_dim()->set_size(dim);
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  tensor->set_tensor_content(std::move(bytes));
  return def;
}

// A name no node has, from `base`.
std::string FreshName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int i = 1; graph.FindNode(name) != nullptr; ++i) name = absl::StrCat(base, "_", i);
  return name;
}

// Removes `node` when nothing reads it any more and it is a Const or an Identity (the
// replaced weights and statistics), then its source likewise, so the partition does
// not keep the unfolded values alive.
void RemoveOrphans(Graph* graph, Node* node) {
  while (node != nullptr && node->out_edges().empty() &&
         (IsConstantOp(node->op()) || node->op() == "Identity")) {
    Node* source = nullptr;
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge()) source = e->src;
    }
    graph->RemoveNode(node);
    node = source;
  }
}

absl::Status Fold(Graph* graph, const Match& m) {
  const int64_t channels = static_cast<int64_t>(m.factor.size());
  const std::vector<double>& factor = m.factor;
  std::vector<float> bias(channels);
  for (int64_t k = 0; k < channels; ++k) {
    const double b = m.bias_values.empty() ? 0.0 : m.bias_values[k];
    bias[k] = static_cast<float>(b * factor[k] + m.shift[k]);
  }
  std::vector<float> filter = m.filter.values;
  for (size_t i = 0; i < filter.size(); ++i) {  // HWIO / HWC(M): channel is the fastest index
    filter[i] = static_cast<float>(filter[i] * factor[i % channels]);
  }
  const std::string device = m.conv->assigned_device();
  const std::string requested = m.conv->requested_device();
  DFLOW_ASSIGN_OR_RETURN(
      Node * filter_node,
      graph->AddNode(FloatConstDef(FreshName(*graph, m.conv->name() + "/folded_filter"),
                                   filter, m.filter.dims, requested)));
  filter_node->set_assigned_device(device);
  DFLOW_ASSIGN_OR_RETURN(
      Node * bias_node,
      graph->AddNode(FloatConstDef(FreshName(*graph, m.norm->name() + "/folded_bias"), bias,
                                   {channels}, requested)));
  bias_node->set_assigned_device(device);

  // The BiasAdd replaces the batch norm under its name; its readers and control
  // successors, and the control inputs of the replaced nodes, carry over.
  struct Port {
    Node* node;
    int index;
  };
  std::vector<Port> outputs;
  for (const Edge* e : m.norm->out_edges()) outputs.push_back({e->dst, e->dst_input});
  std::vector<Node*> control_inputs;
  for (Node* node : {m.bias, m.mul, m.norm}) {
    if (node == nullptr) continue;
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge()) control_inputs.push_back(e->src);
    }
  }
  NodeDef bias_add;
  bias_add.set_name(m.norm->name());
  bias_add.set_op("BiasAdd");
  bias_add.set_device(m.norm->requested_device());
  (*bias_add.mutable_attr())["T"].set_type(DT_FLOAT);
  (*bias_add.mutable_attr())["data_format"].set_s(StringAttrOr(*m.conv, "data_format", "NHWC"));
  const std::string norm_device = m.norm->assigned_device();
  std::vector<Node*> replaced_values = {m.conv->input_edge(1)->src};
  for (Node* node : {m.bias, m.mul, m.norm}) {
    if (node == nullptr) continue;
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge() && e->src != m.conv && e->src != m.bias && e->src != m.mul) {
        replaced_values.push_back(e->src);
      }
    }
  }
  if (m.bias != nullptr) graph->RemoveNode(m.bias);
  if (m.mul != nullptr) graph->RemoveNode(m.mul);
  graph->RemoveNode(m.norm);
  DFLOW_ASSIGN_OR_RETURN(Node * added, graph->AddNode(std::move(bias_add)));
  added->set_assigned_device(norm_device);

  graph->RemoveEdge(m.conv->input_edge(1));
  graph->AddEdge(filter_node, 0, m.conv, 1);
  graph->AddEdge(m.conv, 0, added, 0);
  graph->AddEdge(bias_node, 0, added, 1);
  for (Node* src : control_inputs) graph->AddControlEdge(src, added);
  for (const Port& out : outputs) {
    if (out.index == kControlSlot) {
      graph->AddControlEdge(added, out.node);
    } else {
      graph->AddEdge(added, 0, out.node, out.index);
    }
  }
  // Several statistics may be one Const: remove each node once, by name.
  std::vector<std::string> names;
  for (Node* node : replaced_values) names.push_back(node->name());
  for (const std::string& name : names) RemoveOrphans(graph, graph->FindNode(name));
  return absl::OkStatus();
}

}  // namespace

absl::Status FoldBatchNorms(Graph* graph) {
  std::vector<Node*> convs;
  for (Node* node : graph->nodes()) {
    if (node->op() == "Conv2D" || node->op() == "DepthwiseConv2dNative") convs.push_back(node);
  }
  // A fold removes only BiasAdd/Add and batch norm nodes, never a convolution.
  for (Node* conv : convs) {
    std::optional<Match> match = MatchFold(conv);
    if (match.has_value()) DFLOW_RETURN_IF_ERROR(Fold(graph, *match));
  }
  return absl::OkStatus();
}

}  // namespace dflow
