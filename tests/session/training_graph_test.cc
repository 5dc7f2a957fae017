// End to end: TF 1.8's MNIST training MetaGraphDef (tests/data/tf_graphs/meta, the
// fully_connected_feed tutorial) restored from its step-1999 checkpoint trains in dflow:
// the loss, its summary, the accuracy count and three GradientDescent steps agree with
// TensorFlow's own run on the same batch (values from TF 2.21: import_meta_graph +
// saver.restore, fed the first 100 MNIST test digits).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "session/saved_model.h"
#include "tests/testing/graph_testing.h"
#include "tools/idx_file.h"

namespace dflow {
namespace {

using testing::CorpusPath;

constexpr char kLoss[] = "sparse_softmax_cross_entropy_loss/value:0";
constexpr char kSummary[] = "Merge/MergeSummary:0";
constexpr char kCorrect[] = "in_top_k/InTopKV2:0";
constexpr char kTrain[] = "GradientDescent";  // AssignAdd(global_step) after the updates

// The first 100 MNIST test digits and their labels, as the tutorial feeds them.
std::vector<std::pair<std::string, Tensor>> Batch() {
  static CpuAllocator allocator;
  auto images = ReadIdxFile(CorpusPath("mnist/t10k-images-idx3-ubyte.gz"), &allocator);
  auto labels = ReadIdxFile(CorpusPath("mnist/t10k-labels-idx1-ubyte.gz"), &allocator);
  REQUIRE(images.ok());
  REQUIRE(labels.ok());
  absl::StatusOr<Tensor> pixels = MnistImagesAsFloat(*images, 0, 100, &allocator);
  REQUIRE(pixels.ok());
  Tensor ints = *Tensor::Allocate(&allocator, DT_INT32, TensorShape({100}));
  for (int i = 0; i < 100; ++i) ints.flat<int32_t>()[i] = labels->values.flat<uint8_t>()[i];
  return {{"Placeholder:0", *pixels}, {"Placeholder_1:0", ints}};
}

std::vector<Tensor> Fetch(Session& session, const std::vector<std::string>& fetches) {
  std::vector<Tensor> outputs;
  absl::Status status = session.Run(Batch(), fetches, {}, &outputs);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return outputs;
}

// The float of a one-value Summary tagged "loss": the bytes
// Summary{value: [Value{tag: "loss", simple_value: v}]} serializes to.
float LossFromSummary(const std::string& summary) {
  static constexpr char kPrefix[] = "\n\x0b\n\x04loss\x15";
  const std::string prefix(kPrefix, sizeof(kPrefix) - 1);
  REQUIRE(summary.size() == prefix.size() + 4);
  REQUIRE(summary.compare(0, prefix.size(), prefix) == 0);
  float value;
  std::memcpy(&value, summary.data() + prefix.size(), 4);
  return value;
}

TEST_CASE("the MNIST training graph trains as in TensorFlow", "[session][training]") {
  absl::StatusOr<SavedModelBundle> bundle =
      LoadMetaGraphWithCheckpoint(CorpusPath("meta/mnist_fc_feed_train.meta"),
                                  CorpusPath("checkpoints/mnist_fc_feed/model.ckpt-1999"));
  INFO(bundle.status().ToString());
  REQUIRE(bundle.ok());
  Session& session = *bundle->session;

  std::vector<Tensor> before = Fetch(session, {kLoss, kSummary, kCorrect, "global_step:0",
                                               "softmax_linear/biases:0"});
  const float loss0 = before[0].scalar<float>();
  REQUIRE(std::isfinite(loss0));
  CHECK(loss0 == Approx(0.328727722).epsilon(1e-5));
  CHECK(LossFromSummary(before[1].scalar<std::string>()) == loss0);
  int correct = 0;
  for (bool c : before[2].flat<bool>()) correct += c;
  CHECK(correct == 90);
  CHECK(before[3].scalar<int32_t>() == 2000);
  const std::vector<float> biases0(before[4].flat<float>().begin(),
                                   before[4].flat<float>().end());

  // TF's losses after each of three steps (learning rate 0.01).
  const std::vector<double> want = {0.324208796, 0.319991112, 0.315973729};
  float previous = loss0;
  for (double want_loss : want) {
    std::vector<Tensor> unused;
    absl::Status status = session.Run(Batch(), {}, {kTrain}, &unused);
    INFO(status.ToString());
    REQUIRE(status.ok());
    const float loss = Fetch(session, {kLoss})[0].scalar<float>();
    CHECK(loss < previous);
    CHECK(loss == Approx(want_loss).epsilon(1e-5));
    previous = loss;
  }

  std::vector<Tensor> after = Fetch(session, {"global_step:0", "softmax_linear/biases:0"});
  CHECK(after[0].scalar<int32_t>() == 2003);
  const std::vector<float> want_biases = {-0.03770463f, 0.05980805f, 0.01408577f, -0.02353316f,
                                          0.1563551f,   0.04784843f, 0.02881277f, -0.02442152f,
                                          -0.07146931f, -0.14978158f};
  auto biases = after[1].flat<float>();
  REQUIRE(biases.size() == want_biases.size());
  for (size_t i = 0; i < want_biases.size(); ++i) {
    CHECK(biases[i] != biases0[i]);
    CHECK(biases[i] == Approx(want_biases[i]).margin(1e-6));
  }
}

// ---- A TF 1 training graph on resource variables (tests/data/tf2_21/resource_training.py):
// TF 2.21's Saver wrote its MetaGraph and a checkpoint after two GradientDescent steps.

constexpr char kResourceDir[] = "tests/data/tf2_21/resource_training/";

std::vector<std::pair<std::string, Tensor>> ResourceBatch() {
  static CpuAllocator allocator;
  const std::vector<float> x = {
      -0.068861194f, -0.686965585f, -0.788486779f, 1.07600689f,  -0.0105241667f, -0.455652624f,
      -0.0386614688f, -2.62149644f, -0.823239863f, -1.54276562f, 0.454512417f,  -0.392098427f,
      0.956822574f,  0.380928278f,  -1.22445643f,  0.164489031f, -0.708890975f, -0.144882813f,
      0.203506127f,  -0.691593111f, 0.794394553f,  0.195977166f, -0.0300410651f, -1.40594506f,
      -0.463199675f, -0.727078915f, 0.939202726f,  2.33411312f,  0.0676031113f, -2.17602539f,
      -1.222368f,    0.904410183f};
  const std::vector<int32_t> labels = {0, 2, 1, 1, 0, 2, 2, 1};
  Tensor xs = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({8, 4}));
  std::copy(x.begin(), x.end(), xs.flat<float>().begin());
  Tensor ys = *Tensor::Allocate(&allocator, DT_INT32, TensorShape({8}));
  std::copy(labels.begin(), labels.end(), ys.flat<int32_t>().begin());
  return {{"x:0", xs}, {"labels:0", ys}};
}

std::vector<Tensor> FetchResource(Session& session, const std::vector<std::string>& fetches,
                                  const std::vector<std::string>& targets = {}) {
  std::vector<Tensor> outputs;
  absl::Status status = session.Run(ResourceBatch(), fetches, targets, &outputs);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return outputs;
}

const std::vector<std::string> kResourceVariables = {"model/w/Read/ReadVariableOp:0",
                                                     "model/b/Read/ReadVariableOp:0",
                                                     "global_step/Read/ReadVariableOp:0"};

TEST_CASE("a resource-variable training graph restores, trains and saves as TensorFlow",
          "[session][training]") {
  absl::StatusOr<SavedModelBundle> bundle = LoadMetaGraphWithCheckpoint(
      std::string(kResourceDir) + "model.meta", std::string(kResourceDir) + "model.ckpt-2");
  INFO(bundle.status().ToString());
  REQUIRE(bundle.ok());
  Session& session = *bundle->session;
  CHECK(FetchResource(session, {"loss:0"})[0].scalar<float>() == Approx(0.977748275).epsilon(1e-6));
  // TF's loss after each of three ResourceApplyGradientDescent steps (learning rate 0.5).
  for (double want : {0.933262229, 0.896673083, 0.865370512}) {
    FetchResource(session, {}, {"train"});
    CHECK(FetchResource(session, {"loss:0"})[0].scalar<float>() == Approx(want).epsilon(1e-6));
  }
  const std::vector<Tensor> trained = FetchResource(session, kResourceVariables);
  const std::vector<float> want_w = {-0.652866662f, 1.14548087f,  -0.387906909f, 0.48349604f,
                                     -0.40428108f,  0.0989292413f, -0.34871459f, -0.320785165f,
                                     0.512993574f,  -0.163723469f, -0.0196584165f, -0.54934442f};
  const std::vector<float> want_b = {0.0354030766f, -0.0695712417f, 0.0341681764f};
  for (size_t i = 0; i < want_w.size(); ++i) {
    CHECK(trained[0].flat<float>()[i] == Approx(want_w[i]).margin(1e-6));
  }
  for (size_t i = 0; i < want_b.size(); ++i) {
    CHECK(trained[1].flat<float>()[i] == Approx(want_b[i]).margin(1e-6));
  }
  CHECK(trained[2].scalar<int64_t>() == 5);

  // The saver's save op writes a V2 checkpoint of the resource variables (through
  // ReadVariableOp into SaveV2); a fresh session restores exactly what was trained.
  const std::string prefix = std::string(std::getenv("TEST_TMPDIR")) + "/resource_saved";
  static CpuAllocator allocator;
  Tensor filename = *Tensor::Allocate(&allocator, DT_STRING, TensorShape());
  filename.scalar<std::string>() = prefix;
  std::vector<Tensor> saved;
  absl::Status save = session.Run({{bundle->meta_graph_def.saver_def().filename_tensor_name(),
                                    filename}},
                                  {bundle->meta_graph_def.saver_def().save_tensor_name()}, {},
                                  &saved);
  INFO(save.ToString());
  REQUIRE(save.ok());
  CHECK(saved[0].scalar<std::string>() == prefix);
  absl::StatusOr<SavedModelBundle> reloaded =
      LoadMetaGraphWithCheckpoint(std::string(kResourceDir) + "model.meta", prefix);
  INFO(reloaded.status().ToString());
  REQUIRE(reloaded.ok());
  const std::vector<Tensor> restored = FetchResource(*reloaded->session, kResourceVariables);
  for (int v = 0; v < 2; ++v) {
    REQUIRE(restored[v].NumElements() == trained[v].NumElements());
    for (int64_t i = 0; i < trained[v].NumElements(); ++i) {
      CHECK(restored[v].flat<float>()[i] == trained[v].flat<float>()[i]);
    }
  }
  CHECK(restored[2].scalar<int64_t>() == 5);
}

}  // namespace
}  // namespace dflow
