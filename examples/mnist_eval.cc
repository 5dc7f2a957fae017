// Evaluates a frozen TensorFlow MNIST classifier on the 10,000 MNIST test digits and
// prints its accuracy: a real TensorFlow model, run by dflow, on real data.
//
//   bazel run //examples:mnist_eval                       # LeNet-5 from the corpus
//   bazel run //examples:mnist_eval -- --graph=$PWD/model.pb --input=x --fetch=probs \
//       --images=$PWD/t10k-images-idx3-ubyte.gz --labels=$PWD/t10k-labels-idx1-ubyte.gz
//
// Flags: --graph, --images, --labels (IDX files, gzipped or not), --input (the image
// placeholder: [N,784] or [N,28,28,1], pixels/255), --fetch (class ids [N], or scores
// [N,classes] whose argmax is the class), --batch (default 500), --feed=NAME=NUMBER
// (extra scalar feeds, e.g. keep_prob=1.0), --config=TEXTPROTO (a ConfigProto).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "graph/node_def_util.h"
#include "graph/partial_shape.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "session/session.h"
#include "tools/cli_args.h"
#include "tools/idx_file.h"

namespace dflow::examples {
namespace {

constexpr char kCorpus[] = "tests/data/tf_graphs/";

struct Options {
  std::string graph = std::string(kCorpus) + "frozen_pb/mnist_lenet5_cnn.pb";
  std::string images = std::string(kCorpus) + "mnist/t10k-images-idx3-ubyte.gz";
  std::string labels = std::string(kCorpus) + "mnist/t10k-labels-idx1-ubyte.gz";
  std::string input = "input";
  std::string fetch = "output";
  int64_t batch = 500;
  std::vector<std::pair<std::string, float>> scalar_feeds = {{"keep_prob", 1.0f}};
  ConfigProto config;
};

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags,
                         CliArgs::Parse(args, {"graph", "images", "labels", "input", "fetch",
                                               "batch", "feed", "config"}));
  Options options;
  options.graph = flags.Get("graph", options.graph);
  options.images = flags.Get("images", options.images);
  options.labels = flags.Get("labels", options.labels);
  options.input = flags.Get("input", options.input);
  options.fetch = flags.Get("fetch", options.fetch);
  if (flags.Has("batch") && (!absl::SimpleAtoi(flags.Get("batch"), &options.batch) ||
                             options.batch <= 0)) {
    return absl::InvalidArgumentError("--batch must be a positive integer");
  }
  if (flags.Has("graph") || flags.Has("feed")) options.scalar_feeds.clear();
  for (const std::string& feed : flags.GetAll("feed")) {
    const size_t eq = feed.find('=');
    float value = 0;
    if (eq == std::string::npos || !absl::SimpleAtof(feed.substr(eq + 1), &value)) {
      return absl::InvalidArgumentError("--feed must be NAME=NUMBER, got '" + feed + "'");
    }
    options.scalar_feeds.emplace_back(feed.substr(0, eq), value);
  }
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &options.config));
  }
  return options;
}

// The shape each batch is fed with: [N, 784], or the placeholder's own rank-4 shape.
std::vector<int64_t> InputShape(const GraphDef& graph, const std::string& input, int64_t n) {
  for (const NodeDef& node : graph.node()) {
    if (node.name() != input) continue;
    const AttrValue* shape = FindAttr(node, "shape");
    if (shape == nullptr || !shape->has_shape()) break;
    absl::StatusOr<PartialShape> parsed = PartialShape::FromProto(shape->shape());
    if (!parsed.ok() || parsed->rank() != 4) break;
    return {n, 28, 28, 1};
  }
  return {n, 784};
}

