// FuseCpuOps: Conv2D/MatMul + bias [+ Relu/Relu6] chains become _FusedConv2D/_FusedMatMul
// named after their last node, zero Pads fold into convolutions, and nothing fuses when
// an intermediate is read elsewhere, the device is not a CPU or the bias is not provably
// a per-channel vector.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "graph/fusion.h"
#include "graph/graph_def_import.h"
#include "tests/testing/assigned_graph.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

// A float (or double) Const of the given dims (values irrelevant to the pass).
std::string FloatConst(const std::string& name, std::vector<int> dims, bool f64 = false) {
  std::string shape;
  for (int d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  const char* type = f64 ? "DT_DOUBLE" : "DT_FLOAT";
  return absl::StrCat("node { name: '", name, "' op: 'Const' attr { key: 'dtype' value { type: ",
                      type, " } } attr { key: 'value' value { tensor { dtype: ", type,
                      " tensor_shape { ", shape, "} ", f64 ? "double_val" : "float_val",
                      ": 1 } } } }\n");
}

std::string Op(const std::string& name, const std::string& op, const std::string& inputs,
               const std::string& extra_attrs = "", const std::string& type = "DT_FLOAT") {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' ", inputs,
                      " attr { key: 'T' value { type: ", type, " } } ", extra_attrs, " }\n");
}

std::string ConvAttrs(const std::string& padding, const std::string& format = "NHWC") {
  return absl::StrCat("attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } ",
                      "attr { key: 'padding' value { s: '", padding, "' } } ",
                      "attr { key: 'data_format' value { s: '", format, "' } }");
}

std::string NoOp(const std::string& name, const std::string& inputs) {
  return absl::StrCat("node { name: '", name, "' op: 'NoOp' ", inputs, " }\n");
}

