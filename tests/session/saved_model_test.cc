#include "session/saved_model.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "graph/proto_io.h"
#include "proto/example.pb.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

using testing::CorpusPath;

Allocator* TestAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

Tensor Floats(std::vector<int64_t> dims, const std::vector<float>& values) {
  Tensor t = *Tensor::Allocate(TestAllocator(), DT_FLOAT, TensorShape(absl::MakeConstSpan(dims)));
  for (size_t i = 0; i < values.size(); ++i) t.flat<float>()[i] = values[i];
  return t;
}

std::vector<float> Flat(const Tensor& t) {
  auto flat = t.flat<float>();
  return std::vector<float>(flat.begin(), flat.end());
}

SavedModelBundle LoadOrFail(const std::string& dir, std::vector<std::string> tags = {"serve"}) {
  absl::StatusOr<SavedModelBundle> bundle = LoadSavedModel(CorpusPath(dir), tags);
  INFO(bundle.status().ToString());
  REQUIRE(bundle.ok());
  return *std::move(bundle);
}

// Runs signature `key` feeding its only input and fetching its only output.
std::vector<float> RunSignature(SavedModelBundle& bundle, const std::string& key,
                                const Tensor& input) {
  absl::StatusOr<const SignatureDef*> signature = FindSignature(bundle.meta_graph_def, key);
  REQUIRE(signature.ok());
  REQUIRE((*signature)->inputs_size() == 1);
  REQUIRE((*signature)->outputs_size() == 1);
  std::vector<Tensor> outputs;
  absl::Status status =
      bundle.session->Run({{(*signature)->inputs().begin()->second.name(), input}},
                          {(*signature)->outputs().begin()->second.name()}, {}, &outputs);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return Flat(outputs[0]);
}

TEST_CASE("half_plus_two restores a=0.5, b=2, c=3 and serves y = 0.5x + 2") {
  for (const std::string dir : {"saved_model/tf_half_plus_two", "saved_model/tf_half_plus_two_pbtxt",
                                "saved_model/serving_half_plus_two_gpu"}) {
    INFO(dir);
    SavedModelBundle bundle = LoadOrFail(dir);
    const Tensor x = Floats({3, 1}, {1, 2, 3});
    CHECK(RunSignature(bundle, kDefaultServingSignatureDefKey, x) ==
          std::vector<float>{2.5f, 3.0f, 3.5f});
    // y3 = a * x2 + c.
    CHECK(RunSignature(bundle, "regress_x2_to_y3", Floats({2, 1}, {1, 4})) ==
          std::vector<float>{3.5f, 5.0f});
  }
}

TEST_CASE("the legacy init op ran: it assigned the asset-path variable") {
  SavedModelBundle bundle = LoadOrFail("saved_model/tf_half_plus_two");
  std::vector<Tensor> outputs;
  absl::Status status = bundle.session->Run({}, {"filename_tensor:0"}, {}, &outputs);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(outputs[0].scalar<std::string>() == "foo.txt");
}

TEST_CASE("the GPU-pinned model also runs on simulated GPUs") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1");
  SavedModelBundle bundle = LoadOrFail("saved_model/serving_half_plus_two_gpu");
  CHECK(RunSignature(bundle, kDefaultServingSignatureDefKey, Floats({2, 1}, {4, 6})) ==
        std::vector<float>{4.0f, 5.0f});
}

TEST_CASE("loading errors name what is missing") {
  absl::Status status = LoadSavedModel(CorpusPath("saved_model/tf_half_plus_two"), {"train"})
                            .status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("Could not find meta graph def matching supplied tags: { train }"));
  CHECK_THAT(std::string(status.message()), Catch::Contains("{ serve }"));

  status = LoadSavedModel(CorpusPath("saved_model/nothing_here"), {"serve"}).status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(status.message()), Catch::Contains("saved_model/nothing_here"));

  SavedModelBundle bundle = LoadOrFail("saved_model/tf_half_plus_two");
  absl::StatusOr<const SignatureDef*> signature = FindSignature(bundle.meta_graph_def, "predict");
  CHECK(signature.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(signature.status().message()),
             Catch::Contains("classify_x2_to_y3, classify_x_to_y, regress_x2_to_y3"));
}

// A fixed input batch of 100 "images" with every pixel in [0, 1].
Tensor FixedImages() {
  std::vector<float> pixels(100 * 784);
  uint32_t state = 12345;
  for (float& p : pixels) {
    state = state * 1664525u + 1013904223u;
    p = static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
  }
  return Floats({100, 784}, pixels);
}

std::vector<float> Logits(Session& session) {
  std::vector<Tensor> outputs;
  absl::Status status =
      session.Run({{"Placeholder:0", FixedImages()}}, {"softmax_linear/add:0"}, {}, &outputs);
  INFO(status.ToString());
  REQUIRE(status.ok());
  REQUIRE(outputs[0].shape() == TensorShape({100, 10}));
  return Flat(outputs[0]);
}

