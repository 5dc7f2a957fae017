// Activation gradients (kernels/cpu/cwise_grad_ops.cc): TF's formulas on y and dy, half
// through float, and the same-shape rule.
#include <catch2/catch.hpp>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCwiseKernels); }

std::vector<float> Grad(const char* op, std::vector<float> y, std::vector<float> dy) {
  auto out = OpTester(op, Registry()).Attr("T", DT_FLOAT).Input(Vec<float>(y)).Input(Vec<float>(dy)).RunOne();
  REQUIRE(out.ok());
  return Values<float>(*out);
}

TEST_CASE("Activation gradients follow TF's formulas", "[cwise_grad]") {
  CHECK(Grad("SigmoidGrad", {0.5f, 0.25f}, {2, 4}) == std::vector<float>{0.5f, 0.75f});
  CHECK(Grad("TanhGrad", {0.5f, -1}, {2, 3}) == std::vector<float>{1.5f, 0});
  CHECK(Grad("SqrtGrad", {2}, {4}) == std::vector<float>{1});
  CHECK(Grad("RsqrtGrad", {2}, {1}) == std::vector<float>{-4});
  CHECK(Grad("ReciprocalGrad", {2}, {3}) == std::vector<float>{-12});
  CHECK(Grad("InvGrad", {-1}, {3}) == std::vector<float>{-3});
}

TEST_CASE("Activation gradients in double and half", "[cwise_grad]") {
  auto d = OpTester("TanhGrad", Registry()).Attr("T", DT_DOUBLE).Input(Vec<double>({0.5}))
               .Input(Vec<double>({2})).RunOne();
  REQUIRE(d.ok());
  CHECK(Values<double>(*d) == std::vector<double>{1.5});
  auto h = OpTester("SigmoidGrad", Registry()).Attr("T", DT_HALF)
               .Input(Vec<Half>({Half::FromFloat(0.5f)})).Input(Vec<Half>({Half::FromFloat(2)}))
               .RunOne();
  REQUIRE(h.ok());
  CHECK(h->data<Half>()[0].ToFloat() == 0.5f);
}

TEST_CASE("Activation gradients need equal shapes", "[cwise_grad]") {
  auto out = OpTester("SigmoidGrad", Registry()).Attr("T", DT_FLOAT).Input(Vec<float>({1, 2}))
                 .Input(Vec<float>({1, 2, 3})).RunOne();
  REQUIRE_FALSE(out.ok());
  CHECK(std::string(out.status().message()).find(
            "must have the same size and shape.  Input 0: [2] != input 1: [3]") != std::string::npos);
}

}  // namespace
}  // namespace dflow