const char kInput[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";

// Imports `text` with every node assigned to `device`.
std::unique_ptr<Graph> Import(const std::string& text, const std::string& device = kCpu) {
  return testing::ImportOnDevice(text, device);
}

std::unique_ptr<Graph> Fused(const std::string& text, const std::string& device = kCpu) {
  return testing::AfterPass(text, device, FuseCpuOps);
}

using testing::InputNames;

std::vector<std::string> FusedOps(const Node& node) {
  const auto& list = node.attr("fused_ops")->list().s();
  return std::vector<std::string>(list.begin(), list.end());
}

std::vector<int64_t> Ints(const Node& node, const char* attr) {
  const auto& list = node.attr(attr)->list().i();
  return std::vector<int64_t>(list.begin(), list.end());
}

// LeNet's first layer: Pad -> Conv2D -> Add(bias read through Identity) -> MaxPool.
std::string LeNetLayer(const std::string& pool_input = "add") {
  return absl::StrCat(
      kInput, FloatConst("w", {5, 5, 1, 6}), FloatConst("b", {6}),
      Op("w/read", "Identity", "input: 'w'"), Op("b/read", "Identity", "input: 'b'"),
      "node { name: 'paddings' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } "
      "dim { size: 2 } } tensor_content: \"",
      // [[0,0],[2,2],[1,3],[0,0]] as little-endian int32.
      "\\000\\000\\000\\000\\000\\000\\000\\000\\002\\000\\000\\000\\002\\000\\000\\000"
      "\\001\\000\\000\\000\\003\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000",
      "\" } } } }\n",
      "node { name: 'pad' op: 'Pad' input: 'x' input: 'paddings' "
      "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n",
      Op("conv", "Conv2D", "input: 'pad' input: 'w/read'", ConvAttrs("VALID")),
      Op("add", "Add", "input: 'conv' input: 'b/read'"),
      Op("pool", "MaxPool", absl::StrCat("input: '", pool_input, "'"),
         "attr { key: 'ksize' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
         "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
         "attr { key: 'padding' value { s: 'VALID' } }"));
}

TEST_CASE("Pad, Conv2D and Add of a Const bias become one _FusedConv2D", "[fusion]") {
  // The Add is also fetched here (an Identity reads it), so the MaxPool stays apart.
  std::unique_ptr<Graph> g =
      Fused(absl::StrCat(LeNetLayer(), Op("fetch", "Identity", "input: 'add'")));
  CHECK(g->FindNode("pad") == nullptr);
  CHECK(g->FindNode("conv") == nullptr);
  const Node* fused = g->FindNode("add");  // named after the last node it replaces
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_FusedConv2D");
  CHECK(fused->assigned_device() == kCpu);
  CHECK(InputNames(*g, "add") == std::vector<std::string>{"x", "w/read", "b/read"});
  CHECK(FusedOps(*fused) == std::vector<std::string>{"BiasAdd"});
  CHECK(fused->attr("padding")->s() == "EXPLICIT");
  CHECK(Ints(*fused, "explicit_paddings") == std::vector<int64_t>{0, 0, 2, 2, 1, 3, 0, 0});
  CHECK(Ints(*fused, "strides") == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(fused->attr("num_args")->i() == 1);
  CHECK(fused->attr("T")->type() == DT_FLOAT);
  CHECK(fused->attr("TArgs")->list().type_size() == 1);
  CHECK(g->FindNode("pool")->op() == "MaxPool");
  CHECK(InputNames(*g, "pool") == std::vector<std::string>{"add"});
}

TEST_CASE("A fused convolution read only by a MaxPool becomes _DflowFusedConv2DMaxPool",
          "[fusion]") {
  std::unique_ptr<Graph> g = Fused(LeNetLayer());
  CHECK(g->FindNode("pad") == nullptr);
  CHECK(g->FindNode("conv") == nullptr);
  CHECK(g->FindNode("add") == nullptr);
  const Node* fused = g->FindNode("pool");  // named after the pool
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_DflowFusedConv2DMaxPool");
  CHECK(fused->assigned_device() == kCpu);
  CHECK(InputNames(*g, "pool") == std::vector<std::string>{"x", "w/read", "b/read"});
  CHECK(FusedOps(*fused) == std::vector<std::string>{"BiasAdd"});
  CHECK(fused->attr("padding")->s() == "EXPLICIT");
  CHECK(Ints(*fused, "explicit_paddings") == std::vector<int64_t>{0, 0, 2, 2, 1, 3, 0, 0});
  CHECK(Ints(*fused, "strides") == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(fused->attr("num_args")->i() == 1);
  CHECK(fused->attr("TArgs")->list().type_size() == 1);
  CHECK(Ints(*fused, "pool_ksize") == std::vector<int64_t>{1, 2, 2, 1});
  CHECK(Ints(*fused, "pool_strides") == std::vector<int64_t>{1, 2, 2, 1});
  CHECK(fused->attr("pool_padding")->s() == "VALID");
}

TEST_CASE("The MaxPool fusion keeps edges and leaves other pools alone", "[fusion]") {
  SECTION("control edges in and out move to the fused node; its readers follow") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(LeNetLayer(), Op("after", "Identity", "input: 'pool' input: '^pool'"),
                           NoOp("ctl", "input: '^pool'")));
    const Node* fused = g->FindNode("pool");
    REQUIRE(fused->op() == "_DflowFusedConv2DMaxPool");
    CHECK(InputNames(*g, "after") == std::vector<std::string>{"pool", "^pool"});
    CHECK(InputNames(*g, "ctl") == std::vector<std::string>{"^pool"});
  }
  SECTION("a control input of the convolution moves too") {
    std::string text = absl::StrCat(LeNetLayer(), NoOp("gate", ""));
    const std::string conv_inputs = "input: 'pad' input: 'w/read'";
    text.replace(text.find(conv_inputs), conv_inputs.size(),
                 conv_inputs + " input: '^gate'");
    std::unique_ptr<Graph> g = Fused(text);
    REQUIRE(g->FindNode("pool")->op() == "_DflowFusedConv2DMaxPool");
    CHECK(InputNames(*g, "pool") == std::vector<std::string>{"x", "w/read", "b/read", "^gate"});
  }
  SECTION("a control successor of the convolution") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(LeNetLayer(), NoOp("ctl", "input: '^add'")));
    CHECK(g->FindNode("add")->op() == "_FusedConv2D");
    CHECK(g->FindNode("pool")->op() == "MaxPool");
  }
  SECTION("an NCHW MaxPool") {
    std::string text = LeNetLayer();
    const std::string pool_padding = "attr { key: 'padding' value { s: 'VALID' } } }";
    text.replace(text.rfind(pool_padding), pool_padding.size(),
                 "attr { key: 'padding' value { s: 'VALID' } } "
                 "attr { key: 'data_format' value { s: 'NCHW' } } }");
    std::unique_ptr<Graph> g = Fused(text);
    CHECK(g->FindNode("add")->op() == "_FusedConv2D");
    CHECK(g->FindNode("pool")->op() == "MaxPool");
  }
  SECTION("an AvgPool") {
    std::string text = LeNetLayer();
    text.replace(text.find("'MaxPool'"), 9, "'AvgPool'");
    std::unique_ptr<Graph> g = Fused(text);
    CHECK(g->FindNode("add")->op() == "_FusedConv2D");
    CHECK(g->FindNode("pool")->op() == "AvgPool");
  }
  SECTION("a Conv2D without a bias") {
    std::unique_ptr<Graph> g = Fused(LeNetLayer("conv"));
    CHECK(g->FindNode("conv")->op() == "Conv2D");
    CHECK(g->FindNode("pool")->op() == "MaxPool");
  }
}

