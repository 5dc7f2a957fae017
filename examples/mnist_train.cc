// Trains an MNIST classifier written with the C++ builder API (graph/train) and prints
// its test accuracy: gradients by AddSymbolicGradients, Adam/Momentum/SGD updates,
// optionally data-parallel over several devices (MirroredStrategy-style towers).
//
//   bazel run //examples:mnist_train                                  # MLP, 1 device
//   bazel run //examples:mnist_train -- --model=lenet5
//   bazel run //examples:mnist_train -- --devices=/cpu:0,/cpu:1 \
//       --config='device_count { key: "CPU" value: 2 }'
//   DFLOW_SIMULATED_GPUS=2 bazel run //examples:mnist_train -- --devices=/gpu:0,/gpu:1 \
//       --config='allow_soft_placement: true'
//
// Flags: --model (mlp, lenet5), --devices (comma-separated; one tower each),
// --param_device (default /cpu:0), --optimizer (adam, momentum, sgd), --lr, --epochs,
// --batch (global), --seed, --config (a text ConfigProto), --train_images/--train_labels
// and --test_images/--test_labels (IDX files) with --train_begin/--train_count and
// --test_begin/--test_count (default: digits 0-7999 of the bundled 10,000 train, the
// last 2,000 test).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "examples/mnist_trainer.h"
#include "google/protobuf/text_format.h"
#include "tools/cli_args.h"

namespace {

using dflow::examples::MnistTrainOptions;

bool ParseInt(const dflow::CliArgs& flags, const char* name, int64_t* value) {
  return !flags.Has(name) || absl::SimpleAtoi(flags.Get(name), value);
}

absl::StatusOr<MnistTrainOptions> Parse(const std::vector<std::string>& args) {
  absl::StatusOr<dflow::CliArgs> parsed = dflow::CliArgs::Parse(
      args, {"model", "devices", "param_device", "optimizer", "lr", "epochs", "batch",
             "seed", "config", "train_images", "train_labels", "test_images", "test_labels",
             "train_begin", "train_count", "test_begin", "test_count"});
  if (!parsed.ok()) return parsed.status();
  const dflow::CliArgs& flags = *parsed;
  MnistTrainOptions o;
  o.model = flags.Get("model", o.model);
  if (flags.Has("devices")) o.devices = absl::StrSplit(flags.Get("devices"), ',');
  o.param_device = flags.Get("param_device", o.param_device);
  o.optimizer = flags.Get("optimizer", o.optimizer);
  if (o.optimizer != "adam" && !flags.Has("lr")) o.learning_rate = 0.05;
  int64_t epochs = o.epochs, seed = o.seed;
  bool ok = (!flags.Has("lr") || absl::SimpleAtod(flags.Get("lr"), &o.learning_rate)) &&
            ParseInt(flags, "epochs", &epochs) && ParseInt(flags, "batch", &o.batch) &&
            ParseInt(flags, "seed", &seed) && ParseInt(flags, "train_begin", &o.train_begin) &&
            ParseInt(flags, "train_count", &o.train_count) &&
            ParseInt(flags, "test_begin", &o.test_begin) &&
            ParseInt(flags, "test_count", &o.test_count);
  if (!ok) return absl::InvalidArgumentError("a numeric flag is not a number");
  o.epochs = static_cast<int>(epochs);
  o.seed = static_cast<uint32_t>(seed);
  o.train_images = flags.Get("train_images", o.train_images);
  o.train_labels = flags.Get("train_labels", o.train_labels);
  o.test_images = flags.Get("test_images", o.train_images);
  o.test_labels = flags.Get("test_labels", o.train_labels);
  if (flags.Has("config") &&
      !google::protobuf::TextFormat::ParseFromString(flags.Get("config"), &o.config)) {
    return absl::InvalidArgumentError("--config is not a text ConfigProto");
  }
  o.progress = true;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<MnistTrainOptions> options =
      Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    std::cerr << options.status() << "\n";
    return 2;
  }
  absl::StatusOr<dflow::examples::MnistTrainResult> result = TrainMnist(*options);
  if (!result.ok()) {
    std::cerr << result.status() << "\n";
    return 1;
  }
  std::printf("model %s, %zu device(s): test accuracy %.4f after %lld steps "
              "(training %.2f s, %.0f images/s)\n",
              options->model.c_str(), options->devices.size(), result->accuracy,
              static_cast<long long>(result->steps), result->train_seconds,
              result->steps * options->batch / result->train_seconds);
  return 0;
}
