// The activations of activation_ops.cc against TF 2.21 (tf.raw_ops on CPU, x86): every
// expected value below is TF's output for the same input. Half and bfloat16 must match
// TF's bits (NaN only needs to be NaN); float and double within a few ulp where TF's
// Eigen exp/log1p and glibc's may round differently, exactly otherwise.
#include <algorithm>
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

absl::StatusOr<Tensor> LeakyRelu(const Tensor& x, float alpha) {
  return OpTester("LeakyRelu", Registry())
      .Attr("T", x.dtype())
      .Attr("alpha", alpha)
      .Input(x)
      .RunOne();
}

// The inputs of every test: signed zeros, NaN, infinities, the softplus thresholds
// (about +-13.94 for float) and values where e^x - 1 cancels.
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

TEST_CASE("LeakyRelu with the default alpha 0.2 (a float attr: double uses (double)0.2f)",
          "[kernels][activation]") {
  CheckUlps(Unary("LeakyRelu", Vec<float>(kInputF)),
            std::vector<float>{-0.6000000238418579f,
                               -0.30000001192092896f,
                               -0.0f,
                               0.0f,
                               0.25f,
                               2.0f,
                               kNan,
                               -kInf,
                               kInf,
                               20.0f,
                               -4.0f,
                               -1.9999999949504854e-06f,
                               0.5f,
                               -0.10000000149011612f,
                               2.5f,
                               -2.7799999713897705f,
                               -2.799999952316284f,
                               14.0f,
                               -8.0f,
                               -0.14000000059604645f,
                               1.2999999523162842f,
                               3.700000047683716f,
                               -1.0399999618530273f},
            0);
  CheckUlps(Unary("LeakyRelu", Vec<double>(kInputD)),
            std::vector<double>{-0.6000000089406967,
                                -0.30000000447034836,
                                -0.0,
                                0.0,
                                0.25,
                                2.0,
                                kNan,
                                -kInf,
                                kInf,
                                20.0,
                                -4.000000059604645,
                                -1.999999979278072e-06,
                                0.5,
                                -0.10000000149011612,
                                2.5,
                                -2.7799999651312817,
                                -2.8000000417232513,
                                14.0,
                                -8.00000011920929,
                                -0.13999999970197674,
                                1.2999999523162842,
                                3.700000047683716,
                                -1.0399999773502344},
            0);
  CheckBits(Unary("LeakyRelu", FromBits<Half>({23}, kInputHalf)),
            {0xb8cc, 0xb4cc, 0x8000, 0x0000, 0x3400, 0x4000, 0x7e00, 0xfc00,
             0x7c00, 0x4d00, 0xc400, 0x8022, 0x3800, 0xae66, 0x4100, 0xc18f,
             0xc199, 0x4b00, 0xc800, 0xb07b, 0x3d33, 0x4366, 0xbc29});
  CheckBits(Unary("LeakyRelu", FromBits<Bfloat16>({23}, kInputBf16)),
            {0xbf1a, 0xbe9a, 0x8000, 0x0000, 0x3e80, 0x4000, 0x7fc0, 0xff80,
             0x7f80, 0x41a0, 0xc080, 0xb607, 0x3f00, 0xbdcd, 0x4020, 0xc032,
             0xc033, 0x4160, 0xc100, 0xbe0f, 0x3fa6, 0x406d, 0xbf85});
}

