// FuseResidualAdds (through FuseCpuOps, which runs it after the bias chains): a fused
// convolution read only by an Add takes the Add's other input as a fourth argument and
// the activation after the Add; nothing fuses when the convolution has an activation or
// another reader, is NCHW, or sits on a device other than a CPU.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "graph/fusion.h"
#include "graph/residual_add_fusion.h"
#include "tests/testing/assigned_graph.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

using testing::InputNames;

std::string FloatConst(const std::string& name, std::vector<int> dims) {
  std::string shape;
  for (int d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  return absl::StrCat("node { name: '", name,
                      "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { ",
                      shape, "} float_val: 1 } } } }\n");
}

std::string Op(const std::string& name, const std::string& op, const std::string& inputs,
               const std::string& extra_attrs = "") {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' ", inputs,
                      " attr { key: 'T' value { type: DT_FLOAT } } ", extra_attrs, " }\n");
}

std::string Conv(const std::string& name, const std::string& input, const std::string& filter,
                 const std::string& format = "NHWC") {
  return Op(name, "Conv2D", absl::StrCat("input: '", input, "' input: '", filter, "'"),
            absl::StrCat("attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
                         "attr { key: 'padding' value { s: 'SAME' } } "
                         "attr { key: 'data_format' value { s: '",
                         format, "' } }"));
}

std::string BiasAdd(const std::string& name, const std::string& input, const std::string& bias,
                    const std::string& format = "NHWC") {
  return Op(name, "BiasAdd", absl::StrCat("input: '", input, "' input: '", bias, "'"),
            absl::StrCat("attr { key: 'data_format' value { s: '", format, "' } }"));
}

// x -> conv1 (3x3) -> bias1 -> relu1 -> conv2 (1x1) -> bias2 \
//   -> shortcut conv (1x1) -> bias_s ------------------------ AddV2 "add" -> Relu "out"
// (a ResNet block's first unit: both of the Add's inputs are fused convolutions).
std::string ResidualBlock(const std::string& format = "NHWC") {
  return absl::StrCat(
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n",
      FloatConst("w1", {3, 3, 4, 4}), FloatConst("b1", {4}), FloatConst("w2", {1, 1, 4, 8}),
      FloatConst("b2", {8}), FloatConst("ws", {1, 1, 4, 8}), FloatConst("bs", {8}),
      Conv("conv1", "x", "w1", format), BiasAdd("bias1", "conv1", "b1", format),
      Op("relu1", "Relu", "input: 'bias1'"), Conv("conv2", "relu1", "w2", format),
      BiasAdd("bias2", "conv2", "b2", format), Conv("convs", "x", "ws", format),
      BiasAdd("bias_s", "convs", "bs", format),
      Op("add", "AddV2", "input: 'bias2' input: 'bias_s'"), Op("out", "Relu", "input: 'add'"));
}

std::unique_ptr<Graph> Fused(const std::string& text, const std::string& device = kCpu) {
  return testing::AfterPass(text, device, FuseCpuOps);
}

std::vector<std::string> FusedOps(const Node& node) {
  const auto& list = node.attr("fused_ops")->list().s();
  return std::vector<std::string>(list.begin(), list.end());
}

TEST_CASE("A residual Add and its Relu join the convolution of the Add's first input",
          "[fusion]") {
  std::unique_ptr<Graph> g = Fused(ResidualBlock());
  CHECK(g->FindNode("add") == nullptr);
  CHECK(g->FindNode("bias2") == nullptr);
  const Node* out = g->FindNode("out");  // named after the last node it replaces
  REQUIRE(out != nullptr);
  CHECK(out->op() == "_FusedConv2D");
  CHECK(out->assigned_device() == kCpu);
  CHECK(FusedOps(*out) == std::vector<std::string>{"BiasAdd", "Add", "Relu"});
  CHECK(out->attr("num_args")->i() == 2);
  CHECK(out->attr("TArgs")->list().type_size() == 2);
  CHECK(InputNames(*g, "out") == std::vector<std::string>{"relu1", "w2", "b2", "bias_s"});
  // The shortcut stays a convolution with its bias: the addend.
  const Node* shortcut = g->FindNode("bias_s");
  REQUIRE(shortcut != nullptr);
  CHECK(shortcut->op() == "_FusedConv2D");
  CHECK(FusedOps(*shortcut) == std::vector<std::string>{"BiasAdd"});
  // The first convolution has its own Relu: not an Add's.
  CHECK(FusedOps(*g->FindNode("relu1")) == std::vector<std::string>{"BiasAdd", "Relu"});
}

