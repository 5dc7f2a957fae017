// The seed document's first program: a MatMul of two constants, run with
// log_device_placement so the session says where every node went (on stderr).
//
//   bazel run //examples:seed_matmul
//
// prints c = [[22 28] [49 64]]. The same graph as a text GraphDef is seed_matmul.pbtxt.
#include <iostream>
#include <vector>

#include "absl/status/status.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "session/client_session.h"
#include "tools/tensor_printer.h"

namespace {

int Fail(const absl::Status& status) {
  std::cerr << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
  return 1;
}

}  // namespace

int main() {
  using namespace dflow;  // NOLINT: a short example program
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(root.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Output c = MatMul(root.WithOpName("c"), a, b);
  if (!root.ok()) return Fail(root.status());

  ConfigProto config;
  config.set_log_device_placement(true);
  absl::StatusOr<std::unique_ptr<ClientSession>> session = ClientSession::Create(root, config);
  if (!session.ok()) return Fail(session.status());
  std::vector<Tensor> outputs;
  absl::Status status = (*session)->Run({c}, &outputs);
  if (!status.ok()) return Fail(status);
  std::cout << OutputsText({c.name()}, outputs);
  return 0;
}
