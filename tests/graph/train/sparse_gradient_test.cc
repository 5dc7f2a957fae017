// Sparse updates (graph/train/sparse_gradient.h): an embedding table read through
// ResourceGather is updated row by row, as TF 1's sparse paths do. Where the sparse and
// dense rules agree (GradientDescent, Momentum, Adam, Adagrad, Adadelta on these steps)
// the table matches a dense twin read through ReadVariableOp + GatherV2; every
// optimizer's table matches TF 2.21's (sparse_optimizer_goldens.py).
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "graph/train/initializers.h"
#include "graph/train/optimizers.h"
#include "graph/train/sparse_gradient.h"
#include "graph/train/variable.h"
#include "session/client_session.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {
namespace {

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>()>;

// loss = sum(table[ids] * [1, 2]) (+ a tiny square to make Adam's steps differ per row);
// `sparse`: read through ResourceGather, else the whole table then GatherV2.
struct Embedding {
  Scope root = Scope::NewRootScope();
  Variable table;
  Output ids;
  Output loss;
  explicit Embedding(bool sparse) {
    table = Variable::Create(root.WithOpName("table"),
                             {{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}, {0.7, 0.8}});
    ids = Placeholder(root.WithOpName("ids"), DT_INT32);
    Output rows = sparse ? AddOp(root, "ResourceGather", {table.handle(), ids},
                                 {{"dtype", TypeAttr(DT_DOUBLE)}})
                               .output(0)
                         : GatherV2(root, table.Read(root), ids, 0);
    loss = Add(root, Sum(root, Mul(root, rows, {{1.0, 2.0}}), {0, 1}),
               Sum(root, Square(root, rows), {0, 1}));
  }
};

// The table after training on ids {1, 1} then {1, 3}; `ops` gets the graph's op types.
std::vector<double> TrainTable(bool sparse, Optimizer& opt, std::vector<std::string>* ops) {
  Embedding e(sparse);
  absl::StatusOr<Operation> train = opt.Minimize(e.root, e.loss, {e.table});
  INFO(train.status().ToString());
  REQUIRE(train.ok());
  Operation init = InitializeVariables(e.root, opt.AllVariables({e.table}));
  auto session = ClientSession::Create(e.root);
  REQUIRE(session.ok());
  REQUIRE((*session)->Run({}, {}, {init}, nullptr).ok());
  for (const std::vector<double>& ids : {std::vector<double>{1, 1}, {1, 3}}) {
    absl::Status status = (*session)->Run(
        {{e.ids, MakeTensor(DT_INT32, {2}, ids)}}, {}, {*train}, nullptr);
    INFO(status.ToString());
    REQUIRE(status.ok());
  }
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({e.table.Read(e.root)}, &out).ok());
  if (ops != nullptr) {
    for (const Node* node : e.root.graph()->nodes()) ops->push_back(node->op());
  }
  return ToDoubles(out[0]);
}

bool Has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

