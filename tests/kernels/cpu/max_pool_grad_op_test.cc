// MaxPoolGrad and MaxPoolGradV2 CPU kernels (kernels/cpu/max_pool_grad_op.cc) against
// TensorFlow 2.21's own numbers (ties, NaN, padding), a reference written here, and TF's
// error cases.
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
using testing::IntList;
using testing::OpTester;
using testing::RandomValues;
using testing::RefWindow;
using testing::RefWindowFor;
using testing::Sequence;
using testing::StringAttr;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterMaxPoolGradKernels); }

// A MaxPoolGrad call, NHWC sizes; pads {top, bottom, left, right} for EXPLICIT.
struct PoolCase {
  int64_t n, h, w, c;
  int64_t kh, kw, sh, sw;
  std::string padding;
  std::vector<int64_t> pads = {0, 0, 0, 0};
};

// The pooled output's NHWC shape.
std::vector<int64_t> PooledShape(const PoolCase& k) {
  const RefWindow rows = RefWindowFor(k.padding, k.h, k.kh, k.sh, 1, k.pads[0], k.pads[1]);
  const RefWindow cols = RefWindowFor(k.padding, k.w, k.kw, k.sw, 1, k.pads[2], k.pads[3]);
  return {k.n, rows.out, cols.out, k.c};
}

// By definition: each window's gradient goes to its first maximum in row-major order.
std::vector<float> NaiveMaxPoolGrad(const PoolCase& k, const std::vector<float>& x,
                                    const std::vector<float>& grad) {
  const RefWindow rows = RefWindowFor(k.padding, k.h, k.kh, k.sh, 1, k.pads[0], k.pads[1]);
  const RefWindow cols = RefWindowFor(k.padding, k.w, k.kw, k.sw, 1, k.pads[2], k.pads[3]);
  std::vector<float> out(x.size(), 0.0f);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < rows.out; ++oy)
      for (int64_t ox = 0; ox < cols.out; ++ox)
        for (int64_t ch = 0; ch < k.c; ++ch) {
          int64_t best = -1;
          for (int64_t i = 0; i < k.kh; ++i)
            for (int64_t j = 0; j < k.kw; ++j) {
              const int64_t y = oy * k.sh - rows.pad_before + i;
              const int64_t xx = ox * k.sw - cols.pad_before + j;
              if (y < 0 || y >= k.h || xx < 0 || xx >= k.w) continue;
              const int64_t at = ((b * k.h + y) * k.w + xx) * k.c + ch;
              if (best < 0 || x[at] > x[best]) best = at;
            }
          out[best] += grad[((b * rows.out + oy) * cols.out + ox) * k.c + ch];
        }
  return out;
}

OpTester GradTester(const PoolCase& k, bool nchw, const std::string& op = "MaxPoolGrad") {
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", k.padding.c_str());
  const std::vector<int64_t> ksize =
      nchw ? std::vector<int64_t>{1, 1, k.kh, k.kw} : std::vector<int64_t>{1, k.kh, k.kw, 1};
  const std::vector<int64_t> strides =
      nchw ? std::vector<int64_t>{1, 1, k.sh, k.sw} : std::vector<int64_t>{1, k.sh, k.sw, 1};
  if (nchw) t.Attr("data_format", "NCHW");
  if (op != "MaxPoolGradV2") t.Attr("ksize", ksize).Attr("strides", strides);
  if (k.padding == "EXPLICIT") {
    std::vector<int64_t> pads(8, 0);
    std::copy(k.pads.begin(), k.pads.end(), pads.begin() + (nchw ? 4 : 2));
    t.Attr("explicit_paddings", pads);
  }
  return t;
}

