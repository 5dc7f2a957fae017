#include "examples/mnist_trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "graph/array_ops.h"
#include "graph/nn_ops.h"
#include "graph/ops.h"
#include "graph/status_macros.h"
#include "graph/train/initializers.h"
#include "graph/train/optimizers.h"
#include "graph/train/towers.h"
#include "graph/train/variable.h"
#include "session/client_session.h"
#include "tools/idx_file.h"

namespace dflow::examples {
namespace {

// The model's variables and how to apply them to a batch of [B, 784] images.
class Model {
 public:
  Model(const Scope& root, const std::string& kind, uint32_t seed) : kind_(kind) {
    auto add = [&](const std::string& name, const Dims& shape) {
      vars_.push_back(Variable::Create(root.WithOpName(name),
                                       GlorotUniform(root.NewSubScope(name + "_init"), shape,
                                                     seed + vars_.size())));
    };
    auto bias = [&](const std::string& name, int64_t n) {
      vars_.push_back(Variable::Create(root.WithOpName(name), Zeros(root, {n})));
    };
    if (kind == "lenet5") {
      add("conv1/kernel", {5, 5, 1, 6});
      bias("conv1/bias", 6);
      add("conv2/kernel", {5, 5, 6, 16});
      bias("conv2/bias", 16);
      for (auto [name, in, out] : {std::tuple{"fc1", 400, 120}, {"fc2", 120, 84},
                                   {"fc3", 84, 10}}) {
        add(absl::StrCat(name, "/kernel"), {in, out});
        bias(absl::StrCat(name, "/bias"), out);
      }
    } else {
      add("dense1/kernel", {784, 256});
      bias("dense1/bias", 256);
      add("dense2/kernel", {256, 10});
      bias("dense2/bias", 10);
    }
  }

  const std::vector<Variable>& variables() const { return vars_; }

