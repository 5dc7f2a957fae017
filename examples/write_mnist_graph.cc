// Writes the MNIST training graph `dflow train` runs in examples/README.md:
//
//   bazel run //examples:write_mnist_graph -- --out=$PWD/examples/mnist_mlp_train.pbtxt
//
// Flags: --out (.pbtxt or .pb), --model (mlp, lenet5), --optimizer (adam, momentum,
// sgd), --lr, --seed. The graph's names: images, labels, loss, accuracy, train, init.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "examples/mnist_trainer.h"
#include "graph/proto_io.h"
#include "tools/cli_args.h"

int main(int argc, char** argv) {
  using dflow::CliArgs;
  absl::StatusOr<CliArgs> flags = CliArgs::Parse(
      std::vector<std::string>(argv + 1, argv + argc), {"out", "model", "optimizer", "lr", "seed"});
  if (!flags.ok() || !flags->Has("out")) {
    std::cerr << "usage: write_mnist_graph --out=PATH [--model=mlp] [--optimizer=adam]\n";
    return 2;
  }
  dflow::examples::MnistTrainOptions o;
  o.model = flags->Get("model", o.model);
  o.optimizer = flags->Get("optimizer", o.optimizer);
  if (flags->Has("lr")) absl::SimpleAtod(flags->Get("lr"), &o.learning_rate);
  int64_t seed = o.seed;
  if (flags->Has("seed")) absl::SimpleAtoi(flags->Get("seed"), &seed);
  o.seed = static_cast<uint32_t>(seed);
  absl::StatusOr<dflow::GraphDef> graph = dflow::examples::MnistTrainingGraphDef(o);
  absl::Status status = graph.status();
  if (status.ok()) {
    absl::StatusOr<dflow::ProtoFormat> format = dflow::FormatFromPath(flags->Get("out"));
    status = format.ok() ? dflow::WriteProtoFile(flags->Get("out"), *graph, *format)
                         : format.status();
  }
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