TEST_CASE("Selu: scale_alpha * (e^x - 1) below 0, scale * x above", "[kernels][activation]") {
  CheckUlps(Unary("Selu", Vec<float>(kInputF)),
            std::vector<float>{-1.6705687046051025f,
                               -1.3658143281936646f,
                               -0.0f,
                               0.0f,
                               0.2626752555370331f,
                               2.1014020442962646f,
                               kNan,
                               -1.7580993175506592f,
                               kInf,
                               21.014020919799805f,
                               -1.7580993175506592f,
                               -1.7604868844500743e-05f,
                               0.5253505110740662f,
                               -0.6917581558227539f,
                               2.6267526149749756f,
                               -1.758097767829895f,
                               -1.7580978870391846f,
                               14.709814071655273f,
                               -1.7580993175506592f,
                               -0.8850530385971069f,
                               1.3659112453460693f,
                               3.8875937461853027f,
                               -1.7484005689620972f},
            4);
  CheckUlps(Unary("Selu", Vec<double>(kInputD)),
            std::vector<double>{-1.670568728767112,
                                -1.3658143533672529,
                                -0.0,
                                0.0,
                                0.2626752468388701,
                                2.101401974710961,
                                kNan,
                                -1.7580993408473768,
                                kInf,
                                21.014019747109607,
                                -1.7580993372236642,
                                -1.758090505975658e-05,
                                0.5253504936777402,
                                -0.6917581878028713,
                                2.626752468388701,
                                -1.7580977251862409,
                                -1.7580978789372839,
                                14.709813822976727,
                                -1.7580993408473768,
                                -0.8850530351696825,
                                1.3659112334607972,
                                3.887593703316605,
                                -1.7484006707256208},
            4);
  CheckBits(Unary("Selu", FromBits<Half>({23}, kInputHalf)),
            {0xbeae, 0xbd76, 0x8000, 0x0000, 0x3434, 0x4034, 0x7e00, 0xbf08,
             0x7c00, 0x4d41, 0xbf08, 0x0000, 0x3834, 0xb989, 0x4141, 0xbf08,
             0xbf08, 0x4b5b, 0xbf08, 0xbb14, 0x3d77, 0x43c6, 0xbefe});
  CheckBits(Unary("Selu", FromBits<Bfloat16>({23}, kInputBf16)),
            {0xbfd6, 0xbfaf, 0x8000, 0x0000, 0x3e86, 0x4006, 0x7fc0, 0xbfe1,
             0x7f80, 0x41a8, 0xbfe1, 0x0000, 0x3f06, 0xbf32, 0x4028, 0xbfe1,
             0xbfe1, 0x416a, 0xbfe1, 0xbf63, 0x3fae, 0x4078, 0xbfe0});
}

TEST_CASE("Elu is e^x - 1 (not expm1) below 0: half and bfloat16 round e^x first",
          "[kernels][activation]") {
  CheckUlps(Unary("Elu", Vec<float>(kInputF)),
            std::vector<float>{-0.9502129554748535f,
                               -0.7768698334693909f,
                               -0.0f,
                               0.0f,
                               0.25f,
                               2.0f,
                               kNan,
                               -1.0f,
                               kInf,
                               20.0f,
                               -1.0f,
                               -1.0013580322265625e-05f,
                               0.5f,
                               -0.39346933364868164f,
                               2.5f,
                               -0.9999991059303284f,
                               -0.9999991655349731f,
                               14.0f,
                               -1.0f,
                               -0.5034146904945374f,
                               1.2999999523162842f,
                               3.700000047683716f,
                               -0.9944834113121033f},
            4);
  CheckUlps(Unary("Elu", Vec<double>(kInputD)),
            std::vector<double>{-0.950212931632136,
                                -0.7768698398515702,
                                -0.0,
                                0.0,
                                0.25,
                                2.0,
                                kNan,
                                -1.0,
                                kInf,
                                20.0,
                                -0.9999999979388464,
                                -9.99994974759666e-06,
                                0.5,
                                -0.3934693402873666,
                                2.5,
                                -0.9999990810182915,
                                -0.9999991684712809,
                                14.0,
                                -1.0,
                                -0.5034146902888323,
                                1.2999999523162842,
                                3.700000047683716,
                                -0.9944834345270379},
            4);
  CheckBits(Unary("Elu", FromBits<Half>({23}, kInputHalf)),
            {0xbb9a, 0xba37, 0x8000, 0x0000, 0x3400, 0x4000, 0x7e00, 0xbc00,
             0x7c00, 0x4d00, 0xbc00, 0x0000, 0x3800, 0xb64c, 0x4100, 0xbc00,
             0xbc00, 0x4b00, 0xbc00, 0xb807, 0x3d33, 0x4366, 0xbbf5});
  CheckBits(Unary("Elu", FromBits<Bfloat16>({23}, kInputBf16)),
            {0xbf73, 0xbf47, 0x8000, 0x0000, 0x3e80, 0x4000, 0x7fc0, 0xbf80,
             0x7f80, 0x41a0, 0xbf80, 0x0000, 0x3f00, 0xbeca, 0x4020, 0xbf80,
             0xbf80, 0x4160, 0xbf80, 0xbf01, 0x3fa6, 0x406d, 0xbf7f});
}