TEST_CASE("Where sparse and dense rules agree, the sparse path gives the dense table") {
  struct Case {
    std::string name;
    MakeOptimizer make;
    std::string sparse_op;
  };
  const std::vector<Case> cases = {
      {"sgd", [] { return std::make_unique<GradientDescentOptimizer>(0.1); },
       "ResourceScatterAdd"},
      {"momentum", [] { return std::make_unique<MomentumOptimizer>(0.1, 0.9); },
       "ResourceSparseApplyMomentum"},
      {"nesterov", [] { return std::make_unique<MomentumOptimizer>(0.1, 0.9, true); },
       "ResourceSparseApplyMomentum"},
      {"adam", [] { return std::make_unique<AdamOptimizer>(0.1); }, "ResourceScatterAdd"},
      {"adagrad", [] { return std::make_unique<AdagradOptimizer>(0.1); },
       "ResourceSparseApplyAdagrad"},
      {"adadelta", [] { return std::make_unique<AdadeltaOptimizer>(1.0); },
       "ResourceSparseApplyAdadelta"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<std::string> ops;
    std::unique_ptr<Optimizer> sparse_opt = c.make(), dense_opt = c.make();
    std::vector<double> sparse = TrainTable(true, *sparse_opt, &ops);
    std::vector<double> dense = TrainTable(false, *dense_opt, nullptr);
    CHECK(Has(ops, c.sparse_op));
    REQUIRE(sparse.size() == dense.size());
    for (size_t i = 0; i < sparse.size(); ++i) CHECK(sparse[i] == Approx(dense[i]).epsilon(1e-9));
    CHECK(sparse[2] != Approx(0.3));  // row 1 moved
  }
}

TEST_CASE("Every optimizer's sparse path gives TF 2.21's table") {
  // sparse_optimizer_goldens.py: the same model in tf.compat.v1 (TF's hyperparameters are
  // float32 tensors cast to float64, hence the tolerance).
  struct Case {
    std::string name;
    MakeOptimizer make;
    std::vector<double> tf;
  };
  FtrlOptions shrink;
  shrink.l2_shrinkage_regularization_strength = 0.1;
  const std::vector<Case> cases = {
      {"rmsprop", [] { return std::make_unique<RMSPropOptimizer>(0.01, 0.9, 0.5); },
       {0.1, 0.2, 0.254332776054042, 0.34508341612742344, 0.5, 0.6, 0.680245409268676,
        0.7757067122154138}},
      {"rmsprop centered",
       [] { return std::make_unique<RMSPropOptimizer>(0.01, 0.9, 0.5, 1e-10, true); },
       {0.1, 0.2, 0.25278604938729216, 0.34235647514809087, 0.5, 0.6, 0.6798482921878093,
        0.774956485779918}},
      {"ftrl", [] { return std::make_unique<FtrlOptimizer>(0.1); },
       {0.1, 0.2, 0.1324683126265101, 0.23615029800254408, 0.5, 0.6, 0.5094141721022057,
        0.6303803011106213}},
      {"ftrl l2 shrinkage", [&] { return std::make_unique<FtrlOptimizer>(0.1, shrink); },
       {0.1, 0.2, 0.12972256104616786, 0.2338659876616278, 0.5, 0.6, 0.5036308252364445,
        0.6259529047153748}},
      {"adam", [] { return std::make_unique<AdamOptimizer>(0.1); },
       {0.1, 0.2, 0.10877845270923878, 0.20788148982687288, 0.5, 0.6, 0.6255865784090799,
        0.7255865751407828}},
      {"momentum", [] { return std::make_unique<MomentumOptimizer>(0.1, 0.9); },
       {0.1, 0.2, -0.4040000019073485, -0.8320000033378598, 0.5, 0.6, 0.45999999642372125,
        0.439999994635582}},
      {"adagrad", [] { return std::make_unique<AdagradOptimizer>(0.1); },
       {0.1, 0.2, 0.1605428814087287, 0.2580988168653563, 0.5, 0.6, 0.6008569123500096,
        0.7003835825913524}},
      {"adadelta", [] { return std::make_unique<AdadeltaOptimizer>(1.0); },
       {0.1, 0.2, 0.2992642391435021, 0.3992641843710174, 0.5, 0.6, 0.6995527864669351,
        0.7995527864626217}},
      {"sgd", [] { return std::make_unique<GradientDescentOptimizer>(0.1); },
       {0.1, 0.2, -0.11600000524520875, -0.3280000091791152, 0.5, 0.6, 0.45999999642372125,
        0.439999994635582}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::unique_ptr<Optimizer> opt = c.make();
    std::vector<double> table = TrainTable(true, *opt, nullptr);
    REQUIRE(table.size() == c.tf.size());
    // Adam's beta2 = 0.999 as float32 moves sqrt(1 - beta2^t) by ~6e-6 relative.
    const double tolerance = c.name == "adam" ? 1e-5 : 1e-6;
    for (size_t i = 0; i < table.size(); ++i) {
      CHECK(table[i] == Approx(c.tf[i]).epsilon(tolerance));
    }
  }
}

TEST_CASE("Only gradients made of ResourceGather rows are sparse") {
  Embedding sparse(true);
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(sparse.root, {sparse.loss}, {sparse.table.handle()}, &grads)
              .ok());
  std::optional<SparseGradient> found =
      FindSparseGradient(sparse.root, grads[0], sparse.table);
  REQUIRE(found.has_value());
  CHECK(found->dense == grads[0]);
  Embedding dense(false);
  REQUIRE(AddSymbolicGradients(dense.root, {dense.loss}, {dense.table.handle()}, &grads).ok());
  CHECK(!FindSparseGradient(dense.root, grads[0], dense.table).has_value());
}

}  // namespace
}  // namespace dflow::testing