// Runs the kernel on NHWC `x` and `grad` (transposed for NCHW); the result comes back
// NHWC. orig_output is zeros: the kernel, as TF's, only checks its shape.
absl::StatusOr<std::vector<float>> RunGrad(const PoolCase& k, bool nchw,
                                           const std::vector<float>& x,
                                           const std::vector<float>& grad,
                                           const std::string& op = "MaxPoolGrad") {
  const std::vector<int64_t> s = PooledShape(k);
  auto image = [&](const std::vector<float>& v, int64_t h, int64_t w) {
    return nchw ? Filled<float>({k.n, k.c, h, w}, testing::NhwcToNchw(v, k.n, h, w, k.c))
                : Filled<float>({k.n, h, w, k.c}, v);
  };
  OpTester t = GradTester(k, nchw, op);
  t.Input(image(x, k.h, k.w))
      .Input(image(std::vector<float>(grad.size(), 0.0f), s[1], s[2]))
      .Input(image(grad, s[1], s[2]));
  if (op == "MaxPoolGradV2") {
    const std::vector<int32_t> ksize =
        nchw ? std::vector<int32_t>{1, 1, int32_t(k.kh), int32_t(k.kw)}
             : std::vector<int32_t>{1, int32_t(k.kh), int32_t(k.kw), 1};
    const std::vector<int32_t> strides =
        nchw ? std::vector<int32_t>{1, 1, int32_t(k.sh), int32_t(k.sw)}
             : std::vector<int32_t>{1, int32_t(k.sh), int32_t(k.sw), 1};
    t.Input(testing::Vec(ksize)).Input(testing::Vec(strides));
  }
  auto out = t.RunOne();
  if (!out.ok()) return out.status();
  std::vector<float> got = Values<float>(*out);
  return nchw ? testing::NchwToNhwc(got, k.n, k.c, k.h, k.w) : got;
}

TEST_CASE("MaxPoolGrad matches TensorFlow: ties go to the first maximum") {
  // TF: tf.raw_ops.MaxPoolGrad on this input (orig_output plays no part).
  const std::vector<float> x = {1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2};
  for (bool nchw : {false, true}) {
    INFO((nchw ? "NCHW" : "NHWC"));
    auto disjoint = RunGrad({1, 4, 4, 1, 2, 2, 2, 2, "VALID"}, nchw, x, {10, 20, 30, 40});
    REQUIRE(disjoint.ok());
    CHECK(*disjoint == std::vector<float>{10, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 30, 0, 40, 0});
    auto overlapping = RunGrad({1, 4, 4, 1, 3, 3, 1, 1, "VALID"}, nchw, x, {1, 2, 4, 8});
    REQUIRE(overlapping.ok());
    CHECK(*overlapping == std::vector<float>{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 8, 0, 0});
    auto same = RunGrad({1, 4, 4, 1, 3, 3, 2, 2, "SAME"}, nchw, x, {1, 2, 4, 8});
    REQUIRE(same.ok());
    CHECK(*same == std::vector<float>{1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 8, 0});
    // A constant input: every window's gradient lands on its top-left element.
    auto constant =
        RunGrad({1, 3, 3, 1, 2, 2, 1, 1, "VALID"}, nchw, std::vector<float>(9, 0.0f), {1, 2, 4, 8});
    REQUIRE(constant.ok());
    CHECK(*constant == std::vector<float>{1, 2, 0, 4, 8, 0, 0, 0, 0});
  }
}

TEST_CASE("MaxPoolGrad matches TensorFlow: SAME with odd sizes and EXPLICIT pads") {
  SECTION("SAME 3x3 stride 2 on [2, 5, 5, 2]") {
    const PoolCase k = {2, 5, 5, 2, 3, 3, 2, 2, "SAME"};
    const std::vector<float> want = {
        0, 0, 0,   0,  0, 0, 0,    -0.5, 0,    -1, 0,    -1.5, -2.5, 0,   0, 0, 2.5, 0,  2.5, 0,
        0, 0, 1.5, 0,  1, 0, 0,    0,    0,    0,  0,    0,    0,    2.5, 0, 0, 0,   -1, 0,   0,
        0, 0, 0,   0,  0, 0, -0.5, 0,    -1,   0,  -1.5, 0,    0,    0,   0, 0, 0,   0,  0,   0,
        0, 0, 0,   0,  0, 0, -2,   0,    -2.5, 0,  0,    0,    2.5,  0,   0, 0, 3.5, 0,  0,   0,
        0, 0, 0,   -2, 0, 0, 0,    -2.5, 0,    1,  0,    0,    1,    0,   0, 0, 0.5, 0,  0,   0};
    for (bool nchw : {false, true}) {
      INFO((nchw ? "NCHW" : "NHWC"));
      auto got = RunGrad(k, nchw, Sequence(100, 7, 13, 6, 1.0f), Sequence(36, 5, 11, 5, 0.5f));
      REQUIRE(got.ok());
      CheckNear(*got, want);
    }
  }
  SECTION("EXPLICIT pads top 1, right 2; window 2x3, strides 1, 2") {
    const PoolCase k = {1, 4, 5, 2, 2, 3, 1, 2, "EXPLICIT", {1, 0, 0, 2}};
    const std::vector<float> want = {0,   0,   0, 0, -2.5, 0, 0, 0, 4.5, -6,  0,    1, 0, 0,
                                     1.5, 0,   0, 0, 0.5,  0, 0, 0, 0,   0,   -4,   0, 0, 0,
                                     0,   3.5, 0, 0, 0,    0, 0, 1, 0,   0.5, -2.5, 0};
    for (bool nchw : {false, true}) {
      INFO((nchw ? "NCHW" : "NHWC"));
      auto got = RunGrad(k, nchw, Sequence(40, 7, 13, 6, 1.0f), Sequence(24, 5, 11, 5, 0.5f));
      REQUIRE(got.ok());
      CheckNear(*got, want);
    }
  }
}

