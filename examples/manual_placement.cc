// The seed document's manual placement: the constants are pinned to /cpu:0 and the
// MatMul to /cpu:1 (the seed used a GPU; a second CPU device shows the same mechanics,
// including the copy of a and b between devices, on any machine).
//
//   bazel run //examples:manual_placement
//
// prints c = [[22 28] [49 64]]; stderr shows c placed on CPU:1. The same graph as a text
// GraphDef is manual_placement.pbtxt (`dflow place --explain` lists its two copies).
#include "examples/example_util.h"
#include "graph/ops.h"
#include "graph/scope.h"

int main() {
  using namespace dflow;  // NOLINT: a short example program
  Scope root = Scope::NewRootScope();
  Scope on_cpu0 = root.WithDevice("/cpu:0");
  Output a = Const(on_cpu0.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(on_cpu0.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Output c = MatMul(root.WithDevice("/cpu:1").WithOpName("c"), a, b);

  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  config.set_log_device_placement(true);
  return examples::RunAndPrint(root, config, {c});
}