TEST_CASE("Nothing fuses on a device other than a CPU", "[fusion]") {
  std::unique_ptr<Graph> g = Fused(LeNetLayer(), kGpu);
  CHECK(g->FindNode("pad")->op() == "Pad");
  CHECK(g->FindNode("conv")->op() == "Conv2D");
  CHECK(g->FindNode("add")->op() == "Add");
}

TEST_CASE("A Pad into a SAME convolution stays", "[fusion]") {
  std::string text = LeNetLayer();
  const std::string valid = "s: 'VALID' } } attr { key: 'data_format'";
  text.replace(text.find(valid), 10, "s: 'SAME'");
  std::unique_ptr<Graph> g = Fused(text);
  CHECK(g->FindNode("pad")->op() == "Pad");
  CHECK(g->FindNode("pool")->op() == "_DflowFusedConv2DMaxPool");
  CHECK(g->FindNode("pool")->attr("padding")->s() == "SAME");
  CHECK(InputNames(*g, "pool")[0] == "pad");
}

// x -> Relu (or `source`) -> Pad (1 pixel each side) -> MaxPool 3x3 stride 2 VALID:
// Keras ResNet50's pool1.
std::string PaddedPool(const std::string& source_op) {
  return absl::StrCat(
      kInput, Op("act", source_op, "input: 'x'"),
      "node { name: 'paddings' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } "
      "dim { size: 2 } } int_val: [0, 0, 1, 1, 1, 1, 0, 0] } } } }\n",
      Op("pad", "Pad", "input: 'act' input: 'paddings'",
         "attr { key: 'Tpaddings' value { type: DT_INT32 } }"),
      Op("pool", "MaxPool", "input: 'pad'",
         "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 1 } } } "
         "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
         "attr { key: 'padding' value { s: 'VALID' } }"));
}

TEST_CASE("A zero Pad of a Relu's output folds into the MaxPool after it", "[fusion]") {
  std::unique_ptr<Graph> g = Fused(PaddedPool("Relu"));
  CHECK(g->FindNode("pad") == nullptr);
  const Node* pool = g->FindNode("pool");
  CHECK(pool->op() == "MaxPool");
  CHECK(pool->attr("padding")->s() == "EXPLICIT");
  CHECK(Ints(*pool, "explicit_paddings") == std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0});
  CHECK(InputNames(*g, "pool") == std::vector<std::string>{"act"});
  SECTION("not when the values may be negative (zeros would then win)") {
    std::unique_ptr<Graph> tanh = Fused(PaddedPool("Tanh"));
    CHECK(tanh->FindNode("pad")->op() == "Pad");
    CHECK(tanh->FindNode("pool")->attr("padding")->s() == "VALID");
  }
}

TEST_CASE("A Pad folds into a depthwise convolution: _DflowFusedDepthwiseConv2dNative",
          "[fusion]") {
  // MobileNet's ZeroPadding2D before a stride-2 depthwise convolution.
  std::string text = absl::StrCat(LeNetLayer("relu6"), Op("relu6", "Relu6", "input: 'add'"));
  const std::string conv = "op: 'Conv2D'";
  text.replace(text.find(conv), conv.size(), "op: 'DepthwiseConv2dNative'");
  std::unique_ptr<Graph> g = Fused(text);
  CHECK(g->FindNode("pad") == nullptr);
  const Node* fused = g->FindNode("relu6");
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_DflowFusedDepthwiseConv2dNative");
  CHECK(InputNames(*g, "relu6") == std::vector<std::string>{"x", "w/read", "b/read"});
  CHECK(FusedOps(*fused) == std::vector<std::string>{"BiasAdd", "Relu6"});
  CHECK(fused->attr("padding")->s() == "EXPLICIT");
  CHECK(Ints(*fused, "explicit_paddings") == std::vector<int64_t>{0, 0, 2, 2, 1, 3, 0, 0});
}

