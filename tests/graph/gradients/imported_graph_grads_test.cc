// AddSymbolicGradients on graphs TensorFlow 2.21 wrote (tests/data/tf2_21/cpp_gradients.py):
// imported into a Scope (Scope::NewRootScope(graph)), differentiated from C++ through
// TF's own v1 loop and cond layout (pivots, switches of captured tensors, frame names)
// and its TF 1 TensorArrays, and compared with TF's tf.gradients of the same loss.
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "graph/graph_def_import.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/proto_io.h"
#include "graph/scope.h"
#include "session/client_session.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {
namespace {

struct Golden {
  std::string name;
  std::vector<int64_t> x_shape;
  std::vector<double> x;
  double loss;
  std::vector<double> dx, dw;  // TF's gradients (cpp_gradients/<name>.json)
};

const std::vector<double> kX = {0.3, -0.7, 0.9};

TEST_CASE("Gradients of TF-written loops: a cond inside, loops nested, TensorArrays") {
  const std::vector<Golden> goldens = {
      {"loop_cond", {3}, kX, 0.05298121161842277,
       {0.44719296414250176, -0.05214039938113152, -0.0010597102770039605},
       {0.33560034408027406, 0.14799371005672282, 0.0057636545085048806}},
      {"nested_loops", {3}, kX, -1.2142497865348019,
       {4.2789850693700675, 2.7850255183632457, 0.02376122654915005},
       {1.2760095412184311, -2.1275263147146077, 0.21064955576479705}},
      // TensorArrayScatterV3 / ReadV3 / WriteV3 / GatherV3 through the loop.
      {"tensor_array_rnn",
       {4, 3},
       {0.3, -0.7, 0.9, 0.1, 0.2, -0.4, -0.6, 0.5, 0.05, 0.8, -0.1, 0.35},
       2.3639117277125403,
       {5.385739752326475, 2.4939782611706383, 0.4177730122366471, 4.070977876339265,
        3.5364201724040116, 0.6840085584487067, 3.0422883300628563, 3.0354185119371913,
        0.6829714177407501, 1.2244417250683615, 1.972569942782018, 2.0383770709727984},
       {2.3534728807971472, -2.4388217929765554, 0.7744177021495915}},
  };
  for (const Golden& golden : goldens) {
    INFO(golden.name);
    auto def = ReadGraphDef("tests/data/tf2_21/cpp_gradients/" + golden.name + ".pbtxt");
    REQUIRE(def.ok());
    auto graph = ImportGraphDef(*def);
    INFO(graph.status().ToString());
    REQUIRE(graph.ok());
    Scope root = Scope::NewRootScope(*std::move(graph));
    auto tensor = [&](const char* name) {
      Node* node = root.graph()->FindNode(name);
      REQUIRE(node != nullptr);
      return Output(node, 0);
    };
    const Output x = tensor("x"), w = tensor("w"), loss = tensor("loss");
    std::vector<Output> grads;
    absl::Status status = AddSymbolicGradients(root, {loss}, {x, w}, &grads);
    INFO(status.ToString());
    REQUIRE(status.ok());
    auto session = ClientSession::Create(root);
    REQUIRE(session.ok());
    std::vector<Tensor> out;
    status = (*session)->Run({{x, MakeTensor(DT_DOUBLE, golden.x_shape, golden.x)},
                              {w, MakeTensor(DT_DOUBLE, {3}, {1.2, 0.8, -0.5})}},
                             {loss, grads[0], grads[1]}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    CHECK(ToDoubles(out[0])[0] == Approx(golden.loss).epsilon(1e-12));
    const std::vector<double> dx = ToDoubles(out[1]), dw = ToDoubles(out[2]);
    REQUIRE(dx.size() == golden.dx.size());
    for (size_t i = 0; i < dx.size(); ++i) CHECK(dx[i] == Approx(golden.dx[i]).epsilon(1e-9));
    for (int i = 0; i < 3; ++i) CHECK(dw[i] == Approx(golden.dw[i]).epsilon(1e-9));
  }
}

}  // namespace
}  // namespace dflow::testing
