// ResizeBilinear and ResizeNearestNeighbor. Expected values from TF 2.21 (tf.raw_ops),
// for every attr combination (legacy, align_corners, half_pixel_centers), upscaling and
// downscaling to odd sizes, and the dtypes' conversions.
#include <catch2/catch.hpp>
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterResizeKernels); }

absl::StatusOr<Tensor> Resize(const std::string& op, const Tensor& images, const Tensor& size,
                              bool align_corners, bool half_pixel_centers) {
  return OpTester(op, Registry())
      .Attr("T", images.dtype())
      .Attr("align_corners", align_corners)
      .Attr("half_pixel_centers", half_pixel_centers)
      .Input(images)
      .Input(size)
      .RunOne();
}

absl::StatusOr<Tensor> Resize(const std::string& op, const Tensor& images, int32_t height,
                              int32_t width, bool align_corners = false,
                              bool half_pixel_centers = false) {
  return Resize(op, images, Filled<int32_t>({2}, {height, width}), align_corners,
                half_pixel_centers);
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

// The [2, 3, 4, 2] float image the table was computed on: (i * 7 % 11) + i / 4, exact
// in float.
Tensor TableImage() {
  std::vector<float> values(48);
  for (int i = 0; i < 48; ++i) values[i] = static_cast<float>(i * 7 % 11) + i * 0.25f;
  return Filled<float>({2, 3, 4, 2}, values);
}

struct ResizeCase {
  const char* op;
  int32_t height, width;
  bool align_corners, half_pixel_centers;
  std::vector<float> want;
};

// Generated with TF 2.21: tf.raw_ops.<op>(images=TableImage(), size=[height, width], ...).
const std::vector<ResizeCase>& Table() {
  static const auto* const kCases = new std::vector<ResizeCase>{
    {"ResizeBilinear", 5, 7, false, false, {
          0, 7.25, 2, 9.25, 4, 9.67857075, 6.00000048, 5.39285612, 8, 4.25000048, 10, 6.25, 10.5,
          6.75, 1.80000007, 9.05000019, 3.80000019, 7.27857113, 5.80000019, 5.8214283, 7.80000019,
          5.30714273, 9.80000019, 6.05000067, 11.8000002, 8.05000019, 12.3000002, 8.55000019,
          3.60000014, 10.8500004, 5.60000038, 6.56428528, 7.60000038, 3.85000038, 9.60000038,
          5.85000038, 10.9714279, 7.85000038, 11.7142849, 9.85000038, 11.8999996, 10.3500004,
          5.4000001, 12.6499996, 7.4000001, 8.36428547, 9.39999962, 5.65000057, 11.3999996,
          7.65000057, 10.8857136, 9.65000057, 7.85714197, 11.6499996, 7.09999943, 12.1499996, 6,
          13.25, 8, 8.9642849, 10, 6.25, 12, 8.25, 10.8571415, 10.25, 6.5714283, 12.25, 5.5, 12.75,
          9, 16.25, 11, 11.9642849, 13, 9.25, 15, 11.25, 13.8571415, 13.25, 9.5714283, 15.25, 8.5,
          15.75, 10.8000002, 11.4499998, 12.8000002, 10.9357138, 14.8000002, 11.0500002,
          16.7999992, 13.0500002, 15.6571417, 15.0500002, 11.3714285, 17.0499992, 10.3000002,
          17.5499992, 12.6000004, 8.85000038, 14.6000004, 10.8500004, 16.2857151, 12.8500004,
          17.0285702, 14.8500004, 15.8857126, 16.8500004, 12.8571424, 18.8500004, 12.1000004,
          19.3500004, 14.3999996, 10.6499996, 16.3999996, 12.6499996, 17.1428566, 14.6499996,
          14.1142845, 16.6499996, 12.9714279, 18.6499996, 13.7142859, 20.6499996, 13.8999996,
          21.1499996, 15, 11.25, 17, 13.25, 17.4285717, 15.25, 13.1428566, 17.25, 12, 19.25, 14,
          21.25, 14.5, 21.75}},
    {"ResizeBilinear", 5, 7, true, false, {
          0, 7.25, 1.75, 9, 3.5, 10.75, 5.25, 7, 7, 3.25, 8.75, 5, 10.5, 6.75, 1.5, 8.75, 3.25,
          7.75, 5, 6.75, 6.75, 5.75, 8.5, 4.75, 10.25, 6.5, 12, 8.25, 3, 10.25, 4.75, 6.5, 6.5,
          2.75, 8.25, 4.5, 10, 6.25, 11.75, 8, 13.5, 9.75, 4.5, 11.75, 6.25, 8, 8, 4.25, 9.75, 6,
          11.5, 7.75, 10.5, 9.5, 9.5, 11.25, 6, 13.25, 7.75, 9.5, 9.5, 5.75, 11.25, 7.5, 13, 9.25,
          9.25, 11, 5.5, 12.75, 9, 16.25, 10.75, 12.5, 12.5, 8.75, 14.25, 10.5, 16, 12.25, 12.25,
          14, 8.5, 15.75, 10.5, 12.25, 12.25, 11.25, 14, 10.25, 15.75, 12, 17.5, 13.75, 13.75,
          15.5, 10, 17.25, 12, 8.25, 13.75, 10, 15.5, 11.75, 17.25, 13.5, 19, 15.25, 15.25, 17,
          11.5, 18.75, 13.5, 9.75, 15.25, 11.5, 17, 13.25, 16, 15, 15, 16.75, 14, 18.5, 13, 20.25,
          15, 11.25, 16.75, 13, 18.5, 14.75, 14.75, 16.5, 11, 18.25, 12.75, 20, 14.5, 21.75}},
    {"ResizeBilinear", 5, 7, false, true, {
          0, 7.25, 1.25000024, 8.5, 3.25, 10.5, 5.25, 7, 7.25000095, 3.50000072, 9.25, 5.50000048,
          10.5, 6.75, 1.20000005, 8.44999981, 2.45000029, 8.12857151, 4.44999981, 7.61428547,
          6.44999981, 6, 8.45000076, 4.70000076, 10.4499998, 6.70000029, 11.6999998, 7.94999981, 3,
          10.25, 4.25, 7.5714283, 6.25, 3.28571415, 8.25, 4.5, 10.250001, 6.50000095, 12.25, 8.5,
          13.5, 9.75, 4.80000019, 12.0500002, 6.05000019, 9.37142849, 8.05000019, 5.08571434,
          10.0500002, 6.30000019, 11.5785713, 8.30000114, 9.8071413, 10.3000002, 8.69999886,
          11.5500002, 6, 13.25, 7.25, 10.5714283, 9.25, 6.28571415, 11.25, 7.5, 12.4642839,
          9.50000095, 8.17856979, 11.5, 5.5, 12.75, 9, 16.25, 10.25, 13.5714283, 12.25, 9.28571415,
          14.25, 10.5, 15.4642839, 12.500001, 11.1785698, 14.5, 8.5, 15.75, 10.1999998, 13.0499992,
          11.4499998, 11.9428568, 13.4499998, 10.1714287, 15.4499998, 11.6999998, 16.6642838,
          13.7000008, 12.3785696, 15.6999998, 9.69999981, 16.9500008, 12, 8.25, 13.25, 9.5, 15.25,
          11.5, 17.25, 13.5, 18.4642849, 15.500001, 14.1785698, 17.5, 11.5, 18.75, 13.8000002,
          10.0500002, 15.0500002, 11.3000002, 17.0500011, 13.3000002, 15.75, 15.3000002,
          14.1357136, 17.3000011, 13.6214275, 19.3000011, 13.3000002, 20.5500011, 15, 11.25, 16.25,
          12.5, 18.25, 14.5, 14.75, 16.5, 11.250001, 18.5, 13.25, 20.5, 14.5, 21.75}},
    {"ResizeBilinear", 2, 3, false, false, {
          0, 7.25, 4.66666698, 8.25, 9.33333397, 5.58333349, 4.5, 11.75, 9.16666698, 5.41666698,
          10.166667, 10.083334, 9, 16.25, 13.666667, 9.91666698, 11, 14.583334, 13.5, 9.75,
          16.3333321, 14.416667, 13.666667, 19.083334}},
    {"ResizeBilinear", 2, 3, true, false, {
          0, 7.25, 5.25, 7, 10.5, 6.75, 6, 13.25, 11.25, 7.5, 5.5, 12.75, 9, 16.25, 14.25, 10.5,
          8.5, 15.75, 15, 11.25, 14.75, 16.5, 14.5, 21.75}},
    {"ResizeBilinear", 2, 3, false, true, {
          1.33333337, 8.125, 6, 6.375, 10.666667, 6.91666698, 5.83333349, 11.25, 10.5, 6.75,
          8.29166603, 11.416667, 10.333333, 13.458333, 15, 11.25, 10.499999, 15.916667, 14.833333,
          11.083333, 15.375, 15.75, 13.625, 20.4166679}},
    {"ResizeBilinear", 1, 1, false, false, {
          0, 7.25, 9, 16.25}},
    {"ResizeBilinear", 1, 1, true, false, {
          0, 7.25, 9, 16.25}},
    {"ResizeBilinear", 1, 1, false, true, {
          8.25, 4.5, 17.25, 13.5}},
    {"ResizeBilinear", 6, 2, false, false, {
          0, 7.25, 7, 3.25, 1.5, 8.75, 8.5, 4.75, 3, 10.25, 10, 6.25, 4.5, 11.75, 11.5, 7.75, 6,
          13.25, 13, 9.25, 6, 13.25, 13, 9.25, 9, 16.25, 16, 12.25, 10.5, 12.25, 17.5, 13.75, 12,
          8.25, 19, 15.25, 13.5, 9.75, 15, 16.75, 15, 11.25, 11, 18.25, 15, 11.25, 11, 18.25}},
    {"ResizeBilinear", 6, 2, true, false, {
          0, 7.25, 10.5, 6.75, 1.20000005, 8.44999981, 11.6999998, 7.94999981, 2.4000001,
          9.64999962, 12.8999996, 9.14999962, 3.60000014, 10.8500004, 11.8999996, 10.3500004,
          4.80000019, 12.0500002, 8.69999981, 11.5500002, 6, 13.25, 5.5, 12.75, 9, 16.25, 8.5,
          15.75, 10.1999998, 13.0500002, 9.69999981, 16.9500008, 11.3999996, 9.85000038,
          10.8999996, 18.1499996, 12.6000004, 8.85000038, 12.1000004, 19.3500004, 13.8000002,
          10.0500002, 13.3000002, 20.5499992, 15, 11.25, 14.5, 21.75}},
    {"ResizeBilinear", 6, 2, false, true, {
          1.75, 9, 8.75, 5, 2.5, 8.375, 9.5, 5.75, 4, 7.125, 11, 7.25, 5.5, 7.25, 11.125, 8.75, 7,
          8.75, 9.875, 10.25, 7.75, 9.5, 9.25, 11, 10.75, 12.5, 12.25, 14, 11.5, 11.875, 13, 14.75,
          13, 10.625, 14.5, 16.25, 14.5, 10.75, 14.625, 17.75, 16, 12.25, 13.375, 19.25, 16.75, 13,
          12.75, 20}},
    {"ResizeNearestNeighbor", 5, 7, false, false, {
          0, 7.25, 0, 7.25, 3.5, 10.75, 3.5, 10.75, 7, 3.25, 7, 3.25, 10.5, 6.75, 0, 7.25, 0, 7.25,
          3.5, 10.75, 3.5, 10.75, 7, 3.25, 7, 3.25, 10.5, 6.75, 3, 10.25, 3, 10.25, 6.5, 2.75, 6.5,
          2.75, 10, 6.25, 10, 6.25, 13.5, 9.75, 3, 10.25, 3, 10.25, 6.5, 2.75, 6.5, 2.75, 10, 6.25,
          10, 6.25, 13.5, 9.75, 6, 13.25, 6, 13.25, 9.5, 5.75, 9.5, 5.75, 13, 9.25, 13, 9.25, 5.5,
          12.75, 9, 16.25, 9, 16.25, 12.5, 8.75, 12.5, 8.75, 16, 12.25, 16, 12.25, 8.5, 15.75, 9,
          16.25, 9, 16.25, 12.5, 8.75, 12.5, 8.75, 16, 12.25, 16, 12.25, 8.5, 15.75, 12, 8.25, 12,
          8.25, 15.5, 11.75, 15.5, 11.75, 19, 15.25, 19, 15.25, 11.5, 18.75, 12, 8.25, 12, 8.25,
          15.5, 11.75, 15.5, 11.75, 19, 15.25, 19, 15.25, 11.5, 18.75, 15, 11.25, 15, 11.25, 18.5,
          14.75, 18.5, 14.75, 11, 18.25, 11, 18.25, 14.5, 21.75}},
    {"ResizeNearestNeighbor", 5, 7, true, false, {
          0, 7.25, 3.5, 10.75, 3.5, 10.75, 7, 3.25, 7, 3.25, 10.5, 6.75, 10.5, 6.75, 3, 10.25, 6.5,
          2.75, 6.5, 2.75, 10, 6.25, 10, 6.25, 13.5, 9.75, 13.5, 9.75, 3, 10.25, 6.5, 2.75, 6.5,
          2.75, 10, 6.25, 10, 6.25, 13.5, 9.75, 13.5, 9.75, 6, 13.25, 9.5, 5.75, 9.5, 5.75, 13,
          9.25, 13, 9.25, 5.5, 12.75, 5.5, 12.75, 6, 13.25, 9.5, 5.75, 9.5, 5.75, 13, 9.25, 13,
          9.25, 5.5, 12.75, 5.5, 12.75, 9, 16.25, 12.5, 8.75, 12.5, 8.75, 16, 12.25, 16, 12.25,
          8.5, 15.75, 8.5, 15.75, 12, 8.25, 15.5, 11.75, 15.5, 11.75, 19, 15.25, 19, 15.25, 11.5,
          18.75, 11.5, 18.75, 12, 8.25, 15.5, 11.75, 15.5, 11.75, 19, 15.25, 19, 15.25, 11.5,
          18.75, 11.5, 18.75, 15, 11.25, 18.5, 14.75, 18.5, 14.75, 11, 18.25, 11, 18.25, 14.5,
          21.75, 14.5, 21.75, 15, 11.25, 18.5, 14.75, 18.5, 14.75, 11, 18.25, 11, 18.25, 14.5,
          21.75, 14.5, 21.75}},
    {"ResizeNearestNeighbor", 5, 7, false, true, {
          0, 7.25, 0, 7.25, 3.5, 10.75, 7, 3.25, 7, 3.25, 10.5, 6.75, 10.5, 6.75, 0, 7.25, 0, 7.25,
          3.5, 10.75, 7, 3.25, 7, 3.25, 10.5, 6.75, 10.5, 6.75, 3, 10.25, 3, 10.25, 6.5, 2.75, 10,
          6.25, 10, 6.25, 13.5, 9.75, 13.5, 9.75, 6, 13.25, 6, 13.25, 9.5, 5.75, 13, 9.25, 13,
          9.25, 5.5, 12.75, 5.5, 12.75, 6, 13.25, 6, 13.25, 9.5, 5.75, 13, 9.25, 13, 9.25, 5.5,
          12.75, 5.5, 12.75, 9, 16.25, 9, 16.25, 12.5, 8.75, 16, 12.25, 16, 12.25, 8.5, 15.75, 8.5,
          15.75, 9, 16.25, 9, 16.25, 12.5, 8.75, 16, 12.25, 16, 12.25, 8.5, 15.75, 8.5, 15.75, 12,
          8.25, 12, 8.25, 15.5, 11.75, 19, 15.25, 19, 15.25, 11.5, 18.75, 11.5, 18.75, 15, 11.25,
          15, 11.25, 18.5, 14.75, 11, 18.25, 11, 18.25, 14.5, 21.75, 14.5, 21.75, 15, 11.25, 15,
          11.25, 18.5, 14.75, 11, 18.25, 11, 18.25, 14.5, 21.75, 14.5, 21.75}},
    {"ResizeNearestNeighbor", 2, 3, false, false, {
          0, 7.25, 3.5, 10.75, 7, 3.25, 3, 10.25, 6.5, 2.75, 10, 6.25, 9, 16.25, 12.5, 8.75, 16,
          12.25, 12, 8.25, 15.5, 11.75, 19, 15.25}},
    {"ResizeNearestNeighbor", 2, 3, true, false, {
          0, 7.25, 7, 3.25, 10.5, 6.75, 6, 13.25, 13, 9.25, 5.5, 12.75, 9, 16.25, 16, 12.25, 8.5,
          15.75, 15, 11.25, 11, 18.25, 14.5, 21.75}},
    {"ResizeNearestNeighbor", 2, 3, false, true, {
          0, 7.25, 7, 3.25, 10.5, 6.75, 6, 13.25, 13, 9.25, 5.5, 12.75, 9, 16.25, 16, 12.25, 8.5,
          15.75, 15, 11.25, 11, 18.25, 14.5, 21.75}},
    {"ResizeNearestNeighbor", 1, 1, false, false, {
          0, 7.25, 9, 16.25}},
    {"ResizeNearestNeighbor", 1, 1, true, false, {
          0, 7.25, 9, 16.25}},
    {"ResizeNearestNeighbor", 1, 1, false, true, {
          10, 6.25, 19, 15.25}},
    {"ResizeNearestNeighbor", 6, 2, false, false, {
          0, 7.25, 7, 3.25, 0, 7.25, 7, 3.25, 3, 10.25, 10, 6.25, 3, 10.25, 10, 6.25, 6, 13.25, 13,
          9.25, 6, 13.25, 13, 9.25, 9, 16.25, 16, 12.25, 9, 16.25, 16, 12.25, 12, 8.25, 19, 15.25,
          12, 8.25, 19, 15.25, 15, 11.25, 11, 18.25, 15, 11.25, 11, 18.25}},
    {"ResizeNearestNeighbor", 6, 2, true, false, {
          0, 7.25, 10.5, 6.75, 0, 7.25, 10.5, 6.75, 3, 10.25, 13.5, 9.75, 3, 10.25, 13.5, 9.75, 6,
          13.25, 5.5, 12.75, 6, 13.25, 5.5, 12.75, 9, 16.25, 8.5, 15.75, 9, 16.25, 8.5, 15.75, 12,
          8.25, 11.5, 18.75, 12, 8.25, 11.5, 18.75, 15, 11.25, 14.5, 21.75, 15, 11.25, 14.5,
          21.75}},
    {"ResizeNearestNeighbor", 6, 2, false, true, {
          3.5, 10.75, 10.5, 6.75, 3.5, 10.75, 10.5, 6.75, 6.5, 2.75, 13.5, 9.75, 6.5, 2.75, 13.5,
          9.75, 9.5, 5.75, 5.5, 12.75, 9.5, 5.75, 5.5, 12.75, 12.5, 8.75, 8.5, 15.75, 12.5, 8.75,
          8.5, 15.75, 15.5, 11.75, 11.5, 18.75, 15.5, 11.75, 11.5, 18.75, 18.5, 14.75, 14.5, 21.75,
          18.5, 14.75, 14.5, 21.75}},

  };
  return *kCases;
}

TEST_CASE("Resize ops match TF for every attr combination and size", "[kernels][resize]") {
  const Tensor image = TableImage();
  for (const ResizeCase& c : Table()) {
    INFO(c.op << " to " << c.height << "x" << c.width << " align_corners " << c.align_corners
              << " half_pixel_centers " << c.half_pixel_centers);
    auto out = Resize(c.op, image, c.height, c.width, c.align_corners, c.half_pixel_centers);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_FLOAT);
    CHECK(DimsOf(*out) == Dims{2, c.height, c.width, 2});
    CheckNear(Values<float>(*out), c.want, 0);  // bit for bit
  }
}

