// FoldBatchNorms: an inference FusedBatchNorm after a Conv2D or DepthwiseConv2dNative
// (with or without a bias between) becomes a BiasAdd named after it, with the scale
// folded into a new filter Const and the shift into a bias Const, computed in double;
// nothing folds in training mode, with statistics read, on a GPU or with non-Const
// statistics; FuseCpuOps then fuses the result with its activation.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "graph/batch_norm_folding.h"
#include "graph/fusion.h"
#include "graph/graph_def_import.h"
#include "graph/tensor_proto_util.h"
#include "tests/testing/assigned_graph.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

std::string Const(const std::string& name, std::vector<int> dims, std::vector<float> values) {
  std::string shape, vals;
  for (int d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  for (float v : values) absl::StrAppend(&vals, "float_val: ", v, " ");
  return absl::StrCat("node { name: '", name,
                      "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { ",
                      shape, "} ", vals, "} } } }\n");
}

const char kInput[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";
const char kConvAttrs[] =
    "attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
    "attr { key: 'padding' value { s: 'SAME' } }";

// x -> conv(w: 1x1x1x2) [-> BiasAdd(b)] -> FusedBatchNormV3 -> Relu6 -> out (Identity).
std::string ConvBnGraph(const std::string& conv_op, bool with_bias, bool training = false,
                        const std::string& stats_input = "mean") {
  std::string text = kInput;
  // Conv2D filter [1,1,1,2]; a depthwise filter [1,1,1,2] has multiplier 2: same channels.
  text += Const("w", {1, 1, 1, 2}, {2, -3});
  text += Const("b", {2}, {0.5, 1});
  text += Const("scale", {2}, {1.5, 0.25});
  text += Const("offset", {2}, {0.1, -0.2});
  text += Const("mean", {2}, {0.3, -1});
  text += Const("var", {2}, {4, 0.0625});
  absl::StrAppend(&text, "node { name: 'conv' op: '", conv_op, "' input: 'x' input: 'w' ",
                  kConvAttrs, " }\n");
  std::string bn_input = "conv";
  if (with_bias) {
    text += "node { name: 'bias' op: 'BiasAdd' input: 'conv' input: 'b' "
            "attr { key: 'T' value { type: DT_FLOAT } } }\n";
    bn_input = "bias";
  }
  absl::StrAppend(&text, "node { name: 'bn' op: 'FusedBatchNormV3' input: '", bn_input,
                  "' input: 'scale' input: 'offset' input: '", stats_input,
                  "' input: 'var' attr { key: 'T' value { type: DT_FLOAT } } "
                  "attr { key: 'U' value { type: DT_FLOAT } } "
                  "attr { key: 'epsilon' value { f: 0.001 } } "
                  "attr { key: 'is_training' value { b: ",
                  training ? "true" : "false", " } } }\n");
  text += "node { name: 'act' op: 'Relu6' input: 'bn' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  text += "node { name: 'out' op: 'Identity' input: 'act' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  return text;
}

std::unique_ptr<Graph> Import(const std::string& text, const std::string& device = kCpu) {
  return testing::ImportOnDevice(text, device);
}

std::vector<float> ConstValues(const Node& node) {
  absl::StatusOr<std::vector<float>> values =
      TensorProtoToFloats(node.attr("value")->tensor(), 1 << 20);
  REQUIRE(values.ok());
  return *values;
}

// The Const feeding input `index` of `node`.
const Node& ConstInput(const Node& node, int index) {
  const Edge* edge = node.input_edge(index);
  REQUIRE(edge != nullptr);
  REQUIRE(edge->src->op() == "Const");
  return *edge->src;
}

float Folded(double w, double scale, double var) {
  return static_cast<float>(w * (scale / std::sqrt(var + static_cast<double>(0.001f))));
}

TEST_CASE("A Conv2D's inference batch norm folds into its filter and a BiasAdd", "[graph]") {
  for (bool with_bias : {false, true}) {
    INFO("with_bias " << with_bias);
    std::unique_ptr<Graph> graph = Import(ConvBnGraph("Conv2D", with_bias));
    REQUIRE(FoldBatchNorms(graph.get()).ok());
    const Node* bn = graph->FindNode("bn");
    REQUIRE(bn != nullptr);
    CHECK(bn->op() == "BiasAdd");
    CHECK(graph->FindNode("bias") == nullptr);
    CHECK(bn->input_edge(0)->src->name() == "conv");
    const Node* conv = graph->FindNode("conv");
    CHECK(ConstValues(ConstInput(*conv, 1)) ==
          std::vector<float>{Folded(2, 1.5, 4), Folded(-3, 0.25, 0.0625)});
    const double s0 = 1.5 / std::sqrt(4 + static_cast<double>(0.001f));
    const double s1 = 0.25 / std::sqrt(0.0625 + static_cast<double>(0.001f));
    const double b0 = with_bias ? 0.5 : 0, b1 = with_bias ? 1 : 0;
    const double offset1 = static_cast<double>(-0.2f);
    CHECK(ConstValues(ConstInput(*bn, 1)) ==
          std::vector<float>{static_cast<float>(b0 * s0 + (0.1f - 0.3f * s0)),
                             static_cast<float>(b1 * s1 + (offset1 + 1 * s1))});
    // The unfolded weights and statistics are gone; the activation reads the BiasAdd.
    for (const char* gone : {"w", "mean", "var", "scale", "offset"}) {
      CHECK(graph->FindNode(gone) == nullptr);
    }
    CHECK(graph->FindNode("act")->input_edge(0)->src == bn);
  }
}

// Keras 3's BatchNormalization, after constant folding: conv -> Mul(inv) -> AddV2(shift).
TEST_CASE("A per-channel Mul then Add after a convolution folds the same way", "[graph]") {
  std::string text = kInput;
  text += Const("w", {1, 1, 1, 2}, {2, -3});
  text += Const("b", {2}, {0.5, 1});
  text += Const("inv", {2}, {0.75, -2});
  text += Const("shift", {1, 1, 1, 2}, {0.125, 4});
  absl::StrAppend(&text, "node { name: 'conv' op: 'Conv2D' input: 'x' input: 'w' ", kConvAttrs,
                  " }\n");
  text += "node { name: 'bias' op: 'BiasAdd' input: 'conv' input: 'b' "
          "attr { key: 'T' value { type: DT_FLOAT } } }\n";
  text += "node { name: 'mul' op: 'Mul' input: 'bias' input: 'inv' "
          "attr { key: 'T' value { type: DT_FLOAT } } }\n";
  text += "node { name: 'add' op: 'AddV2' input: 'shift' input: 'mul' "
          "attr { key: 'T' value { type: DT_FLOAT } } }\n";
  text += "node { name: 'out' op: 'Relu' input: 'add' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  std::unique_ptr<Graph> graph = Import(text);
  REQUIRE(FoldBatchNorms(graph.get()).ok());
  const Node* add = graph->FindNode("add");
  REQUIRE(add != nullptr);
  CHECK(add->op() == "BiasAdd");
  CHECK(graph->FindNode("mul") == nullptr);
  CHECK(graph->FindNode("bias") == nullptr);
  CHECK(ConstValues(ConstInput(*graph->FindNode("conv"), 1)) == std::vector<float>{1.5f, 6});
  CHECK(ConstValues(ConstInput(*add, 1)) == std::vector<float>{0.5f, 2});  // b*inv + shift
  REQUIRE(FuseCpuOps(graph.get()).ok());
  CHECK(graph->FindNode("out")->op() == "_FusedConv2D");
}

TEST_CASE("Folding leaves a batch norm it cannot fold", "[graph]") {
  SECTION("training mode") {
    std::unique_ptr<Graph> graph = Import(ConvBnGraph("Conv2D", false, /*training=*/true));
    REQUIRE(FoldBatchNorms(graph.get()).ok());
    CHECK(graph->FindNode("bn")->op() == "FusedBatchNormV3");
  }
  SECTION("statistics that are not Consts") {
    std::unique_ptr<Graph> graph =
        Import(ConvBnGraph("Conv2D", false, false, "x") +
               "node { name: 'unused' op: 'NoOp' }\n");
    REQUIRE(FoldBatchNorms(graph.get()).ok());
    CHECK(graph->FindNode("bn")->op() == "FusedBatchNormV3");
  }
  SECTION("on a GPU") {
    std::unique_ptr<Graph> graph = Import(ConvBnGraph("Conv2D", false), kGpu);
    REQUIRE(FoldBatchNorms(graph.get()).ok());
    CHECK(graph->FindNode("bn")->op() == "FusedBatchNormV3");
  }
  SECTION("a statistic output is read") {
    std::unique_ptr<Graph> graph = Import(
        ConvBnGraph("Conv2D", false) +
        "node { name: 'm' op: 'Identity' input: 'bn:1' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    REQUIRE(FoldBatchNorms(graph.get()).ok());
    CHECK(graph->FindNode("bn")->op() == "FusedBatchNormV3");
  }
  SECTION("the convolution is read elsewhere") {
    std::unique_ptr<Graph> graph = Import(
        ConvBnGraph("Conv2D", false) +
        "node { name: 'c2' op: 'Identity' input: 'conv' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    REQUIRE(FoldBatchNorms(graph.get()).ok());
    CHECK(graph->FindNode("bn")->op() == "FusedBatchNormV3");
  }
}

TEST_CASE("FuseCpuOps folds, then fuses convolution, bias and activation", "[graph]") {
  SECTION("Conv2D -> _FusedConv2D") {
    std::unique_ptr<Graph> graph = Import(ConvBnGraph("Conv2D", true));
    REQUIRE(FuseCpuOps(graph.get()).ok());
    const Node* fused = graph->FindNode("act");
    REQUIRE(fused != nullptr);
    CHECK(fused->op() == "_FusedConv2D");
    CHECK(graph->FindNode("bn") == nullptr);
  }
  SECTION("DepthwiseConv2dNative -> _FusedDepthwiseConv2dNative") {
    std::unique_ptr<Graph> graph = Import(ConvBnGraph("DepthwiseConv2dNative", false));
    REQUIRE(FuseCpuOps(graph.get()).ok());
    const Node* fused = graph->FindNode("act");
    REQUIRE(fused != nullptr);
    CHECK(fused->op() == "_FusedDepthwiseConv2dNative");
    const auto& ops = fused->attr("fused_ops")->list().s();
    CHECK(std::vector<std::string>(ops.begin(), ops.end()) ==
          std::vector<std::string>{"BiasAdd", "Relu6"});
    CHECK(fused->attr("explicit_paddings") == nullptr);
  }
}

}  // namespace
}  // namespace dflow
