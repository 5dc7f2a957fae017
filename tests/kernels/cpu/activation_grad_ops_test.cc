// The activation gradients of kernels/cpu/activation_grad_ops.cc against TF 2.21
// (tf.raw_ops on CPU, x86). Every table below is TF's output for the same inputs, printed
// by testdata/activation_grad_tf.py. Half and bfloat16 must match TF's bits (NaN only needs
// to be NaN); float and double exactly, except SoftplusGrad, where TF's Eigen exp and
// glibc's may round differently (a few ulp).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
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
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCwiseKernels); }

// Forward values x (features or outputs): signed zeros, Relu6's edges 0 and 6, NaN,
// infinities, ELU/SELU's saturation values -1 and -scale * alpha, large and tiny values.
const std::vector<float> kXF = {-3.0f, -1.5f, -0.0f,  0.0f,    0.25f,       2.0f,   kNan,   -kInf,
                                kInf,  20.0f, -20.0f, -1e-05f, 6.0f,        5.999f, 6.001f, -0.7f,
                                1.3f,  3.7f,  -5.2f,  -1.0f,   -1.7580993f, 0.5f};
// Incoming gradients g: NaN and infinities where a zero factor meets them.
const std::vector<float> kGF = {1.5f,  -2.0f, 3.0f, 0.75f,  -1.25f, 0.5f, 1.0f,  2.0f,
                                -3.0f, kInf,  kNan, 1e-03f, -4.0f,  2.5f, -0.3f, kInf,
                                -kInf, 0.1f,  7.0f, 1.0f,   -0.6f,  kNan};