TEST_CASE("MaxPoolGrad with NaN: a NaN wins only where it comes first, as in TF") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const PoolCase k = {1, 2, 2, 1, 2, 2, 2, 2, "VALID"};
  auto first = RunGrad(k, false, {nan, 5, 1, 2}, {1});
  REQUIRE(first.ok());
  CHECK(*first == std::vector<float>{1, 0, 0, 0});
  auto later = RunGrad(k, false, {1, nan, 5, 2}, {1});
  REQUIRE(later.ok());
  CHECK(*later == std::vector<float>{0, 0, 1, 0});
}

TEST_CASE("MaxPoolGrad matches a naive reference, NHWC and NCHW") {
  const std::vector<PoolCase> cases = {
      {1, 5, 5, 1, 2, 2, 2, 2, "VALID"},
      {2, 7, 6, 3, 3, 3, 2, 2, "SAME"},
      {2, 7, 6, 3, 3, 3, 1, 1, "SAME"},  // overlapping windows add up
      {1, 9, 7, 4, 2, 3, 2, 1, "SAME"},
      {3, 8, 8, 5, 3, 2, 3, 2, "VALID"},
      {2, 6, 7, 3, 3, 3, 2, 2, "EXPLICIT", {2, 1, 0, 2}},
      {1, 4, 4, 2, 5, 5, 1, 1, "SAME"},  // window larger than the input
      {9, 12, 12, 16, 3, 3, 2, 2, "SAME"},
      // Disjoint windows (written directly, no accumulation): LeNet's pools, one with
      // leftover rows and columns no window covers, one with gaps between windows.
      {4, 28, 28, 6, 2, 2, 2, 2, "VALID"},
      {2, 10, 10, 16, 2, 2, 2, 2, "SAME"},
      {2, 9, 11, 7, 2, 2, 2, 2, "VALID"},
      {2, 9, 9, 3, 2, 2, 3, 3, "VALID"},
      // SAME 2x2 on odd sizes: the last windows reach into padding (not whole ones).
      {1, 5, 7, 2, 2, 2, 2, 2, "SAME"},
  };
  uint32_t seed = 1;
  for (const PoolCase& k : cases) {
    INFO("case n=" << k.n << " " << k.h << "x" << k.w << "x" << k.c << " window " << k.kh << "x"
                   << k.kw << " s" << k.sh << "," << k.sw << " " << k.padding);
    const std::vector<int64_t> s = PooledShape(k);
    const std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, seed);
    const std::vector<float> grad = RandomValues(s[0] * s[1] * s[2] * s[3], seed + 1);
    const std::vector<float> want = NaiveMaxPoolGrad(k, x, grad);
    for (bool nchw : {false, true}) {
      INFO((nchw ? "NCHW" : "NHWC"));
      auto got = RunGrad(k, nchw, x, grad);
      REQUIRE(got.ok());
      CheckNear(*got, want);
      if (k.padding == "EXPLICIT") continue;  // V2 takes SAME or VALID only
      auto v2 = RunGrad(k, nchw, x, grad, "MaxPoolGradV2");
      REQUIRE(v2.ok());
      CheckNear(*v2, want);
    }
    seed += 10;
  }
}

