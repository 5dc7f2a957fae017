// _DflowScaleShift: activation(x * scale + shift) equals Mul, Add and the activation run
// apart (bit for bit), with their broadcast shapes and Mul's error.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::RandomValues;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCpuKernels); }

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed, float scale) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> v = RandomValues(count, seed);
  for (float& x : v) x *= scale;
  return Filled<float>(dims, v);
}

Tensor Run(OpTester& t) {
  absl::StatusOr<Tensor> out = t.RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *std::move(out);
}

Tensor Binary(const char* op, const Tensor& a, const Tensor& b) {
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Input(a).Input(b);
  return Run(t);
}

Tensor Unfused(const Tensor& x, const Tensor& scale, const Tensor& shift,
               const std::string& activation) {
  Tensor y = Binary("AddV2", Binary("Mul", x, scale), shift);
  if (activation.empty()) return y;
  OpTester t(activation, Registry());
  t.Attr("T", DT_FLOAT).Input(y);
  return Run(t);
}

absl::StatusOr<Tensor> Fused(const Tensor& x, const Tensor& scale, const Tensor& shift,
                             const std::string& activation) {
  OpTester t("_DflowScaleShift", Registry());
  t.Attr("T", DT_FLOAT).Attr("activation", activation.c_str()).Input(x).Input(scale).Input(shift);
  return t.RunOne();
}

struct Case {
  std::vector<int64_t> x, channels;
};

TEST_CASE("_DflowScaleShift equals Mul, AddV2 and the activation, broadcasting alike") {
  const Case c = GENERATE(Case{{2, 9, 7, 16}, {16}},          // NHWC, per channel
                          Case{{1, 56, 56, 96}, {1, 1, 1, 96}},  // Keras 3's reshaped stats
                          Case{{5, 16}, {1, 1, 16}},           // the constant's rank wins
                          Case{{3, 4, 1}, {6}},                // x broadcast across channels
                          Case{{3, 4, 8}, {}},                 // scalars
                          Case{{}, {4}},                       // a scalar x
                          Case{{0, 3, 8}, {8}});               // empty
  const std::string activation = GENERATE(std::string(), std::string("Relu"),
                                          std::string("Relu6"));
  const Tensor x = Random(c.x, 1, 8.0f);
  const Tensor scale = Random(c.channels, 2, 2.0f);
  const Tensor shift = Random(c.channels, 3, 1.0f);
  const Tensor want = Unfused(x, scale, shift, activation);
  absl::StatusOr<Tensor> got = Fused(x, scale, shift, activation);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(testing::DimsOf(*got) == testing::DimsOf(want));
  CHECK(Values<float>(*got) == Values<float>(want));  // the same roundings
}

TEST_CASE("_DflowScaleShift rejects shapes Mul would reject, and unequal scale and shift") {
  absl::StatusOr<Tensor> out =
      Fused(Random({2, 3, 5}, 1, 1.0f), Random({4}, 2, 1.0f), Random({4}, 3, 1.0f), "Relu");
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(out.status().message()),
             Catch::Contains("Incompatible shapes: [2,3,5] vs. [4]"));
  out = Fused(Random({2, 4}, 1, 1.0f), Random({4}, 2, 1.0f), Random({1, 4}, 3, 1.0f), "");
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(std::string(out.status().message()), Catch::Contains("one shape"));
}

}  // namespace
}  // namespace dflow
