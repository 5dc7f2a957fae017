// End to end: TF 1.8's MNIST training MetaGraphDef (tests/data/tf_graphs/meta, the
// fully_connected_feed tutorial) restored from its step-1999 checkpoint trains in dflow:
// the loss, its summary, the accuracy count and three GradientDescent steps agree with
// TensorFlow's own run on the same batch (values from TF 2.21: import_meta_graph +
// saver.restore, fed the first 100 MNIST test digits).
#include <cmath>
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

}  // namespace
}  // namespace dflow