TEST_CASE("An unpadded depthwise convolution fuses as TF's _FusedDepthwiseConv2dNative",
          "[fusion]") {
  std::string text = absl::StrCat(
      kInput, FloatConst("w", {3, 3, 1, 4}), FloatConst("b", {4}),
      Op("conv", "DepthwiseConv2dNative", "input: 'x' input: 'w'", ConvAttrs("SAME")),
      Op("add", "BiasAdd", "input: 'conv' input: 'b'"));
  std::unique_ptr<Graph> g = Fused(text);
  const Node* fused = g->FindNode("add");
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_FusedDepthwiseConv2dNative");
  CHECK(fused->attr("padding")->s() == "SAME");
  CHECK(fused->attr("explicit_paddings") == nullptr);
}

TEST_CASE("MatMul, BiasAdd and Relu become _FusedMatMul with its transposes", "[fusion]") {
  std::unique_ptr<Graph> g =
      Fused(absl::StrCat(kInput, FloatConst("w", {10, 4}), FloatConst("b", {10}),
                         Op("mm", "MatMul", "input: 'x' input: 'w'",
                            "attr { key: 'transpose_b' value { b: true } }"),
                         Op("fc", "BiasAdd", "input: 'mm' input: 'b'"),
                         Op("relu", "Relu", "input: 'fc'"), Op("out", "Identity", "input: 'relu'")));
  const Node* fused = g->FindNode("relu");
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_FusedMatMul");
  CHECK(g->FindNode("mm") == nullptr);
  CHECK(g->FindNode("fc") == nullptr);
  CHECK(FusedOps(*fused) == std::vector<std::string>{"BiasAdd", "Relu"});
  CHECK(fused->attr("transpose_b")->b());
  CHECK_FALSE(fused->attr("transpose_a")->b());
  CHECK(InputNames(*g, "relu") == std::vector<std::string>{"x", "w", "b"});
  CHECK(InputNames(*g, "out") == std::vector<std::string>{"relu"});
}

TEST_CASE("Add of a Const bias fuses from either side, Relu6 too", "[fusion]") {
  std::unique_ptr<Graph> g =
      Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}), FloatConst("b", {4}),
                         Op("mm", "MatMul", "input: 'x' input: 'w'"),
                         Op("fc", "AddV2", "input: 'b' input: 'mm'"),
                         Op("act", "Relu6", "input: 'fc'")));
  CHECK(g->FindNode("act")->op() == "_FusedMatMul");
  CHECK(FusedOps(*g->FindNode("act")) == std::vector<std::string>{"BiasAdd", "Relu6"});
  CHECK(InputNames(*g, "act") == std::vector<std::string>{"x", "w", "b"});
}

TEST_CASE("An intermediate read elsewhere is not fused away", "[fusion]") {
  SECTION("the product is also read") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}), FloatConst("b", {4}),
                           Op("mm", "MatMul", "input: 'x' input: 'w'"),
                           Op("fc", "BiasAdd", "input: 'mm' input: 'b'"),
                           Op("other", "Identity", "input: 'mm'")));
    CHECK(g->FindNode("mm")->op() == "MatMul");
    CHECK(g->FindNode("fc")->op() == "BiasAdd");
  }
  SECTION("the biased value is also read: the Relu stays, the bias fuses") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}), FloatConst("b", {4}),
                           Op("mm", "MatMul", "input: 'x' input: 'w'"),
                           Op("fc", "BiasAdd", "input: 'mm' input: 'b'"),
                           Op("relu", "Relu", "input: 'fc'"), Op("other", "Identity", "input: 'fc'")));
    CHECK(g->FindNode("fc")->op() == "_FusedMatMul");
    CHECK(FusedOps(*g->FindNode("fc")) == std::vector<std::string>{"BiasAdd"});
    CHECK(InputNames(*g, "relu") == std::vector<std::string>{"fc"});
    CHECK(InputNames(*g, "other") == std::vector<std::string>{"fc"});
  }
  SECTION("a control successor of the product") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}), FloatConst("b", {4}),
                           Op("mm", "MatMul", "input: 'x' input: 'w'"),
                           Op("fc", "BiasAdd", "input: 'mm' input: 'b'"),
                           Op("other", "Identity", "input: 'x' input: '^mm'")));
    CHECK(g->FindNode("mm")->op() == "MatMul");
  }
}