std::vector<float> HalfValues(const Tensor& t) {
  std::vector<float> values;
  for (Half h : Values<Half>(t)) values.push_back(h.ToFloat());
  return values;
}

TEST_CASE("ResizeBilinear reads any real dtype and gives float", "[kernels][resize]") {
  SECTION("uint8, half-pixel centers") {
    auto out = Resize("ResizeBilinear",
                      Filled<uint8_t>({1, 2, 3, 1}, {0, 200, 50, 255, 7, 9}), 3, 4, false, true);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_FLOAT);
    CHECK(Values<float>(*out) == std::vector<float>{0, 125, 143.75, 50, 127.5, 112.5, 75.75,
                                                    29.5, 255, 100, 7.75, 9});
  }
  SECTION("half, legacy") {
    std::vector<Half> in;
    for (float v : {0.5f, -1.25f, 3.f, 7.75f, 2.f, 1.f}) in.push_back(Half::FromFloat(v));
    auto out = Resize("ResizeBilinear", Filled<Half>({1, 2, 3, 1}, in), 4, 5);
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out),
              {0.5, -0.5500000715255737, -0.39999979734420776, 2.1500003337860107, 3.0, 4.125,
               1.8750001192092896, 0.7000001072883606, 1.6750001907348633, 2.0, 7.75,
               4.300000190734863, 1.7999999523162842, 1.1999999284744263, 1.0, 7.75,
               4.300000190734863, 1.7999999523162842, 1.1999999284744263, 1.0});
  }
  SECTION("bfloat16, align_corners") {
    std::vector<Bfloat16> in;
    for (float v : {0.5f, -1.25f, 3.f, 7.75f, 2.f, 1.f}) in.push_back(Bfloat16::FromFloat(v));
    auto out = Resize("ResizeBilinear", Filled<Bfloat16>({1, 2, 3, 1}, in), 3, 2, true, false);
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{0.5, 3.0, 4.125, 2.0, 7.75, 1.0});
  }
  SECTION("int64 beyond float's exact range, legacy") {
    auto out = Resize("ResizeBilinear",
                      Filled<int64_t>({1, 3, 2, 1}, {-5, 100, int64_t{1} << 40, 3, 0, -7}), 2, 5);
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{-5, 37, 79, 100, 100, 549755813888.0f,
                                                    329853501440.0f, 109951156224.0f, -2, -2});
  }
  SECTION("double, half-pixel centers") {
    auto out = Resize("ResizeBilinear", Filled<double>({1, 2, 2, 1}, {0.1, 0.2, 0.3, 0.4}), 3, 3,
                      false, true);
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out),
              {0.10000000149011612, 0.15000000596046448, 0.20000000298023224, 0.20000001788139343,
               0.25, 0.30000001192092896, 0.30000001192092896, 0.3500000238418579,
               0.4000000059604645});
  }
}

