// A program outside dflow's tree, built against dflow the ways another project would:
// with Bazel (WORKSPACE, BUILD), with CMake (CMakeLists.txt) and with pkg-config
// (Makefile). `.ci/run` builds and runs it all three ways (tools/check_consumers.sh).
//
//   hello_dflow [FROZEN_ADDITION.pb]
//
// It fits y = 3x + 1 by gradient descent with the variables on /cpu:0 and the loss on
// /cpu:1, and, given the path of tests/data/tf_graphs/frozen_pb/rust_addition_int32.pb,
// runs that frozen TensorFlow graph fed from std::vector. Exit status 0 means every
// answer was right.
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "dflow.h"

namespace {

using dflow::Output;
using dflow::Scope;

// Fits w and b of y = w·x + b to points of y = 3x + 1 on two CPU devices.
absl::Status FitLine() {
  Scope root = Scope::NewRootScope();
  Scope params = root.WithDevice("/cpu:0");
  dflow::Variable w = dflow::Variable::Create(params.WithOpName("w"), 0.f);
  dflow::Variable b = dflow::Variable::Create(params.WithOpName("b"), 0.f);
  Scope model = root.WithDevice("/cpu:1");
  Output x = dflow::Placeholder(model.WithOpName("x"), dflow::DT_FLOAT);
  Output y = dflow::Placeholder(model.WithOpName("y"), dflow::DT_FLOAT);
  Output predicted = dflow::Add(model, dflow::Mul(model, x, w.value()), b.value());
  Output loss = dflow::Mean(model.WithOpName("loss"),
                            dflow::Square(model, dflow::Sub(model, predicted, y)), {0});
  dflow::GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<dflow::Operation> step = sgd.Minimize(model, loss, {w, b});
  if (!step.ok()) return step.status();
  dflow::Operation init = dflow::InitializeVariables(root, sgd.AllVariables({w, b}));
  if (!root.status().ok()) return root.status();

  dflow::ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  absl::StatusOr<std::unique_ptr<dflow::ClientSession>> session =
      dflow::ClientSession::Create(root, config);
  if (!session.ok()) return session.status();
  if (absl::Status s = (*session)->Run({}, {}, {init}, nullptr); !s.ok()) return s;

  absl::StatusOr<dflow::Tensor> xs = dflow::TensorFromValues<float>({4}, {-1, 0, 1, 2});
  absl::StatusOr<dflow::Tensor> ys = dflow::TensorFromValues<float>({4}, {-2, 1, 4, 7});
  if (!xs.ok() || !ys.ok()) return xs.ok() ? ys.status() : xs.status();
  std::vector<dflow::Tensor> fetched;
  for (int i = 0; i < 300; ++i) {
    absl::Status ran = (*session)->Run({{x, *xs}, {y, *ys}}, {loss}, {*step}, &fetched);
    if (!ran.ok()) return ran;
  }
  if (absl::Status s = (*session)->Run({w.value(), b.value()}, &fetched); !s.ok()) return s;
  const float w_value = (*dflow::TensorValues<float>(fetched[0]))[0];
  const float b_value = (*dflow::TensorValues<float>(fetched[1]))[0];
  std::cout << "fitted y = " << w_value << "x + " << b_value << "\n";
  if (std::abs(w_value - 3) > 1e-3 || std::abs(b_value - 1) > 1e-3) {
    return absl::InternalError("the fit did not reach y = 3x + 1");
  }
  return absl::OkStatus();
}

// Runs a frozen graph z = x + y (int32 scalars) from disk.
absl::Status AddWithFrozenGraph(const std::string& path) {
  absl::StatusOr<dflow::GraphDef> graph = dflow::ReadGraphDef(path);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<std::unique_ptr<dflow::Session>> session = dflow::NewSession({});
  if (!session.ok()) return session.status();
  if (absl::Status created = (*session)->Create(*graph); !created.ok()) return created;
  std::vector<dflow::Tensor> outputs;
  absl::Status ran = (*session)->Run({{"x", *dflow::TensorFromValues<int32_t>({}, {2})},
                                      {"y", *dflow::TensorFromValues<int32_t>({}, {3})}},
                                     {"z"}, {}, &outputs);
  if (!ran.ok()) return ran;
  const int32_t z = (*dflow::TensorValues<int32_t>(outputs[0]))[0];
  std::cout << "frozen graph: 2 + 3 = " << z << "\n";
  return z == 5 ? absl::OkStatus() : absl::InternalError("the frozen graph's sum is wrong");
}

}  // namespace

int main(int argc, char** argv) {
  absl::Status status = FitLine();
  if (status.ok() && argc > 1) status = AddWithFrozenGraph(argv[1]);
  if (!status.ok()) {
    std::cerr << "hello_dflow: " << status << "\n";
    return 1;
  }
  return 0;
}
