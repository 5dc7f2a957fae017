// CropAndResize. Expected values from TF 2.21 (tf.raw_ops.CropAndResize): bilinear and
// nearest, flipped and out-of-image boxes (extrapolation), 1x1 crops (box centre), a
// uint8 image, and TF's error texts.
#include <catch2/catch.hpp>
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

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterCropAndResizeKernels);
}

// [2, 4, 5, 2]: (i * 7 % 13) + i / 4, exact in float and in uint8.
template <typename T>
Tensor Image() {
  std::vector<T> values(80);
  for (int i = 0; i < 80; ++i) values[i] = static_cast<T>((i * 7 % 13) + i * 0.25f);
  return Filled<T>({2, 4, 5, 2}, values);
}

Tensor Boxes() {
  return Filled<float>({4, 4}, {0, 0, 1, 1, 0.1f, 0.2f, 0.7f, 0.9f, 0.8f, 0.9f, 0.1f, 0.05f,
                                -0.2f, -0.1f, 1.3f, 1.1f});
}
Tensor BoxInd() { return Filled<int32_t>({4}, {0, 1, 1, 0}); }

struct CropArgs {
  Tensor image = Image<float>(), boxes = Boxes(), box_ind = BoxInd();
  Tensor crop_size = Filled<int32_t>({2}, {2, 2});
  std::string method = "bilinear";
  float extrapolation = -1.5f;
};

absl::StatusOr<Tensor> Crop(const CropArgs& a) {
  return OpTester("CropAndResize", Registry())
      .Attr("T", a.image.dtype())
      .Attr("method", a.method.c_str())
      .Attr("extrapolation_value", a.extrapolation)
      .Input(a.image)
      .Input(a.boxes)
      .Input(a.box_ind)
      .Input(a.crop_size)
      .RunOne();
}

std::vector<float> CropValues(const CropArgs& a) {
  auto out = Crop(a);
  REQUIRE(out.ok());
  return Values<float>(*out);
}

TEST_CASE("CropAndResize bilinear matches TF", "[kernels][crop_and_resize]") {
  CropArgs a;
  a.crop_size = Filled<int32_t>({2}, {3, 4});
  auto out = Crop(a);
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{4, 3, 4, 2});
  CheckNear(Values<float>(*out),
            {0, 7.25, 2, 9.25, 4, 11.25, 6, 13.25, 11.25, 12, 13.25, 7.5, 10.916666, 9.5, 10.75,
             11.5, 9.5, 16.75, 11.5, 18.75, 13.5, 20.75, 15.5, 9.75, 17.3299999, 14.7000008,
             17.9500008, 16.1000004, 19.3500004, 17.5, 20.75, 18.8999996, 16.2800007, 21.4500008,
             15.6000004, 20.9433327, 17, 21.6499996, 18.3999996, 23.0499992, 20.9500008,
             26.9000015, 22.3500004, 19.7199993, 23.75, 18, 24.3700008, 19.3999996, 24.2800007,
             21.6499996, 25.7000008, 19.9500008, 24, 23.4500008, 22.2999992, 24.3499985,
             19.5250015, 22.2249985, 17.8250008, 20.5249996, 16.125, 21.8583336, 21.1850014,
             21.6749992, 20.7499981, 18.9000015, 19.0499992, 17.2000008, 17.3499985, 15.5000019,
             18.7700005, 13.8000011, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5,
             14.1749992, 8.42500019, 9.81500053, 10.8249998, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5,
             -1.5, -1.5, -1.5, -1.5},
            1e-6);
  a.crop_size = Filled<int32_t>({2}, {1, 1});
  CheckNear(CropValues(a), {14.25, 8.5, 16.3000011, 20.9499989, 16.9750004, 20.1300011,
                            15.374999, 9.62499905},
            1e-6);
}

TEST_CASE("CropAndResize nearest matches TF", "[kernels][crop_and_resize]") {
  CropArgs a;
  a.method = "nearest";
  a.crop_size = Filled<int32_t>({2}, {3, 4});
  CheckNear(CropValues(a),
            {0,  7.25,  1.5,  8.75,  4.5,  11.75, 6,    13.25, 15,   9.25,  16.5, 10.75, 6.5,
             13.75, 8,  15.25, 9.5,  16.75, 11,   18.25, 14,   21.25, 15.5, 9.75,  18.5, 12.75,
             20, 14.25, 21.5, 15.75, 23,   17.25, 13,   20.25, 14.5, 21.75, 16,   23.25, 17.5,
             24.75, 20.5, 27.75, 22, 16.25, 23.5, 17.75, 25,   19.25, 25,   19.25, 22,   16.25,
             20.5, 27.75, 19, 26.25, 17.5, 24.75, 14.5, 21.75, 13,   20.25, 24.5, 18.75, 23,
             17.25, 20, 14.25, 18.5, 12.75, 17,  11.25, -1.5, -1.5,  -1.5, -1.5,  -1.5, -1.5,
             -1.5, -1.5, -1.5, -1.5, 16.5, 10.75, 6.5,  13.75, -1.5, -1.5,  -1.5, -1.5,  -1.5,
             -1.5, -1.5, -1.5, -1.5, -1.5},
            0);
  a.crop_size = Filled<int32_t>({2}, {1, 1});
  CheckNear(CropValues(a), {18, 12.25, 14.5, 21.75, 14.5, 21.75, 18, 12.25}, 0);
}