TEST_CASE("Softsign is x / (|x| + 1): infinities give NaN", "[kernels][activation]") {
  CheckUlps(Unary("Softsign", Vec<float>(kInputF)),
            std::vector<float>{-0.75f,
                               -0.6000000238418579f,
                               -0.0f,
                               0.0f,
                               0.20000000298023224f,
                               0.6666666865348816f,
                               kNan,
                               kNan,
                               kNan,
                               0.9523809552192688f,
                               -0.9523809552192688f,
                               -9.999899702961557e-06f,
                               0.3333333432674408f,
                               -0.3333333432674408f,
                               0.7142857313156128f,
                               -0.9328858852386475f,
                               -0.9333333373069763f,
                               0.9333333373069763f,
                               -0.9756097793579102f,
                               -0.4117646813392639f,
                               0.5652173757553101f,
                               0.7872340679168701f,
                               -0.8387096524238586f},
            0);
  CheckUlps(Unary("Softsign", Vec<double>(kInputD)),
            std::vector<double>{-0.75,
                                -0.6,
                                -0.0,
                                0.0,
                                0.2,
                                0.6666666666666666,
                                kNan,
                                kNan,
                                kNan,
                                0.9523809523809523,
                                -0.9523809523809523,
                                -9.999899748383793e-06,
                                0.3333333333333333,
                                -0.3333333333333333,
                                0.7142857142857143,
                                -0.9328859043220137,
                                -0.9333333333333333,
                                0.9333333333333333,
                                -0.975609756097561,
                                -0.411764701757464,
                                0.5652173822904127,
                                0.7872340447118024,
                                -0.8387096724574696},
            0);
  CheckBits(Unary("Softsign", FromBits<Half>({23}, kInputHalf)),
            {0xba00, 0xb8cd, 0x8000, 0x0000, 0x3266, 0x3955, 0x7e00, 0xfe00,
             0xfe00, 0x3b9e, 0xbb9e, 0x80a8, 0x3555, 0xb555, 0x39b7, 0xbb77,
             0xbb77, 0x3b77, 0xbbce, 0xb697, 0x3885, 0x3a4c, 0xbab6});
  CheckBits(Unary("Softsign", FromBits<Bfloat16>({23}, kInputBf16)),
            {0xbf40, 0xbf1a, 0x8000, 0x0000, 0x3e4d, 0x3f2b, 0x7fc0, 0x7fc0,
             0x7fc0, 0x3f74, 0xbf74, 0xb728, 0x3eab, 0xbeab, 0x3f37, 0xbf6f,
             0xbf6f, 0x3f6f, 0xbf7a, 0xbed2, 0x3f11, 0x3f4a, 0xbf57});
}

TEST_CASE("Softplus switches to x above -t and e^x below t, t = log(eps) + 2",
          "[kernels][activation]") {
  CheckUlps(Unary("Softplus", Vec<float>(kInputF)),
            std::vector<float>{0.04858735576272011f,
                               0.20141325891017914f,
                               0.6931471824645996f,
                               0.6931471824645996f,
                               0.825939416885376f,
                               2.1269280910491943f,
                               kNan,
                               0.0f,
                               kInf,
                               20.0f,
                               2.06115369216775e-09f,
                               0.6931421756744385f,
                               0.9740769267082214f,
                               0.4740769863128662f,
                               2.578889846801758f,
                               9.189812431031896e-07f,
                               8.315287232107949e-07f,
                               14.0f,
                               4.24835413113866e-18f,
                               0.40318605303764343f,
                               1.541008472442627f,
                               3.7244229316711426f,
                               0.005501404870301485f},
            4);
  CheckUlps(Unary("Softplus", Vec<double>(kInputD)),
            std::vector<double>{0.048587351573742055,
                                0.20141327798275238,
                                0.6931471805599453,
                                0.6931471805599453,
                                0.8259394198788433,
                                2.1269280110429722,
                                kNan,
                                0.0,
                                kInf,
                                20.000000002061153,
                                2.061153620314381e-09,
                                0.6931421805725716,
                                0.9740769841801067,
                                0.4740769841801067,
                                2.5788897342925496,
                                9.1898128619816e-07,
                                8.315283733837541e-07,
                                14.000000831528373,
                                4.248354255291589e-18,
                                0.40318605284096787,
                                1.5410084163614604,
                                3.724422892467029,
                                0.005501404956085944},
            4);
  CheckBits(Unary("Softplus", FromBits<Half>({23}, kInputHalf)),
            {0x2a38, 0x3272, 0x398c, 0x398c, 0x3a9c, 0x4041, 0xffff, 0x0000,
             0x7c00, 0x4d00, 0x0000, 0x398c, 0x3bcb, 0x3796, 0x4128, 0x000f,
             0x000e, 0x4b00, 0x0000, 0x3673, 0x3e2a, 0x4372, 0x1da3});
  CheckBits(Unary("Softplus", FromBits<Bfloat16>({23}, kInputBf16)),
            {0x3d4c, 0x3e4e, 0x3f31, 0x3f31, 0x3f53, 0x4008, 0x7fc0, 0x0000,
             0x7f80, 0x41a0, 0x310e, 0x3f31, 0x3f79, 0x3ef2, 0x4025, 0x357d,
             0x355f, 0x4160, 0x229d, 0x3ece, 0x3fc5, 0x406d, 0x3bb7});
}

