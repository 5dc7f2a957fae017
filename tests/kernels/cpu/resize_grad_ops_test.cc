// ResizeBilinearGrad and ResizeNearestNeighborGrad against TF 2.21 (tf.raw_ops; the values
// were printed by testdata/resize_grad_lrn_tf.py): upsampling and downsampling gradients of
// a batch of 2 with 3 channels for every attr combination, the dtypes' accumulation, empty
// shapes and TF's error texts.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
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

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterResizeGradKernels);
}

// The script's grad_image: (i * 7 % 11) - 5 + i / 4, exact in float, half and bfloat16.
Tensor GradImage(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i * 7 % 11 - 5) + i * 0.25f;
  return Filled<float>(dims, values);
}

// A tensor of T (Half or Bfloat16) holding `values` rounded.
template <typename T>
Tensor Rounded(const Dims& dims, const std::vector<float>& values) {
  std::vector<T> rounded;
  for (float v : values) rounded.push_back(T::FromFloat(v));
  return Filled<T>(dims, rounded);
}

// A half or bfloat16 tensor's values as floats (exact).
template <typename T>
std::vector<float> FloatsOf(const Tensor& t) {
  std::vector<float> values;
  for (T v : Values<T>(t)) values.push_back(v.ToFloat());
  return values;
}

absl::StatusOr<Tensor> BilinearGrad(const Tensor& grads, const Tensor& original,
                                    bool align_corners = false,
                                    bool half_pixel_centers = false) {
  return OpTester("ResizeBilinearGrad", Registry())
      .Attr("T", original.dtype())
      .Attr("align_corners", align_corners)
      .Attr("half_pixel_centers", half_pixel_centers)
      .Input(grads)
      .Input(original)
      .RunOne();
}

absl::StatusOr<Tensor> NearestGrad(const Tensor& grads, const Tensor& size,
                                   bool align_corners = false,
                                   bool half_pixel_centers = false) {
  return OpTester("ResizeNearestNeighborGrad", Registry())
      .Attr("T", grads.dtype())
      .Attr("align_corners", align_corners)
      .Attr("half_pixel_centers", half_pixel_centers)
      .Input(grads)
      .Input(size)
      .RunOne();
}