TEST_CASE("ResizeNearestNeighbor keeps the input dtype", "[kernels][resize]") {
  SECTION("uint8, align_corners") {
    auto out = Resize("ResizeNearestNeighbor",
                      Filled<uint8_t>({1, 2, 3, 1}, {0, 200, 50, 255, 7, 9}), 3, 4, true, false);
    REQUIRE(out.ok());
    CHECK(Values<uint8_t>(*out) ==
          std::vector<uint8_t>{0, 200, 200, 50, 255, 7, 7, 9, 255, 7, 7, 9});
  }
  SECTION("half, half-pixel centers") {
    std::vector<Half> in;
    for (float v : {0.5f, -1.25f, 3.f, 7.75f, 2.f, 1.f}) in.push_back(Half::FromFloat(v));
    auto out =
        Resize("ResizeNearestNeighbor", Filled<Half>({1, 2, 3, 1}, in), 4, 5, false, true);
    REQUIRE(out.ok());
    CHECK(out->dtype() == DT_HALF);
    CHECK(HalfValues(*out) == std::vector<float>{0.5, 0.5, -1.25, 3, 3, 0.5, 0.5, -1.25, 3, 3,
                                                 7.75, 7.75, 2, 1, 1, 7.75, 7.75, 2, 1, 1});
  }
  SECTION("int64, legacy") {
    const int64_t big = int64_t{1} << 40;
    auto out = Resize("ResizeNearestNeighbor",
                      Filled<int64_t>({1, 3, 2, 1}, {-5, 100, big, 3, 0, -7}), 2, 5);
    REQUIRE(out.ok());
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>{-5, -5, -5, 100, 100, big, big, big, 3, 3});
  }
}