// Half's threshold is log(2^-13) + 2 = -7.0 (Eigen's half epsilon is 2^-13): -6.9 and -7
// take log1p(e^x) with e^x rounded to half, -7.1 and -8 just e^x.
TEST_CASE("Half Softplus uses Eigen's half epsilon for its threshold", "[kernels][activation]") {
  CheckBits(Unary("Softplus", FromBits<Half>({4}, {0xc6e6, 0xc700, 0xc71a, 0xc800})),
            {0x1421, 0x1377, 0x12c0, 0x0d7f});
}

TEST_CASE("LeakyRelu takes its alpha attr, rounded to the 16-bit types", "[kernels][activation]") {
  CheckUlps(LeakyRelu(Vec<float>(kInputF), -0.3f),
            std::vector<float>{0.9000000357627869f,
                               0.45000001788139343f,
                               0.0f,
                               -0.0f,
                               0.25f,
                               2.0f,
                               kNan,
                               kInf,
                               kInf,
                               20.0f,
                               6.0f,
                               3.000000106112566e-06f,
                               0.5f,
                               0.15000000596046448f,
                               2.5f,
                               4.170000076293945f,
                               4.200000286102295f,
                               14.0f,
                               12.0f,
                               0.21000000834465027f,
                               1.2999999523162842f,
                               3.700000047683716f,
                               1.5600000619888306f},
            0);
  CheckBits(LeakyRelu(FromBits<Half>({23}, kInputHalf), 0.1f),
            {0xb4cc, 0xb0cc, 0x8000, 0x0000, 0x3400, 0x4000, 0x7e00, 0xfc00,
             0x7c00, 0x4d00, 0xc000, 0x8011, 0x3800, 0xaa66, 0x4100, 0xbd8f,
             0xbd99, 0x4b00, 0xc400, 0xac7b, 0x3d33, 0x4366, 0xb829});
  CheckBits(LeakyRelu(FromBits<Bfloat16>({23}, kInputBf16), 0.1f),
            {0xbe9a, 0xbe1a, 0x8000, 0x0000, 0x3e80, 0x4000, 0x7fc0, 0xff80,
             0x7f80, 0x41a0, 0xc000, 0xb587, 0x3f00, 0xbd4d, 0x4020, 0xbfb2,
             0xbfb3, 0x4160, 0xc080, 0xbd8f, 0x3fa6, 0x406d, 0xbf05});
}

TEST_CASE("Activations keep empty shapes and run large inputs in shards", "[kernels][activation]") {
  for (const char* op : {"LeakyRelu", "Selu", "Elu", "Softsign", "Softplus"}) {
    INFO(op);
    absl::StatusOr<Tensor> empty = Unary(op, testing::Filled<float>({0, 3}, {}));
    REQUIRE(empty.ok());
    CHECK(testing::DimsOf(*empty) == std::vector<int64_t>{0, 3});
    // 1 << 16 copies of -1.5: sharded over the pool, every element the same as TF's.
    const std::vector<float> big(1 << 16, -1.5f);
    absl::StatusOr<Tensor> out = Unary(op, Vec<float>(big));
    REQUIRE(out.ok());
    const std::vector<float> values = testing::Values<float>(*out);
    const absl::StatusOr<Tensor> one = Unary(op, Vec<float>({-1.5f}));
    REQUIRE(one.ok());
    CHECK(std::count(values.begin(), values.end(), testing::Values<float>(*one)[0]) == big.size());
  }
}

}  // namespace
}  // namespace dflow