// The double inputs are the float ones widened.
std::vector<double> Widened(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// TF's results and the 16-bit inputs (testdata/activation_grad_tf.py).
const std::vector<uint16_t> kXHalf = {
    0xc200, 0xbe00, 0x8000, 0x0000, 0x3400, 0x4000, 0x7e00, 0xfc00, 0x7c00, 0x4d00, 0xcd00,
    0x80a8, 0x4600, 0x4600, 0x4600, 0xb99a, 0x3d33, 0x4366, 0xc533, 0xbc00, 0xbf08, 0x3800};
const std::vector<uint16_t> kGHalf = {
    0x3e00, 0xc000, 0x4200, 0x3a00, 0xbd00, 0x3800, 0x3c00, 0x4000, 0xc200, 0x7c00, 0x7e00,
    0x1419, 0xc400, 0x4100, 0xb4cd, 0x7c00, 0xfc00, 0x2e66, 0x4700, 0x3c00, 0xb8cd, 0x7e00};
const std::vector<uint16_t> kXBf16 = {
    0xc040, 0xbfc0, 0x8000, 0x0000, 0x3e80, 0x4000, 0x7fc0, 0xff80, 0x7f80, 0x41a0, 0xc1a0,
    0xb728, 0x40c0, 0x40c0, 0x40c0, 0xbf33, 0x3fa6, 0x406d, 0xc0a6, 0xbf80, 0xbfe1, 0x3f00};
const std::vector<uint16_t> kGBf16 = {
    0x3fc0, 0xc000, 0x4040, 0x3f40, 0xbfa0, 0x3f00, 0x3f80, 0x4000, 0xc040, 0x7f80, 0x7fc0,
    0x3a83, 0xc080, 0x4020, 0xbe9a, 0x7f80, 0xff80, 0x3dcd, 0x40e0, 0x3f80, 0xbf1a, 0x7fc0};
const std::vector<float> kRelu6GradF = {0.0f,  -0.0f, 0.0f,  0.0f, -1.25f, 0.5f,
                                        0.0f,  0.0f,  -0.0f, kNan, kNan,   0.0f,
                                        -0.0f, 2.5f,  -0.0f, kNan, -kInf,  0.10000000149011612f,
                                        0.0f,  0.0f,  -0.0f, kNan};
const std::vector<double> kRelu6GradD = {0.0,  -0.0, 0.0,  0.0,  -1.25, 0.5,
                                         0.0,  0.0,  -0.0, kNan, kNan,  0.0,
                                         -0.0, 2.5,  -0.0, kNan, -kInf, 0.10000000149011612,
                                         0.0,  0.0,  -0.0, kNan};
const std::vector<uint16_t> kRelu6GradHalf = {
    0x0000, 0x8000, 0x0000, 0x0000, 0xbd00, 0x3800, 0x0000, 0x0000, 0x8000, 0xfe00, 0x7e00,
    0x0000, 0x8000, 0x0000, 0x8000, 0xfe00, 0xfc00, 0x2e66, 0x0000, 0x0000, 0x8000, 0x7e00};
const std::vector<uint16_t> kRelu6GradBf16 = {
    0x0000, 0x8000, 0x0000, 0x0000, 0xbfa0, 0x3f00, 0x0000, 0x0000, 0x8000, 0x7fc0, 0x7fc0,
    0x0000, 0x8000, 0x0000, 0x8000, 0x7fc0, 0xff80, 0x3dcd, 0x0000, 0x0000, 0x8000, 0x7fc0};
const std::vector<float> kLeakyReluGradF = {0.45000001788139343f,
                                            -0.6000000238418579f,
                                            0.9000000357627869f,
                                            0.22500000894069672f,
                                            -1.25f,
                                            0.5f,
                                            0.30000001192092896f,
                                            0.6000000238418579f,
                                            -3.0f,
                                            kInf,
                                            kNan,
                                            0.0003000000142492354f,
                                            -4.0f,
                                            2.5f,
                                            -0.30000001192092896f,
                                            kInf,
                                            -kInf,
                                            0.10000000149011612f,
                                            2.1000001430511475f,
                                            0.30000001192092896f,
                                            -0.18000000715255737f,
                                            kNan};
const std::vector<double> kLeakyReluGradD = {0.45000001788139343,
                                             -0.6000000238418579,
                                             0.9000000357627869,
                                             0.22500000894069672,
                                             -1.25,
                                             0.5,
                                             0.30000001192092896,
                                             0.6000000238418579,
                                             -3.0,
                                             kInf,
                                             kNan,
                                             0.0003000000261701649,
                                             -4.0,
                                             2.5,
                                             -0.30000001192092896,
                                             kInf,
                                             -kInf,
                                             0.10000000149011612,
                                             2.1000000834465027,
                                             0.30000001192092896,
                                             -0.18000001430511503,
                                             kNan};
const std::vector<uint16_t> kLeakyReluGradHalf = {
    0x3734, 0xb8cd, 0x3b34, 0x3334, 0xbd00, 0x3800, 0x34cd, 0x38cd, 0xc200, 0x7c00, 0x7e00,
    0x0ceb, 0xc400, 0x4100, 0xb4cd, 0x7c00, 0xfc00, 0x2e66, 0x4033, 0x34cd, 0xb1c3, 0x7e00};
const std::vector<uint16_t> kLeakyReluGradBf16 = {
    0x3ee7, 0xbf1a, 0x3f67, 0x3e67, 0xbfa0, 0x3f00, 0x3e9a, 0x3f1a, 0xc040, 0x7f80, 0x7fc0,
    0x399e, 0xc080, 0x4020, 0xbe9a, 0x7f80, 0xff80, 0x3dcd, 0x4007, 0x3e9a, 0xbe39, 0x7fc0};
const std::vector<float> kEluGradF = {-3.0f,
                                      1.0f,
                                      3.0f,
                                      0.75f,
                                      -1.25f,
                                      0.5f,
                                      1.0f,
                                      -kInf,
                                      -3.0f,
                                      kInf,
                                      kNan,
                                      0.0009999900357797742f,
                                      -4.0f,
                                      2.5f,
                                      -0.30000001192092896f,
                                      kInf,
                                      -kInf,
                                      0.10000000149011612f,
                                      -29.39999771118164f,
                                      0.0f,
                                      0.4548596143722534f,
                                      kNan};
const std::vector<double> kEluGradD = {-3.0,
                                       1.0,
                                       3.0,
                                       0.75,
                                       -1.25,
                                       0.5,
                                       1.0,
                                       -kInf,
                                       -3.0,
                                       kInf,
                                       kNan,
                                       0.0009999900474972289,
                                       -4.0,
                                       2.5,
                                       -0.30000001192092896,
                                       kInf,
                                       -kInf,
                                       0.10000000149011612,
                                       -29.399998664855957,
                                       0.0,
                                       0.4548596086048917,
                                       kNan};
const std::vector<uint16_t> kEluGradHalf = {
    0xc200, 0x3c00, 0x4200, 0x3a00, 0xbd00, 0x3800, 0x3c00, 0xfc00, 0xc200, 0x7c00, 0x7e00,
    0x1419, 0xc400, 0x4100, 0xb4cd, 0x7c00, 0xfc00, 0x2e66, 0xcf59, 0x0000, 0x3747, 0x7e00};
const std::vector<uint16_t> kEluGradBf16 = {
    0xc040, 0x3f80, 0x4040, 0x3f40, 0xbfa0, 0x3f00, 0x3f80, 0xff80, 0xc040, 0x7f80, 0x7fc0,
    0x3a83, 0xc080, 0x4020, 0xbe9a, 0x7f80, 0xff80, 0x3dcd, 0xc1ea, 0x0000, 0x3ee9, 0x7fc0};
const std::vector<float> kSeluGradF = {-1.8628510236740112f,
                                       -0.5161986351013184f,
                                       3.1521029472351074f,
                                       0.7880257368087769f,
                                       -1.3133763074874878f,
                                       0.5253505110740662f,
                                       1.0507010221481323f,
                                       -kInf,
                                       -3.1521029472351074f,
                                       kInf,
                                       kNan,
                                       0.0017580894054844975f,
                                       -4.202804088592529f,
                                       2.6267526149749756f,
                                       -0.3152103126049042f,
                                       kInf,
                                       -kInf,
                                       0.10507010668516159f,
                                       -24.093303680419922f,
                                       0.7580993175506592f,
                                       -0.0f,
                                       kNan};
const std::vector<double> kSeluGradD = {-1.8628509887289346,
                                        -0.5161986816947537,
                                        3.1521029620664414,
                                        0.7880257405166103,
                                        -1.3133762341943505,
                                        0.5253504936777402,
                                        1.0507009873554805,
                                        -kInf,
                                        -3.1521029620664414,
                                        kInf,
                                        kNan,
                                        0.0017580894243523924,
                                        -4.202803949421922,
                                        2.626752468388701,
                                        -0.315210308731976,
                                        kInf,
                                        -kInf,
                                        0.10507010030121453,
                                        -24.09330327892432,
                                        0.7580993408473768,
                                        -1.3978031155096551e-08,
                                        kNan};
const std::vector<uint16_t> kSeluGradHalf = {
    0xbf74, 0xb820, 0x424e, 0x3a4e, 0xbd41, 0x3834, 0x3c34, 0xfc00, 0xc24e, 0x7c00, 0x7e00,
    0x1734, 0xc434, 0x4141, 0xb50b, 0x7c00, 0xfc00, 0x2eb9, 0xce06, 0x3a10, 0x8000, 0x7e00};
const std::vector<uint16_t> kSeluGradBf16 = {
    0xbfee, 0xbf04, 0x4049, 0x3f49, 0xbfa8, 0x3f06, 0x3f86, 0xff80, 0xc049, 0x7f80, 0x7fc0,
    0x3ae6, 0xc086, 0x4028, 0xbea1, 0x7f80, 0xff80, 0x3dd7, 0xc1c0, 0x3f42, 0x8000, 0x7fc0};
const std::vector<float> kSoftplusGradF = {0.07113880664110184f,
                                           -0.36485105752944946f,
                                           1.5f,
                                           0.375f,
                                           -0.7027206420898438f,
                                           0.44039851427078247f,
                                           kNan,
                                           0.0f,
                                           -3.0f,
                                           kInf,
                                           kNan,
                                           0.0004999975208193064f,
                                           -3.99010968208313f,
                                           2.493812322616577f,
                                           -0.2992589771747589f,
                                           kInf,
                                           -kInf,
                                           0.09758730232715607f,
                                           0.03840409964323044f,
                                           0.2689414322376251f,
                                           -0.08821713179349899f,
                                           kNan};
const std::vector<double> kSoftplusGradD = {0.07113880976635018,
                                            -0.3648510476127127,
                                            1.5,
                                            0.375,
                                            -0.7027206261072476,
                                            0.44039853898894116,
                                            kNan,
                                            0.0,
                                            -3.0,
                                            kInf,
                                            kNan,
                                            0.0004999975237486702,
                                            -3.9901095073734614,
                                            2.4938122732136536,
                                            -0.2992589644756762,
                                            kInf,
                                            -kInf,
                                            0.09758729942466801,
                                            0.03840409958096568,
                                            0.2689414213699951,
                                            -0.08821713152399084,
                                            kNan};
const std::vector<uint16_t> kSoftplusGradHalf = {
    0x2c8e, 0xb5d7, 0x3e00, 0x3600, 0xb99f, 0x370b, 0xfe00, 0x0000, 0xc200, 0x7c00, 0x7e00,
    0x1019, 0xc3fa, 0x40fc, 0xb4c9, 0x7c00, 0xfc00, 0x2e3f, 0x28eb, 0x344d, 0xada6, 0x7e00};
const std::vector<uint16_t> kSoftplusGradBf16 = {
    0x3d91, 0xbebb, 0x3fc0, 0x3ec0, 0xbf34, 0x3ee2, 0x7fc0, 0x0000, 0xc040, 0x7f80, 0x7fc0,
    0x3a03, 0xc080, 0x4020, 0xbe9a, 0x7f80, 0xff80, 0x3dc8, 0x3d1f, 0x3e8a, 0xbdb5, 0x7fc0};
const std::vector<float> kSoftsignGradF = {0.09375f,
                                           -0.3199999928474426f,
                                           3.0f,
                                           0.75f,
                                           -0.800000011920929f,
                                           0.0555555559694767f,
                                           kNan,
                                           0.0f,
                                           -0.0f,
                                           kInf,
                                           kNan,
                                           0.000999980024062097f,
                                           -0.08163265138864517f,
                                           0.05103498697280884f,
                                           -0.006120700389146805f,
                                           kInf,
                                           -kInf,
                                           0.004526935517787933f,
                                           0.18210197985172272f,
                                           0.25f,
                                           -0.07887355983257294f,
                                           kNan};
const std::vector<double> kSoftsignGradD = {0.09375,
                                            -0.32,
                                            3.0,
                                            0.75,
                                            -0.8,
                                            0.05555555555555555,
                                            kNan,
                                            0.0,
                                            -0.0,
                                            kInf,
                                            kNan,
                                            0.0009999800477970026,
                                            -0.08163265306122448,
                                            0.05103498749003235,
                                            -0.006120700453173551,
                                            kInf,
                                            -kInf,
                                            0.00452693524042652,
                                            0.18210198831143723,
                                            0.25,
                                            -0.07887356411078483,
                                            kNan};
const std::vector<uint16_t> kSoftsignGradHalf = {
    0x2e00, 0xb51f, 0x4200, 0x3a00, 0xba66, 0x2b1c, 0x7e00, 0x0000, 0x8000, 0x7c00, 0x7e00,
    0x1419, 0xad39, 0x2a88, 0x9e45, 0x7c00, 0xfc00, 0x1ca3, 0x31d4, 0x3400, 0xad0d, 0x7e00};
const std::vector<uint16_t> kSoftsignGradBf16 = {
    0x3dc0, 0xbea4, 0x4040, 0x3f40, 0xbf4d, 0x3d64, 0x7fc0, 0x0000, 0x8000, 0x7f80, 0x7fc0,
    0x3a83, 0xbda7, 0x3d51, 0xbbc9, 0x7f80, 0xff80, 0x3b95, 0x3e3b, 0x3e80, 0xbda3, 0x7fc0};

absl::StatusOr<Tensor> Grad(const std::string& op, const Tensor& g, const Tensor& x,
                            float alpha = 0.3f) {
  OpTester t(op, Registry());
  t.Attr("T", g.dtype());
  if (op == "LeakyReluGrad") t.Attr("alpha", alpha);
  return t.Input(g).Input(x).RunOne();
}

// `op` in the four dtypes against TF's tables; `ulps` for float and double.
void CheckOp(const std::string& op, const std::vector<float>& want_f,
             const std::vector<double>& want_d, const std::vector<uint16_t>& want_half,
             const std::vector<uint16_t>& want_bf16, int ulps = 0) {
  const int64_t n = static_cast<int64_t>(kXF.size());
  {
    INFO(op << " float");
    CheckUlps(Grad(op, Vec<float>(kGF), Vec<float>(kXF)), want_f, ulps);
  }
  {
    INFO(op << " double");
    CheckUlps(Grad(op, Vec<double>(Widened(kGF)), Vec<double>(Widened(kXF))), want_d, ulps);
  }
  {
    INFO(op << " half");
    CheckBits(Grad(op, FromBits<Half>({n}, kGHalf), FromBits<Half>({n}, kXHalf)), want_half);
  }
  {
    INFO(op << " bfloat16");
    CheckBits(Grad(op, FromBits<Bfloat16>({n}, kGBf16), FromBits<Bfloat16>({n}, kXBf16)),
              want_bf16);
  }
}

TEST_CASE("Relu6Grad is g * (0 < x < 6): a product, so inf * 0 gives NaN",
          "[kernels][activation_grad]") {
  CheckOp("Relu6Grad", kRelu6GradF, kRelu6GradD, kRelu6GradHalf, kRelu6GradBf16);
}

TEST_CASE("Relu6Grad on TF's integer types", "[kernels][activation_grad]") {
  auto i32 = OpTester("Relu6Grad", Registry())
                 .Attr("T", DT_INT32)
                 .Input(Vec<int32_t>({1, 2, 3, 4, 5, -6}))
                 .Input(Vec<int32_t>({-1, 0, 3, 6, 7, 5}))
                 .RunOne();
  REQUIRE(i32.ok());
  CHECK(Values<int32_t>(*i32) == std::vector<int32_t>{0, 0, 3, 0, 0, -6});
  auto u8 = OpTester("Relu6Grad", Registry())
                .Attr("T", DT_UINT8)
                .Input(Vec<uint8_t>({1, 2, 3, 4, 5, 250}))
                .Input(Vec<uint8_t>({0, 1, 5, 6, 200, 2}))
                .RunOne();
  REQUIRE(u8.ok());
  CHECK(Values<uint8_t>(*u8) == std::vector<uint8_t>{0, 2, 3, 0, 0, 250});
}

TEST_CASE("LeakyReluGrad is x > 0 ? g : g * alpha (alpha 0.3 rounded to T)",
          "[kernels][activation_grad]") {
  CheckOp("LeakyReluGrad", kLeakyReluGradF, kLeakyReluGradD, kLeakyReluGradHalf,
          kLeakyReluGradBf16);
}

TEST_CASE("LeakyReluGrad's alpha defaults to 0.2", "[kernels][activation_grad]") {
  auto out = OpTester("LeakyReluGrad", Registry())
                 .Attr("T", DT_FLOAT)
                 .Input(Vec<float>({1, 2}))
                 .Input(Vec<float>({-1, 1}))
                 .RunOne();
  CheckUlps(out, std::vector<float>{0.20000000298023224f, 2.0f}, 0);
}

TEST_CASE("EluGrad is y < 0 ? (y + 1) * g : g", "[kernels][activation_grad]") {
  CheckOp("EluGrad", kEluGradF, kEluGradD, kEluGradHalf, kEluGradBf16);
}

TEST_CASE("SeluGrad is y < 0 ? g * (y + scale * alpha) : g * scale", "[kernels][activation_grad]") {
  CheckOp("SeluGrad", kSeluGradF, kSeluGradD, kSeluGradHalf, kSeluGradBf16);
}

TEST_CASE("SoftplusGrad is g / (e^-x + 1)", "[kernels][activation_grad]") {
  CheckOp("SoftplusGrad", kSoftplusGradF, kSoftplusGradD, kSoftplusGradHalf, kSoftplusGradBf16,
          /*ulps=*/2);
}

TEST_CASE("SoftsignGrad is g / (|x| + 1)^2", "[kernels][activation_grad]") {
  CheckOp("SoftsignGrad", kSoftsignGradF, kSoftsignGradD, kSoftsignGradHalf, kSoftsignGradBf16);
}

TEST_CASE("Relu6Grad on a tensor large enough to shard over the pool",
          "[kernels][activation_grad]") {
  // Enough elements to shard over the pool; each element is checked by the formula.
  const int64_t n = 100000;
  std::vector<float> g(n), x(n);
  for (int64_t i = 0; i < n; ++i) {
    g[i] = static_cast<float>(i % 17) - 8.0f;
    x[i] = static_cast<float>(i % 23) * 0.5f - 3.0f;
  }
  auto out = Grad("Relu6Grad", Vec<float>(g), Vec<float>(x));
  REQUIRE(out.ok());
  const std::vector<float> got = Values<float>(*out);
  for (int64_t i = 0; i < n; ++i) {
    const float want = x[i] > 0 && x[i] < 6 ? g[i] : g[i] * 0.0f;
    if (got[i] != want) FAIL("element " << i << ": got " << got[i] << ", want " << want);
  }
}

TEST_CASE("Activation gradients need inputs of one shape (TF's text, naming the node)",
          "[kernels][activation_grad]") {
  for (const char* op :
       {"Relu6Grad", "LeakyReluGrad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad"}) {
    INFO(op);
    auto out = Grad(op, Vec<float>({1, 2}), Vec<float>({1, 2, 3}));
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(out.status().message()) ==
          std::string("Inputs to operation test_node of type ") + op +
              " must have the same size and shape.  Input 0: [2] != input 1: [3]");
  }
}

}  // namespace
}  // namespace dflow