TEST_CASE("_DflowMaxPoolGradRelu is ReluGrad of MaxPoolGrad, NHWC and NCHW") {
  // ReluGrad keeps the pooling gradient where x > 0: zero or negative maxima (and a NaN
  // one) pass nothing on. Disjoint windows and overlapping ones, padded on either side.
  const std::vector<PoolCase> cases = {
      {4, 28, 28, 6, 2, 2, 2, 2, "VALID"}, {2, 9, 11, 7, 2, 2, 2, 2, "VALID"},
      {1, 5, 7, 2, 2, 2, 2, 2, "SAME"},    {2, 7, 6, 3, 3, 3, 1, 1, "SAME"},
      {2, 6, 7, 3, 3, 3, 2, 2, "EXPLICIT", {2, 1, 0, 2}},
  };
  uint32_t seed = 3;
  for (const PoolCase& k : cases) {
    INFO("case n=" << k.n << " " << k.h << "x" << k.w << "x" << k.c << " window " << k.kh
                   << " s" << k.sh << " " << k.padding);
    const std::vector<int64_t> s = PooledShape(k);
    std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, seed);  // about half negative
    x[0] = std::nanf("");
    for (size_t i = 1; i < x.size(); i += 7) x[i] = 0.0f;
    const std::vector<float> grad = RandomValues(s[0] * s[1] * s[2] * s[3], seed + 1);
    std::vector<float> want = NaiveMaxPoolGrad(k, x, grad);
    for (size_t i = 0; i < want.size(); ++i) want[i] = x[i] > 0.0f ? want[i] : 0.0f;
    for (bool nchw : {false, true}) {
      INFO((nchw ? "NCHW" : "NHWC"));
      auto got = RunGrad(k, nchw, x, grad, "_DflowMaxPoolGradRelu");
      REQUIRE(got.ok());
      CheckNear(*got, want);
    }
    seed += 10;
  }
}

