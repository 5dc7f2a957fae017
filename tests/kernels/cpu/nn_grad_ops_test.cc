// SparseSoftmaxCrossEntropyWithLogits, ReluGrad, BroadcastGradientArgs and InTopKV2.
// Expected values from TF 2.21 (tf.raw_ops), errors included. SoftmaxCrossEntropyWithLogits
// (dense labels) and L2Loss against references computed here in double.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterNnGradKernels); }

std::string ErrorOf(const absl::StatusOr<std::vector<Tensor>>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

absl::StatusOr<std::vector<Tensor>> Xent(const Tensor& features, const Tensor& labels) {
  return OpTester("SparseSoftmaxCrossEntropyWithLogits", Registry())
      .Attr("T", features.dtype())
      .Attr("Tlabels", labels.dtype())
      .Input(features)
      .Input(labels)
      .Run();
}

const std::vector<float> kLogits = {1, 2, 3, -1, 0.5f, 100};

TEST_CASE("SparseSoftmaxCrossEntropyWithLogits matches TF, large logits too",
          "[kernels][nn_grad]") {
  SECTION("float, int32 labels") {
    auto out = Xent(Filled<float>({2, 3}, kLogits), Filled<int32_t>({2}, {2, 0}));
    REQUIRE(out.ok());
    CHECK(DimsOf((*out)[0]) == Dims{2});
    CHECK(DimsOf((*out)[1]) == Dims{2, 3});
    CheckNear(Values<float>((*out)[0]), {0.40760595f, 101.0f});
    CheckNear(Values<float>((*out)[1]),
              {0.09003057f, 0.24472848f, -0.33475906f, -1.0f, 0.0f, 1.0f});
  }
  SECTION("double, int64 labels") {
    std::vector<double> logits(kLogits.begin(), kLogits.end());
    auto out = Xent(Filled<double>({2, 3}, logits), Filled<int64_t>({2}, {1, 2}));
    REQUIRE(out.ok());
    CheckNear(Values<double>((*out)[0]), {1.407605964, 0.0}, 1e-9);
    const std::vector<double> backprop = Values<double>((*out)[1]);
    const std::vector<double> want = {9.003057317e-02, -7.552715289e-01, 6.652409558e-01, 0.0};
    CheckNear(std::vector<double>{backprop[0], backprop[1], backprop[2], backprop[5]}, want, 1e-9);
    CHECK(backprop[3] == Approx(1.368539471e-44).epsilon(1e-6));  // e^-101 in double
    CHECK(backprop[4] == Approx(6.133368390e-44).epsilon(1e-6));
  }
}

TEST_CASE("SparseSoftmaxCrossEntropyWithLogits rejects bad labels and shapes",
          "[kernels][nn_grad]") {
  const Tensor features = Filled<float>({2, 3}, kLogits);
  CHECK_THAT(ErrorOf(Xent(features, Filled<int32_t>({2}, {0, 3}))),
             Contains("Received a label value of 3 which is outside the valid range of "
                      "[0, 3).  Label values: 0 3"));
  CHECK_THAT(ErrorOf(Xent(features, Filled<int64_t>({2}, {-1, 0}))),
             Contains("Received a label value of -1 which is outside the valid range of "
                      "[0, 3).  Label values: -1 0"));
  CHECK_THAT(ErrorOf(Xent(features, Filled<int32_t>({3}, {0, 0, 0}))),
             Contains("logits and labels must have the same first dimension, got logits "
                      "shape [2,3] and labels shape [3]"));
  CHECK_THAT(ErrorOf(Xent(Filled<float>({6}, kLogits), Filled<int32_t>({2}, {0, 0}))),
             Contains("logits must be 2-D, but got shape [6]"));
}

// Dense softmax cross-entropy by definition, in double: per row, p = softmax(logits),
// loss = -sum(labels * log(p)), backprop = p - labels.
void DenseXentReference(const std::vector<double>& logits, const std::vector<double>& labels,
                        int64_t rows, std::vector<double>* loss, std::vector<double>* backprop) {
  const int64_t classes = static_cast<int64_t>(logits.size()) / rows;
  loss->assign(rows, 0.0);
  backprop->assign(logits.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double max = logits[r * classes];
    for (int64_t c = 1; c < classes; ++c) max = std::max(max, logits[r * classes + c]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(logits[r * classes + c] - max);
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t k = r * classes + c;
      const double p = std::exp(logits[k] - max) / sum;
      (*loss)[r] -= labels[k] * std::log(p);
      (*backprop)[k] = p - labels[k];
    }
  }
}

absl::StatusOr<std::vector<Tensor>> DenseXent(const Tensor& logits, const Tensor& labels) {
  return OpTester("SoftmaxCrossEntropyWithLogits", Registry())
      .Attr("T", logits.dtype())
      .Input(logits)
      .Input(labels)
      .Run();
}

TEST_CASE("SoftmaxCrossEntropyWithLogits gives softmax - labels and the cross-entropy",
          "[kernels][nn_grad]") {
  // Row 0: soft labels; row 1: one-hot on a class far below the maximum logit.
  const std::vector<double> logits = {1, 2, 3, -1, 0.5, 100};
  const std::vector<double> labels = {0.2, 0.3, 0.5, 0, 1, 0};
  std::vector<double> want_loss, want_backprop;
  DenseXentReference(logits, labels, 2, &want_loss, &want_backprop);
  SECTION("float") {
    auto out = DenseXent(Filled<float>({2, 3}, std::vector<float>(logits.begin(), logits.end())),
                         Filled<float>({2, 3}, std::vector<float>(labels.begin(), labels.end())));
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    REQUIRE(out->size() == 2);
    CHECK(DimsOf((*out)[0]) == Dims{2});
    CHECK(DimsOf((*out)[1]) == Dims{2, 3});
    const std::vector<float> loss = Values<float>((*out)[0]);
    const std::vector<float> backprop = Values<float>((*out)[1]);
    CheckNear(std::vector<double>(loss.begin(), loss.end()), want_loss, 1e-5);
    CheckNear(std::vector<double>(backprop.begin(), backprop.end()), want_backprop, 1e-6);
  }
  SECTION("double") {
    auto out = DenseXent(Filled<double>({2, 3}, logits), Filled<double>({2, 3}, labels));
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CheckNear(Values<double>((*out)[0]), want_loss, 1e-12);
    CheckNear(Values<double>((*out)[1]), want_backprop, 1e-12);
  }
  // Each backprop row sums to sum(softmax) - sum(labels) = 1 - 1.
  auto out = DenseXent(Filled<double>({2, 3}, logits), Filled<double>({2, 3}, labels));
  REQUIRE(out.ok());
  const std::vector<double> b = Values<double>((*out)[1]);
  CHECK(b[0] + b[1] + b[2] == Approx(0.0).margin(1e-12));
  CHECK(b[3] + b[4] + b[5] == Approx(0.0).margin(1e-12));
}

TEST_CASE("SoftmaxCrossEntropyWithLogits rejects mismatched and non-2-D shapes",
          "[kernels][nn_grad]") {
  CHECK_THAT(ErrorOf(DenseXent(Filled<float>({2, 3}, kLogits), Filled<float>({2, 2}, {}))),
             Contains("logits and labels must be broadcastable: logits_size=[2,3] "
                      "labels_size=[2,2]"));
  CHECK_THAT(ErrorOf(DenseXent(Filled<float>({6}, kLogits), Filled<float>({6}, kLogits))),
             Contains("logits and labels must be either 2-dimensional, or broadcasted to be "
                      "2-dimensional"));
}

TEST_CASE("L2Loss is sum(x^2) / 2", "[kernels][nn_grad]") {
  const std::vector<double> x = {1.5, -2, 0.25, 3, -0.5, 4};
  double want = 0;
  for (double v : x) want += v * v;
  want /= 2;
  auto f = OpTester("L2Loss", Registry())
               .Attr("T", DT_FLOAT)
               .Input(Filled<float>({2, 3}, std::vector<float>(x.begin(), x.end())))
               .RunOne();
  INFO(f.status().ToString());
  REQUIRE(f.ok());
  CHECK(DimsOf(*f) == Dims{});
  CHECK(f->scalar<float>() == Approx(want).epsilon(1e-6));
  auto d =
      OpTester("L2Loss", Registry()).Attr("T", DT_DOUBLE).Input(Filled<double>({2, 3}, x)).RunOne();
  REQUIRE(d.ok());
  CHECK(d->scalar<double>() == Approx(want).epsilon(1e-15));
  auto empty = OpTester("L2Loss", Registry())
                   .Attr("T", DT_FLOAT)
                   .Input(Filled<float>({0, 3}, {}))
                   .RunOne();
  REQUIRE(empty.ok());
  CHECK(empty->scalar<float>() == 0.0f);
}

TEST_CASE("ReluGrad passes gradients where features > 0", "[kernels][nn_grad]") {
  auto out = OpTester("ReluGrad", Registry())
                 .Attr("T", DT_FLOAT)
                 .Input(Filled<float>({4}, {1, 2, 3, 4}))
                 .Input(Filled<float>({4}, {-1, 0, 0.5f, 2}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<float>(*out) == std::vector<float>{0, 0, 3, 4});

  auto doubles = OpTester("ReluGrad", Registry())
                     .Attr("T", DT_DOUBLE)
                     .Input(Filled<double>({2, 1}, {5, 6}))
                     .Input(Filled<double>({2, 1}, {1e-300, -1e-300}))
                     .RunOne();
  REQUIRE(doubles.ok());
  CHECK(Values<double>(*doubles) == std::vector<double>{5, 0});

  auto mismatch = OpTester("ReluGrad", Registry())
                      .Attr("T", DT_FLOAT)
                      .Input(Filled<float>({2}, {1, 2}))
                      .Input(Filled<float>({3}, {1, 2, 3}))
                      .Run();
  CHECK_THAT(ErrorOf(mismatch), Contains("must have the same size and shape.  Input 0: [2] != "
                                         "input 1: [3]"));
}

TEST_CASE("BiasAddGrad sums all but the channel dim, NHWC and NCHW", "[kernels][nn_grad]") {
  auto nhwc = OpTester("BiasAddGrad", Registry())
                  .Attr("T", DT_FLOAT)
                  .Input(Filled<float>({2, 1, 3}, {1, 2, 3, 10, 20, 30}))
                  .RunOne();
  REQUIRE(nhwc.ok());
  CHECK(Values<float>(*nhwc) == std::vector<float>{11, 22, 33});
  auto nchw = OpTester("BiasAddGrad", Registry())
                  .Attr("T", DT_DOUBLE)
                  .Attr("data_format", "NCHW")
                  .Input(Filled<double>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))
                  .RunOne();
  REQUIRE(nchw.ok());
  CHECK(Values<double>(*nchw) == std::vector<double>{1 + 2 + 5 + 6, 3 + 4 + 7 + 8});
  auto vector = OpTester("BiasAddGrad", Registry()).Attr("T", DT_FLOAT)
                    .Input(Filled<float>({3}, {1, 2, 3})).Run();
  CHECK_THAT(ErrorOf(vector), Contains("Input tensor must be at least 2D: [3]"));
}

TEST_CASE("BiasAddGrad over many NHWC rows: chunks, row groups and their tails",
          "[kernels][nn_grad]") {
  // Channel counts whose row groups differ (6: 4 rows of 24 lanes; 16: one row; 5: 8
  // rows; 300: rows as they are), rows spanning several chunks with a ragged last one
  // and a tail shorter than a group; integer values, so any order gives exact sums.
  for (int64_t channels : {6, 16, 5, 300}) {
    for (int64_t rows : {int64_t{1}, int64_t{7}, int64_t{2048 * 3 + 13}}) {
      INFO(rows << " rows of " << channels);
      std::vector<float> g(rows * channels);
      std::vector<double> want(channels, 0.0);
      for (int64_t i = 0; i < rows * channels; ++i) {
        g[i] = static_cast<float>((i * 7919) % 23) - 11.0f;
        want[i % channels] += g[i];
      }
      auto got = OpTester("BiasAddGrad", Registry())
                     .Attr("T", DT_FLOAT)
                     .Input(Filled<float>({rows, channels}, g))
                     .RunOne();
      REQUIRE(got.ok());
      const std::vector<float> sums = Values<float>(*got);
      for (int64_t c = 0; c < channels; ++c) CHECK(sums[c] == static_cast<float>(want[c]));
    }
  }
}

template <typename T>
absl::StatusOr<std::vector<Tensor>> GradientArgs(const std::vector<T>& s0,
                                                 const std::vector<T>& s1) {
  return OpTester("BroadcastGradientArgs", Registry())
      .Attr("T", DataTypeOf<T>())
      .Input(Filled<T>({static_cast<int64_t>(s0.size())}, s0))
      .Input(Filled<T>({static_cast<int64_t>(s1.size())}, s1))
      .Run();
}

TEST_CASE("BroadcastGradientArgs reduces as TF's BCast does", "[kernels][nn_grad]") {
  struct Case {
    std::vector<int32_t> s0, s1, r0, r1;
  };
  // From tf.raw_ops.BroadcastGradientArgs.
  const std::vector<Case> cases = {
      {{2, 3, 5}, {5}, {}, {0, 1}},
      {{2, 1}, {2, 1}, {}, {}},  // equal shapes reduce nothing, 1-dims included
      {{1}, {1, 1}, {0, 1}, {0, 1}},
      {{2, 3, 1}, {1, 3, 4}, {2}, {0}},
      {{}, {3}, {0}, {}},
      {{1, 1}, {1}, {0, 1}, {0, 1}},
      {{4, 1, 3}, {1, 1, 3}, {1}, {0, 1}},
      {{5}, {}, {}, {0}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.s0, c.s1);
    auto out = GradientArgs<int32_t>(c.s0, c.s1);
    REQUIRE(out.ok());
    CHECK(Values<int32_t>((*out)[0]) == c.r0);
    CHECK(Values<int32_t>((*out)[1]) == c.r1);
  }
  auto wide = GradientArgs<int64_t>({7, 1, 3}, {2, 1});
  REQUIRE(wide.ok());
  CHECK(Values<int64_t>((*wide)[0]) == std::vector<int64_t>{1});
  CHECK(Values<int64_t>((*wide)[1]) == std::vector<int64_t>{0, 2});
  CHECK_THAT(ErrorOf(GradientArgs<int32_t>({2, 3}, {3, 2})),
             Contains("Incompatible shapes: [2,3] vs. [3,2]"));
}

template <typename Index>
std::vector<bool> InTopK(const std::vector<float>& predictions, int64_t rows,
                         const std::vector<Index>& targets, Index k) {
  auto out = OpTester("InTopKV2", Registry())
                 .Attr("T", DataTypeOf<Index>())
                 .Input(Filled<float>({rows, static_cast<int64_t>(predictions.size()) / rows},
                                      predictions))
                 .Input(Filled<Index>({static_cast<int64_t>(targets.size())}, targets))
                 .Input(Filled<Index>({}, {k}))
                 .RunOne();
  REQUIRE(out.ok());
  return Values<bool>(*out);
}

TEST_CASE("InTopKV2 counts strictly greater predictions; non-finite rows say false",
          "[kernels][nn_grad]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> p = {0.1f, 0.3f, 0.3f, 0.2f, 1, 2, 3, 4,
                                nan,  1,    2,    3,    1, inf, 0, 0};
  const std::vector<int32_t> targets = {2, 3, 1, 0};
  // From tf.raw_ops.InTopKV2: ties count for the target (row 0, k = 1).
  CHECK(InTopK<int32_t>(p, 4, targets, 0) == std::vector<bool>{false, false, false, false});
  CHECK(InTopK<int32_t>(p, 4, targets, 1) == std::vector<bool>{true, true, false, false});
  CHECK(InTopK<int32_t>(p, 4, targets, 3) == std::vector<bool>{true, true, false, false});
  const std::vector<float> two_rows(p.begin(), p.begin() + 8);
  CHECK(InTopK<int64_t>(two_rows, 2, {4, -1}, 2) == std::vector<bool>{false, false});
  CHECK(InTopK<int64_t>(two_rows, 2, {3, 0}, 4) == std::vector<bool>{true, true});
  CHECK(InTopK<int64_t>(two_rows, 2, {0, 1}, 3) == std::vector<bool>{false, true});
}

TEST_CASE("SoftmaxCrossEntropyWithLogits broadcasts a [1, C] operand as TF does",
          "[kernels][nn_grad]") {
  // One label row for a batch of two: the same as the label repeated.
  auto broadcast = OpTester("SoftmaxCrossEntropyWithLogits", Registry())
                       .Attr("T", DT_FLOAT)
                       .Input(Filled<float>({2, 3}, {1, 2, 3, 0, 0, 0}))
                       .Input(Filled<float>({1, 3}, {0, 0, 1}))
                       .Run();
  auto repeated = OpTester("SoftmaxCrossEntropyWithLogits", Registry())
                      .Attr("T", DT_FLOAT)
                      .Input(Filled<float>({2, 3}, {1, 2, 3, 0, 0, 0}))
                      .Input(Filled<float>({2, 3}, {0, 0, 1, 0, 0, 1}))
                      .Run();
  REQUIRE(broadcast.ok());
  REQUIRE(repeated.ok());
  CHECK(Values<float>((*broadcast)[0]) == Values<float>((*repeated)[0]));
  CHECK(Values<float>((*broadcast)[1]) == Values<float>((*repeated)[1]));
}

}  // namespace
}  // namespace dflow
