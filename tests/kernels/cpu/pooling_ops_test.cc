// MaxPool, MaxPoolV2 and AvgPool CPU kernels (oneDNN, kernels/cpu/pooling_ops.cc)
// against naive pooling written here, TensorFlow's own numbers, and TF's error cases.
#include <algorithm>
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
using testing::RefWindow;
using testing::RefWindowFor;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterPoolingKernels); }

struct PoolCase {
  int64_t n, h, w, c;
  int64_t kh, kw, sh, sw;
  std::string padding;
};

// Max or mean over the window positions inside the input (TF ignores SAME padding in
// both: AvgPool divides by the number of real elements).
std::vector<float> NaivePool(const PoolCase& k, const std::vector<float>& x, bool max,
                             std::vector<int64_t>* shape) {
  const RefWindow rows = RefWindowFor(k.padding, k.h, k.kh, k.sh, 1);
  const RefWindow cols = RefWindowFor(k.padding, k.w, k.kw, k.sw, 1);
  *shape = {k.n, rows.out, cols.out, k.c};
  std::vector<float> out;
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < rows.out; ++oy)
      for (int64_t ox = 0; ox < cols.out; ++ox)
        for (int64_t ch = 0; ch < k.c; ++ch) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int count = 0;
          for (int64_t i = 0; i < k.kh; ++i)
            for (int64_t j = 0; j < k.kw; ++j) {
              const int64_t y = oy * k.sh - rows.pad_before + i;
              const int64_t xx = ox * k.sw - cols.pad_before + j;
              if (y < 0 || y >= k.h || xx < 0 || xx >= k.w) continue;
              const double v = x[((b * k.h + y) * k.w + xx) * k.c + ch];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          out.push_back(static_cast<float>(max ? acc : acc / count));
        }
  return out;
}

OpTester PoolTester(const std::string& op, const PoolCase& k, bool nchw) {
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", k.padding.c_str());
  if (nchw) {
    t.Attr("data_format", "NCHW")
        .Attr("ksize", std::vector<int64_t>{1, 1, k.kh, k.kw})
        .Attr("strides", std::vector<int64_t>{1, 1, k.sh, k.sw});
  } else {
    t.Attr("ksize", std::vector<int64_t>{1, k.kh, k.kw, 1})
        .Attr("strides", std::vector<int64_t>{1, k.sh, k.sw, 1});
  }
  return t;
}

void CheckAgainstNaive(const std::string& op, const PoolCase& k, bool nchw, uint32_t seed) {
  INFO(op << " n=" << k.n << " " << k.h << "x" << k.w << "x" << k.c << " window " << k.kh << "x"
          << k.kw << " s" << k.sh << "," << k.sw << " " << k.padding << (nchw ? " NCHW" : " NHWC"));
  const std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, seed);
  std::vector<int64_t> s;
  const std::vector<float> want = NaivePool(k, x, op == "MaxPool", &s);
  Tensor input =
      nchw ? Filled<float>({k.n, k.c, k.h, k.w}, testing::NhwcToNchw(x, k.n, k.h, k.w, k.c))
           : Filled<float>({k.n, k.h, k.w, k.c}, x);
  auto out = PoolTester(op, k, nchw).Input(input).RunOne();
  REQUIRE(out.ok());
  const std::vector<int64_t> want_dims = nchw ? std::vector<int64_t>{s[0], s[3], s[1], s[2]} : s;
  const auto got_dims = out->shape().dim_sizes();
  CHECK(std::vector<int64_t>(got_dims.begin(), got_dims.end()) == want_dims);
  std::vector<float> got = Values<float>(*out);
  if (nchw) got = testing::NchwToNhwc(got, s[0], s[3], s[1], s[2]);
  CheckNear(got, want, 1e-5);
}

