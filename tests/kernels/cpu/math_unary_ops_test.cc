// Erf, Erfc, Round, Rint and IsNan/IsInf/IsFinite (math_unary_ops.cc) against TF 2.21 (tf.raw_ops
// on CPU, x86): every expected value below is TF's output for the same input. Half and bfloat16
// must match TF's bits (NaN only needs to be NaN). Float Erf/Erfc: TF uses Eigen's own polynomial,
// up to 5 ulp from glibc's erff, so 8 ulp are allowed; rounding is exact.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"
#include "tests/kernels/cpu/float_compare.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckBits;
using testing::CheckUlps;
using testing::FromBits;
using testing::kInf;
using testing::kNan;
using testing::OpTester;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCwiseKernels); }

absl::StatusOr<Tensor> Unary(const std::string& op, const Tensor& x) {
  return OpTester(op, Registry()).Attr("T", x.dtype()).Input(x).RunOne();
}

// The inputs of every test: signed zeros, NaN, infinities, halves to round to even and
// values where erf saturates.
const std::vector<float> kInputF = {-3.0f,
                                    -1.5f,
                                    -0.0f,
                                    0.0f,
                                    0.25f,
                                    2.0f,
                                    kNan,
                                    -kInf,
                                    kInf,
                                    20.0f,
                                    -20.0f,
                                    -9.999999747378752e-06f,
                                    0.5f,
                                    -0.5f,
                                    2.5f,
                                    -13.899999618530273f,
                                    -14.0f,
                                    14.0f,
                                    -40.0f,
                                    -0.699999988079071f,
                                    1.2999999523162842f,
                                    3.700000047683716f,
                                    -5.199999809265137f};
const std::vector<double> kInputD = {-3.0,
                                     -1.5,
                                     -0.0,
                                     0.0,
                                     0.25,
                                     2.0,
                                     kNan,
                                     -kInf,
                                     kInf,
                                     20.0,
                                     -20.0,
                                     -9.999999747378752e-06,
                                     0.5,
                                     -0.5,
                                     2.5,
                                     -13.899999618530273,
                                     -14.0,
                                     14.0,
                                     -40.0,
                                     -0.699999988079071,
                                     1.2999999523162842,
                                     3.700000047683716,
                                     -5.199999809265137};
const std::vector<uint16_t> kInputHalf = {
    0xc200, 0xbe00, 0x8000, 0x0000, 0x3400, 0x4000, 0x7e00, 0xfc00, 0x7c00, 0x4d00, 0xcd00, 0x80a8,
    0x3800, 0xb800, 0x4100, 0xcaf3, 0xcb00, 0x4b00, 0xd100, 0xb99a, 0x3d33, 0x4366, 0xc533};
const std::vector<uint16_t> kInputBf16 = {
    0xc040, 0xbfc0, 0x8000, 0x0000, 0x3e80, 0x4000, 0x7fc0, 0xff80, 0x7f80, 0x41a0, 0xc1a0, 0xb728,
    0x3f00, 0xbf00, 0x4020, 0xc15e, 0xc160, 0x4160, 0xc220, 0xbf33, 0x3fa6, 0x406d, 0xc0a6};

TEST_CASE("Erf: +-1 at +-inf for float and the 16-bit types, NaN for double (as TF)",
          "[kernels][math]") {
  CheckUlps(Unary("Erf", Vec<float>(kInputF)),
            std::vector<float>{-0.9999780058860779f,
                               -0.9661051034927368f,
                               -0.0f,
                               0.0f,
                               0.27632641792297363f,
                               0.9953223466873169f,
                               kNan,
                               -1.0f,
                               1.0f,
                               1.0f,
                               -1.0f,
                               -1.1283790627203416e-05f,
                               0.5204998850822449f,
                               -0.5204998850822449f,
                               0.9995929598808289f,
                               -1.0f,
                               -1.0f,
                               1.0f,
                               -1.0f,
                               -0.6778011918067932f,
                               0.934008002281189f,
                               0.9999999403953552f,
                               -1.0f},
            8);
  CheckUlps(Unary("Erf", Vec<double>(kInputD)),
            std::vector<double>{-0.9999779095030015,
                                -0.9661051464753108,
                                -0.0,
                                0.0,
                                0.2763263901682369,
                                0.9953222650189527,
                                kNan,
                                kNan,
                                kNan,
                                1.0,
                                -1.0,
                                -1.1283791385526445e-05,
                                0.5204998778130466,
                                -0.5204998778130466,
                                0.999593047982555,
                                -1.0,
                                -1.0,
                                1.0,
                                -1.0,
                                -0.6778011855967799,
                                0.9340079350125213,
                                0.9999998328490031,
                                -0.9999999999998075},
            4);
  CheckBits(Unary("Erf", FromBits<Half>({23}, kInputHalf)),
            {0xbc00, 0xbbbb, 0x8000, 0x0000, 0x346c, 0x3bf6, 0x7e00, 0xbc00,
             0x3c00, 0x3c00, 0xbc00, 0x80be, 0x382a, 0xb82a, 0x3bff, 0xbc00,
             0xbc00, 0x3c00, 0xbc00, 0xb96c, 0x3b79, 0x3c00, 0xbc00});
  CheckBits(Unary("Erf", FromBits<Bfloat16>({23}, kInputBf16)),
            {0xbf80, 0xbf77, 0x8000, 0x0000, 0x3e8d, 0x3f7f, 0x7fc0, 0xbf80,
             0x3f80, 0x3f80, 0xbf80, 0xb73e, 0x3f05, 0xbf05, 0x3f80, 0xbf80,
             0xbf80, 0x3f80, 0xbf80, 0xbf2d, 0x3f6f, 0x3f80, 0xbf80});
}

