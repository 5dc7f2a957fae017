// ResizeBicubic. Expected values from TF 2.21 (tf.raw_ops.ResizeBicubic) for legacy,
// align_corners and half_pixel_centers (Keys a = -0.5, renormalized edges), up- and
// downscaling, a uint8 image, and TF's errors.
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterResizeKernels); }

// [2, 3, 4, 2]: (i * 7 % 11) + i / 4.
template <typename T>
Tensor Image() {
  std::vector<T> values(48);
  for (int i = 0; i < 48; ++i) values[i] = static_cast<T>((i * 7 % 11) + i * 0.25f);
  return Filled<T>({2, 3, 4, 2}, values);
}

absl::StatusOr<Tensor> Bicubic(const Tensor& images, Tensor size, bool align_corners = false,
                               bool half_pixel_centers = false) {
  return OpTester("ResizeBicubic", Registry())
      .Attr("T", images.dtype())
      .Attr("align_corners", align_corners)
      .Attr("half_pixel_centers", half_pixel_centers)
      .Input(images)
      .Input(size)
      .RunOne();
}

std::vector<float> Resized(const Tensor& images, int32_t h, int32_t w, bool align_corners,
                           bool half_pixel_centers) {
  auto out = Bicubic(images, Filled<int32_t>({2}, {h, w}), align_corners, half_pixel_centers);
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{2, h, w, 2});
  return Values<float>(*out);
}

TEST_CASE("ResizeBicubic legacy matches TF", "[kernels][resize]") {
  CheckNear(Resized(Image<float>(), 2, 3, false, false),
            {0, 7.25, 4.79534674, 8.5862627, 9.5935421, 5.23332644, 4.78125, 12.03125, 9.88170624,
             3.78283119, 10.6043348, 10.6820002, 9, 16.25, 14.4055634, 8.82312584, 11.0526266,
             14.8435411, 13.78125, 9, 17.1521626, 14.9411812, 13.7992268, 19.6247921},
            1e-6);
  const std::vector<float> up = Resized(Image<float>(), 5, 7, false, false);
  CheckNear(std::vector<float>{up[0], up[1], up[2], up[3], up[20], up[69], up[139]},
            {0, 7.25, 1.66277933, 10.067111, 7.22656441, 13.4411821, 22.4411831}, 1e-6);
}

TEST_CASE("ResizeBicubic align_corners matches TF", "[kernels][resize]") {
  CheckNear(Resized(Image<float>(), 2, 3, true, false),
            {0, 7.25, 5.25, 7, 10.5, 6.75, 6, 13.25, 12.28125, 6.46875, 5.5, 12.75,
             9, 16.25, 15.28125, 9.46875, 8.5, 15.75, 15, 11.25, 14.75, 16.5, 14.5, 21.75},
            1e-6);
  const std::vector<float> up = Resized(Image<float>(), 5, 7, true, false);
  CheckNear(std::vector<float>{up[2], up[3], up[20], up[51], up[139]},
            {1.421875, 9.703125, 6.37207031, 8.03125, 21.75}, 1e-6);
}

TEST_CASE("ResizeBicubic half_pixel_centers uses Keys' kernel", "[kernels][resize]") {
  CheckNear(Resized(Image<float>(), 2, 3, false, true),
            {0.864435613, 7.97417068, 5.73859501, 6.32938004, 10.8562651, 6.79501677,
             5.85713625, 11.8223524, 11.3033762, 6.17335796, 7.73970842, 11.8882084,
             9.86179066, 14.0102911, 15.576642, 10.4466238, 9.92764664, 15.8928633,
             14.9549828, 10.893734, 15.420619, 16.0114059, 13.7758303, 20.8855648},
            1e-6);
  const std::vector<float> up = Resized(Image<float>(), 5, 7, false, true);
  CheckNear(std::vector<float>{up[0], up[1], up[2], up[36], up[37], up[139]},
            {-0.503834069, 6.68035412, 0.697912693, 10.2654037, 6.51540422, 22.25383}, 1e-6);
}

TEST_CASE("ResizeBicubic reads integer images as float", "[kernels][resize]") {
  auto out = Bicubic(Image<uint8_t>(), Filled<int32_t>({2}, {4, 3}), false, true);
  REQUIRE(out.ok());
  CheckNear(Values<float>(*out),
            {0.141550004, 7.33416653, 4.84328365, 6.66651106, 9.54501724, 5.41794252,
             1.96805131, 8.22675991, 6.62155008, 4.29174423, 12.0552406, 7.32644224,
             4.62848186, 10.277318,  9.58682156, 4.20860577, 10.3945398, 10.0404215,
             6.45498276, 12.2003183, 11.8801308, 6.46921682, 5.60403013, 11.8584499,
             9.14155006, 15.3959703, 14.5307837, 9.11986923, 8.79968166, 14.5450172,
             10.9595776, 10.6054583, 16.7913933, 11.4131784, 10.722682,  16.3715172,
             13.6735563, 8.94475746, 16.7082558, 14.3784494, 12.7732391, 19.0319481,
             15.582058,  11.4549828, 14.3334875, 16.1567154, 13.6658335, 20.8584499},
            1e-6);
}

TEST_CASE("ResizeBicubic rejects bad arguments with TF's messages", "[kernels][resize]") {
  auto error = [](const absl::StatusOr<Tensor>& out) {
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(out.status().message());
  };
  const Tensor size = Filled<int32_t>({2}, {3, 3});
  CHECK_THAT(error(Bicubic(Image<float>(), Filled<int32_t>({2}, {0, 2}))),
             Contains("output dimensions must be positive"));
  CHECK_THAT(error(Bicubic(Image<float>(), size, true, true)),
             Contains("If half_pixel_centers is True, align_corners must be False."));
  CHECK_THAT(error(Bicubic(Filled<float>({3, 4, 2}, {}), size)),
             Contains("input must be 4-dimensional[3,4,2]"));
}

}  // namespace
}  // namespace dflow