absl::StatusOr<Tensor> NearestGrad(const Tensor& grads, int32_t height, int32_t width,
                                   bool align_corners = false,
                                   bool half_pixel_centers = false) {
  return NearestGrad(grads, Filled<int32_t>({2}, {height, width}), align_corners,
                     half_pixel_centers);
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

struct GradCase {
  const char* op;
  int32_t original_height, original_width, resized_height, resized_width;
  bool align_corners, half_pixel_centers;
  std::vector<float> want;
};

// TF 2.21: the gradient GradImage({2, resized_height, resized_width, 3}) of a float
// [2, original_height, original_width, 3] image. Sizes: upsampling 2x3 -> 3x5,
// downsampling 3x4 -> 2x3, and a one-row original (1x3 -> 3x4), where TF's gradient scale
// for the rows is the legacy one even with align_corners.
const std::vector<GradCase>& Table() {
  static const auto* const kCases = new std::vector<GradCase>{
      {"ResizeBilinearGrad", 2, 3, 3, 5, false, false, {
          -0.516666889, 3.48333311, 1.61666644, 11.1999979, 3.93333292, 1.06666625, 12.9000015,
          9.5, 11.2333345, 9.16666698, 15.8166656, 17.3333321, 20.4999962, 18.5666637,
          18.8333302, 32.5, 33.2000046, 22.1666698, 24.0166664, 22.1499996, 30.5499973,
          27.3999977, 24.5333328, 34.1333313, 38.8333321, 40.5666695, 41.5666695, 41.4833298, 43,
          38.6499977, 47.9000015, 48.1666641, 55.7666588, 69.8666763, 58.8333397, 68.3333359}},
      {"ResizeBilinearGrad", 2, 3, 3, 5, true, false, {
          1.375, 3.9375, 3.75, 15.25, 6.75, 3.75, 10.5, 10.3125, 12.875, 8.625, 16.6875, 16.5,
          26.75, 23.75, 20.75, 23.25, 23.0625, 14.625, 28.6875, 28.5, 36.5625, 39.75, 36.75,
          47.5, 35.0625, 37.625, 34.6875, 41.4375, 41.25, 38.3125, 56.75, 53.75, 64.5, 47.8125,
          39.375, 47.4375}},
      {"ResizeBilinearGrad", 2, 3, 3, 5, false, true, {
          2.17499971, 4.17500019, 3.9749999, 13.7249985, 5.79999924, 3.375, 11.2250023,
          11.0250015, 13.0249996, 9.17499924, 17.7749996, 17.5750008, 24.6249981, 21.0999985,
          18.6749973, 24.8250027, 24.6250038, 15.625001, 30.5749989, 30.375, 38.9749985,
          35.4999962, 33.0749969, 42.75, 37.4250069, 39.4250031, 37.0250053, 44.1749992,
          43.9749985, 41.5749969, 50.7999954, 48.3749962, 58.0499992, 51.0250015, 42.0249977,
          50.6250038}},
      {"ResizeBilinearGrad", 3, 4, 2, 3, false, false, {
          -5, 2.25, -1.5, 3.83333302, 1.33333325, -1.16666663, 3.74999976, 1.25, -1.24999988,
          3.66666698, 1.16666675, -1.33333349, 2.625, 0.75, -1.125, 1.66666651, 0.416666627,
          2.83333325, 1.625, 0.375, 2.79166651, 1.58333349, 0.333333373, 2.75000024, 2.625, 0.75,
          -1.125, 1.66666651, 0.416666627, 2.83333325, 1.625, 0.375, 2.79166651, 1.58333349,
          0.333333373, 2.75000024, 4.5, 0.75, 8, 2.83333325, 0.333333313, 5.16666651, 2.75,
          3.91666579, 5.08333302, 2.66666698, 7.50000095, 5.00000048, 1.875, 5.5, 3.625,
          1.16666663, 3.58333302, 2.33333325, 1.12499988, 3.54166651, 2.29166651, 1.08333349,
          3.50000048, 2.25000024, 1.875, 5.5, 3.625, 1.16666663, 3.58333302, 2.33333325,
          1.12499988, 3.54166651, 2.29166651, 1.08333349, 3.50000048, 2.25000024}},
      {"ResizeBilinearGrad", 3, 4, 2, 3, true, false, {
          -5, 2.25, -1.5, 2.875, 1, -0.875, 2.875, 1, -0.875, 5.5, 1.75, -2, 0, 0, 0, 0, 0, 0, 0,
          0, 0, 0, 0, 0, 5.25, 1.5, -2.25, 2.5, 0.625, 4.25, 2.5, 0.625, 4.25, 4.75, 1, 8.25,
          4.5, 0.75, 8, 2.125, 0.25, 3.875, 2.125, 0.25, 3.875, 4, 11.25, 7.5, 0, 0, 0, 0, 0, 0,
          0, 0, 0, 0, 0, 0, 3.75, 11, 7.25, 1.75, 5.375, 3.5, 1.75, 5.375, 3.5, 3.25, 10.5, 6.75}},
      {"ResizeBilinearGrad", 3, 4, 2, 3, false, true, {
          -3.125, 1.40625, -0.9375, 1.53125, 1.03125, -0.84375, 2.84374928, 0.968749762,
          -0.906249762, 3.43750072, 1.09375024, -1.25000024, 0.0520833731, 0.78125, -0.78125,
          1.35416663, 0.5625, 0.6875, 1.77083302, 0.520833254, 1.10416639, 2.13541698,
          0.572916746, 1.30208361, 3.28125, 0.9375, -1.40625, 2.53125, 0.65625, 2.90625,
          2.46874952, 0.593749881, 4.21874905, 2.96875048, 0.625000119, 5.15625095, 2.8125,
          0.46875, 5, 2.15625, 0.28125, 3.90625, 2.09374952, 1.59374869, 3.84374905, 2.50000048,
          7.03125143, 4.68750095, 1.71875, 2.44791651, 3.17708325, 1.3125, 1.89583337,
          2.47916675, 1.27083302, 2.31249905, 2.43749952, 1.51041698, 4.53125095, 2.96875048,
          2.34375, 6.875, 4.53125, 1.78125, 5.40625, 3.53125, 1.71874964, 5.34374905, 3.46874905,
          2.03125048, 6.56250143, 4.21875095}},
      {"ResizeBilinearGrad", 1, 3, 3, 4, false, false, {
          7.5625, 18.25, 17.9375, 17.4375, 17.125, 16.8125, 19.5, 19.125, 18.75, 48.5625, 48.25,
          47.9375, 47.4375, 47.125, 46.8125, 66.5, 66.125, 65.75}},
      {"ResizeBilinearGrad", 1, 3, 3, 4, true, false, {
          8.75, 19.416666, 19.083334, 18.5, 18.166666, 17.8333321, 17.25, 16.9166679, 16.583334,
          51.75, 51.4166679, 51.0833321, 50.4999962, 50.1666603, 49.8333282, 60.2500076,
          59.9166641, 59.5833359}},
      {"ResizeBilinearGrad", 1, 3, 3, 4, false, true, {
          9.34375, 20, 19.65625, 17.34375, 17.03125, 16.71875, 17.8125, 17.46875, 17.125,
          53.34375, 53, 52.65625, 47.3437462, 47.03125, 46.7187462, 61.8124962, 61.4687462,
          61.1249962}},
      {"ResizeNearestNeighborGrad", 2, 3, 3, 5, false, false, {
          10, 6, 13, 19, 15, 11, 8.75, 12.25, 15.75, 6.75, 21.25, 13.75, 27.75, 20.25, 12.75,
          13.5, 9.75, 6, 50, 57, 64, 59, 55, 62, 34.25, 37.75, 30.25, 43.25, 35.75, 39.25, 42.25,
          34.75, 49.25, 20.75, 17, 24.25}},
      {"ResizeNearestNeighborGrad", 2, 3, 3, 5, true, false, {
          -5, 2.25, -1.5, 11.25, 3.75, -3.75, 10.25, 2.75, 6.25, 8.25, 11.75, 15.25, 26, 22, 29,
          35, 42, 27, 13.25, 9.5, 16.75, 25.75, 18.25, 32.75, 24.75, 28.25, 31.75, 33.75, 37.25,
          29.75, 66, 73, 80, 86, 71, 78}},
      {"ResizeNearestNeighborGrad", 2, 3, 3, 5, false, true, {
          0.75, 4.25, -3.25, 5.5, 1.75, -2, 10.25, 2.75, 6.25, 16, 23, 30, 18.25, 10.75, 14.25,
          35, 42, 27, 26.25, 18.75, 33.25, 12.75, 9, 16.25, 24.75, 28.25, 31.75, 67, 74, 70,
          32.75, 36.25, 39.75, 86, 71, 78}},
      {"ResizeNearestNeighborGrad", 2, 3, 3, 5, true, true, {
          -5, 2.25, -1.5, 11.25, 3.75, -3.75, 10.25, 2.75, 6.25, 8.25, 11.75, 15.25, 26, 22, 29,
          35, 42, 27, 13.25, 9.5, 16.75, 25.75, 18.25, 32.75, 24.75, 28.25, 31.75, 33.75, 37.25,
          29.75, 66, 73, 80, 86, 71, 78}},
      {"ResizeNearestNeighborGrad", 3, 4, 2, 3, false, false, {
          -5, 2.25, -1.5, 5.75, 2, -1.75, 5.5, 1.75, -2, 0, 0, 0, 5.25, 1.5, -2.25, 5, 1.25, 8.5,
          4.75, 1, 8.25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4.5, 0.75, 8, 4.25, 0.5,
          7.75, 4, 11.25, 7.5, 0, 0, 0, 3.75, 11, 7.25, 3.5, 10.75, 7, 3.25, 10.5, 6.75, 0, 0, 0,
          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {"ResizeNearestNeighborGrad", 3, 4, 2, 3, true, false, {
          -5, 2.25, -1.5, 0, 0, 0, 5.75, 2, -1.75, 5.5, 1.75, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
          0, 0, 5.25, 1.5, -2.25, 0, 0, 0, 5, 1.25, 8.5, 4.75, 1, 8.25, 4.5, 0.75, 8, 0, 0, 0,
          4.25, 0.5, 7.75, 4, 11.25, 7.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3.75, 11, 7.25, 0,
          0, 0, 3.5, 10.75, 7, 3.25, 10.5, 6.75}},
      {"ResizeNearestNeighborGrad", 3, 4, 2, 3, false, true, {
          -5, 2.25, -1.5, 0, 0, 0, 5.75, 2, -1.75, 5.5, 1.75, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
          0, 0, 5.25, 1.5, -2.25, 0, 0, 0, 5, 1.25, 8.5, 4.75, 1, 8.25, 4.5, 0.75, 8, 0, 0, 0,
          4.25, 0.5, 7.75, 4, 11.25, 7.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3.75, 11, 7.25, 0,
          0, 0, 3.5, 10.75, 7, 3.25, 10.5, 6.75}},
      {"ResizeNearestNeighborGrad", 3, 4, 2, 3, true, true, {
          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -5, 2.25, -1.5, 5.75, 2, -1.75, 5.5, 1.75,
          -2, 0, 0, 0, 5.25, 1.5, -2.25, 5, 1.25, 8.5, 4.75, 1, 8.25, 0, 0, 0, 0, 0, 0, 0, 0, 0,
          0, 0, 0, 0, 0, 0, 4.5, 0.75, 8, 4.25, 0.5, 7.75, 4, 11.25, 7.5, 0, 0, 0, 3.75, 11,
          7.25, 3.5, 10.75, 7, 3.25, 10.5, 6.75}},
      {"ResizeNearestNeighborGrad", 1, 3, 3, 4, false, false, {
          18.25, 28.75, 28.25, 13.5, 13.25, 13, 12.75, 12.5, 12.25, 77.25, 76.75, 76.25, 37.5,
          37.25, 37, 47.75, 47.5, 47.25}},
      {"ResizeNearestNeighborGrad", 1, 3, 3, 4, true, false, {
          4, 14.75, 14.5, 27.75, 27.25, 26.75, 12.75, 12.5, 12.25, 39, 38.75, 38.5, 75.75, 75.25,
          74.75, 47.75, 47.5, 47.25}},
      {"ResizeNearestNeighborGrad", 1, 3, 3, 4, false, true, {
          4, 14.75, 14.5, 27.75, 27.25, 26.75, 12.75, 12.5, 12.25, 39, 38.75, 38.5, 75.75, 75.25,
          74.75, 47.75, 47.5, 47.25}},
      {"ResizeNearestNeighborGrad", 1, 3, 3, 4, true, true, {
          4, 14.75, 14.5, 14.25, 14, 13.75, 26.25, 25.75, 25.25, 39, 38.75, 38.5, 38.25, 38,
          37.75, 85.25, 84.75, 84.25}},
  };
  return *kCases;
}

TEST_CASE("Resize gradients match TF for every attr combination and size",
          "[kernels][resize_grad]") {
  for (const GradCase& c : Table()) {
    INFO(c.op << " " << c.original_height << "x" << c.original_width << " from "
              << c.resized_height << "x" << c.resized_width << " align_corners "
              << c.align_corners << " half_pixel_centers " << c.half_pixel_centers);
    const Tensor grads = GradImage({2, c.resized_height, c.resized_width, 3});
    const bool bilinear = std::string(c.op) == "ResizeBilinearGrad";
    auto out = bilinear
                   ? BilinearGrad(grads,
                                  Filled<float>({2, c.original_height, c.original_width, 3}, {}),
                                  c.align_corners, c.half_pixel_centers)
                   : NearestGrad(grads, c.original_height, c.original_width, c.align_corners,
                                 c.half_pixel_centers);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_FLOAT);
    CHECK(DimsOf(*out) == Dims{2, c.original_height, c.original_width, 3});
    CheckNear(Values<float>(*out), c.want, 0);  // bit for bit
  }
}

TEST_CASE("ResizeBilinearGrad accumulates double in double and half types in float",
          "[kernels][resize_grad]") {
  const Tensor grads = GradImage({1, 3, 5, 2});
  SECTION("double: float products added in double") {
    auto out = BilinearGrad(grads, Filled<double>({1, 2, 3, 2}, {}), false, true);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_DOUBLE);
    CheckNear(Values<double>(*out),
              {
                -3.6500002294778824, 4.9499998316168785, 9.0499992147088051, 5.5249994546175003,
                3.8500007912516594, 9.1500006020069122, 10.549999989569187, 8.1499993950128555,
                12.649998940527439, 20.124999046325684, 18.05000177025795, 12.350001245737076},
              0);
  }
  SECTION("half: the float sums, rounded once") {
    auto out = BilinearGrad(grads, Filled<Half>({1, 2, 3, 2}, {}), false, true);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_HALF);
    CHECK(FloatsOf<Half>(*out) == std::vector<float>{
              -3.65039062, 4.94921875, 9.046875, 5.5234375, 3.84960938, 9.1484375, 10.546875,
              8.1484375, 12.6484375, 20.125, 18.046875, 12.3515625});
  }
  SECTION("bfloat16: the float sums, rounded once") {
    auto out = BilinearGrad(grads, Filled<Bfloat16>({1, 2, 3, 2}, {}), false, true);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_BFLOAT16);
    CHECK(FloatsOf<Bfloat16>(*out) == std::vector<float>{
              -3.65625, 4.9375, 9.0625, 5.53125, 3.84375, 9.125, 10.5625, 8.125, 12.625, 20.125,
              18, 12.375});
  }
}

