// The seed document's first program: a MatMul of two constants, run with
// log_device_placement so the session says where every node went (on stderr).
//
//   bazel run //examples:seed_matmul
//
// prints c = [[22 28] [49 64]]. The same graph as a text GraphDef is seed_matmul.pbtxt.
#include "examples/example_util.h"
#include "graph/ops.h"
#include "graph/scope.h"

int main() {
  using namespace dflow;  // NOLINT: a short example program
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(root.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Output c = MatMul(root.WithOpName("c"), a, b);

  ConfigProto config;
  config.set_log_device_placement(true);
  return examples::RunAndPrint(root, config, {c});
}
