// FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3 CPU kernels
// (kernels/cpu/fused_batch_norm_op.cc) against TensorFlow 2.21's own numbers, a reference
// written here, and TF's error cases.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::OpTester;
using testing::RandomValues;
using testing::Sequence;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterFusedBatchNormKernels);
}

// The op's inputs other than x.
struct Params {
  std::vector<float> scale, offset, mean, variance;
};

OpTester BatchNormTester(const std::string& op, const Tensor& x, const Params& p, bool training,
                         float epsilon, const char* format = "NHWC") {
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Attr("epsilon", epsilon).Attr("is_training", training);
  t.Attr("data_format", format);
  if (op != "FusedBatchNorm") t.Attr("U", DT_FLOAT);
  t.Input(x).Input(Vec(p.scale)).Input(Vec(p.offset)).Input(Vec(p.mean)).Input(Vec(p.variance));
  return t;
}

// TF's reference input: x = Sequence(36, 7, 13, 6, 0.25) as [2, 3, 3, 2] NHWC.
const std::vector<float>& TfX() {
  static const std::vector<float> x = Sequence(36, 7, 13, 6, 0.25f);
  return x;
}

const Params kTfParams = {{1.0f, 0.5f}, {0.1f, -0.2f}, {0.1f, -0.3f}, {0.5f, 2.0f}};

// y of tf.raw_ops.FusedBatchNormV3(x=TfX(), is_training=False, epsilon=0.001, kTfParams).
const std::vector<float> kTfInferenceY = {
    -2.1604826f,   -0.0055942237f, -1.8072821f, 0.082772031f,   -1.4540817f,  0.17113827f,
    -1.1008813f,   0.25950456f,    -0.7476809f, 0.34787083f,    -0.39448053f, 0.4362371f,
    -0.041280158f, -0.62415808f,   0.31192023f, -0.53579181f,   0.66512066f,  -0.44742554f,
    1.0183209f,    -0.35905927f,   1.3715214f,  -0.270693f,     1.7247217f,   -0.18232675f,
    2.0779221f,    -0.093960486f,  -2.1604826f, -0.0055942237f, -1.8072821f,  0.082772031f,
    -1.4540817f,   0.17113827f,    -1.1008813f, 0.25950456f,    -0.7476809f,  0.34787083f};

TEST_CASE("FusedBatchNormV3 inference matches TensorFlow, NHWC and NCHW") {
  for (bool nchw : {false, true}) {
    INFO((nchw ? "NCHW" : "NHWC"));
    Tensor x = nchw ? Filled<float>({2, 2, 3, 3}, testing::NhwcToNchw(TfX(), 2, 3, 3, 2))
                    : Filled<float>({2, 3, 3, 2}, TfX());
    auto out =
        BatchNormTester("FusedBatchNormV3", x, kTfParams, false, 0.001f, nchw ? "NCHW" : "NHWC")
            .Run();
    REQUIRE(out.ok());
    REQUIRE(out->size() == 6);
    std::vector<float> y = Values<float>((*out)[0]);
    if (nchw) y = testing::NchwToNhwc(y, 2, 2, 3, 3);
    CheckNear(y, kTfInferenceY, 1e-5);
    // TF hands back the mean and variance inputs; the reserve spaces are zeros here (TF
    // leaves them uninitialised) and reserve_space_3 is a scalar 0.
    CHECK(Values<float>((*out)[1]) == kTfParams.mean);
    CHECK(Values<float>((*out)[2]) == kTfParams.variance);
    CHECK(Values<float>((*out)[3]) == std::vector<float>{0.0f, 0.0f});
    CHECK(Values<float>((*out)[4]) == std::vector<float>{0.0f, 0.0f});
    CHECK((*out)[5].shape() == TensorShape({}));
    CHECK(Values<float>((*out)[5]) == std::vector<float>{0.0f});
  }
}

TEST_CASE("FusedBatchNorm and FusedBatchNormV2 have five outputs and the same y") {
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2"}) {
    INFO(op);
    auto out =
        BatchNormTester(op, Filled<float>({2, 3, 3, 2}, TfX()), kTfParams, false, 0.001f).Run();
    REQUIRE(out.ok());
    REQUIRE(out->size() == 5);
    CheckNear(Values<float>((*out)[0]), kTfInferenceY, 1e-5);
    CHECK(Values<float>((*out)[1]) == kTfParams.mean);
  }
}

