// `dflow train` (tools/train_command.h): TF's losses on a training graph TF wrote, MNIST
// from IDX files to 0.95 with a held-out evaluation, checkpoints that resume exactly,
// JSON output, and errors naming the flag at fault.
#include "tools/train_command.h"

#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "catch2/catch.hpp"

namespace dflow {
namespace {

constexpr char kZoo[] = "tests/data/training/mlp_resource_adam/";
constexpr char kMnist[] = "tests/data/tf_graphs/mnist/";

struct Result {
  absl::Status status;
  std::string out, err;
};

Result Train(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Result r;
  r.status = RunTrainCommand(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The "losses" array of a JSON report.
std::vector<double> Losses(const std::string& json) {
  const size_t begin = json.find("\"losses\": [") + 11;
  const size_t end = json.find(']', begin);
  std::vector<double> values;
  for (absl::string_view v : absl::StrSplit(json.substr(begin, end - begin), ", ")) {
    double d;
    if (absl::SimpleAtod(v, &d)) values.push_back(d);
  }
  return values;
}

std::vector<std::string> ZooArgs(const std::string& extra_checkpoint = "") {
  const std::string zoo = kZoo;
  return {"--meta_graph=" + zoo + "model.meta",
          "--checkpoint=" + (extra_checkpoint.empty() ? zoo + "init.ckpt" : extra_checkpoint),
          "--train_op=train",
          "--loss=loss:0",
          "--data=x:0=" + zoo + "feed.x_0.npy",
          "--data=labels:0=" + zoo + "feed.labels_0.npy",
          "--batch=1000",
          "--shuffle=false",
          "--output=json",
          "--progress=none"};
}

TEST_CASE("A TF 2.21 training graph trains with TF's losses") {
  std::vector<std::string> args = ZooArgs();
  args.push_back("--epochs=5");
  Result r = Train(args);
  INFO(r.status.ToString());
  REQUIRE(r.status.ok());
  // TF 2.21's losses before each step (tests/data/training/mlp_resource_adam/expected.json).
  const std::vector<double> tf = {2.063218116760254, 1.7676727771759033, 1.5162353515625,
                                  1.302200436592102, 1.1172232627868652};
  std::vector<double> ours = Losses(r.out);
  REQUIRE(ours.size() == tf.size());
  for (size_t i = 0; i < tf.size(); ++i) CHECK(ours[i] == Approx(tf[i]).epsilon(1e-5));
  CHECK(absl::StrContains(r.out, "\"steps\": 5,"));
}

TEST_CASE("A checkpoint resumes training exactly where it stopped") {
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::vector<std::string> first = ZooArgs();
  first.push_back("--steps=3");
  first.push_back("--save=" + dir + "/resume/model");
  Result a = Train(first);
  INFO(a.status.ToString());
  REQUIRE(a.status.ok());
  CHECK(absl::StrContains(a.out, "\"checkpoints\": [\"" + dir + "/resume/model\"]"));
  // The directory stands for its latest checkpoint, as tf.train.latest_checkpoint reads.
  std::vector<std::string> second = ZooArgs(dir + "/resume");
  second.push_back("--steps=2");
  Result b = Train(second);
  INFO(b.status.ToString());
  REQUIRE(b.status.ok());
  std::vector<std::string> whole = ZooArgs();
  whole.push_back("--steps=5");
  Result c = Train(whole);
  REQUIRE(c.status.ok());
  std::vector<double> resumed = Losses(b.out), straight = Losses(c.out);
  REQUIRE(resumed.size() == 2);
  CHECK(resumed[0] == straight[3]);
  CHECK(resumed[1] == straight[4]);
}

TEST_CASE("MNIST from IDX files: a builder-API graph, held-out evaluation, 0.95") {
  const std::string m = kMnist;
  Result r = Train({"--graph=examples/mnist_mlp_train.pbtxt", "--init=init",
                    "--train_op=train", "--loss=loss",
                    "--data=images=" + m + "t10k-images-idx3-ubyte.gz",
                    "--data=labels=" + m + "t10k-labels-idx1-ubyte.gz", "--rows=0:8000",
                    "--eval_data=images=" + m + "t10k-images-idx3-ubyte.gz",
                    "--eval_data=labels=" + m + "t10k-labels-idx1-ubyte.gz",
                    "--eval_rows=8000:10000", "--eval_fetch=accuracy", "--batch=100",
                    "--epochs=5", "--seed=1", "--progress=lines"});
  INFO(r.status.ToString());
  REQUIRE(r.status.ok());
  CHECK(absl::StrContains(r.out, "400 steps in "));
  const size_t at = r.out.find("eval at step 400: accuracy = ");
  REQUIRE(at != std::string::npos);
  double accuracy = 0;
  REQUIRE(absl::SimpleAtod(r.out.substr(at + 29, 6), &accuracy));
  CHECK(accuracy >= 0.95);
  CHECK(absl::StrContains(r.err, "step 400/400 (epoch 5): loss "));
  CHECK(absl::StrContains(r.err, "eval at step 80: accuracy = "));
}

TEST_CASE("Data-parallel towers (--devices) train with TF's single-device losses") {
  // A batch split evenly over towers, their gradients averaged: the full batch's mean
  // gradient, so TF 2.21's losses for the whole batch
  // (tests/data/training/mlp_any_batch_adam/expected.json).
  const std::string zoo = "tests/data/training/mlp_any_batch_adam/";
  const std::vector<double> tf = {1.8074065446853638, 1.5194343328475952, 1.278834581375122,
                                  1.0886653661727905, 0.935050904750824};
  for (const char* devices : {"/cpu:0,/cpu:1", "/cpu:0,/cpu:1,/cpu:0,/cpu:1"}) {
    Result r = Train({"--meta_graph=" + zoo + "model.meta", "--checkpoint=" + zoo + "init.ckpt",
                      "--train_op=train", "--loss=loss:0", "--data=x:0=" + zoo + "feed.x_0.npy",
                      "--data=labels:0=" + zoo + "feed.labels_0.npy", "--batch=16",
                      "--epochs=5", "--shuffle=false", "--output=json", "--progress=none",
                      std::string("--devices=") + devices,
                      "--config=device_count { key: \"CPU\" value: 2 }"});
    INFO(devices << ": " << r.status.ToString());
    REQUIRE(r.status.ok());
    CHECK(absl::StrContains(r.err, "towers of "));
    std::vector<double> ours = Losses(r.out);
    REQUIRE(ours.size() == tf.size());
    for (size_t i = 0; i < tf.size(); ++i) CHECK(ours[i] == Approx(tf[i]).epsilon(1e-5));
  }
  // Uneven shares (16 rows over 3 towers: 6, 5, 5) are weighted by their size.
  Result uneven = Train({"--meta_graph=" + zoo + "model.meta",
                         "--checkpoint=" + zoo + "init.ckpt", "--train_op=train",
                         "--loss=loss:0", "--data=x:0=" + zoo + "feed.x_0.npy",
                         "--data=labels:0=" + zoo + "feed.labels_0.npy", "--batch=16",
                         "--epochs=5", "--shuffle=false", "--output=json", "--progress=none",
                         "--devices=/cpu:0,/cpu:1,/cpu:0",
                         "--config=device_count { key: \"CPU\" value: 2 }"});
  INFO(uneven.status.ToString());
  REQUIRE(uneven.status.ok());
  std::vector<double> weighted = Losses(uneven.out);
  REQUIRE(weighted.size() == tf.size());
  for (size_t i = 0; i < tf.size(); ++i) CHECK(weighted[i] == Approx(tf[i]).epsilon(1e-5));
  // A graph built for a fixed batch cannot be split.
  std::vector<std::string> fixed = ZooArgs();
  fixed.push_back("--devices=/cpu:0,/cpu:1");
  Result r = Train(fixed);
  CHECK(absl::StrContains(r.status.message(), "has a fixed batch dimension (16)"));
}

TEST_CASE("Towers with sparse updates and through v1 while loops keep TF's losses") {
  // embedding_any_batch_momentum: the table's gradient is sparse (ResourceSparseApply-
  // Momentum): the towers' rows are concatenated, repeated ids summed.
  // embedding_any_batch_adam: Adam merges the sparse gradient itself (Unique +
  // UnsortedSegmentSum before its scatters), fed the towers' rows. lstm_any_batch_adam:
  // a dynamic_rnn, whose loop frames, stacks and TensorArrays each tower gets its own of.
  struct Case {
    const char* model;
    const char* feed;
    const char* batch;
    std::vector<double> tf;  // expected.json's first five losses
    int towers_log_nodes;
  };
  const std::vector<Case> cases = {
      {"embedding_any_batch_momentum", "ids", "8",
       {1.135648488998413, 1.1291712522506714, 1.1171891689300537, 1.1008174419403076,
        1.0812082290649414},
       64},
      {"embedding_any_batch_adam", "ids", "8",
       {1.1072725057601929, 1.0889798402786255, 1.071292757987976, 1.054086446762085,
        1.0372869968414307},
       60},
      {"lstm_any_batch_adam", "x", "4",
       {1.1245137453079224, 1.0965698957443237, 1.0693507194519043, 1.0426905155181885,
        1.0163941383361816},
       340},
  };
  for (const Case& c : cases) {
    const std::string zoo = std::string("tests/data/training/") + c.model + "/";
    const std::string feed = std::string(c.feed) + ":0=" + zoo + "feed." + c.feed + "_0.npy";
    Result r = Train({"--meta_graph=" + zoo + "model.meta", "--checkpoint=" + zoo + "init.ckpt",
                      "--train_op=train", "--loss=loss:0", "--data=" + feed,
                      "--data=labels:0=" + zoo + "feed.labels_0.npy",
                      std::string("--batch=") + c.batch, "--epochs=5", "--shuffle=false",
                      "--output=json", "--progress=none", "--devices=/cpu:0,/cpu:1",
                      "--config=device_count { key: \"CPU\" value: 2 }"});
    INFO(c.model << ": " << r.status.ToString());
    REQUIRE(r.status.ok());
    CHECK(absl::StrContains(r.err, absl::StrCat("2 towers of ", c.towers_log_nodes, " nodes")));
    std::vector<double> ours = Losses(r.out);
    REQUIRE(ours.size() == c.tf.size());
    for (size_t i = 0; i < c.tf.size(); ++i) CHECK(ours[i] == Approx(c.tf[i]).epsilon(1e-5));
  }
}

TEST_CASE("--devices with one device trains the whole graph there (a simulated GPU)") {
  setenv("DFLOW_SIMULATED_GPUS", "1", 1);
  const std::string zoo = "tests/data/training/mlp_any_batch_adam/";
  const std::vector<double> tf = {1.8074065446853638, 1.5194343328475952, 1.278834581375122,
                                  1.0886653661727905, 0.935050904750824};
  Result r = Train({"--meta_graph=" + zoo + "model.meta", "--checkpoint=" + zoo + "init.ckpt",
                    "--train_op=train", "--loss=loss:0", "--data=x:0=" + zoo + "feed.x_0.npy",
                    "--data=labels:0=" + zoo + "feed.labels_0.npy", "--batch=16",
                    "--epochs=5", "--shuffle=false", "--output=json", "--progress=none",
                    "--devices=/gpu:0", "--config=log_device_placement: true"});
  unsetenv("DFLOW_SIMULATED_GPUS");
  INFO(r.status.ToString());
  REQUIRE(r.status.ok());
  CHECK(absl::StrContains(r.err, "the graph on /gpu:0"));
  std::vector<double> ours = Losses(r.out);
  REQUIRE(ours.size() == tf.size());
  for (size_t i = 0; i < tf.size(); ++i) CHECK(ours[i] == Approx(tf[i]).epsilon(1e-5));
}

TEST_CASE("Towers with batch norm: per-tower statistics, moving averages from tower 0") {
  const std::string zoo = "tests/data/training/cnn_bn_any_batch_momentum/";
  Result r = Train({"--meta_graph=" + zoo + "model.meta", "--checkpoint=" + zoo + "init.ckpt",
                    "--train_op=train", "--loss=loss:0", "--data=x:0=" + zoo + "feed.x_0.npy",
                    "--data=labels:0=" + zoo + "feed.labels_0.npy", "--batch=8", "--epochs=5",
                    "--shuffle=false", "--output=json", "--progress=none",
                    "--devices=/cpu:0,/cpu:1",
                    "--config=device_count { key: \"CPU\" value: 2 }"});
  INFO(r.status.ToString());
  REQUIRE(r.status.ok());
  // Each tower normalises by its own half batch (no synchronised batch norm, as
  // MirroredStrategy by default), so the losses are near TF's single-device ones
  // (1.893 ... 0.156), not equal; they fall as fast.
  std::vector<double> ours = Losses(r.out);
  REQUIRE(ours.size() == 5);
  CHECK(ours[0] == Approx(1.8927807807922363).epsilon(0.05));
  CHECK(ours[4] < 0.25);
}

TEST_CASE("Errors name the flag at fault") {
  const std::string zoo = kZoo;
  auto error = [](std::vector<std::string> args) {
    Result r = Train(args);
    REQUIRE(!r.status.ok());
    return r.status;
  };
  std::vector<std::string> args = ZooArgs();
  args.erase(args.begin() + 2);  // --train_op
  CHECK(absl::StrContains(error(args).message(), "--train_op"));

  args = ZooArgs();
  args[4] = "--data=x:0=/nonexistent.npy";
  absl::Status missing = error(args);
  CHECK(missing.code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(missing.message(), "--data x:0: "));

  args = ZooArgs();
  args[4] = "--data=x:0=" + zoo + "feed.labels_0.npy";  // scalar rows for a [16,20] input
  CHECK(absl::StrContains(error(args).message(),
                          "have shape [] (1 elements) but the tensor takes [16,20]"));

  args = ZooArgs();
  args[4] = "--data=nope=" + zoo + "feed.x_0.npy";
  CHECK(absl::StrContains(error(args).message(), "Tensor nope, specified in either"));

  args = ZooArgs();
  args.erase(args.begin() + 1);  // --checkpoint
  CHECK(absl::StrContains(error(args).message(), "give --init=OP"));

  args = ZooArgs();
  args.push_back("--rows=0:100000");
  CHECK(absl::StrContains(error(args).message(), "--rows=0:100000: the data has only 16 examples"));

  args = ZooArgs();
  args.push_back("--batch=0");
  CHECK(absl::StrContains(error(args).message(), "--batch must be an integer >= 1"));
}

}  // namespace
}  // namespace dflow
