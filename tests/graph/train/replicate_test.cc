// graph/train/replicate.h: which nodes a tower copies, where they go, how the updates'
// gradients are averaged, and the graphs it refuses.
#include "graph/train/replicate.h"

#include <functional>
#include <set>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "graph/nn_ops.h"
#include "graph/ops.h"
#include "graph/train/optimizers.h"
#include "graph/train/variable.h"

namespace dflow {
namespace {

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// y = x * w, loss = mean(y^2); SGD on w. `batch` -1 for any batch size.
GraphDef Model(int64_t batch = -1) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {{1.0f}, {2.0f}});
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, PartialShape({batch, 2}));
  Output y = MatMul(root.WithOpName("y"), x, w.value());
  Output loss = Mean(root.WithOpName("loss"), Square(root, y), {0, 1});
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Operation> train = sgd.Minimize(root, loss, {w});
  REQUIRE(train.ok());
  NoOp(root.WithOpName("train").WithControlDependencies(*train));
  GraphDef g;
  REQUIRE(root.ToGraphDef(&g).ok());
  return g;
}

TEST_CASE("Towers copy the data-dependent nodes and average the gradients") {
  GraphDef g = Model();
  absl::StatusOr<ReplicatedGraph> r =
      ReplicateForTowers(g, {"x:0"}, "loss:0", "train", {"/cpu:0", "/cpu:1"});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  // Forward, loss and backward are copied; the variable, its read and the update not.
  CHECK(Find(r->graph, "tower_1/x") != nullptr);
  CHECK(Find(r->graph, "tower_1/y") != nullptr);
  CHECK(Find(r->graph, "tower_1/loss") != nullptr);
  CHECK(Find(r->graph, "tower_1/w") == nullptr);
  CHECK(Find(r->graph, "tower_1/w/Read") == nullptr);
  CHECK(Find(r->graph, "tower_1/x")->device() == "/cpu:1");
  CHECK(Find(r->graph, "y")->device() == "/cpu:0");
  // tower_1/y reads the shared variable and its own input.
  const NodeDef* y1 = Find(r->graph, "tower_1/y");
  CHECK(y1->input(0) == "tower_1/x");
  CHECK(y1->input(1) == "w/Read");
  // The update takes the towers' weighted mean: AddN of weight_t * gradient_t.
  const NodeDef* update = nullptr;
  for (const NodeDef& n : r->graph.node()) {
    if (n.op() == "ResourceApplyGradientDescent") update = &n;
  }
  REQUIRE(update != nullptr);
  const NodeDef* mean = Find(r->graph, update->input(2));
  REQUIRE(mean != nullptr);
  CHECK(mean->op() == "AddN");
  REQUIRE(mean->input_size() == 2);
  const NodeDef* term1 = Find(r->graph, mean->input(1));
  REQUIRE(term1 != nullptr);
  CHECK(term1->op() == "Mul");
  CHECK(absl::StartsWith(term1->input(0), "tower_1/"));
  CHECK(term1->input(1) == "dflow_towers/weight_1");
  CHECK(r->tower_weights == std::vector<std::string>{"dflow_towers/weight_0",
                                                     "dflow_towers/weight_1"});
  CHECK(r->loss == "dflow_towers/loss/mean:0");
  CHECK(r->data_tensors ==
        std::vector<std::vector<std::string>>{{"x:0"}, {"tower_1/x:0"}});
  CHECK(r->replicated_nodes > 5);
}

