// The seed document's multi-tower program: the same MatMul built once per device, on
// /cpu:2 and /cpu:3 (the seed used /gpu:2 and /gpu:3), and the towers summed by AddN
// on /cpu:0. Each tower lives in its own sub-scope, so its nodes are tower_0/a, ...
//
//   bazel run //examples:multi_tower
//
// prints sum = [[44 56] [98 128]]. The same graph as a text GraphDef is multi_tower.pbtxt.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "examples/example_util.h"
#include "graph/ops.h"
#include "graph/scope.h"

int main() {
  using namespace dflow;  // NOLINT: a short example program
  Scope root = Scope::NewRootScope();
  std::vector<Output> towers;
  const std::vector<std::string> devices = {"/cpu:2", "/cpu:3"};
  for (size_t i = 0; i < devices.size(); ++i) {
    Scope tower = root.NewSubScope(absl::StrCat("tower_", i)).WithDevice(devices[i]);
    Output a = Const(tower.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Output b = Const(tower.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    towers.push_back(MatMul(tower.WithOpName("c"), a, b));
  }
  Output sum = AddN(root.WithDevice("/cpu:0").WithOpName("sum"), towers);

  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 4;
  config.set_log_device_placement(true);
  return examples::RunAndPrint(root, config, {sum});
}