TEST_CASE("ResizeNearestNeighborGrad adds in the gradient's dtype", "[kernels][resize_grad]") {
  SECTION("half and bfloat16 round after every addition") {
    // 16 gradients into one pixel: the float sum is 2082.75.
    const std::vector<float> grads = {1000.5, 1.5, 3.25, 700.75, 2.5, 0.5, 1.25, 350.5,
                                      1.5,    2.5, 0.75, 7.5,    3.5, 4.5, 0.25, 1.5};
    auto half = NearestGrad(Rounded<Half>({1, 4, 4, 1}, grads), 1, 1);
    REQUIRE(half.ok());
    CHECK(FloatsOf<Half>(*half) == std::vector<float>{2082});
    auto bfloat16 = NearestGrad(Rounded<Bfloat16>({1, 4, 4, 1}, grads), 1, 1);
    REQUIRE(bfloat16.ok());
    CHECK(FloatsOf<Bfloat16>(*bfloat16) == std::vector<float>{2048});
  }
  SECTION("integers wrap") {
    auto u8 = NearestGrad(Filled<uint8_t>({1, 2, 2, 1}, {200, 100, 50, 30}), 1, 1);
    REQUIRE(u8.ok());
    CHECK(Values<uint8_t>(*u8) == std::vector<uint8_t>{124});
    auto i8 = NearestGrad(Filled<int8_t>({1, 2, 2, 1}, {100, 100, 50, -30}), 1, 1);
    REQUIRE(i8.ok());
    CHECK(Values<int8_t>(*i8) == std::vector<int8_t>{-36});
    auto i32 = NearestGrad(Filled<int32_t>({1, 2, 2, 1}, {2147483647, 1, 5, 7}), 1, 1);
    REQUIRE(i32.ok());
    CHECK(Values<int32_t>(*i32) == std::vector<int32_t>{-2147483636});
  }
}