TEST_CASE("A variable written from the data (a moving average) is updated by tower 0 only") {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {{1.0f}, {2.0f}});
  Variable moving = Variable::Create(root.WithOpName("moving"), 0.0f, /*trainable=*/false);
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, PartialShape({-1, 2}));
  Operation update = AddOp(root.WithOpName("update_moving"), "AssignSubVariableOp",
                           {moving.handle(), Mul(root, Sub(root, moving.value(),
                                                           Mean(root, x, {0, 1})), 0.1f)});
  Scope after = root.WithControlDependencies(update);
  Output loss = Mean(after.WithOpName("loss"), Square(after, MatMul(after, x, w.value())),
                     {0, 1});
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Operation> train = sgd.Minimize(root, loss, {w});
  REQUIRE(train.ok());
  NoOp(root.WithOpName("train").WithControlDependencies({*train, update}));
  GraphDef g;
  REQUIRE(root.ToGraphDef(&g).ok());
  absl::StatusOr<ReplicatedGraph> r =
      ReplicateForTowers(g, {"x:0"}, "loss:0", "train", {"/cpu:0", "/cpu:1"});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(Find(r->graph, "update_moving") != nullptr);
  CHECK(Find(r->graph, "tower_1/update_moving") == nullptr);
  // tower 1's loss waits for the one update instead of a copy of it.
  const NodeDef* loss1 = Find(r->graph, "tower_1/loss");
  REQUIRE(loss1 != nullptr);
  bool waits = false;
  for (const std::string& in : loss1->input()) waits |= in == "^update_moving";
  CHECK(waits);
}

// rows = table[ids]; loss = sum(rows^2); the table's sparse gradient 2 * rows at ids,
// applied by ResourceSparseApplyMomentum, or (`scatter`) scattered into a slot as Adam's
// sparse path does.
GraphDef SparseModel(bool scatter) {
  Scope root = Scope::NewRootScope();
  Variable table = Variable::Create(root.WithOpName("table"), {{1.0f, 2.0f}, {3.0f, 4.0f}});
  Variable accum = Variable::Create(root.WithOpName("accum"), {{0.0f, 0.0f}, {0.0f, 0.0f}});
  Output ids = Placeholder(root.WithOpName("ids"), DT_INT32, PartialShape({-1}));
  Output rows = AddOp(root.WithOpName("rows"), "ResourceGather", {table.handle(), ids},
                      {{"dtype", TypeAttr(DT_FLOAT)}}).output(0);
  Output loss = Sum(root.WithOpName("loss"), Square(root, rows), {0, 1});
  Output grad = Mul(root.WithOpName("grad"), rows, 2.0f);
  Operation update =
      scatter ? AddOp(root.WithOpName("scatter"), "ResourceScatterAdd", {accum.handle(), ids, grad})
              : AddOp(root.WithOpName("update"), "ResourceSparseApplyMomentum",
                      {table.handle(), accum.handle(), Input(0.1f), grad, ids, Input(0.9f)});
  Operation dense = AddOp(root.WithOpName("dense"), "ResourceApplyGradientDescent",
                          {accum.handle(), Input(0.1f), Mul(root, loss, Const(root, {{0.f, 0.f}, {0.f, 0.f}}))});
  NoOp(root.WithOpName("train").WithControlDependencies({update, dense}));
  GraphDef g;
  REQUIRE(root.ToGraphDef(&g).ok());
  return g;
}

TEST_CASE("A sparse update takes the towers' rows concatenated, repeated indices summed") {
  absl::StatusOr<ReplicatedGraph> r = ReplicateForTowers(SparseModel(false), {"ids:0"}, "loss:0",
                                                         "train", {"/cpu:0", "/cpu:1"});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  const NodeDef* update = Find(r->graph, "update");
  REQUIRE(update != nullptr);
  const NodeDef* sum = Find(r->graph, update->input(3));
  REQUIRE(sum != nullptr);
  CHECK(sum->op() == "UnsortedSegmentSum");
  CHECK(update->input(4) == "dflow_towers/update/unique");
  const NodeDef* rows = Find(r->graph, sum->input(0));
  REQUIRE(rows != nullptr);
  CHECK(rows->op() == "ConcatV2");
  CHECK(Find(r->graph, rows->input(1))->op() == "Mul");  // tower 1's rows, weighted
  const NodeDef* indices = Find(r->graph, "dflow_towers/update/indices");
  REQUIRE(indices != nullptr);
  CHECK(indices->input(0) == "ids:0");
  CHECK(indices->input(1) == "tower_1/ids:0");
}