TEST_CASE("Control edges move to the fused node", "[fusion]") {
  std::unique_ptr<Graph> g =
      Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}), FloatConst("b", {4}),
                         Op("mm", "MatMul", "input: 'x' input: 'w' input: '^w'"),
                         Op("fc", "BiasAdd", "input: 'mm' input: 'b' input: '^b'"),
                         Op("after", "Identity", "input: 'x' input: '^fc'")));
  CHECK(g->FindNode("fc")->op() == "_FusedMatMul");
  CHECK(InputNames(*g, "fc") == std::vector<std::string>{"x", "w", "b", "^w", "^b"});
  CHECK(InputNames(*g, "after") == std::vector<std::string>{"x", "^fc"});
}

TEST_CASE("An Add that is not provably a per-channel bias stays", "[fusion]") {
  SECTION("a bias of one element broadcasts: not the fused op's shape") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}), FloatConst("b", {1}),
                           Op("mm", "MatMul", "input: 'x' input: 'w'"),
                           Op("fc", "Add", "input: 'mm' input: 'b'")));
    CHECK(g->FindNode("fc")->op() == "Add");
  }
  SECTION("a fed bias") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(kInput, FloatConst("w", {3, 4}),
                           Op("mm", "MatMul", "input: 'x' input: 'w'"),
                           Op("fc", "Add", "input: 'mm' input: 'x'")));
    CHECK(g->FindNode("fc")->op() == "Add");
  }
  SECTION("an NCHW convolution with Add (the channel is not the last dim)") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(kInput, FloatConst("w", {5, 5, 1, 6}), FloatConst("b", {6}),
                           Op("conv", "Conv2D", "input: 'x' input: 'w'", ConvAttrs("VALID", "NCHW")),
                           Op("add", "Add", "input: 'conv' input: 'b'")));
    CHECK(g->FindNode("add")->op() == "Add");
  }
  SECTION("double products") {
    std::unique_ptr<Graph> g =
        Fused(absl::StrCat(FloatConst("x", {2, 3}, true), FloatConst("w", {3, 4}, true),
                           FloatConst("b", {4}, true),
                           Op("mm", "MatMul", "input: 'x' input: 'w'", "", "DT_DOUBLE"),
                           Op("fc", "BiasAdd", "input: 'mm' input: 'b'", "", "DT_DOUBLE")));
    CHECK(g->FindNode("fc")->op() == "BiasAdd");
  }
}