// The predicted class of each row: the ids themselves, or the argmax of the scores.
absl::StatusOr<std::vector<int64_t>> Classes(const Tensor& t) {
  std::vector<int64_t> out;
  if (t.shape().dims() == 1 && (t.dtype() == DT_INT64 || t.dtype() == DT_INT32)) {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      out.push_back(t.dtype() == DT_INT64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i]);
    }
    return out;
  }
  if (t.shape().dims() != 2 || t.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError("--fetch must give class ids [N] or float scores [N,C], got " +
                                      t.DebugString(0));
  }
  const int64_t classes = t.shape().dim_size(1);
  for (int64_t r = 0; r < t.shape().dim_size(0); ++r) {
    const float* row = t.data<float>() + r * classes;
    out.push_back(std::max_element(row, row + classes) - row);
  }
  return out;
}

void DrawProgress(int64_t done, int64_t total, double seconds) {
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / total);
  std::fprintf(stderr, "\r[%s%s] %5lld/%lld  %7.0f images/s", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), static_cast<long long>(done),
               static_cast<long long>(total), seconds > 0 ? done / seconds : 0.0);
  if (done == total) std::fprintf(stderr, "\n");
}

absl::Status Evaluate(const Options& options) {
  CpuAllocator allocator;
  DFLOW_ASSIGN_OR_RETURN(IdxFile images, ReadIdxFile(options.images, &allocator));
  DFLOW_ASSIGN_OR_RETURN(IdxFile labels, ReadIdxFile(options.labels, &allocator));
  if (labels.dims.size() != 1 || labels.dims[0] != images.dims[0] || labels.dtype != DT_UINT8) {
    return absl::InvalidArgumentError("the label file does not match the image file");
  }
  DFLOW_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphDef(options.graph));
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options.config));
  DFLOW_RETURN_IF_ERROR(session->Create(graph));

  std::vector<std::pair<std::string, Tensor>> base_feeds;
  for (const auto& [name, value] : options.scalar_feeds) {
    DFLOW_ASSIGN_OR_RETURN(Tensor scalar, Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({})));
    scalar.scalar<float>() = value;
    base_feeds.emplace_back(name, scalar);
  }
  const int64_t total = images.dims[0];
  int64_t correct = 0;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (int64_t begin = 0; begin < total; begin += options.batch) {
    const int64_t count = std::min(options.batch, total - begin);
    DFLOW_ASSIGN_OR_RETURN(Tensor pixels, MnistImagesAsFloat(images, begin, count, &allocator));
    const std::vector<int64_t> shape = InputShape(graph, options.input, count);
    std::vector<std::pair<std::string, Tensor>> feeds = base_feeds;
    feeds.emplace_back(options.input, pixels.Reshaped(TensorShape(absl::MakeConstSpan(shape))));
    std::vector<Tensor> outputs;
    DFLOW_RETURN_IF_ERROR(session->Run(feeds, {options.fetch}, {}, &outputs));
    DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> classes, Classes(outputs[0]));
    if (static_cast<int64_t>(classes.size()) != count) {
      return absl::InvalidArgumentError("--fetch gave a class per image for " +
                                        std::to_string(classes.size()) + " of " +
                                        std::to_string(count) + " images");
    }
    for (int64_t i = 0; i < count; ++i) correct += classes[i] == labels.values.data<uint8_t>()[begin + i];
    DrawProgress(begin + count, total, elapsed());
  }
  const double seconds = elapsed();
  std::printf("accuracy: %.4f (%lld of %lld test digits) in %.2f s, %.0f images/s\n",
              static_cast<double>(correct) / total, static_cast<long long>(correct),
              static_cast<long long>(total), seconds, total / seconds);
  return absl::OkStatus();
}

}  // namespace
}  // namespace dflow::examples

int main(int argc, char** argv) {
  // `bazel run` starts in the runfiles tree, where the corpus defaults are.
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<dflow::examples::Options> options = dflow::examples::ParseOptions(args);
  absl::Status status =
      options.ok() ? dflow::examples::Evaluate(*options) : options.status();
  if (!status.ok()) {
    std::cerr << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}