TEST_CASE("Erfc saturates at 0 and 2", "[kernels][math]") {
  CheckUlps(Unary("Erfc", Vec<float>(kInputF)),
            std::vector<float>{1.999977946281433f,
                               1.9661051034927368f,
                               1.0f,
                               1.0f,
                               0.7236735820770264f,
                               0.004677735269069672f,
                               kNan,
                               2.0f,
                               0.0f,
                               0.0f,
                               2.0f,
                               1.0000113248825073f,
                               0.4795001149177551f,
                               1.5204999446868896f,
                               0.00040695202187635005f,
                               2.0f,
                               2.0f,
                               0.0f,
                               2.0f,
                               1.6778011322021484f,
                               0.06599205732345581f,
                               1.6715098638542258e-07f,
                               2.0f},
            8);
  CheckUlps(Unary("Erfc", Vec<double>(kInputD)),
            std::vector<double>{1.9999779095030015,
                                1.9661051464753108,
                                1.0,
                                1.0,
                                0.7236736098317631,
                                0.004677734981047266,
                                kNan,
                                2.0,
                                0.0,
                                5.3958656116079026e-176,
                                2.0,
                                1.0000112837913855,
                                0.47950012218695337,
                                1.5204998778130467,
                                0.00040695201744495903,
                                2.0,
                                2.0,
                                3.0372298477503115e-87,
                                2.0,
                                1.6778011855967798,
                                0.06599206498747867,
                                1.6715099690861505e-07,
                                1.9999999999998075},
            4);
  CheckBits(Unary("Erfc", FromBits<Half>({23}, kInputHalf)),
            {0x4000, 0x3fdd, 0x3c00, 0x3c00, 0x39ca, 0x1cca, 0x7e00, 0x4000,
             0x0000, 0x0000, 0x4000, 0x3c00, 0x37ac, 0x3e15, 0x0eab, 0x4000,
             0x4000, 0x0000, 0x4000, 0x3eb6, 0x2c3a, 0x0003, 0x4000});
  CheckBits(Unary("Erfc", FromBits<Bfloat16>({23}, kInputBf16)),
            {0x4000, 0x3ffc, 0x3f80, 0x3f80, 0x3f39, 0x3b99, 0x7fc0, 0x4000,
             0x0000, 0x0000, 0x4000, 0x3f80, 0x3ef6, 0x3fc3, 0x39d5, 0x4000,
             0x4000, 0x0000, 0x4000, 0x3fd7, 0x3d88, 0x342f, 0x4000});
}

TEST_CASE("Round rounds half to even, keeping -0", "[kernels][math]") {
  CheckUlps(Unary("Round", Vec<float>(kInputF)),
            std::vector<float>{-3.0f,  -2.0f, -0.0f,  0.0f,  0.0f, 2.0f,  kNan, -kInf,
                               kInf,   20.0f, -20.0f, -0.0f, 0.0f, -0.0f, 2.0f, -14.0f,
                               -14.0f, 14.0f, -40.0f, -1.0f, 1.0f, 4.0f,  -5.0f},
            0);
  CheckUlps(Unary("Round", Vec<double>(kInputD)),
            std::vector<double>{-3.0,  -2.0, -0.0,  0.0,  0.0, 2.0,  kNan, -kInf,
                                kInf,  20.0, -20.0, -0.0, 0.0, -0.0, 2.0,  -14.0,
                                -14.0, 14.0, -40.0, -1.0, 1.0, 4.0,  -5.0},
            0);
  CheckBits(Unary("Round", FromBits<Half>({23}, kInputHalf)),
            {0xc200, 0xc000, 0x8000, 0x0000, 0x0000, 0x4000, 0x7e00, 0xfc00,
             0x7c00, 0x4d00, 0xcd00, 0x8000, 0x0000, 0x8000, 0x4000, 0xcb00,
             0xcb00, 0x4b00, 0xd100, 0xbc00, 0x3c00, 0x4400, 0xc500});
  CheckBits(Unary("Round", FromBits<Bfloat16>({23}, kInputBf16)),
            {0xc040, 0xc000, 0x8000, 0x0000, 0x0000, 0x4000, 0x7fc0, 0xff80,
             0x7f80, 0x41a0, 0xc1a0, 0x8000, 0x0000, 0x8000, 0x4000, 0xc160,
             0xc160, 0x4160, 0xc220, 0xbf80, 0x3f80, 0x4080, 0xc0a0});
}