TEST_CASE("Resize ops handle empty batches", "[kernels][resize]") {
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    auto out = Resize(op, Filled<float>({0, 2, 3, 1}, {}), 2, 2);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{0, 2, 2, 1});
  }
}

TEST_CASE("Resize ops reject bad arguments with TF's messages", "[kernels][resize]") {
  const Tensor image = TableImage();
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    INFO(op);
    CHECK_THAT(ErrorOf(Resize(op, image, 5, 7, true, true)),
               Contains("If half_pixel_centers is True, align_corners must be False."));
    CHECK_THAT(ErrorOf(Resize(op, Filled<float>({3, 4, 2}, {}), 5, 7)),
               Contains("input must be 4-dimensional[3,4,2]"));
    CHECK_THAT(ErrorOf(Resize(op, Filled<float>({1, 2, 3, 0}, {}), 2, 2)),
               Contains("image must have at least one channel"));
    CHECK_THAT(ErrorOf(Resize(op, Filled<float>({1, 0, 3, 1}, {}), 2, 2)),
               Contains("input image must be of non-zero size"));
    CHECK_THAT(ErrorOf(Resize(op, image, Filled<int32_t>({3}, {5, 7, 1}), false, false)),
               Contains("shape_t must have two elements[3]"));
    CHECK_THAT(ErrorOf(Resize(op, image, Filled<int32_t>({1, 2}, {5, 7}), false, false)),
               Contains("shape_t must be 1-dimensional[1,2]"));
    CHECK_THAT(ErrorOf(Resize(op, image, 0, 7)), Contains("output dimensions must be positive"));
    CHECK_THAT(ErrorOf(Resize(op, image, 5, -1)), Contains("output dimensions must be positive"));
  }
}

TEST_CASE("Resize ops fail cleanly on outputs too large to allocate", "[kernels][resize]") {
  // 2^31-1 squared elements: TF's answer is OOM too (RESOURCE_EXHAUSTED), never a crash.
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    auto out = Resize(op, Filled<float>({1, 2, 3, 1}, {}), 2147483647, 2147483647);
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kResourceExhausted);
  }
}

}  // namespace
}  // namespace dflow
