// FuseMaxPoolGradRelu: ReluGrad(MaxPoolGrad(x, y, g), x) becomes one _DflowMaxPoolGradRelu
// named after the ReluGrad with the pool's attrs; nothing fuses when the pooling gradient
// has another reader, the features are another tensor, or the nodes are not on a CPU.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "graph/max_pool_grad_relu_fusion.h"
#include "tests/testing/assigned_graph.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

using testing::InputNames;

std::string Node(const std::string& name, const std::string& op, const std::string& inputs,
                 const std::string& attrs = "attr { key: 'T' value { type: DT_FLOAT } }") {
  return absl::StrCat("node { name: '", name, "' op: '", op, "' ", inputs, " ", attrs, " }\n");
}

// relu -> pool forward; pool_grad -> relu_grad backward (features: `features`).
std::string Backward(const std::string& features = "relu", const std::string& extra = "") {
  const std::string placeholder = "attr { key: 'dtype' value { type: DT_FLOAT } }";
  const std::string pool_attrs =
      "attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'ksize' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
      "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
      "attr { key: 'padding' value { s: 'VALID' } }";
  return absl::StrCat(Node("x", "Placeholder", "", placeholder),
                      Node("g", "Placeholder", "", placeholder), Node("relu", "Relu", "input: 'x'"),
                      Node("pool", "MaxPool", "input: 'relu'", pool_attrs),
                      Node("pool_grad", "MaxPoolGrad",
                           "input: 'relu' input: 'pool' input: 'g' input: '^x'", pool_attrs),
                      Node("relu_grad", "ReluGrad",
                           absl::StrCat("input: 'pool_grad' input: '", features, "'")),
                      Node("out", "Identity", "input: 'relu_grad'"), extra);
}

std::unique_ptr<Graph> Fused(const std::string& text, const std::string& device = kCpu) {
  return testing::AfterPass(text, device, FuseMaxPoolGradRelu);
}

TEST_CASE("ReluGrad of a MaxPoolGrad of the Relu's output becomes _DflowMaxPoolGradRelu",
          "[fusion]") {
  std::unique_ptr<Graph> g = Fused(Backward());
  CHECK(g->FindNode("pool_grad") == nullptr);
  const dflow::Node* fused = g->FindNode("relu_grad");
  REQUIRE(fused != nullptr);
  CHECK(fused->op() == "_DflowMaxPoolGradRelu");
  CHECK(fused->assigned_device() == kCpu);
  CHECK(fused->attr("padding")->s() == "VALID");
  CHECK(fused->attr("ksize")->list().i_size() == 4);
  CHECK(InputNames(*g, "relu_grad") == std::vector<std::string>{"relu", "pool", "g", "^x"});
  CHECK(InputNames(*g, "out") == std::vector<std::string>{"relu_grad"});
}

TEST_CASE("Another reader, other features or a GPU keep MaxPoolGrad and ReluGrad apart",
          "[fusion]") {
  SECTION("the pooling gradient read elsewhere") {
    std::unique_ptr<Graph> g =
        Fused(Backward("relu", Node("peek", "Identity", "input: 'pool_grad'")));
    CHECK(g->FindNode("relu_grad")->op() == "ReluGrad");
  }
  SECTION("features that are not the pool's input") {
    std::unique_ptr<Graph> g = Fused(Backward("x"));
    CHECK(g->FindNode("relu_grad")->op() == "ReluGrad");
  }
  SECTION("a GPU") {
    std::unique_ptr<Graph> g = Fused(Backward(), kGpu);
    CHECK(g->FindNode("relu_grad")->op() == "ReluGrad");
  }
}

}  // namespace
}  // namespace dflow
