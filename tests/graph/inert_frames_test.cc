#include "graph/inert_frames.h"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "graph/graph_def_import.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

std::string Node(const std::string& name, const std::string& op,
                 std::initializer_list<std::string> inputs, const std::string& attrs = "") {
  std::string text = "node { name: '" + name + "' op: '" + op + "'";
  for (const std::string& input : inputs) text += " input: '" + input + "'";
  return text + attrs + " }\n";
}

const std::string kInt = " attr { key: 'T' value { type: DT_INT32 } }";

std::string Const(const std::string& name) {
  return Node(name, "Const", {},
              " attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
              "tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } }");
}

std::string Enter(const std::string& name, const std::string& input, const std::string& frame,
                  bool constant) {
  return Node(name, "Enter", {input},
              kInt + " attr { key: 'frame_name' value { s: '" + frame +
                  "' } } attr { key: 'is_constant' value { b: " +
                  (constant ? "true" : "false") + " } }");
}

// A counting loop "w" over i < limit, where the limit is a constant Enter of "n"; `extra`
// adds nodes inside the loop (they may read w/lim, the loop invariant).
std::string Loop(const std::string& extra) {
  return Const("zero") + Const("n") + Enter("w/ei", "zero", "w", false) +
         Enter("w/lim", "n", "w", true) +
         Node("w/mi", "Merge", {"w/ei", "w/ni"}, kInt + " attr { key: 'N' value { i: 2 } }") +
         Node("w/less", "Less", {"w/mi", "w/lim"}, kInt) + Node("w/cond", "LoopCond", {"w/less"}) +
         Node("w/sw", "Switch", {"w/mi", "w/cond"}, kInt) +
         Node("w/body", "Identity", {"w/sw:1"}, kInt) +
         Node("w/ni", "NextIteration", {"w/body"}, kInt) + Node("w/exit", "Exit", {"w/sw"}, kInt) +
         extra;
}

// Whether the one loop frame of `text` is inert.
bool LoopInert(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(testing::GraphFromText(text));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  absl::StatusOr<ControlFlowInfo> info = BuildControlFlowInfo(**graph);
  REQUIRE(info.ok());
  REQUIRE(info->frames.size() == 2);
  const std::vector<bool> inert = InertFrames(**graph, *info);
  CHECK_FALSE(inert[0]);  // the root frame never is
  return inert[1];
}

TEST_CASE("A loop whose dead loop variables kill everything is inert", "[graph][inert_frames]") {
  CHECK(LoopInert(Loop("")));
  // A pure computation on the invariant alone runs live, but nothing sees it.
  CHECK(LoopInert(Loop(Node("w/twice", "Add", {"w/lim", "w/lim"}, kInt))));
}

TEST_CASE("A loop is not inert when its invariants alone reach something observable",
          "[graph][inert_frames]") {
  // ... an Exit (a live value would leave the frame),
  CHECK_FALSE(LoopInert(Loop(Node("w/exit2", "Exit", {"w/lim"}, kInt))));
  // ... a NextIteration (iteration 1 would start live),
  CHECK_FALSE(LoopInert(Loop(Node("w/ni2", "NextIteration", {"w/lim"}, kInt) +
                             Node("w/m2", "Merge", {"w/lim", "w/ni2"},
                                  kInt + " attr { key: 'N' value { i: 2 } }"))));
  // ... or a stateful op.
  CHECK_FALSE(LoopInert(Loop(
      Node("w/big", "Less", {"w/lim", "w/lim"}, kInt) +
      Node("w/assert", "Assert", {"w/big", "w/lim"},
           " attr { key: 'T' value { list { type: DT_INT32 } } }"))));
  // A stateful op that also needs a loop variable dies with it: still inert.
  CHECK(LoopInert(Loop(Node("w/big", "Less", {"w/lim", "w/body"}, kInt) +
                       Node("w/assert", "Assert", {"w/big", "w/lim"},
                            " attr { key: 'T' value { list { type: DT_INT32 } } }"))));
}

}  // namespace
}  // namespace dflow