TEST_CASE("MaxPool and AvgPool match numbers computed by TensorFlow") {
  // x = seq(50, 7, 13, 6, 0.25) as [1,5,5,2] (testing::Sequence); window 3, stride 2, SAME.
  Tensor x = Filled<float>({1, 5, 5, 2}, testing::Sequence(50, 7, 13, 6, 0.25f));
  const PoolCase k = {1, 5, 5, 2, 3, 3, 2, 2, "SAME"};
  auto max = PoolTester("MaxPool", k, false).Input(x).RunOne();
  REQUIRE(max.ok());
  CHECK(max->shape() == TensorShape({1, 3, 3, 2}));
  CheckNear(Values<float>(*max), {0.0f, 1.5f, 0.5f, 1.0f, 0.75f, 1.25f, 1.25f, 1.5f, 1.5f, 1.5f,
                                  0.75f, 1.5f, 0.5f, 1.0f, 1.0f, 1.5f, 1.25f, 1.5f});
  auto avg = PoolTester("AvgPool", k, false).Input(x).RunOne();
  REQUIRE(avg.ok());
  CheckNear(Values<float>(*avg),
            {-0.75f, 0.1875f, -0.375f, -0.25f, 0.0f, 0.125f, 0.0416667f, 0.166667f, 0.0555556f,
             0.0f, -0.291667f, -0.166667f, -0.25f, -0.125f, 0.125f, 0.25f, 0.5f, -0.1875f},
            1e-5);
}

TEST_CASE("MaxPool and AvgPool match naive pooling, NHWC and NCHW") {
  const std::vector<PoolCase> cases = {
      {1, 4, 4, 1, 2, 2, 2, 2, "VALID"},
      {2, 5, 5, 3, 3, 3, 2, 2, "SAME"},
      {2, 6, 7, 4, 3, 3, 1, 1, "SAME"},
      {1, 7, 9, 2, 2, 3, 1, 2, "SAME"},
      {3, 9, 8, 5, 3, 2, 3, 2, "VALID"},
      {1, 3, 3, 2, 5, 5, 1, 1, "SAME"},    // window larger than the input
      {1, 6, 6, 16, 2, 2, 2, 2, "VALID"},  // blocked channels
      {2, 28, 28, 6, 2, 2, 2, 2, "VALID"},
      {1, 5, 5, 3, 1, 1, 2, 2, "VALID"},
  };
  uint32_t seed = 1;
  for (const PoolCase& k : cases) {
    for (const char* op : {"MaxPool", "AvgPool"}) {
      CheckAgainstNaive(op, k, false, seed);
      CheckAgainstNaive(op, k, true, seed);
    }
    ++seed;
  }
}

TEST_CASE("Pooling on batches large enough to shard over the pool") {
  for (const char* op : {"MaxPool", "AvgPool"}) {
    CheckAgainstNaive(op, {257, 28, 28, 6, 2, 2, 2, 2, "VALID"}, false, 5);
    CheckAgainstNaive(op, {129, 17, 17, 8, 3, 3, 2, 2, "SAME"}, true, 6);
  }
}

TEST_CASE("Pooling of one image runs in bands of output rows on the pool") {
  // pool_primitive.h RunPool: >= 2M window reads, the pool's 2 threads; each band keeps
  // the padding of the edge it touches (AvgPool excludes it).
  for (const char* op : {"MaxPool", "AvgPool"}) {
    CheckAgainstNaive(op, {1, 96, 96, 32, 3, 3, 1, 1, "SAME"}, false, 7);
    CheckAgainstNaive(op, {1, 101, 90, 40, 3, 2, 1, 1, "SAME"}, false, 8);
  }
}