TEST_CASE("Resize gradients handle empty and mismatched shapes as TF",
          "[kernels][resize_grad]") {
  SECTION("bilinear: batch and channels come from the gradient") {
    auto out = BilinearGrad(GradImage({2, 2, 2, 3}), Filled<float>({1, 3, 3, 1}, {}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 3, 3, 3});
    auto empty = BilinearGrad(Filled<float>({0, 2, 2, 3}, {}), Filled<float>({1, 3, 3, 1}, {}));
    REQUIRE(empty.ok());
    CHECK(DimsOf(*empty) == Dims{0, 3, 3, 3});
  }
  SECTION("nearest: a gradient with no rows gives zeros") {
    auto out = NearestGrad(Filled<float>({1, 0, 2, 1}, {}), 2, 3);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{1, 2, 3, 1});
    CHECK(Values<float>(*out) == std::vector<float>(6, 0.0f));
    auto empty = NearestGrad(Filled<float>({1, 2, 2, 0}, {}), 3, 3);
    REQUIRE(empty.ok());
    CHECK(DimsOf(*empty) == Dims{1, 3, 3, 0});
  }
}

TEST_CASE("ResizeBilinearGrad rejects bad arguments with TF's messages",
          "[kernels][resize_grad]") {
  const Tensor grads = GradImage({1, 2, 2, 1});
  const Tensor original = Filled<float>({1, 3, 3, 1}, {});
  CHECK_THAT(ErrorOf(BilinearGrad(grads, original, true, true)),
             Contains("If half_pixel_centers is True, align_corners must be False."));
  CHECK_THAT(ErrorOf(BilinearGrad(GradImage({2, 2, 1}), original)),
             Contains("input_grad must be 4-dimensional[2,2,1]"));
  CHECK_THAT(ErrorOf(BilinearGrad(Filled<float>({1, 0, 2, 1}, {}), original)),
             Contains("resized dimensions must be positive"));
  CHECK_THAT(ErrorOf(BilinearGrad(grads, Filled<float>({3, 3, 1}, {}))),
             Contains("original_image must be 4-dimensional[3,3,1]"));
  CHECK_THAT(ErrorOf(BilinearGrad(grads, Filled<float>({1, 3, 0, 1}, {}))),
             Contains("original dimensions must be positive"));
  CHECK_THAT(ErrorOf(BilinearGrad(grads, Filled<float>({0, 2147483647, 1, 1}, {}))),
             Contains("original sizes must be between 0 and max int32"));
}

TEST_CASE("ResizeNearestNeighborGrad rejects bad arguments with TF's messages",
          "[kernels][resize_grad]") {
  const Tensor grads = GradImage({1, 2, 2, 1});
  CHECK_THAT(ErrorOf(NearestGrad(GradImage({2, 2, 1}), 3, 3)),
             Contains("input must be 4-dimensional[2,2,1]"));
  CHECK_THAT(ErrorOf(NearestGrad(grads, Filled<int32_t>({1, 2}, {3, 3}))),
             Contains("shape_t must be 1-dimensional[1,2]"));
  CHECK_THAT(ErrorOf(NearestGrad(grads, Filled<int32_t>({3}, {3, 3, 3}))),
             Contains("shape_t must have two elements[3]"));
  CHECK_THAT(ErrorOf(NearestGrad(grads, 0, 3)), Contains("shape_t's elements must be positive"));
  CHECK_THAT(ErrorOf(NearestGrad(grads, 3, -1)), Contains("shape_t's elements must be positive"));
}

}  // namespace
}  // namespace dflow
