// FuseGradientUpdates: a MatMul read only by a ResourceApplyGradientDescent (directly, or
// through the Identity of TF's gradient tuple) becomes one
// _DflowResourceApplyGradientDescentMatMul named after the update; its control successors
// (the tuple's group_deps) stop waiting for it. Nothing fuses when the product has another
// reader, off the CPU, or in a graph with v1 control flow.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "graph/gradient_update_fusion.h"
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

// x [64,784], dy [64,512]; w -= lr * x^T dy, TF 1's way: the weight gradient wrapped in
// the gradient tuple (group_deps waits for it and for dx; each Identity waits for
// group_deps).
std::string Step(const std::string& delta_reader_extra = "") {
  const std::string placeholder = "attr { key: 'dtype' value { type: DT_FLOAT } }";
  return absl::StrCat(
      Node("x", "Placeholder", "", placeholder), Node("dy", "Placeholder", "", placeholder),
      Node("w", "VarHandleOp", "",
           "attr { key: 'dtype' value { type: DT_FLOAT } } "
           "attr { key: 'shape' value { shape { dim { size: 784 } dim { size: 512 } } } }"),
      Node("lr", "Const", "",
           "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor "
           "{ dtype: DT_FLOAT tensor_shape { } float_val: 0.1 } } }"),
      Node("dw", "MatMul", "input: 'x' input: 'dy'",
           "attr { key: 'T' value { type: DT_FLOAT } } "
           "attr { key: 'transpose_a' value { b: true } }"),
      Node("dx", "MatMul", "input: 'dy' input: 'x'"),
      Node("group_deps", "NoOp", "input: '^dw' input: '^dx'", ""),
      Node("dw_tuple", "Identity", "input: 'dw' input: '^group_deps'"),
      Node("dx_tuple", "Identity", "input: 'dx' input: '^group_deps'"),
      Node("update", "ResourceApplyGradientDescent", "input: 'w' input: 'lr' input: 'dw_tuple'"),
      Node("train", "NoOp", "input: '^update'", ""), delta_reader_extra);
}

std::unique_ptr<Graph> Fused(const std::string& text, const std::string& device = kCpu) {
  return testing::AfterPass(text, device, FuseGradientUpdates);
}

TEST_CASE("A weight-gradient MatMul joins its gradient-descent update", "[fusion]") {
  std::unique_ptr<Graph> g = Fused(Step());
  CHECK(g->FindNode("dw") == nullptr);
  CHECK(g->FindNode("dw_tuple") == nullptr);
  const dflow::Node* update = g->FindNode("update");
  REQUIRE(update != nullptr);
  CHECK(update->op() == "_DflowResourceApplyGradientDescentMatMul");
  CHECK(update->assigned_device() == kCpu);
  CHECK(update->attr("transpose_a")->b());
  CHECK_FALSE(update->attr("transpose_b")->b());
  // The Identity's control input moves to the fused node; group_deps no longer waits for
  // the product, which is gone.
  CHECK(InputNames(*g, "update") ==
        std::vector<std::string>{"w", "lr", "x", "dy", "^group_deps"});
  CHECK(InputNames(*g, "group_deps") == std::vector<std::string>{"^dx"});
  CHECK(InputNames(*g, "train") == std::vector<std::string>{"^update"});
}

TEST_CASE("A MatMul read directly by the update fuses too", "[fusion]") {
  std::string text = Step();
  const std::string tuple = "node { name: 'dw_tuple'";
  const size_t start = text.find(tuple);
  text.erase(start, text.find('\n', start) + 1 - start);  // no gradient tuple for dw
  const std::string tuple_read = "input: 'dw_tuple'";
  text.replace(text.find(tuple_read), tuple_read.size(), "input: 'dw'");
  std::unique_ptr<Graph> g = Fused(text);
  CHECK(g->FindNode("update")->op() == "_DflowResourceApplyGradientDescentMatMul");
  CHECK(g->FindNode("dw") == nullptr);
  CHECK(InputNames(*g, "update") == std::vector<std::string>{"w", "lr", "x", "dy"});
}

TEST_CASE("A gradient read elsewhere, a GPU, or v1 control flow keeps the update apart",
          "[fusion]") {
  SECTION("another reader of the gradient") {
    std::unique_ptr<Graph> g = Fused(Step(Node("summary", "Identity", "input: 'dw_tuple'")));
    CHECK(g->FindNode("update")->op() == "ResourceApplyGradientDescent");
    CHECK(g->FindNode("dw") != nullptr);
  }
  SECTION("another reader of the product") {
    std::unique_ptr<Graph> g = Fused(Step(Node("norm", "Identity", "input: 'dw'")));
    CHECK(g->FindNode("update")->op() == "ResourceApplyGradientDescent");
  }
  SECTION("a GPU") {
    std::unique_ptr<Graph> g = Fused(Step(), kGpu);
    CHECK(g->FindNode("update")->op() == "ResourceApplyGradientDescent");
  }
  SECTION("a Switch anywhere in the graph") {
    std::unique_ptr<Graph> g =
        Fused(Step(Node("pred", "Placeholder", "", "attr { key: 'dtype' value { type: DT_BOOL } }") +
                   Node("switch", "Switch", "input: 'x' input: 'pred'")));
    CHECK(g->FindNode("update")->op() == "ResourceApplyGradientDescent");
  }
}

}  // namespace
}  // namespace dflow