TEST_CASE("State written from one tower's tensors outside an update is refused") {
  absl::StatusOr<ReplicatedGraph> r = ReplicateForTowers(SparseModel(true), {"ids:0"}, "loss:0",
                                                         "train", {"/cpu:0", "/cpu:1"});
  REQUIRE(!r.ok());
  INFO(r.status().message());
  CHECK(absl::StrContains(r.status().message(),
                          "'scatter' (ResourceScatterAdd) writes state from 'ids'"));
}

// A table read by ResourceGather at fed "ids", loss = sum(rows^2), a dense update of the
// table that moves nothing, and `slot_update` writing a second variable "slot" from the
// rows outside any update op; "train" runs both.
GraphDef TableAndSlot(const std::function<Operation(const Scope&, const Output& ids,
                                                    const Output& rows, const Variable& slot)>&
                          slot_update) {
  Scope root = Scope::NewRootScope();
  Variable table = Variable::Create(root.WithOpName("table"), {{1.0f, 2.0f}, {3.0f, 4.0f}});
  Variable slot = Variable::Create(root.WithOpName("slot"), {{0.0f, 0.0f}, {0.0f, 0.0f}});
  Output ids = Placeholder(root.WithOpName("ids"), DT_INT32, PartialShape({-1}));
  Output rows = AddOp(root.WithOpName("rows"), "ResourceGather", {table.handle(), ids},
                      {{"dtype", TypeAttr(DT_FLOAT)}}).output(0);
  Output loss = Sum(root.WithOpName("loss"), Square(root, rows), {0, 1});
  Operation scatter = slot_update(root, ids, rows, slot);
  Output no_step = Mul(root, loss, Const(root, {{0.f, 0.f}, {0.f, 0.f}}));
  Operation dense = AddOp(root.WithOpName("dense"), "ResourceApplyGradientDescent",
                          {table.handle(), Input(0.1f), no_step});
  NoOp(root.WithOpName("train").WithControlDependencies({scatter, dense}));
  GraphDef g;
  REQUIRE(root.ToGraphDef(&g).ok());
  return g;
}

TEST_CASE("State written from one tower's tensors through nodes outside R is refused too") {
  // The scatter reads a scaled copy of the rows: the Mul is outside R (no update needs
  // it), but its data is tower 0's.
  GraphDef g = TableAndSlot([](const Scope& root, const Output&, const Output& rows,
                               const Variable& slot) {
    Output scaled = Mul(root.WithOpName("scaled"), rows, 0.5f);
    return AddOp(root.WithOpName("scatter"), "ResourceScatterAdd",
                 {slot.handle(), Placeholder(root, DT_INT32), scaled});
  });
  absl::StatusOr<ReplicatedGraph> r =
      ReplicateForTowers(g, {"ids:0"}, "loss:0", "train", {"/cpu:0", "/cpu:1"});
  REQUIRE(!r.ok());
  INFO(r.status().message());
  CHECK(absl::StrContains(r.status().message(),
                          "'scatter' (ResourceScatterAdd) writes state from 'rows'"));
}

TEST_CASE("A variable assign outside R, grouped by the train op, keeps tower 0's data") {
  // A moving average the loss does not wait for (train = group(update, moving)): TF 1's
  // multi-tower example keeps the first tower's update ops, and so do towers here.
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {1.0f, 2.0f});
  Variable moving = Variable::Create(root.WithOpName("moving"), {0.0f, 0.0f});
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, PartialShape({-1, 2}));
  Output y = Mul(root.WithOpName("y"), x, w.Read(root));
  Output loss = Sum(root.WithOpName("loss"), y, {0, 1});
  Output mean = Mean(root.WithOpName("mean"), y, {0});
  Operation average = AddOp(root.WithOpName("average"), "AssignSubVariableOp",
                            {moving.handle(), Mul(root, Sub(root, moving.Read(root), mean),
                                                  0.1f)});
  Operation update = AddOp(root.WithOpName("update"), "ResourceApplyGradientDescent",
                           {w.handle(), Input(0.1f), Sum(root.WithOpName("grad"), x, {0})});
  NoOp(root.WithOpName("train").WithControlDependencies({update, average}));
  GraphDef g;
  REQUIRE(root.ToGraphDef(&g).ok());
  absl::StatusOr<ReplicatedGraph> r =
      ReplicateForTowers(g, {"x:0"}, "loss:0", "train", {"/cpu:0", "/cpu:1"});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(Find(r->graph, "tower_1/mean") == nullptr);  // outside R: tower 0's alone
}