TEST_CASE("Rint is Round for float and double", "[kernels][math]") {
  CheckUlps(Unary("Rint", Vec<float>(kInputF)),
            std::vector<float>{-3.0f,  -2.0f, -0.0f,  0.0f,  0.0f, 2.0f,  kNan, -kInf,
                               kInf,   20.0f, -20.0f, -0.0f, 0.0f, -0.0f, 2.0f, -14.0f,
                               -14.0f, 14.0f, -40.0f, -1.0f, 1.0f, 4.0f,  -5.0f},
            0);
  CheckUlps(Unary("Rint", Vec<double>(kInputD)),
            std::vector<double>{-3.0,  -2.0, -0.0,  0.0,  0.0, 2.0,  kNan, -kInf,
                                kInf,  20.0, -20.0, -0.0, 0.0, -0.0, 2.0,  -14.0,
                                -14.0, 14.0, -40.0, -1.0, 1.0, 4.0,  -5.0},
            0);
}

TEST_CASE("Round on integers is the identity", "[kernels][math]") {
  absl::StatusOr<Tensor> i32 = Unary("Round", Vec<int32_t>({-3, 4, 2147483647}));
  REQUIRE(i32.ok());
  CHECK(testing::Values<int32_t>(*i32) == std::vector<int32_t>{-3, 4, 2147483647});
  absl::StatusOr<Tensor> i64 = Unary("Round", Vec<int64_t>({-5, 0}));
  REQUIRE(i64.ok());
  CHECK(testing::Values<int64_t>(*i64) == std::vector<int64_t>{-5, 0});
}

// [1, -0, NaN, inf, -inf, 1e38]: TF 2.21 gives IsNan [F F T F F F], IsInf [F F F T T F],
// IsFinite [T T F F F T]; 1e38 is infinite in half, finite in bfloat16.
std::vector<bool> Predicate(const char* op, const Tensor& x) {
  absl::StatusOr<Tensor> out = Unary(op, x);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->dtype() == DT_BOOL);
  return testing::Values<bool>(*out);
}

TEST_CASE("IsNan, IsInf and IsFinite give bool for every float dtype", "[kernels][math]") {
  const std::vector<float> x = {1, -0.0f, kNan, kInf, -kInf, 1e38f};
  const std::vector<bool> nan = {false, false, true, false, false, false};
  const std::vector<bool> inf = {false, false, false, true, true, false};
  const std::vector<bool> finite = {true, true, false, false, false, true};
  const std::vector<double> xd(x.begin(), x.end());
  for (const Tensor& t :
       {Vec<float>(x), Vec<double>(xd),
        FromBits<Bfloat16>({6}, {0x3f80, 0x8000, 0x7fc0, 0x7f80, 0xff80, 0x7e96})}) {
    INFO(DataTypeString(t.dtype()));
    CHECK(Predicate("IsNan", t) == nan);
    CHECK(Predicate("IsInf", t) == inf);
    CHECK(Predicate("IsFinite", t) == finite);
  }
  // Half: 1e38 became infinity.
  const Tensor h = FromBits<Half>({6}, {0x3c00, 0x8000, 0x7e00, 0x7c00, 0xfc00, 0x7c00});
  CHECK(Predicate("IsNan", h) == nan);
  CHECK(Predicate("IsInf", h) == std::vector<bool>{false, false, false, true, true, true});
  CHECK(Predicate("IsFinite", h) == std::vector<bool>{true, true, false, false, false, false});
  absl::StatusOr<Tensor> empty = Unary("IsNan", testing::Filled<float>({2, 0}, {}));
  REQUIRE(empty.ok());
  CHECK(testing::DimsOf(*empty) == std::vector<int64_t>{2, 0});
  CHECK(empty->dtype() == DT_BOOL);
}

}  // namespace
}  // namespace dflow