TEST_CASE("CropAndResize reads integer images as float", "[kernels][crop_and_resize]") {
  CropArgs a;
  a.image = Image<uint8_t>();
  a.boxes = Filled<float>({2, 4}, {0, 0, 1, 1, 0.1f, 0.2f, 0.7f, 0.9f});
  a.box_ind = Filled<int32_t>({2}, {0, 1});
  a.crop_size = Filled<int32_t>({2}, {2, 3});
  CheckNear(CropValues(a), {0, 7, 3, 10, 6, 13, 9, 16, 12, 19, 15, 9, 17.0199986, 14.1400003,
                            18.460001, 16.3600006, 20.5200005, 18.4200001, 20.579998, 26.2800007,
                            22.9200001, 16.9200001, 24.1600018, 18.9400005},
            1e-6);
}

TEST_CASE("CropAndResize accepts no boxes", "[kernels][crop_and_resize]") {
  CropArgs a;
  a.boxes = Filled<float>({0, 4}, {});
  a.box_ind = Filled<int32_t>({0}, {});
  auto out = Crop(a);
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{0, 2, 2, 2});
  a.image = Filled<float>({0, 2, 2, 1}, {});
  out = Crop(a);
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{0, 2, 2, 1});
}

TEST_CASE("CropAndResize extrapolates NaN boxes instead of reading them",
          "[kernels][crop_and_resize]") {
  CropArgs a;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  a.boxes = Filled<float>({1, 4}, {nan, 0, 1, 1});
  a.box_ind = Filled<int32_t>({1}, {0});
  CheckNear(CropValues(a), std::vector<float>(8, -1.5f), 0);
}

std::string ErrorOf(const CropArgs& a, absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  auto out = Crop(a);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == code);
  return std::string(out.status().message());
}

TEST_CASE("CropAndResize rejects bad arguments with TF's messages", "[kernels][crop_and_resize]") {
  CropArgs a;
  a.image = Filled<float>({4, 5, 2}, {});
  CHECK_THAT(ErrorOf(a), Contains("input image must be 4-D[4,5,2]"));
  a.image = Filled<float>({1, 0, 3, 1}, {});
  CHECK_THAT(ErrorOf(a), Contains("image dimensions must be positive"));
  a = CropArgs();
  a.boxes = Filled<float>({4, 3}, {});
  CHECK_THAT(ErrorOf(a), Contains("boxes must have 4 columns"));
  a.boxes = Filled<float>({1, 4, 4}, {});
  CHECK_THAT(ErrorOf(a), Contains("boxes must be 2-D, got: [1,4,4]"));
  a.boxes = Filled<float>({0}, {});
  a.box_ind = Filled<int32_t>({0}, {});
  CHECK_THAT(ErrorOf(a), Contains("boxes must be 2-D, got: [0]"));
  a = CropArgs();
  a.box_ind = Filled<int32_t>({2, 2}, {});
  CHECK_THAT(ErrorOf(a), Contains("box_indices must be rank 1 but is shape [2,2]"));
  a.box_ind = Filled<int32_t>({3}, {0, 0, 0});
  CHECK_THAT(ErrorOf(a), Contains("box_index has incompatible shape"));
  a = CropArgs();
  a.crop_size = Filled<int32_t>({1}, {2});
  CHECK_THAT(ErrorOf(a), Contains("crop_size must have two elements[1]"));
  a.crop_size = Filled<int32_t>({1, 2}, {2, 2});
  CHECK_THAT(ErrorOf(a), Contains("crop_size must be 1-D[1,2]"));
  a.crop_size = Filled<int32_t>({2}, {0, 2});
  CHECK_THAT(ErrorOf(a), Contains("crop dimensions must be positive"));
  a = CropArgs();
  for (int32_t bad : {2, -1}) {
    a.box_ind = Filled<int32_t>({4}, {0, bad, 0, 0});
    CHECK_THAT(ErrorOf(a, absl::StatusCode::kOutOfRange),
               Contains("box_index has values outside [0, batch_size)"));
  }
  a = CropArgs();
  a.crop_size = Filled<int32_t>({2}, {2147483647, 2147483647});
  // 3.7e19 elements overflow int64: a clean error from OutputShape, never a crash.
  CHECK_THAT(ErrorOf(a), Contains("output shape [4,2147483647,2147483647,2] is invalid"));
}

}  // namespace
}  // namespace dflow
