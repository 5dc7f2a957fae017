// session/training_loop: batching, steps and epochs, evaluation means, checkpoints
// through a Saver added to a builder-API graph, and errors.
#include "session/training_loop.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "graph/ops.h"
#include "graph/train/optimizers.h"
#include "graph/train/saver_builder.h"
#include "graph/train/variable.h"
#include "tests/testing/gradient_checker.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::ToDoubles;

// w is [1]; loss = mean((x * w - y)^2); the batch mean of x is fetchable as "mean_x".
struct Regression {
  GraphDef graph;
  SaverDef saver;
  std::unique_ptr<Session> session;
};

Regression MakeRegression() {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {0.0});
  Output x = Placeholder(root.WithOpName("x"), DT_DOUBLE, PartialShape({-1}));
  Output y = Placeholder(root.WithOpName("y"), DT_DOUBLE, PartialShape({-1}));
  Output error = Sub(root, Mul(root, x, w.value()), y);
  Output loss = Mean(root.WithOpName("loss"), Square(root, error), 0);
  Mean(root.WithOpName("mean_x"), x, 0);
  GradientDescentOptimizer sgd(0.1);
  absl::StatusOr<Operation> train = sgd.Minimize(root, loss, {w});
  REQUIRE(train.ok());
  NoOp(root.WithOpName("train").WithControlDependencies(*train));
  InitializeVariables(root, {w});
  Regression r;
  REQUIRE(root.ToGraphDef(&r.graph).ok());
  absl::StatusOr<SaverDef> saver = AddSaver(&r.graph);
  REQUIRE(saver.ok());
  r.saver = *saver;
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  REQUIRE(session.ok());
  r.session = std::move(*session);
  REQUIRE(r.session->Create(r.graph).ok());
  std::vector<Tensor> none;
  REQUIRE(r.session->Run({}, {}, {"init"}, &none).ok());
  return r;
}

// 10 examples with y = 2x.
TrainingLoopOptions TenExamples() {
  TrainingLoopOptions o;
  o.train_op = "train";
  o.loss = "loss:0";
  std::vector<double> xs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ys;
  for (double v : xs) ys.push_back(2 * v / 10);
  for (double& v : xs) v /= 10;
  o.train_data = {{"x:0", MakeTensor(DT_DOUBLE, {10}, xs)},
                  {"y:0", MakeTensor(DT_DOUBLE, {10}, ys)}};
  o.batch = 4;
  return o;
}

double ReadW(Session* session) {
  std::vector<Tensor> out;
  REQUIRE(session->Run({}, {"w/Read:0"}, {}, &out).ok());
  return ToDoubles(out[0])[0];
}

TEST_CASE("Epochs of partial batches, and steps that cross epochs") {
  Regression r = MakeRegression();
  TrainingLoopOptions o = TenExamples();
  o.epochs = 2;
  absl::StatusOr<TrainingReport> report = RunTrainingLoop(r.session.get(), o);
  REQUIRE(report.ok());
  CHECK(report->steps == 6);  // 4 + 4 + 2 per epoch
  CHECK(report->examples == 20);
  CHECK(report->losses.size() == 6);
  CHECK(report->losses.back() < report->losses.front());
  o.steps = 7;
  report = RunTrainingLoop(r.session.get(), o);
  REQUIRE(report.ok());
  CHECK(report->steps == 7);
  CHECK(report->examples == 24);
  // Variables persist across calls: w keeps approaching 2.
  CHECK(ReadW(r.session.get()) > 0.5);
}

TEST_CASE("Without shuffling, steps see the examples in order") {
  Regression r = MakeRegression();
  TrainingLoopOptions o = TenExamples();
  o.shuffle = false;
  o.steps = 1;
  o.batch = 10;
  REQUIRE(RunTrainingLoop(r.session.get(), o).ok());
  // One step over all examples from w = 0: w = 0.1 * mean(2 x * 2x) = 0.4 * mean(x^2).
  CHECK(ReadW(r.session.get()) == Approx(0.4 * 0.385));
}

TEST_CASE("Evaluation weighs each batch by its size") {
  Regression r = MakeRegression();
  TrainingLoopOptions o = TenExamples();
  o.eval_data = {o.train_data[0]};
  o.eval_fetches = {"mean_x:0"};
  o.eval_batch = 3;  // batches of 3, 3, 3, 1
  o.eval_every = 2;
  o.steps = 3;
  std::vector<int64_t> seen;
  o.on_eval = [&](const EvalResult& e) { seen.push_back(e.step); };
  absl::StatusOr<TrainingReport> report = RunTrainingLoop(r.session.get(), o);
  REQUIRE(report.ok());
  CHECK(seen == std::vector<int64_t>{2, 3});
  CHECK(report->evals[0].means[0] == Approx(0.55));
}

TEST_CASE("Checkpoints save and restore every variable, at steps and at the end") {
  const std::string dir = std::getenv("TEST_TMPDIR");
  Regression r = MakeRegression();
  TrainingLoopOptions o = TenExamples();
  o.saver = r.saver;
  o.save_prefix = dir + "/ckpt";
  o.save_every = 2;
  o.steps = 5;
  absl::StatusOr<TrainingReport> report = RunTrainingLoop(r.session.get(), o);
  REQUIRE(report.ok());
  CHECK(report->checkpoints ==
        std::vector<std::string>{dir + "/ckpt-2", dir + "/ckpt-4", dir + "/ckpt"});
  const double trained = ReadW(r.session.get());
  Regression fresh = MakeRegression();
  CHECK(ReadW(fresh.session.get()) == 0.0);
  REQUIRE(RestoreCheckpoint(fresh.session.get(), fresh.saver, dir + "/ckpt").ok());
  CHECK(ReadW(fresh.session.get()) == trained);
}

TEST_CASE("Errors name the column or the step") {
  Regression r = MakeRegression();
  TrainingLoopOptions o = TenExamples();
  o.train_data[1].data = MakeTensor(DT_DOUBLE, {9}, std::vector<double>(9, 1.0));
  absl::StatusOr<TrainingReport> report = RunTrainingLoop(r.session.get(), o);
  CHECK(report.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(report.status().message(), "'y:0' has 9 examples but 'x:0' has 10"));

  o = TenExamples();
  o.train_data[1].tensor = "x:0";  // x fed twice, y never: the step fails
  report = RunTrainingLoop(r.session.get(), o);
  REQUIRE(!report.ok());
  CHECK(absl::StartsWith(report.status().message(), "step 1: "));

  o = TenExamples();
  o.save_prefix = "/tmp/never";
  CHECK(RunTrainingLoop(r.session.get(), o).status().code() ==
        absl::StatusCode::kInvalidArgument);
  // The session is still usable.
  CHECK(RunTrainingLoop(r.session.get(), TenExamples()).ok());
}

}  // namespace
}  // namespace dflow
