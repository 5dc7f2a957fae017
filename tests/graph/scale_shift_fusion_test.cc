// FuseScaleShift: a per-channel Mul -> Add [-> Relu | Relu6] chain (a batch norm before
// its activation and convolution) becomes one _DflowScaleShift; other chains stay.
#include "graph/scale_shift_fusion.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "tests/testing/assigned_graph.h"

namespace dflow {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

std::string FloatConst(const std::string& name, std::vector<int> dims) {
  std::string shape;
  for (int d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  return absl::StrCat("node { name: '", name, "' op: 'Const' attr { key: 'dtype' value { type: ",
                      "DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT ",
                      "tensor_shape { ", shape, "} float_val: 1 } } } }\n");
}

std::string Op(const std::string& name, const std::string& op, const std::string& a,
               const std::string& b = "") {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' input: '", a, "' ",
                      b.empty() ? "" : absl::StrCat("input: '", b, "' "),
                      "attr { key: 'T' value { type: DT_FLOAT } } }\n");
}

const char kInput[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";

// DenseNet's pre-activation: Mul(x, scale) -> AddV2(shift) -> Relu, scale and shift of
// Keras 3's broadcast shape.
std::string BatchNormRelu(const std::vector<int>& scale_dims = {1, 1, 1, 8},
                          const std::vector<int>& shift_dims = {1, 1, 1, 8}) {
  return absl::StrCat(kInput, FloatConst("scale", scale_dims), FloatConst("shift", shift_dims),
                      Op("mul", "Mul", "x", "scale"), Op("add", "AddV2", "shift", "mul"),
                      Op("relu", "Relu", "add"));
}

std::unique_ptr<Graph> Fused(const std::string& text, const std::string& device = kCpu) {
  return testing::AfterPass(text, device, FuseScaleShift);
}

using testing::InputNames;

TEST_CASE("Mul, AddV2 and Relu of per-channel Consts become one _DflowScaleShift",
          "[fusion]") {
  std::unique_ptr<Graph> g = Fused(BatchNormRelu());
  CHECK(g->FindNode("mul") == nullptr);
  CHECK(g->FindNode("add") == nullptr);
  const Node* fused = g->FindNode("relu");  // named after the last node
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_DflowScaleShift");
  CHECK(fused->attr("activation")->s() == "Relu");
  CHECK(fused->assigned_device() == kCpu);
  CHECK(InputNames(*g, "relu") == std::vector<std::string>{"x", "scale", "shift"});
}

TEST_CASE("Without an activation, or with Relu6, the chain still fuses", "[fusion]") {
  std::string text = absl::StrCat(kInput, FloatConst("scale", {8}), FloatConst("shift", {8}),
                                  Op("mul", "Mul", "scale", "x"), Op("add", "Add", "mul", "shift"),
                                  Op("out", "Identity", "add"));
  std::unique_ptr<Graph> g = Fused(text);
  REQUIRE(g->FindNode("add") != nullptr);
  CHECK(g->FindNode("add")->op() == "_DflowScaleShift");
  CHECK(g->FindNode("add")->attr("activation")->s().empty());
  CHECK(InputNames(*g, "out") == std::vector<std::string>{"add"});
  std::string relu6 = BatchNormRelu({8}, {8});
  relu6.replace(relu6.find("op: 'Relu'"), 10, "op: 'Relu6'");
  g = Fused(relu6);
  CHECK(g->FindNode("relu")->attr("activation")->s() == "Relu6");
}

TEST_CASE("Scale-shift chains that are not provably per-channel stay apart", "[fusion]") {
  SECTION("scale and shift of different shapes") {
    std::unique_ptr<Graph> g = Fused(BatchNormRelu({1, 1, 1, 8}, {8}));
    CHECK(g->FindNode("mul")->op() == "Mul");
  }
  SECTION("a constant that is not a vector of channels") {
    std::unique_ptr<Graph> g = Fused(BatchNormRelu({2, 8}, {2, 8}));
    CHECK(g->FindNode("mul")->op() == "Mul");
  }
  SECTION("the product read elsewhere") {
    std::unique_ptr<Graph> g = Fused(absl::StrCat(BatchNormRelu(), Op("peek", "Identity", "mul")));
    CHECK(g->FindNode("mul")->op() == "Mul");
    CHECK(g->FindNode("relu")->op() == "Relu");
  }
  SECTION("off the CPU") {
    std::unique_ptr<Graph> g = Fused(BatchNormRelu(), kGpu);
    CHECK(g->FindNode("relu")->op() == "Relu");
  }
}

}  // namespace
}  // namespace dflow