  Output Logits(const Scope& s, const Output& images) const {
    auto dense = [&](const Output& x, size_t i) {
      return BiasAdd(s, MatMul(s, x, vars_[i].value()), vars_[i + 1].value());
    };
    if (kind_ != "lenet5") return dense(Relu(s, dense(images, 0)), 2);
    auto conv = [&](const Output& x, size_t i, const char* padding) {
      Output c = Conv2D(s, x, vars_[i].value(), {1, 1, 1, 1}, padding);
      Output r = Relu(s, BiasAdd(s, c, vars_[i + 1].value()));
      return MaxPool(s, r, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
    };
    Output x = Reshape(s, images, {-1, 28, 28, 1});
    Output features = Reshape(s, conv(conv(x, 0, "SAME"), 2, "VALID"), {-1, 400});
    return dense(Relu(s, dense(Relu(s, dense(features, 4)), 6)), 8);
  }

 private:
  std::string kind_;
  std::vector<Variable> vars_;
};

std::unique_ptr<Optimizer> MakeOptimizer(const MnistTrainOptions& o) {
  if (o.optimizer == "sgd") return std::make_unique<GradientDescentOptimizer>(o.learning_rate);
  if (o.optimizer == "momentum") {
    return std::make_unique<MomentumOptimizer>(o.learning_rate, 0.9);
  }
  if (o.optimizer == "adam") return std::make_unique<AdamOptimizer>(o.learning_rate);
  return nullptr;
}

// Digits `rows` of an [N,28,28] uint8 image file as float pixels / 255, and their labels.
struct Batch {
  Tensor images;
  Tensor labels;
};

absl::StatusOr<Batch> MakeBatch(const IdxFile& images, const IdxFile& labels,
                                const int64_t* rows, int64_t count) {
  const int64_t pixels = images.dims[1] * images.dims[2];
  Batch b;
  DFLOW_ASSIGN_OR_RETURN(b.images, Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT,
                                                    TensorShape({count, pixels})));
  DFLOW_ASSIGN_OR_RETURN(b.labels,
                         Tensor::Allocate(ProcessCpuAllocator(), DT_INT64, TensorShape({count})));
  const uint8_t* src = images.values.data<uint8_t>();
  const uint8_t* label_src = labels.values.data<uint8_t>();
  float* dst = b.images.data<float>();
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* row = src + rows[i] * pixels;
    for (int64_t p = 0; p < pixels; ++p) dst[i * pixels + p] = row[p] / 255.0f;
    b.labels.data<int64_t>()[i] = label_src[rows[i]];
  }
  return b;
}

absl::Status CheckRange(const IdxFile& images, const IdxFile& labels, int64_t begin,
                        int64_t count, const std::string& what) {
  if (images.dtype != DT_UINT8 || images.dims.size() != 3 || labels.dims.size() != 1 ||
      labels.dtype != DT_UINT8) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not an MNIST image/label pair"));
  }
  if (begin < 0 || count <= 0 || begin + count > images.dims[0] ||
      begin + count > labels.dims[0]) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": rows [", begin, ", ", begin + count,
                                                   ") are outside the files"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MnistTrainResult> TrainMnist(const MnistTrainOptions& o) {
  const int64_t towers = static_cast<int64_t>(o.devices.size());
  if (o.batch > o.train_count) {
    return absl::InvalidArgumentError(absl::StrCat("the batch (", o.batch, ") exceeds the ",
                                                   o.train_count, " training examples"));
  }
  if (towers == 0 || o.batch % towers != 0 || o.batch <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("the batch (", o.batch,
                                                   ") must split evenly over ", towers,
                                                   " devices"));
  }
  std::unique_ptr<Optimizer> opt = MakeOptimizer(o);
  if (opt == nullptr) return absl::InvalidArgumentError("unknown optimizer " + o.optimizer);
  if (o.model != "mlp" && o.model != "lenet5") {
    return absl::InvalidArgumentError("unknown model " + o.model + " (mlp or lenet5)");
  }
  DFLOW_ASSIGN_OR_RETURN(IdxFile train_x, ReadIdxFile(o.train_images, ProcessCpuAllocator()));
  DFLOW_ASSIGN_OR_RETURN(IdxFile train_y, ReadIdxFile(o.train_labels, ProcessCpuAllocator()));
  DFLOW_ASSIGN_OR_RETURN(IdxFile test_x, ReadIdxFile(o.test_images, ProcessCpuAllocator()));
  DFLOW_ASSIGN_OR_RETURN(IdxFile test_y, ReadIdxFile(o.test_labels, ProcessCpuAllocator()));
  DFLOW_RETURN_IF_ERROR(CheckRange(train_x, train_y, o.train_begin, o.train_count, "train"));
  DFLOW_RETURN_IF_ERROR(CheckRange(test_x, test_y, o.test_begin, o.test_count, "test"));

