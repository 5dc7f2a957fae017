// Sparse updates (graph/train/sparse_gradient.h): an embedding table read through
// ResourceGather is updated row by row, as TF 1's sparse paths do. Where the sparse and
// dense rules agree (GradientDescent, Momentum, Adam, Adagrad, Adadelta on these steps)
// the table matches a dense twin read through ReadVariableOp + GatherV2; RMSProp and FTRL
// leave untouched rows alone, as TF's ResourceSparseApply* do.
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

TEST_CASE("RMSProp and FTRL update the rows read and leave the others as they were") {
  std::vector<std::unique_ptr<Optimizer>> optimizers;
  optimizers.push_back(std::make_unique<RMSPropOptimizer>(0.01, 0.9, 0.5));
  optimizers.push_back(std::make_unique<RMSPropOptimizer>(0.01, 0.9, 0.5, 1e-10, true));
  optimizers.push_back(std::make_unique<FtrlOptimizer>(0.1));
  FtrlOptions shrink;
  shrink.l2_shrinkage_regularization_strength = 0.1;
  optimizers.push_back(std::make_unique<FtrlOptimizer>(0.1, shrink));
  const std::vector<std::string> sparse_ops = {
      "ResourceSparseApplyRMSProp", "ResourceSparseApplyCenteredRMSProp",
      "ResourceSparseApplyFtrl", "ResourceSparseApplyFtrlV2"};
  for (size_t k = 0; k < optimizers.size(); ++k) {
    INFO(sparse_ops[k]);
    std::vector<std::string> ops;
    std::vector<double> table = TrainTable(true, *optimizers[k], &ops);
    CHECK(Has(ops, sparse_ops[k]));
    CHECK(table[0] == 0.1);  // row 0 never read
    CHECK(table[1] == 0.2);
    CHECK(table[4] == 0.5);  // row 2 never read
    CHECK(table[5] == 0.6);
    CHECK(table[2] != 0.3);  // row 1 read twice
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
