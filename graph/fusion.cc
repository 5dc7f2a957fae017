#include "graph/fusion.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "graph/batch_norm_folding.h"
#include "graph/constant_inputs.h"
#include "graph/device_name.h"
#include "graph/gradient_update_fusion.h"
#include "graph/graph_pass_registry.h"
#include "graph/max_pool_grad_relu_fusion.h"
#include "graph/node_def_util.h"
#include "graph/residual_add_fusion.h"
#include "graph/rewrite_match.h"
#include "graph/scale_shift_fusion.h"
#include "graph/status_macros.h"
#include "graph/tensor_proto_util.h"
#include "graph/types.h"

namespace dflow {
namespace {

bool IsFloat(const Node& node) { return HasFloatAttr(node, "T"); }

// The static dims of the value `edge` carries when it is a Const's or a variable's
// (VariableV2 with a fully defined `shape`), directly or through forwarding nodes: a
// frozen graph and its checkpoint-restored twin then fuse alike and compute the same
// bits.
std::optional<std::vector<int64_t>> StaticDims(const Edge* edge) {
  edge = SkipForwarding(edge);
  if (edge != nullptr && edge->src->op() == "VariableV2" && edge->src_output == 0) {
    const AttrValue* shape = edge->src->attr("shape");
    if (shape == nullptr || !shape->has_shape() || shape->shape().unknown_rank()) {
      return std::nullopt;
    }
    std::vector<int64_t> dims;
    for (const auto& dim : shape->shape().dim()) {
      if (dim.size() < 0) return std::nullopt;
      dims.push_back(dim.size());
    }
    return dims;
  }
  const Node* src = ConstSource(edge);
  if (src == nullptr) return std::nullopt;
  const AttrValue* value = src->attr("value");
  if (value == nullptr || !value->has_tensor()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& dim : value->tensor().tensor_shape().dim()) dims.push_back(dim.size());
  return dims;
}

// The Pad that alone feeds `node`'s input 0 on its device, or null.
Node* SolePadInput(const Node& node) {
  const Edge* in = node.input_edge(0);
  if (in == nullptr) return nullptr;
  Node* pad = in->src;
  if (pad->op() != "Pad" || SoleConsumer(*pad) != in ||
      !IsFusible(*pad, node.assigned_device())) {
    return nullptr;
  }
  return pad;
}

// The 8 explicit pads (data_format order) `node` (VALID or EXPLICIT padding) gets when
// `pad`'s constant spatial paddings are added to its own; nullopt when the paddings are
// not a Const, pad the batch or depth dim or are negative.
std::optional<std::vector<int64_t>> MergedPads(const Node& pad, const Node& node) {
  const std::string padding = StringAttrOr(node, "padding", "");
  if (padding != "VALID" && padding != "EXPLICIT") return std::nullopt;
  const Node* paddings = ConstSource(pad.input_edge(1));
  if (paddings == nullptr || paddings->attr("value") == nullptr) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> pads =
      TensorProtoToInt64s(paddings->attr("value")->tensor(), 8);
  if (!pads.ok() || pads->size() != 8) return std::nullopt;
  const bool nchw = StringAttrOr(node, "data_format", "NHWC") == "NCHW";
  const int channel = nchw ? 1 : 3;
  std::vector<int64_t> merged(8, 0);
  if (padding == "EXPLICIT") {
    const AttrValue* attr = node.attr("explicit_paddings");
    if (attr == nullptr || attr->list().i_size() != 8) return std::nullopt;
    for (int i = 0; i < 8; ++i) merged[i] = attr->list().i(i);
  }
  for (int i = 0; i < 8; ++i) {
    const int dim = i / 2;
    if ((*pads)[i] < 0 || ((dim == 0 || dim == channel) && (*pads)[i] != 0)) return std::nullopt;
    merged[i] += (*pads)[i];
  }
  return merged;
}

// `node` reads `pad`'s input with EXPLICIT `pads`; the Pad goes, its control inputs
// move to `node`.
void AbsorbPad(Graph* graph, Node* pad, Node* node, const std::vector<int64_t>& pads) {
  AttrValue& padding_attr = (*node->mutable_def()->mutable_attr())["padding"];
  padding_attr.set_s("EXPLICIT");
  AttrValue& pads_attr = (*node->mutable_def()->mutable_attr())["explicit_paddings"];
  pads_attr.mutable_list()->clear_i();
  for (int64_t p : pads) pads_attr.mutable_list()->add_i(p);
  const Edge* source = pad->input_edge(0);
  graph->AddEdge(source->src, source->src_output, node, 0);
  for (const Edge* e : pad->in_edges()) {
    if (e->IsControlEdge()) graph->AddControlEdge(e->src, node);
  }
  graph->RemoveNode(pad);
}

// Pad -> Conv2D | DepthwiseConv2dNative (VALID or EXPLICIT): the zero pad becomes the
// convolution's own.
bool FoldPadIntoConv(Graph* graph, Node* conv) {
  Node* pad = SolePadInput(*conv);
  if (pad == nullptr) return false;
  std::optional<std::vector<int64_t>> pads = MergedPads(*pad, *conv);
  if (!pads.has_value()) return false;
  AbsorbPad(graph, pad, conv, *pads);
  return true;
}

// Whether every value `edge` carries is >= 0 (or NaN): a Relu's or Relu6's, or a fused
// op's whose last step is one.
bool NonNegative(const Edge* edge) {
  if (edge == nullptr || edge->src_output != 0) return false;
  const Node& src = *edge->src;
  if (src.op() == "Relu" || src.op() == "Relu6") return true;
  const AttrValue* fused_ops = src.attr("fused_ops");
  if (fused_ops != nullptr && fused_ops->list().s_size() > 0) {
    const std::string& last = fused_ops->list().s(fused_ops->list().s_size() - 1);
    return last == "Relu" || last == "Relu6";
  }
  const std::string activation = StringAttrOr(src, "activation", "");
  return src.op() == "_DflowScaleShift" && (activation == "Relu" || activation == "Relu6");
}

// Pad(x, const paddings) -> MaxPool (VALID or EXPLICIT) with x >= 0: the pool with
// EXPLICIT padding. TF's Pad writes zeros, the pool's own padding is ignored (-inf); on
// x >= 0 they give the same maxima as long as every window holds a value of x, which a
// pad smaller than the window guarantees (Keras ResNets' ZeroPadding2D before their
// first MaxPool: a 3.2 MB copy of a Relu's output at batch 1).
bool FoldPadIntoMaxPool(Graph* graph, Node* pool) {
  if (pool->op() != "MaxPool" || !OnCpu(*pool) || !IsFloat(*pool)) return false;
  Node* pad = SolePadInput(*pool);
  const AttrValue* ksize = pool->attr("ksize");
  if (pad == nullptr || !NonNegative(pad->input_edge(0)) || ksize == nullptr ||
      ksize->list().i_size() != 4) {
    return false;
  }
  std::optional<std::vector<int64_t>> pads = MergedPads(*pad, *pool);
  if (!pads.has_value()) return false;
  for (int i = 0; i < 8; ++i) {
    if ((*pads)[i] >= ksize->list().i(i / 2) && (*pads)[i] > 0) return false;
  }
  AbsorbPad(graph, pad, pool, *pads);
  return true;
}

// Readers of a CPU IdentityN read its inputs instead, and the IdentityN goes away: it
// only forwards (TF's custom_gradient writes one after every Keras 3 swish). Left alone
// with control edges or reference types.
void ForwardIdentityN(Graph* graph) {
  std::vector<Node*> nodes;
  for (Node* node : graph->nodes()) {
    if (node->op() == "IdentityN" && OnCpu(*node)) nodes.push_back(node);
  }
  for (Node* node : nodes) {
    bool plain = true;
    for (const Edge* e : node->in_edges()) plain = plain && !e->IsControlEdge();
    for (const Edge* e : node->out_edges()) plain = plain && !e->IsControlEdge();
    for (DataType type : node->input_types()) plain = plain && !IsRefType(type);
    if (!plain) continue;
    std::vector<const Edge*> inputs(node->num_inputs(), nullptr);
    for (const Edge* e : node->in_edges()) inputs[e->dst_input] = e;
    struct Reader {
      Node* node;
      int input;
      int output;
    };
    std::vector<Reader> readers;
    for (const Edge* e : node->out_edges()) readers.push_back({e->dst, e->dst_input, e->src_output});
    bool complete = true;
    for (const Reader& r : readers) {
      complete = complete && r.output < static_cast<int>(inputs.size()) &&
                 inputs[r.output] != nullptr;
    }
    if (!complete) continue;
    for (const Reader& r : readers) {
      const Edge* in = inputs[r.output];
      graph->RemoveEdge(r.node->input_edge(r.input));
      graph->AddEdge(in->src, in->src_output, r.node, r.input);
    }
    graph->RemoveNode(node);
  }
}

// A matched chain root -> bias [-> activation].
struct Chain {
  Node* root = nullptr;
  Node* bias = nullptr;
  const Edge* bias_value = nullptr;  // the edge carrying the bias vector
  Node* activation = nullptr;
  // A swish activation, x * sigmoid(beta * x): `activation` is its final Mul, these the
  // Sigmoid and (Keras 3's form) the Mul by beta before it.
  std::vector<Node*> swish_inner;
  float swish_beta = 1.0f;