TEST_CASE("An NCHW Conv2D fuses with an NCHW BiasAdd and Relu", "[fusion]") {
  const std::string nchw = "attr { key: 'data_format' value { s: 'NCHW' } }";
  std::unique_ptr<Graph> g =
      Fused(absl::StrCat(kInput, FloatConst("w", {3, 3, 2, 4}), FloatConst("b", {4}),
                         Op("conv", "Conv2D", "input: 'x' input: 'w'", ConvAttrs("SAME", "NCHW")),
                         Op("bias", "BiasAdd", "input: 'conv' input: 'b'", nchw),
                         Op("relu", "Relu", "input: 'bias'")));
  const Node* fused = g->FindNode("relu");
  CHECK(fused->op() == "_FusedConv2D");
  CHECK(fused->attr("data_format")->s() == "NCHW");
  CHECK(FusedOps(*fused) == std::vector<std::string>{"BiasAdd", "Relu"});
  SECTION("but not with an NHWC BiasAdd") {
    std::unique_ptr<Graph> h =
        Fused(absl::StrCat(kInput, FloatConst("w", {3, 3, 2, 4}), FloatConst("b", {4}),
                           Op("conv", "Conv2D", "input: 'x' input: 'w'", ConvAttrs("SAME", "NCHW")),
                           Op("bias", "BiasAdd", "input: 'conv' input: 'b'")));
    CHECK(h->FindNode("bias")->op() == "BiasAdd");
  }
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

// A VariableV2 of `dims` read through Identity, as a training graph has it.
std::string Variable(const std::string& name, std::vector<int> dims) {
  std::string shape;
  for (int d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  return absl::StrCat("node { name: '", name, "' op: 'VariableV2' attr { key: 'dtype' value { "
                      "type: DT_FLOAT } } attr { key: 'shape' value { shape { ", shape,
                      "} } } }\n", Op(name + "/read", "Identity", "input: '" + name + "'"));
}

TEST_CASE("Variables of known shape fuse like Consts (frozen and restored twins agree)",
          "[fusion]") {
  std::unique_ptr<Graph> g =
      Fused(absl::StrCat(kInput, Variable("w", {3, 4}), Variable("b", {4}),
                         Op("mm", "MatMul", "input: 'x' input: 'w/read'"),
                         Op("fc", "Add", "input: 'mm' input: 'b/read'")));
  CHECK(g->FindNode("fc")->op() == "_FusedMatMul");
  CHECK(InputNames(*g, "fc") == std::vector<std::string>{"x", "w/read", "b/read"});

  // A bias variable whose width does not match the product's stays an Add.
  std::unique_ptr<Graph> mismatch =
      Fused(absl::StrCat(kInput, Variable("w", {3, 4}), Variable("b", {5}),
                         Op("mm", "MatMul", "input: 'x' input: 'w/read'"),
                         Op("fc", "Add", "input: 'mm' input: 'b/read'")));
  CHECK(mismatch->FindNode("fc")->op() == "Add");
}

// Conv2D -> BiasAdd -> Keras 3's swish: Mul(beta, x) -> Sigmoid -> Mul(x, .) -> IdentityN
// (its custom gradient, which also reads x and beta).
std::string KerasSwish(const std::string& beta_value) {
  return absl::StrCat(
      kInput, FloatConst("w", {3, 3, 4, 8}), FloatConst("b", {8}),
      "node { name: 'beta' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
      "attr { key: 'value' value { tensor { dtype: DT_FLOAT float_val: ",
      beta_value, " } } } }\n",
      Op("conv", "Conv2D", "input: 'x' input: 'w'", ConvAttrs("SAME")),
      Op("bias", "BiasAdd", "input: 'conv' input: 'b'"),
      Op("scaled", "Mul", "input: 'beta' input: 'bias'"),
      Op("sigmoid", "Sigmoid", "input: 'scaled'"),
      Op("swish", "Mul", "input: 'bias' input: 'sigmoid'"),
      "node { name: 'idn' op: 'IdentityN' input: 'swish' input: 'bias' input: 'beta' "
      "attr { key: 'T' value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } } }\n",
      Op("out", "Relu", "input: 'idn'"));
}

TEST_CASE("Keras 3's swish after a convolution becomes its eltwise_swish post-op",
          "[fusion]") {
  std::unique_ptr<Graph> g = Fused(KerasSwish("1.5"));
  for (const char* gone : {"conv", "bias", "scaled", "sigmoid", "idn"}) {
    CHECK(g->FindNode(gone) == nullptr);
  }
  const Node* fused = g->FindNode("swish");
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_FusedConv2D");
  CHECK(FusedOps(*fused) == std::vector<std::string>{"BiasAdd", kFusedSwish});
  CHECK(fused->attr(kSwishBetaAttr)->f() == 1.5f);
  CHECK(InputNames(*g, "out") == std::vector<std::string>{"swish"});
}

TEST_CASE("x * Sigmoid(x) fuses with beta 1; a Sigmoid read elsewhere does not",
          "[fusion]") {
  const std::string head = absl::StrCat(
      kInput, FloatConst("w", {3, 3, 4, 8}), FloatConst("b", {8}),
      Op("conv", "Conv2D", "input: 'x' input: 'w'", ConvAttrs("SAME")),
      Op("bias", "BiasAdd", "input: 'conv' input: 'b'"),
      Op("sigmoid", "Sigmoid", "input: 'bias'"),
      Op("swish", "Mul", "input: 'sigmoid' input: 'bias'"));
  std::unique_ptr<Graph> g = Fused(head);
  REQUIRE(g->FindNode("swish") != nullptr);
  CHECK(g->FindNode("swish")->op() == "_FusedConv2D");
  CHECK(g->FindNode("swish")->attr(kSwishBetaAttr)->f() == 1.0f);
  CHECK(g->FindNode("sigmoid") == nullptr);

  g = Fused(absl::StrCat(head, Op("fetch", "Identity", "input: 'sigmoid'")));
  CHECK(g->FindNode("sigmoid") != nullptr);
  CHECK(g->FindNode("swish")->op() == "Mul");
  CHECK(g->FindNode("bias")->op() == "_FusedConv2D");  // bias alone still fuses
}

}  // namespace
}  // namespace dflow
