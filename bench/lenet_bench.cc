// LeNet-5 (the frozen TensorFlow graph frozen_pb/mnist_lenet5_cnn.pb, as users have it)
// over the 10,000 MNIST test digits in batches, through a dflow Session: images/s.
// Prints one JSON line in the peers' schema (bench/lenet/mnist_data.py prints theirs);
// the accuracy is printed too, so a wrong kernel cannot post a number.
//
//   lenet_bench --graph=G --images=I --labels=L [--threads=N] [--batch=500] [--repeats=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "session/session.h"
#include "tools/cli_args.h"
#include "tools/idx_file.h"

namespace dflow {
namespace {

struct Flags {
  std::string graph, images, labels;
  int threads = 1;
  int64_t batch = 500;
  int repeats = 5;
};

absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args) {
  DFLOW_ASSIGN_OR_RETURN(CliArgs cli, CliArgs::Parse(args, {"graph", "images", "labels",
                                                            "threads", "batch", "repeats"}));
  Flags flags;
  DFLOW_ASSIGN_OR_RETURN(flags.graph, cli.Require("graph"));
  DFLOW_ASSIGN_OR_RETURN(flags.images, cli.Require("images"));
  DFLOW_ASSIGN_OR_RETURN(flags.labels, cli.Require("labels"));
  if (!absl::SimpleAtoi(cli.Get("threads", "1"), &flags.threads) ||
      !absl::SimpleAtoi(cli.Get("batch", "500"), &flags.batch) ||
      !absl::SimpleAtoi(cli.Get("repeats", "5"), &flags.repeats) || flags.threads < 1 ||
      flags.batch < 1 || flags.repeats < 1) {
    return absl::InvalidArgumentError("--threads, --batch and --repeats take positive integers");
  }
  return flags;
}

absl::Status Run(const Flags& flags) {
  CpuAllocator allocator;
  DFLOW_ASSIGN_OR_RETURN(IdxFile images, ReadIdxFile(flags.images, &allocator));
  DFLOW_ASSIGN_OR_RETURN(IdxFile labels, ReadIdxFile(flags.labels, &allocator));
  const int64_t total = images.dims[0];
  // The batches are prepared before timing, as the peers' are (NumPy slices).
  std::vector<Tensor> batches;
  for (int64_t begin = 0; begin < total; begin += flags.batch) {
    DFLOW_ASSIGN_OR_RETURN(Tensor batch, MnistImagesAsFloat(images, begin,
                                                            std::min(flags.batch, total - begin),
                                                            &allocator));
    batches.push_back(std::move(batch));
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor keep_prob, Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({})));
  keep_prob.scalar<float>() = 1.0f;

  DFLOW_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphDef(flags.graph));
  ConfigProto config;
  config.set_inter_op_parallelism_threads(flags.threads);
  config.set_intra_op_parallelism_threads(flags.threads);
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config));
  DFLOW_RETURN_IF_ERROR(session->Create(graph));

  int64_t correct = 0;
  auto pass = [&](bool count) -> absl::Status {
    int64_t offset = 0;
    for (const Tensor& batch : batches) {
      std::vector<Tensor> out;
      DFLOW_RETURN_IF_ERROR(
          session->Run({{"input", batch}, {"keep_prob", keep_prob}}, {"output"}, {}, &out));
      if (count) {
        for (int64_t i = 0; i < out[0].NumElements(); ++i) {
          correct += out[0].data<int64_t>()[i] == labels.values.data<uint8_t>()[offset + i];
        }
      }
      offset += batch.shape().dim_size(0);
    }
    return absl::OkStatus();
  };
  DFLOW_RETURN_IF_ERROR(pass(true));  // warm-up, and the accuracy
  std::vector<double> rates;
  for (int r = 0; r < flags.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    DFLOW_RETURN_IF_ERROR(pass(false));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(total / seconds);
  }
  std::sort(rates.begin(), rates.end());
  std::printf(
      "{\"suite\": \"lenet5\", \"peer\": \"dflow\", \"bench\": \"lenet5_mnist_b%lld\", "
      "\"variant\": \"Session::Run, frozen TF graph\", \"threads\": %d, \"unit\": \"images/s\", "
      "\"median\": %.1f, \"min\": %.1f, \"max\": %.1f, \"n\": %d, \"accuracy\": %.4f}\n",
      static_cast<long long>(flags.batch), flags.threads, rates[rates.size() / 2], rates.front(),
      rates.back(), flags.repeats, static_cast<double>(correct) / total);
  return absl::OkStatus();
}

}  // namespace
}  // namespace dflow

int main(int argc, char** argv) {
  absl::StatusOr<dflow::Flags> flags =
      dflow::ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  absl::Status status = flags.ok() ? dflow::Run(*flags) : flags.status();
  if (!status.ok()) {
    std::cerr << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}