TEST_CASE("An optimizer's own merge of a sparse gradient takes every tower's rows") {
  // Adam's sparse path: Unique(ids), UnsortedSegmentSum(grad, unique:1), scattered into a
  // slot outside any update op.
  GraphDef g = TableAndSlot([](const Scope& root, const Output& ids, const Output& rows,
                               const Variable& slot) {
    Output grad = Mul(root.WithOpName("grad"), rows, 2.0f);
    Operation unique = AddOp(root.WithOpName("unique"), "Unique", {ids},
                             {{"out_idx", TypeAttr(DT_INT32)}});
    Output count = AddOp(root.WithOpName("count"), "Size", {unique.output(0)},
                         {{"out_type", TypeAttr(DT_INT32)}}).output(0);
    Output summed = AddOp(root.WithOpName("summed"), "UnsortedSegmentSum",
                          {grad, unique.output(1), count}).output(0);
    return AddOp(root.WithOpName("scatter"), "ResourceScatterAdd",
                 {slot.handle(), unique.output(0), summed});
  });
  absl::StatusOr<ReplicatedGraph> r =
      ReplicateForTowers(g, {"ids:0"}, "loss:0", "train", {"/cpu:0", "/cpu:1"});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(Find(r->graph, "tower_1/grad") != nullptr);   // each tower computes its rows
  CHECK(Find(r->graph, "tower_1/unique") == nullptr);  // one merge, of all of them
  const NodeDef* merged_ids = Find(r->graph, Find(r->graph, "unique")->input(0));
  REQUIRE(merged_ids != nullptr);
  CHECK(merged_ids->op() == "ConcatV2");
  CHECK(merged_ids->input(0) == "ids:0");
  CHECK(merged_ids->input(1) == "tower_1/ids:0");
  const NodeDef* merged_rows = Find(r->graph, Find(r->graph, "summed")->input(0));
  REQUIRE(merged_rows != nullptr);
  CHECK(merged_rows->op() == "ConcatV2");
  const NodeDef* tower1_term = Find(r->graph, merged_rows->input(1));
  REQUIRE(tower1_term != nullptr);
  CHECK(tower1_term->op() == "Mul");  // weighted
  CHECK(tower1_term->input(0) == "tower_1/grad:0");
}

TEST_CASE("Graphs towers cannot split are refused with the reason") {
  GraphDef g = Model();
  auto error = [&](const GraphDef& graph, std::vector<std::string> devices,
                   const std::string& train = "train") {
    absl::StatusOr<ReplicatedGraph> r =
        ReplicateForTowers(graph, {"x:0"}, "loss:0", train, devices);
    REQUIRE(!r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  CHECK(absl::StrContains(error(g, {"/cpu:0"}), "at least two devices"));
  CHECK(absl::StrContains(error(g, {"/cpu:0", ""}), "device 1 is empty"));
  CHECK(absl::StrContains(error(Model(16), {"/cpu:0", "/cpu:1"}),
                          "has a fixed batch dimension (16)"));
  CHECK(absl::StrContains(error(g, {"/cpu:0", "/cpu:1"}, "loss"), "runs no optimizer update"));
  CHECK(absl::StrContains(error(g, {"/cpu:0", "/cpu:1"}, "nope"), "'nope' is not in the graph"));
}

}  // namespace
}  // namespace dflow
