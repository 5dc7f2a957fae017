// VectorExp (kernels/cpu/vector_exp.h) against std::exp, and the float Sigmoid and Tanh
// built on it against double-precision references, NaN, infinities and tiny inputs.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/vector_exp.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

TEST_CASE("VectorExp matches std::exp to 1e-14 relative over [-700, 700]", "[kernels][cwise]") {
  double worst = 0;
  for (double x = -700; x <= 700; x += 0.01337) {
    const double want = std::exp(x);
    worst = std::max(worst, std::abs(cwise::VectorExp(x) - want) / want);
  }
  CHECK(worst < 1e-14);
  CHECK(cwise::VectorExp(0) == 1.0);
}

std::vector<float> RunUnary(const char* op, const std::vector<float>& x) {
  auto out = testing::OpTester(op, testing::TestKernelRegistry(RegisterCwiseKernels))
                 .Attr("T", DT_FLOAT)
                 .Input(testing::Vec<float>(x))
                 .RunOne();
  REQUIRE(out.ok());
  return testing::Values<float>(*out);
}

TEST_CASE("Float Sigmoid and Tanh are within 1 ulp of double references and keep NaN",
          "[kernels][cwise]") {
  std::vector<float> x;
  for (float v = -30; v <= 30; v += 0.0137f) x.push_back(v);
  for (float v : {1e-5f, -1e-5f, 1e-30f, 0.0f, -0.0f, 100.0f, -100.0f, 1e30f, -1e30f}) x.push_back(v);
  const std::vector<float> sigmoid = RunUnary("Sigmoid", x);
  const std::vector<float> tanh = RunUnary("Tanh", x);
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
    const double t = std::tanh(static_cast<double>(x[i]));
    INFO("x = " << x[i]);
    CHECK(std::abs(sigmoid[i] - s) <= std::abs(s) * 1.2e-7 + 1e-45);
    CHECK(std::abs(tanh[i] - t) <= std::abs(t) * 1.2e-7 + 1e-45);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> s = RunUnary("Sigmoid", {nan, inf, -inf});
  const std::vector<float> t = RunUnary("Tanh", {nan, inf, -inf});
  CHECK(std::isnan(s[0]));
  CHECK(s[1] == 1.0f);
  CHECK(s[2] == 0.0f);
  CHECK(std::isnan(t[0]));
  CHECK(t[1] == 1.0f);
  CHECK(t[2] == -1.0f);
}

}  // namespace
}  // namespace dflow
