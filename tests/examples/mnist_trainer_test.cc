// MNIST trained from C++ with the builder API reaches the 0.95 on digits it
// never saw: an MLP on one device, data-parallel on two CPU devices and on two
// simulated GPUs (the same updates, so the same accuracy), and LeNet-5.
#include "examples/mnist_trainer.h"

#include "catch2/catch.hpp"
#include "tests/testing/scoped_env.h"

namespace dflow::examples {
namespace {

MnistTrainResult Train(const MnistTrainOptions& options) {
  absl::StatusOr<MnistTrainResult> result = TrainMnist(options);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return *result;
}

TEST_CASE("MLP, one device then two towers with the gradients averaged") {
  MnistTrainOptions one;
  MnistTrainResult single = Train(one);
  CHECK(single.accuracy >= 0.95);
  CHECK(single.steps == 400);

  MnistTrainOptions two = one;
  two.devices = {"/cpu:0", "/cpu:1"};
  (*two.config.mutable_device_count())["CPU"] = 2;
  MnistTrainResult towers = Train(two);
  CHECK(towers.accuracy >= 0.95);
  // Two half-batches averaged are the full batch's mean gradient: the same training up
  // to float summation order.
  CHECK(towers.accuracy == Approx(single.accuracy).margin(0.003));
  CHECK(towers.final_loss == Approx(single.final_loss).epsilon(0.01));
}

TEST_CASE("MLP on two simulated GPUs") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2");
  MnistTrainOptions options;
  options.devices = {"/gpu:0", "/gpu:1"};
  options.config.set_allow_soft_placement(true);
  CHECK(Train(options).accuracy >= 0.95);
}

TEST_CASE("LeNet-5") {
  MnistTrainOptions options;
  options.model = "lenet5";
  options.epochs = 3;
  CHECK(Train(options).accuracy >= 0.95);
}

TEST_CASE("Bad options are errors, not crashes") {
  MnistTrainOptions options;
  options.batch = 99;
  options.devices = {"/cpu:0", "/cpu:1"};
  CHECK(TrainMnist(options).status().code() == absl::StatusCode::kInvalidArgument);
  options = MnistTrainOptions();
  options.test_begin = 9999;
  CHECK(TrainMnist(options).status().code() == absl::StatusCode::kInvalidArgument);
  options = MnistTrainOptions();
  options.train_images = "/nonexistent.idx";
  CHECK(TrainMnist(options).status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dflow::examples
