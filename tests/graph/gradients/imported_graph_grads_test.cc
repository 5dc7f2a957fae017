// AddSymbolicGradients on graphs TensorFlow 2.21 wrote (tests/data/tf2_21/cpp_gradients.py):
// imported into a Scope (Scope::NewRootScope(graph)), differentiated from C++ through
// TF's own v1 loop and cond layout (pivots, switches of captured tensors, frame names),
// and compared with TF's tf.gradients of the same loss.
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
  double loss;
  std::vector<double> dx, dw;  // TF's gradients (cpp_gradients/<name>.json)
};

TEST_CASE("Gradients of TF-written loops with a cond inside and loops nested in loops") {
  const std::vector<Golden> goldens = {
      {"loop_cond", 0.05298121161842277,
       {0.44719296414250176, -0.05214039938113152, -0.0010597102770039605},
       {0.33560034408027406, 0.14799371005672282, 0.0057636545085048806}},
      {"nested_loops", -1.2142497865348019,
       {4.2789850693700675, 2.7850255183632457, 0.02376122654915005},
       {1.2760095412184311, -2.1275263147146077, 0.21064955576479705}},
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
    status = (*session)->Run({{x, MakeTensor(DT_DOUBLE, {3}, {0.3, -0.7, 0.9})},
                              {w, MakeTensor(DT_DOUBLE, {3}, {1.2, 0.8, -0.5})}},
                             {loss, grads[0], grads[1]}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    CHECK(ToDoubles(out[0])[0] == Approx(golden.loss).epsilon(1e-12));
    for (int i = 0; i < 3; ++i) {
      CHECK(ToDoubles(out[1])[i] == Approx(golden.dx[i]).epsilon(1e-9));
      CHECK(ToDoubles(out[2])[i] == Approx(golden.dw[i]).epsilon(1e-9));
    }
  }
}

}  // namespace
}  // namespace dflow::testing