TEST_CASE("Without an activation the fused node takes the Add's name; Add works too",
          "[fusion]") {
  std::string text = ResidualBlock();
  // Drop the Relu and make the AddV2 an Add whose convolution is its second input.
  text = text.substr(0, text.find("node { name: 'add'"));
  text += Op("add", "Add", "input: 'x' input: 'bias2'");
  std::unique_ptr<Graph> g = Fused(text);
  const Node* add = g->FindNode("add");
  REQUIRE(add != nullptr);
  CHECK(add->op() == "_FusedConv2D");
  CHECK(FusedOps(*add) == std::vector<std::string>{"BiasAdd", "Add"});
  CHECK(InputNames(*g, "add") == std::vector<std::string>{"relu1", "w2", "b2", "x"});
}

TEST_CASE("A convolution read elsewhere, an NCHW one or one on a GPU keeps its Add",
          "[fusion]") {
  SECTION("another reader of the convolution") {
    std::unique_ptr<Graph> g = Fused(ResidualBlock() + Op("peek", "Identity", "input: 'bias2'") +
                                     Op("peek_s", "Identity", "input: 'bias_s'"));
    CHECK(g->FindNode("add")->op() == "AddV2");
    CHECK(g->FindNode("out")->op() == "Relu");
  }
  SECTION("a control successor of the convolution") {
    std::unique_ptr<Graph> g =
        Fused(ResidualBlock() + "node { name: 'after' op: 'NoOp' input: '^bias2' "
                                "input: '^bias_s' }\n");
    CHECK(g->FindNode("add")->op() == "AddV2");
  }
  SECTION("NCHW") {
    std::unique_ptr<Graph> g = Fused(ResidualBlock("NCHW"));
    CHECK(g->FindNode("add")->op() == "AddV2");
  }
  SECTION("a GPU") {
    std::unique_ptr<Graph> g = Fused(ResidualBlock(), kGpu);
    CHECK(g->FindNode("add")->op() == "AddV2");
    CHECK(g->FindNode("conv2")->op() == "Conv2D");
  }
}

TEST_CASE("FuseResidualAdds leaves a convolution that already has an activation",
          "[fusion]") {
  std::string text = ResidualBlock();
  text = text.substr(0, text.find("node { name: 'add'"));
  // conv3 -> bias3 -> relu3, read by the Add alone: a fused convolution with its Relu.
  text += absl::StrCat(Conv("conv3", "x", "w1"), BiasAdd("bias3", "conv3", "b1"),
                       Op("relu3", "Relu", "input: 'bias3'"),
                       Op("add", "AddV2", "input: 'relu3' input: 'x'"));
  std::unique_ptr<Graph> g = Fused(text);
  CHECK(g->FindNode("add")->op() == "AddV2");
  CHECK(FusedOps(*g->FindNode("relu3")) == std::vector<std::string>{"BiasAdd", "Relu"});
  std::unique_ptr<Graph> direct = testing::ImportOnDevice(text, kCpu);
  REQUIRE(FuseResidualAdds(direct.get()).ok());  // no _FusedConv2D yet: nothing to do
  CHECK(direct->FindNode("add")->op() == "AddV2");
}

}  // namespace
}  // namespace dflow