  Node* last() const { return activation != nullptr ? activation : bias; }
};

// The output width of `root` when its weights are a Const (filter out-channels for a
// Conv2D, B's columns for a MatMul), else nullopt.
std::optional<int64_t> OutChannels(const Node& root) {
  std::optional<std::vector<int64_t>> dims = StaticDims(root.input_edge(1));
  if (!dims.has_value()) return std::nullopt;
  if (root.op() == "Conv2D") {
    if (dims->size() != 4) return std::nullopt;
    return (*dims)[3];
  }
  if (root.op() == "DepthwiseConv2dNative") {
    if (dims->size() != 4) return std::nullopt;
    return (*dims)[2] * (*dims)[3];
  }
  if (dims->size() != 2) return std::nullopt;
  absl::StatusOr<bool> transpose_b = GetBoolAttr(root.def(), "transpose_b");
  return (transpose_b.ok() && *transpose_b) ? (*dims)[0] : (*dims)[1];
}

bool IsConvolution(const Node& node) {
  return node.op() == "Conv2D" || node.op() == "DepthwiseConv2dNative";
}

// The bias edge of `add` (BiasAdd, or Add/AddV2 of a rank-1 Const) reading `in`.
const Edge* MatchBias(const Node& root, const Edge* in) {
  const Node& add = *in->dst;
  if (add.op() == "BiasAdd") {
    if (in->dst_input != 0) return nullptr;
    const std::string format = StringAttrOr(add, "data_format", "NHWC");
    if (IsConvolution(root) && format != StringAttrOr(root, "data_format", "NHWC")) return nullptr;
    return add.input_edge(1);
  }
  if (add.op() != "Add" && add.op() != "AddV2") return nullptr;
  if (IsConvolution(root) && StringAttrOr(root, "data_format", "NHWC") != "NHWC") return nullptr;
  const Edge* other = add.input_edge(1 - in->dst_input);
  std::optional<std::vector<int64_t>> dims = StaticDims(other);
  std::optional<int64_t> channels = OutChannels(root);
  if (!dims.has_value() || !channels.has_value() || dims->size() != 1 ||
      (*dims)[0] != *channels) {
    return nullptr;
  }
  return other;
}

// The scalar float value of a Const read by `edge` (directly or through forwarding).
std::optional<float> ScalarFloatConst(const Edge* edge) {
  const Node* source = ConstSource(edge);
  if (source == nullptr || source->attr("value") == nullptr) return std::nullopt;
  absl::StatusOr<std::vector<float>> values =
      TensorProtoToFloats(source->attr("value")->tensor(), 1);
  if (!values.ok() || values->size() != 1) return std::nullopt;
  return (*values)[0];
}

// The data input of binary `node` other than the one `in` feeds, or null.
const Edge* OtherInput(const Node& node, const Edge* in) {
  if (node.num_inputs() != 2) return nullptr;
  return node.input_edge(1 - in->dst_input);
}

// Whether `node`'s output 0 goes to `dst` alone (one data edge, no control edge).
bool FeedsOnly(const Node& node, const Node* dst) {
  const Edge* sole = SoleConsumer(node);
  return sole != nullptr && sole->dst == dst;
}

// Matches a swish on `x` (the bias node): x * Sigmoid(x), as tf.nn.silu and tf.keras
// write it, or x * Sigmoid(beta * x) with a scalar Const beta, as Keras 3 does. `x` must
// feed those nodes alone, and each inner node the next alone.
bool MatchSwish(Node* x, Chain* chain) {
  const std::string& device = chain->root->assigned_device();
  std::vector<const Edge*> outs;
  for (const Edge* e : x->out_edges()) {
    if (e->IsControlEdge() || e->src_output != 0) return false;
    outs.push_back(e);
  }
  if (outs.size() != 2) return false;
  for (int first = 0; first < 2; ++first) {
    Node* head = outs[first]->dst;  // Sigmoid, or the Mul by beta
    Node* mul = outs[1 - first]->dst;
    if (head == mul || mul->op() != "Mul" || !IsFusible(*mul, device) ||
        !IsFusible(*head, device)) {
      continue;
    }
    std::vector<Node*> inner;
    float beta = 1.0f;
    Node* sigmoid = head;
    if (head->op() == "Mul") {
      std::optional<float> value = ScalarFloatConst(OtherInput(*head, outs[first]));
      if (!value.has_value() || head->out_edges().size() != 1) continue;
      sigmoid = (*head->out_edges().begin())->dst;
      if (!FeedsOnly(*head, sigmoid)) continue;
      beta = *value;
      inner.push_back(head);
    }
    if (sigmoid->op() != "Sigmoid" || !IsFusible(*sigmoid, device) || !FeedsOnly(*sigmoid, mul)) {
      continue;
    }
    const Edge* from_sigmoid = OtherInput(*mul, outs[1 - first]);
    if (from_sigmoid == nullptr || from_sigmoid->src != sigmoid) continue;
    inner.push_back(sigmoid);
    chain->activation = mul;
    chain->swish_inner = std::move(inner);
    chain->swish_beta = beta;
    return true;
  }
  return false;
}

std::optional<Chain> MatchChain(Node* root) {
  if ((!IsConvolution(*root) && root->op() != "MatMul") || !OnCpu(*root) || !IsFloat(*root)) {
    return std::nullopt;
  }
  const Edge* to_bias = SoleConsumer(*root);
  if (to_bias == nullptr || !IsFusible(*to_bias->dst, root->assigned_device())) {
    return std::nullopt;
  }
  Chain chain;
  chain.root = root;
  chain.bias = to_bias->dst;
  chain.bias_value = MatchBias(*root, to_bias);
  if (chain.bias_value == nullptr) return std::nullopt;
  // Swish as a post-op on convolutions (the fused MatMul kernel reads no beta).
  if (IsConvolution(*root) && MatchSwish(chain.bias, &chain)) return chain;
  chain.activation = SoleActivationConsumer(*chain.bias);
  return chain;
}

// The fused op of a chain rooted at `root`. TF's _FusedDepthwiseConv2dNative takes no
// explicit_paddings: dflow's own op does.
const char* FusedOpName(const Node& root, bool explicit_pads) {
  if (root.op() == "Conv2D") return "_FusedConv2D";
  if (root.op() == "MatMul") return "_FusedMatMul";
  return explicit_pads ? "_DflowFusedDepthwiseConv2dNative" : "_FusedDepthwiseConv2dNative";
}

NodeDef FusedDef(const Chain& chain) {
  const Node& root = *chain.root;
  NodeDef def;
  def.set_name(chain.last()->name());
  const bool explicit_pads = StringAttrOr(root, "padding", "") == "EXPLICIT";
  def.set_op(FusedOpName(root, explicit_pads));
  def.set_device(chain.last()->requested_device());
  auto& attrs = *def.mutable_attr();
  for (const auto& [name, value] : root.def().attr()) {
    if (!absl::StartsWith(name, "_")) attrs[name] = value;  // not dflow's or TF's private marks
  }
  if (root.op() == "DepthwiseConv2dNative" && !explicit_pads) attrs.erase("explicit_paddings");
  attrs["num_args"].set_i(1);
  if (root.op() == "Conv2D") attrs["TArgs"].mutable_list()->add_type(DT_FLOAT);
  auto* fused_ops = attrs["fused_ops"].mutable_list();
  fused_ops->add_s("BiasAdd");
  if (!chain.swish_inner.empty()) {
    fused_ops->add_s(kFusedSwish);
    attrs[kSwishBetaAttr].set_f(chain.swish_beta);
  } else if (chain.activation != nullptr) {
    fused_ops->add_s(chain.activation->op());
  }
  return def;
}

absl::Status Rewrite(Graph* graph, const Chain& chain) {
  const Edge* a = chain.root->input_edge(0);
  const Edge* b = chain.root->input_edge(1);
  if (a == nullptr || b == nullptr) return absl::OkStatus();  // an incomplete graph: leave it
  const std::vector<OutputPort> inputs = {{a->src, a->src_output},
                                          {b->src, b->src_output},
                                          {chain.bias_value->src, chain.bias_value->src_output}};
  std::vector<Node*> replaced = {chain.root, chain.bias};
  if (chain.activation != nullptr) replaced.push_back(chain.activation);
  replaced.insert(replaced.end(), chain.swish_inner.begin(), chain.swish_inner.end());
  return ReplaceChain(graph, replaced, chain.last(), FusedDef(chain), inputs).status();
}

// _FusedConv2D -> MaxPool, both NHWC on one device, the convolution read by the pool
// alone (not fetched, no control successors): one _DflowFusedConv2DMaxPool named after
// the pool, which pools each slice of the batch while its convolution output is still in
// cache (the full output of a large batch is not).
absl::Status FuseMaxPool(Graph* graph, Node* conv) {
  if (conv->op() != "_FusedConv2D" || StringAttrOr(*conv, "data_format", "NHWC") != "NHWC") {
    return absl::OkStatus();
  }
  const Edge* to_pool = SoleConsumer(*conv);
  if (to_pool == nullptr || to_pool->dst_input != 0) return absl::OkStatus();
  Node* pool = to_pool->dst;
  if (pool->op() != "MaxPool" || !IsFusible(*pool, conv->assigned_device()) ||
      StringAttrOr(*pool, "data_format", "NHWC") != "NHWC" || pool->attr("ksize") == nullptr ||
      pool->attr("strides") == nullptr) {
    return absl::OkStatus();
  }
  const std::string pool_padding = StringAttrOr(*pool, "padding", "");
  if (pool_padding != "SAME" && pool_padding != "VALID") return absl::OkStatus();
  std::vector<const Edge*> inputs;
  for (const Edge* e : conv->in_edges()) {
    if (e->IsControlEdge()) continue;
    if (e->dst_input >= static_cast<int>(inputs.size())) inputs.resize(e->dst_input + 1);
    inputs[e->dst_input] = e;
  }
  if (inputs.size() != 3 || inputs[0] == nullptr || inputs[1] == nullptr || inputs[2] == nullptr) {
    return absl::OkStatus();  // host args or an incomplete graph: leave it
  }
  NodeDef def;
  def.set_name(pool->name());
  def.set_op("_DflowFusedConv2DMaxPool");
  def.set_device(pool->requested_device());
  auto& attrs = *def.mutable_attr();
  for (const auto& [name, value] : conv->def().attr()) {
    if (!absl::StartsWith(name, "_")) attrs[name] = value;
  }
  attrs["pool_ksize"] = *pool->attr("ksize");
  attrs["pool_strides"] = *pool->attr("strides");
  attrs["pool_padding"].set_s(pool_padding);
  std::vector<OutputPort> in_ports;
  for (const Edge* e : inputs) in_ports.push_back({e->src, e->src_output});
  return ReplaceChain(graph, {conv, pool}, pool, std::move(def), in_ports).status();
}

}  // namespace

absl::Status FuseCpuOps(Graph* graph) {
  // Batch norms into their convolutions first: each leaves a Conv -> BiasAdd to fuse.
  DFLOW_RETURN_IF_ERROR(FoldBatchNorms(graph));
  // Keras 3's swish ends in an IdentityN (its custom gradient) that also reads x: gone,
  // x feeds the swish's two nodes alone.
  ForwardIdentityN(graph);
  // Pads first, so that a padded convolution still fuses with its bias. Folding removes
  // only Pad nodes, never a Conv2D of this list.
  std::vector<Node*> convs;
  for (Node* node : graph->nodes()) {
    if (IsConvolution(*node) && OnCpu(*node) && IsFloat(*node)) convs.push_back(node);
  }
  for (Node* conv : convs) FoldPadIntoConv(graph, conv);
  // Fused nodes are no chain's root, so the walk need not see them.
  DFLOW_RETURN_IF_ERROR(ForEachNodeById(graph, [graph](Node* node) {
    std::optional<Chain> chain = MatchChain(node);
    return chain.has_value() ? Rewrite(graph, *chain) : absl::OkStatus();
  }));
  // Weight-gradient MatMuls into their gradient-descent updates; ReluGrads into the
  // MaxPoolGrads before them.
  DFLOW_RETURN_IF_ERROR(FuseGradientUpdates(graph));
  DFLOW_RETURN_IF_ERROR(FuseMaxPoolGradRelu(graph));
  // Zero Pads of Relu outputs into the MaxPools after them (the Relus are fused by now).
  std::vector<Node*> pools;
  for (Node* node : graph->nodes()) {
    if (node->op() == "MaxPool") pools.push_back(node);
  }
  for (Node* pool : pools) FoldPadIntoMaxPool(graph, pool);
  // Residual Adds into the fused convolutions before them (graph/residual_add_fusion.h).
  DFLOW_RETURN_IF_ERROR(FuseResidualAdds(graph));
  // Per-channel Mul -> Add [-> activation] chains that no convolution took.
  DFLOW_RETURN_IF_ERROR(FuseScaleShift(graph));
  // Then each fused convolution with its MaxPool (both nodes are replaced).
  return ForEachNodeById(graph, [graph](Node* node) {
    return OnCpu(*node) && IsFloat(*node) ? FuseMaxPool(graph, node) : absl::OkStatus();
  });
}

// Every partition, before MarkConstantInputs (order 200): fused nodes' constant inputs
// are marked like any node's.
DFLOW_REGISTER_GRAPH_PASS(cpu_fusion, "cpu_fusion", GraphPassPhase::kPartition, 100,
                          [](const GraphPassContext&, Graph* graph) {
                            return FuseCpuOps(graph);
                          });

}  // namespace dflow