TEST_CASE("MaxPoolGrad for double") {
  // TF: SAME 2x2 stride 1 on a 3x3 constant: each window starts at its own element.
  auto out = OpTester("MaxPoolGrad", Registry())
                 .Attr("T", DT_DOUBLE)
                 .Attr("ksize", std::vector<int64_t>{1, 2, 2, 1})
                 .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                 .Attr("padding", "SAME")
                 .Input(Filled<double>({1, 3, 3, 1}, std::vector<double>(9, 0.0)))
                 .Input(Filled<double>({1, 3, 3, 1}, std::vector<double>(9, 0.0)))
                 .Input(Filled<double>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<double>(*out) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("MaxPoolGrad with an empty batch") {
  auto out = RunGrad({0, 4, 4, 3, 2, 2, 2, 2, "VALID"}, false, {}, {});
  REQUIRE(out.ok());
  CHECK(out->empty());
  auto shape = GradTester({0, 4, 4, 3, 2, 2, 2, 2, "VALID"}, false)
                   .Input(Filled<float>({0, 4, 4, 3}, {}))
                   .Input(Filled<float>({0, 2, 2, 3}, {}))
                   .Input(Filled<float>({0, 2, 2, 3}, {}))
                   .RunOne();
  REQUIRE(shape.ok());
  CHECK(shape->shape() == TensorShape({0, 4, 4, 3}));
}

// The status of a NHWC MaxPoolGrad on these shapes, with `attrs` over a VALID 2x2/2 pool.
absl::Status GradError(const std::vector<int64_t>& in, const std::vector<int64_t>& pooled,
                       const std::vector<int64_t>& grad,
                       const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  OpTester t("MaxPoolGrad", Registry());
  t.Attr("T", DT_FLOAT)
      .Attr("ksize", std::vector<int64_t>{1, 2, 2, 1})
      .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
      .Attr("padding", "VALID");
  for (const auto& [name, value] : attrs) t.Attr(name, value);
  auto filled = [](const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    return Filled<float>(shape, RandomValues(count, 3));
  };
  return t.Input(filled(in)).Input(filled(pooled)).Input(filled(grad)).RunOne().status();
}

TEST_CASE("MaxPoolGrad rejects bad shapes and attrs with TF's errors") {
  auto failed = [](const absl::Status& s, absl::StatusCode code, const std::string& text) {
    INFO(s.ToString());
    CHECK(s.code() == code);
    CHECK(std::string(s.message()).find(text) != std::string::npos);
  };
  const auto invalid = absl::StatusCode::kInvalidArgument;
  const auto unimplemented = absl::StatusCode::kUnimplemented;
  const std::vector<int64_t> in = {1, 4, 4, 1}, out = {1, 2, 2, 1};
  failed(GradError({4, 4, 1}, out, out, {}), invalid, "tensor_in must be 4-dimensional");
  failed(GradError(in, {2, 2, 1}, out, {}), invalid, "tensor_out must be 4-dimensional");
  failed(GradError(in, out, {2, 2, 1}, {}), invalid, "out_backprop must be 4-dimensional");
  failed(GradError(in, out, {1, 3, 2, 1}, {}), invalid,
         "Expected grad shape to be [1,2,2,1], but got [1,3,2,1]");
  failed(GradError(in, {1, 3, 2, 1}, out, {}), invalid,
         "Expected orig_output shape to be [1,2,2,1], but got [1,3,2,1]");
  failed(GradError(in, out, out, {{"ksize", IntList({1, 5, 5, 1})}}), invalid,
         "Expected orig_output shape to be [1,0,0,1], but got [1,2,2,1]");
  failed(GradError(in, out, out,
                   {{"ksize", IntList({1, 7, 1, 1})}, {"strides", IntList({1, 1, 1, 1})}}),
         invalid,
         "Computed output size would be negative: -2 [input_size: 4, effective_filter_size: 7, "
         "stride: 1]");
  failed(GradError(in, out, out, {{"ksize", IntList({2, 2, 2, 1})}}), unimplemented,
         "Pooling is not yet supported on the batch dimension.");
  failed(GradError(in, out, out, {{"ksize", IntList({1, 2, 2, 2})}}), unimplemented,
         "MaxPoolingGrad is not yet supported on the depth dimension.");
  failed(GradError(in, out, out, {{"strides", IntList({1, 0, 2, 1})}}), invalid,
         "Stride must be > 0, but got 0");
  failed(GradError(in, out, out,
                   {{"padding", StringAttr("EXPLICIT")},
                    {"explicit_paddings", IntList({0, 0, 1, 1, 1, 1})}}),
         invalid, "explicit_paddings attribute must contain 8 values, but got: 6");
  failed(GradError(in, out, out,
                   {{"padding", StringAttr("EXPLICIT")},
                    {"explicit_paddings", IntList({0, 0, 0, 0, 0, 0, 1, 0})}}),
         invalid, "Nonzero explicit padding in the batch or depth dimensions is not supported");
  failed(GradError(in, out, out,
                   {{"padding", StringAttr("EXPLICIT")},
                    {"explicit_paddings", IntList({0, 0, -1, 0, 0, 0, 0, 0})}}),
         invalid, "All elements of explicit_paddings must be nonnegative");
  const char* sides[] = {"Top", "Bottom", "Left", "Right"};
  for (int side = 0; side < 4; ++side) {
    std::vector<int64_t> pads(8, 0);
    pads[2 + side] = 2;
    failed(GradError(in, out, out,
                     {{"padding", StringAttr("EXPLICIT")}, {"explicit_paddings", IntList(pads)}}),
           invalid,
           std::string(sides[side]) + " padding 2 needs to be smaller than the window size 2");
  }
  // Like TF, explicit_paddings is not looked at unless the padding is EXPLICIT.
  CHECK(GradError(in, out, out, {{"explicit_paddings", IntList({0, 0, 1, 1, 1, 1, 0, 0})}}).ok());
}

TEST_CASE("MaxPoolGradV2 checks its ksize and strides inputs as TF does") {
  const PoolCase k = {1, 4, 4, 1, 2, 2, 2, 2, "VALID"};
  auto run = [&](const std::vector<int32_t>& ksize) {
    return GradTester(k, false, "MaxPoolGradV2")
        .Input(Filled<float>({1, 4, 4, 1}, RandomValues(16, 1)))
        .Input(Filled<float>({1, 2, 2, 1}, {}))
        .Input(Filled<float>({1, 2, 2, 1}, RandomValues(4, 2)))
        .Input(testing::Vec(ksize))
        .Input(testing::Vec(std::vector<int32_t>{1, 2, 2, 1}))
        .RunOne()
        .status();
  };
  CHECK(run({1, 2, 2, 1}).ok());
  const absl::Status three = run({1, 2, 2});
  CHECK(three.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(three.message()).find("Sliding window ksize field must specify 4 dimensions") !=
        std::string::npos);
  CHECK(run({1, 2, 2, 2}).code() == absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace dflow