TEST_CASE("FusedBatchNormV3 training matches TensorFlow") {
  SECTION("NHWC, exponential_avg_factor 1: the old mean and variance may be empty") {
    const Params p = {{1.0f, 0.5f}, {0.1f, -0.2f}, {}, {}};
    auto out =
        BatchNormTester("FusedBatchNormV3", Filled<float>({2, 3, 3, 2}, TfX()), p, true, 0.001f)
            .Run();
    REQUIRE(out.ok());
    CheckNear(Values<float>((*out)[0]),
              {-1.2116538f,  -0.17641866f, -0.94336104f, -0.034930617f, -0.6750682f,  0.10655741f,
               -0.40677539f, 0.24804543f,  -0.13848251f, 0.38953346f,   0.12981033f,  0.53102148f,
               0.39810318f,  -1.166835f,   0.66639602f,  -1.0253469f,   0.93468887f,  -0.8838588f,
               1.2029817f,   -0.74237078f, 1.4712746f,   -0.60088277f,  1.7395674f,   -0.45939469f,
               2.0078602f,   -0.31790668f, -1.2116538f,  -0.17641866f,  -0.94336104f, -0.034930617f,
               -0.6750682f,  0.10655741f,  -0.40677539f, 0.24804543f,   -0.13848251f, 0.38953346f},
              1e-5);
    CheckNear(Values<float>((*out)[1]), {-0.27777779f, 0.20833333f}, 1e-6);
    // batch_variance carries Bessel's n / (n - 1) (18 / 17); reserve_space_2 does not.
    CheckNear(Values<float>((*out)[2]), {0.91830075f, 0.82536769f}, 1e-6);
    CheckNear(Values<float>((*out)[3]), {-0.27777779f, 0.20833333f}, 1e-6);
    CheckNear(Values<float>((*out)[4]), {0.867284f, 0.7795139f}, 1e-6);
  }
  SECTION("NCHW, exponential_avg_factor 0.25 averages with the old statistics") {
    const std::vector<float> x = {-2.0f, 3.0f,  2.5f,  2.0f,  1.5f, 1.0f, 0.5f,  0.0f,
                                  -0.5f, -1.0f, -1.5f, -2.0f, 0.5f, 0.0f, -0.5f, -1.0f,
                                  -1.5f, -2.0f, 3.0f,  2.5f,  2.0f, 1.5f, 1.0f,  0.5f};
    auto out = BatchNormTester("FusedBatchNormV3", Filled<float>({1, 2, 3, 4}, x), kTfParams, true,
                               0.01f, "NCHW")
                   .Attr("exponential_avg_factor", 0.25f)
                   .Run();
    REQUIRE(out.ok());
    CheckNear(Values<float>((*out)[0]),
              {-1.2746735f, 1.724614f,     1.4246854f,   1.1247566f,   0.82482779f,   0.52489907f,
               0.22497031f, -0.074958451f, -0.3748872f,  -0.67481595f, -0.97474468f,  -1.2746735f,
               -0.2f,       -0.36478543f,  -0.52957082f, -0.69435626f, -0.85914165f,  -1.0239271f,
               0.62392706f, 0.45914167f,   0.29435623f,  0.12957083f,  -0.035214588f, -0.2f},
              1e-5);
    CheckNear(Values<float>((*out)[1]), {0.14791667f, -0.10000001f}, 1e-6);
    CheckNear(Values<float>((*out)[2]), {1.1302084f, 2.125f}, 1e-6);
    CheckNear(Values<float>((*out)[3]), {0.29166669f, 0.5f}, 1e-6);
    CheckNear(Values<float>((*out)[4]), {2.7690973f, 2.2916667f}, 1e-6);
  }
  SECTION("one element per channel: no Bessel correction, variance 0") {
    const Params p = {{1.0f, 0.5f}, {0.1f, -0.2f}, {}, {}};
    auto out = BatchNormTester("FusedBatchNormV3", Filled<float>({1, 1, 1, 2}, {3.0f, -2.0f}), p,
                               true, 0.001f)
                   .Run();
    REQUIRE(out.ok());
    CheckNear(Values<float>((*out)[0]), {0.1f, -0.2f}, 1e-6);
    CHECK(Values<float>((*out)[1]) == std::vector<float>{3.0f, -2.0f});
    CHECK(Values<float>((*out)[2]) == std::vector<float>{0.0f, 0.0f});
  }
}

