// Trains an MNIST classifier from C++ with the builder API (graph/train): an MLP or
// LeNet-5, on one device or data-parallel over several (one tower per device, gradients
// averaged on a parameter device, applied once), then measures test accuracy.
//
// The data: any MNIST IDX image/label pair. The repository carries only the 10,000
// test digits (tests/data/tf_graphs/mnist), so by default the first `train_count` of
// them train and the rest, never seen in training, measure accuracy; point
// train_images/test_images at the 60,000 training digits for the classic split.
#ifndef DFLOW_EXAMPLES_MNIST_TRAINER_H_
#define DFLOW_EXAMPLES_MNIST_TRAINER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"

namespace dflow::examples {

struct MnistTrainOptions {
  std::string model = "mlp";  // "mlp" (784-256-10) or "lenet5"
  // One tower per entry; "" lets the placer choose. Several entries split each batch.
  std::vector<std::string> devices = {""};
  std::string param_device = "/cpu:0";  // where variables live and gradients meet
  std::string optimizer = "adam";       // "sgd", "momentum" or "adam"
  double learning_rate = 0.001;
  int epochs = 5;
  int64_t batch = 100;  // global batch, split evenly over the towers
  std::string train_images = "tests/data/tf_graphs/mnist/t10k-images-idx3-ubyte.gz";
  std::string train_labels = "tests/data/tf_graphs/mnist/t10k-labels-idx1-ubyte.gz";
  int64_t train_begin = 0, train_count = 8000;
  std::string test_images = train_images, test_labels = train_labels;
  int64_t test_begin = 8000, test_count = 2000;
  uint32_t seed = 1;  // initial weights and shuffling
  ConfigProto config;
  bool progress = false;  // a line per epoch on stderr
};

struct MnistTrainResult {
  double accuracy = 0;       // on the test range
  double final_loss = 0;     // mean loss of the last epoch
  int64_t steps = 0;
  double train_seconds = 0;  // the training steps only (no set-up, no evaluation)
};

absl::StatusOr<MnistTrainResult> TrainMnist(const MnistTrainOptions& options);

// The one-device training graph for `dflow train` (model, optimizer, learning_rate and
// seed of `options`): placeholders "images" [?,784] float and "labels" [?] int64, the
// batch's mean loss "loss", its accuracy "accuracy", the train op "train" and the
// variables' initializer "init".
absl::StatusOr<GraphDef> MnistTrainingGraphDef(const MnistTrainOptions& options);

}  // namespace dflow::examples

#endif  // DFLOW_EXAMPLES_MNIST_TRAINER_H_