TEST_CASE("MaxPoolV2 takes ksize and strides as inputs") {
  const PoolCase k = {2, 7, 6, 3, 3, 2, 2, 2, "SAME"};
  const std::vector<float> x = RandomValues(2 * 7 * 6 * 3, 9);
  std::vector<int64_t> shape;
  const std::vector<float> want = NaivePool(k, x, true, &shape);
  auto out = OpTester("MaxPoolV2", Registry())
                 .Attr("T", DT_FLOAT)
                 .Attr("padding", "SAME")
                 .Input(Filled<float>({2, 7, 6, 3}, x))
                 .Input(Filled<int32_t>({4}, {1, 3, 2, 1}))
                 .Input(Filled<int32_t>({4}, {1, 2, 2, 1}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 4, 3, 3}));
  CheckNear(Values<float>(*out), want, 1e-6);
  auto bad = OpTester("MaxPoolV2", Registry())
                 .Attr("T", DT_FLOAT)
                 .Attr("padding", "SAME")
                 .Input(Filled<float>({2, 7, 6, 3}, x))
                 .Input(Filled<int32_t>({3}, {3, 2, 1}))
                 .Input(Filled<int32_t>({4}, {1, 2, 2, 1}))
                 .RunOne();
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("MaxPool with EXPLICIT pads ignores them; on x >= 0 it is the pool of zero-padded x") {
  // ResNet50's first pool: 3x3, stride 2, one pixel of padding each side (graph/fusion.h
  // folds Keras' ZeroPadding2D of a Relu's output into these pads). Asymmetric pads too.
  const int64_t n = 2, h = 9, w = 11, c = 4;
  const std::vector<int64_t> pads = {1, 2, 1, 0};  // top, bottom, left, right
  std::vector<float> x = RandomValues(n * h * w * c, 5);
  for (float& v : x) v = std::abs(v);
  const int64_t ph = h + pads[0] + pads[1], pw = w + pads[2] + pads[3];
  std::vector<float> padded(n * ph * pw * c, 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t xx = 0; xx < w; ++xx)
        for (int64_t ch = 0; ch < c; ++ch) {
          padded[((b * ph + y + pads[0]) * pw + xx + pads[2]) * c + ch] =
              x[((b * h + y) * w + xx) * c + ch];
        }
  auto want = PoolTester("MaxPool", {n, ph, pw, c, 3, 3, 2, 2, "VALID"}, false)
                  .Input(Filled<float>({n, ph, pw, c}, padded))
                  .RunOne();
  REQUIRE(want.ok());
  auto got = PoolTester("MaxPool", {n, h, w, c, 3, 3, 2, 2, "EXPLICIT"}, false)
                 .Attr("explicit_paddings",
                       std::vector<int64_t>{0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0})
                 .Input(Filled<float>({n, h, w, c}, x))
                 .RunOne();
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(testing::DimsOf(*got) == testing::DimsOf(*want));
  CHECK(Values<float>(*got) == Values<float>(*want));
  // Pads are ignored, not zeros: an all-negative input keeps its negative maxima.
  auto negative = PoolTester("MaxPool", {1, 3, 3, 1, 3, 3, 1, 1, "EXPLICIT"}, false)
                      .Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0})
                      .Input(Filled<float>({1, 3, 3, 1}, {-9, -8, -7, -6, -5, -4, -3, -2, -1}))
                      .RunOne();
  REQUIRE(negative.ok());
  CHECK(Values<float>(*negative) ==
        std::vector<float>{-5, -4, -4, -2, -1, -1, -2, -1, -1});
  // TF's check: each pad smaller than the window.
  auto too_wide = PoolTester("MaxPool", {1, 5, 5, 1, 3, 3, 1, 1, "EXPLICIT"}, false)
                      .Attr("explicit_paddings", std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0})
                      .Input(Filled<float>({1, 5, 5, 1}, RandomValues(25, 6)))
                      .RunOne();
  CHECK(too_wide.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(too_wide.status().message()),
             Catch::Contains("Top padding 3 needs to be smaller than the window size 3"));
}

TEST_CASE("Pooling rejects bad shapes and attrs") {
  Tensor x = Filled<float>({1, 5, 5, 2}, RandomValues(50, 1));
  PoolCase k = {1, 5, 5, 2, 2, 2, 1, 1, "VALID"};
  auto rank3 = PoolTester("MaxPool", k, false).Input(Filled<float>({5, 5, 2}, {})).RunOne();
  CHECK(rank3.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(rank3.status().message()).find("input must be 4-dimensional") !=
        std::string::npos);

  auto batch = OpTester("AvgPool", Registry())
                   .Attr("T", DT_FLOAT)
                   .Attr("padding", "VALID")
                   .Attr("ksize", std::vector<int64_t>{2, 2, 2, 1})
                   .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                   .Input(x)
                   .RunOne();
  CHECK(batch.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(batch.status().message()).find("batch dimension") != std::string::npos);

  auto three = OpTester("MaxPool", Registry())
                   .Attr("T", DT_FLOAT)
                   .Attr("padding", "VALID")
                   .Attr("ksize", std::vector<int64_t>{1, 2, 2})
                   .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                   .Input(x)
                   .RunOne();
  CHECK(three.status().code() == absl::StatusCode::kInvalidArgument);

  k.kh = k.kw = 7;  // VALID window larger than the input
  auto negative = PoolTester("MaxPool", k, false).Input(x).RunOne();
  CHECK(negative.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(negative.status().message()).find("would be negative") != std::string::npos);

  auto explicit_padding =
      PoolTester("MaxPool", {1, 5, 5, 2, 2, 2, 1, 1, "EXPLICIT"}, false).Input(x).RunOne();
  CHECK(explicit_padding.status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