TEST_CASE("FusedBatchNormV3 on 5-D NDHWC input matches TensorFlow") {
  Tensor x = Filled<float>({1, 2, 2, 2, 3}, Sequence(24, 7, 13, 6, 0.25f));
  const Params p = {
      {1.0f, 2.0f, 0.5f}, {0.0f, 1.0f, -1.0f}, {0.5f, 0.0f, -0.5f}, {1.0f, 0.25f, 4.0f}};
  auto infer = BatchNormTester("FusedBatchNormV3", x, p, false, 0.001f, "NDHWC").Run();
  REQUIRE(infer.ok());
  CheckNear(Values<float>((*infer)[0]),
            {-1.9990008f, 1.9980061f,  -1.1874766f,  0.0f,         -2.9920242f,   -0.68753904f,
             -1.2493755f, 4.9920244f,  -1.0f,        0.74962533f,  0.0019939542f, -0.50006247f,
             -0.4997502f, -4.9880362f, -0.81252342f, -1.7491257f,  2.9960122f,    -1.1249844f,
             0.2498751f,  -1.9940181f, -0.62504685f, -0.99950039f, 5.9900303f,    -0.93750781f},
            1e-5);
  auto train = BatchNormTester("FusedBatchNormV3", x, p, true, 0.001f, "NDHWC").Run();
  REQUIRE(train.ok());
  CheckNear(Values<float>((*train)[0]),
            {-1.4313362f,  1.6815886f,   -1.7156681f,  0.74974751f,  -1.0447659f, -0.62512624f,
             -0.61342978f, 3.3174014f,   -1.3067149f,  1.5676539f,   0.59104681f, -0.21617305f,
             0.20447659f,  -2.1353078f,  -0.8977617f,  -1.1587007f,  2.2268596f,  -1.5793504f,
             1.022383f,    -0.49949503f, -0.48880851f, -0.34079432f, 3.8626723f,  -1.1703972f},
            1e-5);
  CheckNear(Values<float>((*train)[1]), {-0.1875f, -0.0625f, 0.0625f}, 1e-6);
  CheckNear(Values<float>((*train)[2]), {0.95982146f, 0.95982146f, 0.95982146f}, 1e-6);
}

// y, the batch mean and the biased batch variance by definition, in double, for NHWC x.
struct Reference {
  std::vector<float> y, mean, variance;
};

Reference NaiveTraining(const std::vector<float>& x, int64_t channels, const Params& p,
                        float epsilon) {
  const int64_t n = static_cast<int64_t>(x.size()) / channels;
  Reference r;
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i * channels + c];
    const double mean = sum / n;
    for (int64_t i = 0; i < n; ++i)
      squares += (x[i * channels + c] - mean) * (x[i * channels + c] - mean);
    r.mean.push_back(static_cast<float>(mean));
    r.variance.push_back(static_cast<float>(squares / n));
  }
  r.y.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = static_cast<int64_t>(i) % channels;
    r.y[i] = static_cast<float>(
        (x[i] - r.mean[c]) / std::sqrt(r.variance[c] + epsilon) * p.scale[c] + p.offset[c]);
  }
  return r;
}

TEST_CASE("FusedBatchNormV3 training on a batch large enough to shard over the pool") {
  const int64_t n = 6, h = 17, w = 15, c = 24;
  const std::vector<float> x = RandomValues(n * h * w * c, 5);
  Params p = {RandomValues(c, 6), RandomValues(c, 7), {}, {}};
  const Reference want = NaiveTraining(x, c, p, 0.001f);
  for (bool nchw : {false, true}) {
    INFO((nchw ? "NCHW" : "NHWC"));
    Tensor input = nchw ? Filled<float>({n, c, h, w}, testing::NhwcToNchw(x, n, h, w, c))
                        : Filled<float>({n, h, w, c}, x);
    auto out =
        BatchNormTester("FusedBatchNormV3", input, p, true, 0.001f, nchw ? "NCHW" : "NHWC").Run();
    REQUIRE(out.ok());
    std::vector<float> y = Values<float>((*out)[0]);
    if (nchw) y = testing::NchwToNhwc(y, n, c, h, w);
    CheckNear(y, want.y, 1e-4);
    CheckNear(Values<float>((*out)[3]), want.mean, 1e-5);
    CheckNear(Values<float>((*out)[4]), want.variance, 1e-5);
  }
}