TEST_CASE("the MNIST training graph restored from its checkpoint equals its frozen twin") {
  auto frozen_graph = ReadGraphDef(CorpusPath("frozen_pb/mnist_mlp_fc_feed_b100.pb"));
  REQUIRE(frozen_graph.ok());
  auto frozen = NewSession();
  REQUIRE(frozen.ok());
  REQUIRE((*frozen)->Create(*frozen_graph).ok());
  const std::vector<float> want = Logits(**frozen);

  for (const std::string checkpoint :
       {"checkpoints/mnist_fc_feed/model.ckpt-1999", "checkpoints/mnist_fc_feed"}) {
    INFO(checkpoint);
    absl::StatusOr<SavedModelBundle> bundle = LoadMetaGraphWithCheckpoint(
        CorpusPath("meta/mnist_fc_feed_train.meta"), CorpusPath(checkpoint));
    INFO(bundle.status().ToString());
    REQUIRE(bundle.ok());
    // Bit for bit (INDEX.md: the checkpoint holds the frozen Consts' exact bytes): the
    // fusion pass treats a variable of known shape like a Const (graph/fusion.cc), so
    // both graphs compute the same sums in the same order.
    CHECK(Logits(*bundle->session) == want);
  }
}

TEST_CASE("restoring a missing checkpoint names it") {
  absl::Status status = LoadMetaGraphWithCheckpoint(CorpusPath("meta/mnist_fc_feed_train.meta"),
                                                    CorpusPath("checkpoints/none/model"))
                            .status();
  CHECK(status.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(status.message()), Catch::Contains("checkpoints/none/model.index"));
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

// A serialized tf.train.Example with one float feature.
std::string ExampleWith(const std::string& key, std::vector<float> values) {
  Example example;
  FloatList* list = (*example.mutable_features()->mutable_feature())[key].mutable_float_list();
  for (float v : values) list->add_value(v);
  return example.SerializeAsString();
}

Tensor Strings(const std::vector<std::string>& values) {
  Tensor t = *Tensor::Allocate(TestAllocator(), DT_STRING,
                               TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.flat<std::string>()[i] = values[i];
  return t;
}

TEST_CASE("classify/regress signatures parse serialized tf.Examples (ParseExample)") {
  SavedModelBundle bundle = LoadOrFail("saved_model/tf_half_plus_two");
  const Tensor examples = Strings({ExampleWith("x", {1}), ExampleWith("x", {2}),
                                   ExampleWith("x", {3})});
  CHECK(RunSignature(bundle, "regress_x_to_y", examples) == std::vector<float>{2.5, 3, 3.5});
  CHECK(RunSignature(bundle, "classify_x_to_y", examples) == std::vector<float>{2.5, 3, 3.5});
  CHECK(RunSignature(bundle, "regress_x_to_y2", examples) == std::vector<float>{3.5, 4, 4.5});

  std::vector<Tensor> out;
  // A value of the wrong type names the key and the example.
  Example wrong;
  (*wrong.mutable_features()->mutable_feature())["x"].mutable_int64_list()->add_value(1);
  absl::Status status =
      bundle.session->Run({{"tf_example:0", Strings({ExampleWith("x", {1}), wrong.SerializeAsString()})}},
                          {"y:0"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("Key: x, Index: 1.  Data types don't match. Data type: int64 "
                             "but expected type: float"));
  // Too many values for the dense shape [1].
  status = bundle.session->Run({{"tf_example:0", Strings({ExampleWith("x", {1, 2})})}}, {"y:0"},
                               {}, &out);
  CHECK_THAT(std::string(status.message()), Catch::Contains("Number of values != expected"));
  // Bytes that are not an Example.
  status = bundle.session->Run({{"tf_example:0", Strings({"\xff\xff garbage"})}}, {"y:0"}, {}, &out);
  CHECK_THAT(std::string(status.message()), Catch::Contains("Could not parse example input"));
  // The session keeps serving.
  CHECK(RunSignature(bundle, "regress_x_to_y", Strings({ExampleWith("x", {10})})) ==
        std::vector<float>{7});
}

// ---- TF 2 SavedModels (tests/data/tf2_21/saved_models.py; TF's answers in expected.json) --

SavedModelBundle LoadTf2(const std::string& name) {
  absl::StatusOr<SavedModelBundle> bundle =
      LoadSavedModel("tests/data/tf2_21/saved_models/" + name, {"serve"});
  INFO(bundle.status().ToString());
  REQUIRE(bundle.ok());
  return *std::move(bundle);
}

TEST_CASE("a tf.Module SavedModel restores its resource variables and serves both outputs") {
  SavedModelBundle bundle = LoadTf2("module");
  absl::StatusOr<const SignatureDef*> signature =
      FindSignature(bundle.meta_graph_def, kDefaultServingSignatureDefKey);
  REQUIRE(signature.ok());
  const auto& outputs = (*signature)->outputs();
  std::vector<Tensor> got;
  absl::Status status = bundle.session->Run(
      {{(*signature)->inputs().at("x").name(), Floats({2, 3}, {1, 2, 3, -1, 0, 0.5f})}},
      {outputs.at("y").name(), outputs.at("n").name()}, {}, &got);
  INFO(status.ToString());
  REQUIRE(status.ok());
  const std::vector<float> y = Flat(got[0]);
  const std::vector<float> want = {2.1f, 1.7f, 0.7f, -0.35f};
  REQUIRE(y.size() == want.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(want[i]).margin(1e-6));
  CHECK(got[1].scalar<int32_t>() == 9);  // batch 2 + the restored steps = 7
}

TEST_CASE("a Keras SavedModel (model.export) serves TF's answer") {
  SavedModelBundle bundle = LoadTf2("keras");
  const std::vector<float> y = RunSignature(
      bundle, kDefaultServingSignatureDefKey,
      Floats({2, 4}, {0.1f, 0.2f, 0.3f, 0.4f, 1, -1, 2, -2}));
  const std::vector<float> want = {-0.05759416f, 0.016521992f, 0, 0};
  REQUIRE(y.size() == want.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(want[i]).margin(1e-6));
}

}  // namespace
}  // namespace dflow
