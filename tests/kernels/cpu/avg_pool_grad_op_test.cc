// AvgPoolGrad (kernels/cpu/avg_pool_grad_op.cc): hand-computed VALID 2x2 stride 2 and
// SAME 3x3 stride 1 results (a border window divides by the count of its in-bounds
// elements), a naive reference for larger NHWC, NCHW and double cases, and the errors
// (grad shape mismatch, bad orig_input_shape, pooling over batch or depth).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::NchwToNhwc;
using testing::NhwcToNchw;
using testing::OpTester;
using testing::RandomValues;
using testing::RefWindow;
using testing::RefWindowFor;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterAvgPoolGradKernels); }

template <typename T>
absl::StatusOr<Tensor> AvgPoolGrad(const std::vector<int32_t>& orig_shape, const Tensor& grad,
                                   const Dims& ksize, const Dims& strides, const char* padding,
                                   const char* format = "NHWC") {
  return OpTester("AvgPoolGrad", Registry())
      .Attr("T", DataTypeOf<T>())
      .Attr("ksize", ksize)
      .Attr("strides", strides)
      .Attr("padding", padding)
      .Attr("data_format", format)
      .Input(Vec<int32_t>(orig_shape))
      .Input(grad)
      .RunOne();
}

TEST_CASE("AvgPoolGrad VALID 2x2 stride 2 spreads each gradient over its window",
          "[kernels][avg_pool_grad]") {
  // 4x4 input, one channel: each of the 4 windows' gradient / 4 to its 4 elements.
  auto out = AvgPoolGrad<float>({1, 4, 4, 1}, Filled<float>({1, 2, 2, 1}, {4, 8, -2, 1}),
                                {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{1, 4, 4, 1});
  CHECK(Values<float>(*out) == std::vector<float>{1, 1, 2, 2,                  //
                                                  1, 1, 2, 2,                  //
                                                  -0.5f, -0.5f, 0.25f, 0.25f,  //
                                                  -0.5f, -0.5f, 0.25f, 0.25f});
  // 5x5 input, two channels: the last row and column are in no window.
  auto uncovered = AvgPoolGrad<float>({1, 5, 5, 2},
                                      Filled<float>({1, 2, 2, 2}, {4, 40, 8, 80, 12, 120, 16, 160}),
                                      {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  REQUIRE(uncovered.ok());
  const std::vector<float> v = Values<float>(*uncovered);
  REQUIRE(v.size() == 50);
  auto at = [&](int y, int x, int c) { return v[(y * 5 + x) * 2 + c]; };
  CHECK(at(0, 0, 0) == 1);
  CHECK(at(1, 1, 1) == 10);
  CHECK(at(0, 2, 0) == 2);
  CHECK(at(1, 3, 1) == 20);
  CHECK(at(3, 0, 0) == 3);
  CHECK(at(3, 3, 1) == 40);
  for (int i = 0; i < 5; ++i) {
    for (int c = 0; c < 2; ++c) {
      CHECK(at(4, i, c) == 0);
      CHECK(at(i, 4, c) == 0);
    }
  }
}

TEST_CASE("AvgPoolGrad SAME 3x3 stride 1 divides border windows by their in-bounds count",
          "[kernels][avg_pool_grad]") {
  // 3x3 input, all-ones gradient. Windows hold 4 (corner), 6 (edge) or 9 (centre) elements.
  const double corner = 1 / 4.0 + 2 / 6.0 + 1 / 9.0;
  const double edge = 2 / 4.0 + 3 / 6.0 + 1 / 9.0;
  const double centre = 4 / 4.0 + 4 / 6.0 + 1 / 9.0;
  auto out =
      AvgPoolGrad<double>({1, 3, 3, 1}, Filled<double>({1, 3, 3, 1}, std::vector<double>(9, 1)),
                          {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME");
  REQUIRE(out.ok());
  CheckNear(Values<double>(*out), {corner, edge, corner, edge, centre, edge, corner, edge, corner},
            1e-12);

  // Float, one gradient at a time: output (0, 0)'s window is the 2x2 corner, so each of its
  // 4 elements gets 1/4; output (1, 1)'s is the whole 3x3, 1/9 each; (0, 1)'s is 2x3, 1/6.
  auto corner_only =
      AvgPoolGrad<float>({1, 3, 3, 1}, Filled<float>({1, 3, 3, 1}, {1, 0, 0, 0, 0, 0, 0, 0, 0}),
                         {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME");
  REQUIRE(corner_only.ok());
  CheckNear(Values<float>(*corner_only), {0.25f, 0.25f, 0, 0.25f, 0.25f, 0, 0, 0, 0});
  auto middle =
      AvgPoolGrad<float>({1, 3, 3, 1}, Filled<float>({1, 3, 3, 1}, {0, 0, 0, 0, 9, 0, 0, 0, 0}),
                         {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME");
  REQUIRE(middle.ok());
  CheckNear(Values<float>(*middle), std::vector<float>(9, 1.0f));
  auto top =
      AvgPoolGrad<float>({1, 3, 3, 1}, Filled<float>({1, 3, 3, 1}, {0, 6, 0, 0, 0, 0, 0, 0, 0}),
                         {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME");
  REQUIRE(top.ok());
  CheckNear(Values<float>(*top), {1, 1, 1, 1, 1, 1, 0, 0, 0});
}

// By definition, in double, NHWC: each output window's gradient divided by the number of
// its in-bounds input elements, added to each of them.
std::vector<float> NaiveAvgPoolGrad(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
                                    int64_t kw, int64_t sh, int64_t sw, const std::string& padding,
                                    const std::vector<float>& grad) {
  const RefWindow rows = RefWindowFor(padding, h, kh, sh, 1);
  const RefWindow cols = RefWindowFor(padding, w, kw, sw, 1);
  std::vector<double> out(n * h * w * c, 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < rows.out; ++oy)
      for (int64_t ox = 0; ox < cols.out; ++ox) {
        std::vector<std::pair<int64_t, int64_t>> cells;
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t y = oy * sh - rows.pad_before + i, x = ox * sw - cols.pad_before + j;
            if (y >= 0 && y < h && x >= 0 && x < w) cells.push_back({y, x});
          }
        for (int64_t ch = 0; ch < c; ++ch) {
          const double g = grad[((b * rows.out + oy) * cols.out + ox) * c + ch];
          for (const auto& [y, x] : cells) {
            out[((b * h + y) * w + x) * c + ch] += g / static_cast<double>(cells.size());
          }
        }
      }
  return std::vector<float>(out.begin(), out.end());
}

TEST_CASE("AvgPoolGrad matches the naive spread, NHWC and NCHW", "[kernels][avg_pool_grad]") {
  struct Case {
    int64_t n, h, w, c, kh, kw, sh, sw;
    std::string padding;
  };
  const std::vector<Case> cases = {
      {2, 7, 6, 3, 3, 3, 2, 2, "SAME"},   // odd pad after
      {1, 8, 8, 2, 2, 2, 2, 2, "SAME"},   // no pad
      {2, 6, 7, 2, 4, 3, 1, 2, "SAME"},   // windows larger than the stride
      {3, 7, 7, 1, 3, 2, 2, 3, "VALID"},  // uncovered borders
      {1, 5, 5, 4, 5, 5, 1, 1, "VALID"},  // one window
  };
  uint32_t seed = 1;
  for (const Case& k : cases) {
    CAPTURE(k.n, k.h, k.w, k.c, k.kh, k.kw, k.sh, k.sw, k.padding);
    const int64_t oh = RefWindowFor(k.padding, k.h, k.kh, k.sh, 1).out;
    const int64_t ow = RefWindowFor(k.padding, k.w, k.kw, k.sw, 1).out;
    const std::vector<float> grad = RandomValues(k.n * oh * ow * k.c, seed++);
    const std::vector<float> want =
        NaiveAvgPoolGrad(k.n, k.h, k.w, k.c, k.kh, k.kw, k.sh, k.sw, k.padding, grad);
    const std::vector<int32_t> nhwc = {static_cast<int32_t>(k.n), static_cast<int32_t>(k.h),
                                       static_cast<int32_t>(k.w), static_cast<int32_t>(k.c)};
    auto out = AvgPoolGrad<float>(nhwc, Filled<float>({k.n, oh, ow, k.c}, grad), {1, k.kh, k.kw, 1},
                                  {1, k.sh, k.sw, 1}, k.padding.c_str());
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out), want, 1e-5);

    auto nchw =
        AvgPoolGrad<float>({nhwc[0], nhwc[3], nhwc[1], nhwc[2]},
                           Filled<float>({k.n, k.c, oh, ow}, NhwcToNchw(grad, k.n, oh, ow, k.c)),
                           {1, 1, k.kh, k.kw}, {1, 1, k.sh, k.sw}, k.padding.c_str(), "NCHW");
    INFO(nchw.status().ToString());
    REQUIRE(nchw.ok());
    CHECK(DimsOf(*nchw) == Dims{k.n, k.c, k.h, k.w});
    CheckNear(NchwToNhwc(Values<float>(*nchw), k.n, k.c, k.h, k.w), want, 1e-5);
  }
}

TEST_CASE("AvgPoolGrad rejects a gradient of the wrong shape and bad attrs",
          "[kernels][avg_pool_grad]") {
  auto wrong = AvgPoolGrad<float>({1, 4, 4, 1}, Filled<float>({1, 3, 2, 1}, {}), {1, 2, 2, 1},
                                  {1, 2, 2, 1}, "VALID");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(wrong.status().message()),
             Contains("Expected grad shape to be [1,2,2,1], but got [1,3,2,1]"));
  auto depth = AvgPoolGrad<float>({1, 4, 4, 2}, Filled<float>({1, 2, 2, 1}, {}), {1, 2, 2, 1},
                                  {1, 2, 2, 1}, "VALID");
  REQUIRE_FALSE(depth.ok());
  CHECK_THAT(std::string(depth.status().message()),
             Contains("Expected grad shape to be [1,2,2,2], but got [1,2,2,1]"));
  auto three_d = AvgPoolGrad<float>({1, 4, 4, 1}, Filled<float>({2, 2, 1}, {}), {1, 2, 2, 1},
                                    {1, 2, 2, 1}, "VALID");
  REQUIRE_FALSE(three_d.ok());
  CHECK_THAT(std::string(three_d.status().message()),
             Contains("out_backprop must be 4-dimensional"));
  auto short_shape = AvgPoolGrad<float>({4, 4, 1}, Filled<float>({1, 2, 2, 1}, {}), {1, 2, 2, 1},
                                        {1, 2, 2, 1}, "VALID");
  REQUIRE_FALSE(short_shape.ok());
  CHECK_THAT(std::string(short_shape.status().message()),
             Contains("orig_input_shape must be 1-dimensional and 4 elements"));
  auto batch = AvgPoolGrad<float>({1, 4, 4, 1}, Filled<float>({1, 2, 2, 1}, {}), {2, 2, 2, 1},
                                  {1, 2, 2, 1}, "VALID");
  REQUIRE_FALSE(batch.ok());
  CHECK_THAT(std::string(batch.status().message()),
             Contains("Pooling is not yet supported on the batch dimension."));
  auto channel = AvgPoolGrad<float>({1, 4, 4, 1}, Filled<float>({1, 2, 2, 1}, {}), {1, 2, 2, 2},
                                    {1, 2, 2, 1}, "VALID");
  REQUIRE_FALSE(channel.ok());
  CHECK_THAT(std::string(channel.status().message()),
             Contains("Non-spatial pooling is not yet supported."));
}

}  // namespace
}  // namespace dflow