TEST_CASE("FusedBatchNormV3 on an empty batch: NaN batch statistics, as TF") {
  for (bool training : {false, true}) {
    INFO("is_training " << training);
    auto out = BatchNormTester("FusedBatchNormV3", Filled<float>({0, 3, 3, 2}, {}), kTfParams,
                               training, 0.001f)
                   .Run();
    REQUIRE(out.ok());
    CHECK((*out)[0].shape() == TensorShape({0, 3, 3, 2}));
    for (int i = 1; i <= 2; ++i) {
      for (float v : Values<float>((*out)[i])) CHECK(std::isnan(v));
    }
  }
}

// The status of a FusedBatchNormV3 on x of `x_shape` with `p`.
absl::Status BatchNormError(const std::vector<int64_t>& x_shape, const Params& p, bool training,
                            float avg_factor = 1.0f) {
  int64_t count = 1;
  for (int64_t d : x_shape) count *= d;
  return BatchNormTester("FusedBatchNormV3", Filled<float>(x_shape, RandomValues(count, 1)), p,
                         training, 0.001f)
      .Attr("exponential_avg_factor", avg_factor)
      .Run()
      .status();
}

TEST_CASE("FusedBatchNormV3 rejects bad shapes with TF's errors") {
  auto invalid = [](const absl::Status& s, const std::string& text) {
    INFO(s.ToString());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find(text) != std::string::npos);
  };
  // TF 2.21's texts (no separator before the shapes).
  invalid(BatchNormError({3, 3, 2}, kTfParams, false), "input must be 4 or 5-dimensional[3,3,2]");
  invalid(BatchNormError({1, 1, 1, 1, 2, 3, 3, 2}, kTfParams, false),
          "input must be 4 or 5-dimensional[1,1,1,1,2,3,3,2]");
  Params p = kTfParams;
  p.scale = {1, 2, 3};
  invalid(BatchNormError({2, 3, 3, 2}, p, false),
          "scale must have the same number of elements as the channels of x, got 3 and 2");
  p = kTfParams;
  p.offset = {1, 2, 3};
  invalid(BatchNormError({2, 3, 3, 2}, p, false),
          "offset must have the same number of elements as the channels of x, got 3 and 2");
  p = kTfParams;
  p.mean = {1, 2, 3};
  invalid(BatchNormError({2, 3, 3, 2}, p, false),
          "When is_training=false, mean must have the same number of elements as the channels of "
          "x, got 3 and 2");
  p = kTfParams;
  p.variance = {1, 2, 3};
  invalid(BatchNormError({2, 3, 3, 2}, p, false),
          "When is_training=false, variance must have the same number of elements as the channels "
          "of x, got 3 and 2");
  p = kTfParams;
  p.mean = {};
  p.variance = {};
  CHECK(BatchNormError({2, 3, 3, 2}, p, true).ok());
  invalid(BatchNormError({2, 3, 3, 2}, p, true, 0.5f),
          "When exponential_avg_factor != 1, mean must have the same number of elements as the "
          "channels of x, got 0 and 2");
  // Rank-2 scale: TF's "scale must be 1-dimensional[1,2]".
  auto rank2 = OpTester("FusedBatchNormV3", Registry())
                   .Attr("T", DT_FLOAT)
                   .Attr("U", DT_FLOAT)
                   .Attr("is_training", false)
                   .Input(Filled<float>({2, 3, 3, 2}, TfX()))
                   .Input(Filled<float>({1, 2}, {1, 1}))
                   .Input(Vec(kTfParams.offset))
                   .Input(Vec(kTfParams.mean))
                   .Input(Vec(kTfParams.variance))
                   .Run();
  invalid(rank2.status(), "scale must be 1-dimensional[1,2]");
}

}  // namespace
}  // namespace dflow