  // The graph: variables on the parameter device, one tower per device.
  Scope root = Scope::NewRootScope();
  Scope params = root.WithDevice(o.param_device);
  Model model(params, o.model, o.seed);
  std::vector<Output> xs, ys, losses;
  std::vector<std::vector<GradAndVar>> tower_grads;
  for (int64_t t = 0; t < towers; ++t) {
    Scope tower = root.NewSubScope(absl::StrCat("tower_", t)).WithDevice(o.devices[t]);
    xs.push_back(Placeholder(tower.WithOpName("images"), DT_FLOAT, PartialShape({-1, 784})));
    ys.push_back(Placeholder(tower.WithOpName("labels"), DT_INT64, PartialShape({-1})));
    Output xent = SparseSoftmaxCrossEntropyWithLogits(tower, model.Logits(tower, xs[t]),
                                                      ys[t]).loss;
    losses.push_back(Mean(tower.WithOpName("loss"), xent, 0));
    DFLOW_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                           opt->ComputeGradients(tower, losses[t], model.variables()));
    tower_grads.push_back(std::move(grads));
  }
  std::vector<GradAndVar> grads = tower_grads[0];
  if (towers > 1) {
    DFLOW_ASSIGN_OR_RETURN(grads, AverageGradients(params, tower_grads));
  }
  DFLOW_ASSIGN_OR_RETURN(Operation train, opt->ApplyGradients(params, grads));
  Operation init = InitializeVariables(root, opt->AllVariables(model.variables()));
  // Evaluation: the number of correct predictions in a batch, on the first tower.
  Scope eval = root.NewSubScope("eval").WithDevice(o.devices[0]);
  Output eval_x = Placeholder(eval.WithOpName("images"), DT_FLOAT, PartialShape({-1, 784}));
  Output eval_y = Placeholder(eval.WithOpName("labels"), DT_INT64, PartialShape({-1}));
  Output predicted = ArgMax(eval, model.Logits(eval, eval_x), 1);
  Output correct = Sum(eval, Cast(eval, Equal(eval, predicted, eval_y), DT_INT64), 0);
  DFLOW_RETURN_IF_ERROR(root.status());

  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<ClientSession> session,
                         ClientSession::Create(root, o.config));
  DFLOW_RETURN_IF_ERROR(session->Run({}, {}, {init}, nullptr));

  MnistTrainResult result;
  std::vector<int64_t> order(o.train_count);
  std::iota(order.begin(), order.end(), o.train_begin);
  std::mt19937 rng(o.seed);
  const int64_t per_tower = o.batch / towers;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    double loss_sum = 0;
    int64_t epoch_steps = 0;
    for (int64_t start = 0; start + o.batch <= o.train_count; start += o.batch) {
      ClientSession::FeedType feeds;
      for (int64_t t = 0; t < towers; ++t) {
        DFLOW_ASSIGN_OR_RETURN(
            Batch b, MakeBatch(train_x, train_y, &order[start + t * per_tower], per_tower));
        feeds[xs[t]] = b.images;
        feeds[ys[t]] = b.labels;
      }
      std::vector<Tensor> out;
      auto begin = std::chrono::steady_clock::now();
      DFLOW_RETURN_IF_ERROR(session->Run(feeds, losses, {train}, &out));
      result.train_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      for (const Tensor& l : out) loss_sum += l.data<float>()[0] / towers;
      ++epoch_steps;
    }
    result.steps += epoch_steps;
    result.final_loss = epoch_steps == 0 ? 0 : loss_sum / epoch_steps;
    if (o.progress) {
      std::fprintf(stderr, "epoch %d: %lld steps, mean loss %.4f\n", epoch + 1,
                   static_cast<long long>(epoch_steps), result.final_loss);
    }
  }
  int64_t right = 0;
  std::vector<int64_t> rows(o.test_count);
  std::iota(rows.begin(), rows.end(), o.test_begin);
  for (int64_t start = 0; start < o.test_count; start += 500) {
    const int64_t n = std::min<int64_t>(500, o.test_count - start);
    DFLOW_ASSIGN_OR_RETURN(Batch b, MakeBatch(test_x, test_y, &rows[start], n));
    std::vector<Tensor> out;
    DFLOW_RETURN_IF_ERROR(
        session->Run({{eval_x, b.images}, {eval_y, b.labels}}, {correct}, &out));
    right += out[0].data<int64_t>()[0];
  }
  result.accuracy = static_cast<double>(right) / static_cast<double>(o.test_count);
  return result;
}

absl::StatusOr<GraphDef> MnistTrainingGraphDef(const MnistTrainOptions& o) {
  std::unique_ptr<Optimizer> opt = MakeOptimizer(o);
  if (opt == nullptr) return absl::InvalidArgumentError("unknown optimizer " + o.optimizer);
  Scope root = Scope::NewRootScope();
  Model model(root, o.model, o.seed);
  Output images = Placeholder(root.WithOpName("images"), DT_FLOAT, PartialShape({-1, 784}));
  Output labels = Placeholder(root.WithOpName("labels"), DT_INT64, PartialShape({-1}));
  Output logits = model.Logits(root, images);
  Output loss = Mean(root.WithOpName("loss"),
                     SparseSoftmaxCrossEntropyWithLogits(root, logits, labels).loss, 0);
  Mean(root.WithOpName("accuracy"),
       Cast(root, Equal(root, ArgMax(root, logits, 1), labels), DT_FLOAT), 0);
  DFLOW_ASSIGN_OR_RETURN(Operation train, opt->Minimize(root, loss, model.variables()));
  NoOp(root.WithOpName("train").WithControlDependencies(train));
  InitializeVariables(root, opt->AllVariables(model.variables()));
  GraphDef graph;
  DFLOW_RETURN_IF_ERROR(root.ToGraphDef(&graph));
  return graph;
}

}  // namespace dflow::examples
