// _DflowResourceApplyGradientDescentMatMul (kernels/io/apply_matmul_op.cc): var -= alpha *
// MatMul(a, b) against a naive product and update, every transpose, in place (the
// variable's sole buffer) and copy-on-write (a reader holds the value, which must not
// change), and the errors: shapes, an uninitialized variable, another dtype.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/kernels/io/variable_op_testing.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::HandleOf;
using testing::IoRegistry;
using testing::NewResourceVariable;
using testing::OpTester;
using testing::ResourceValue;
using testing::Values;

// Reproducible values in [-1, 1).
std::vector<float> RandomValues(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = dist(gen);
  return values;
}

absl::Status Apply(const std::string& var, float alpha, const Tensor& a, const Tensor& b,
                   bool transpose_a, bool transpose_b) {
  return OpTester("_DflowResourceApplyGradientDescentMatMul", IoRegistry())
      .Attr("T", DT_FLOAT)
      .Attr("transpose_a", transpose_a)
      .Attr("transpose_b", transpose_b)
      .Input(HandleOf(var))
      .Input(Filled<float>({}, {alpha}))
      .Input(a)
      .Input(b)
      .Run()
      .status();
}

// w - alpha * op(a) op(b), in double.
std::vector<float> Expected(const std::vector<float>& w, float alpha, const std::vector<float>& a,
                            const std::vector<float>& b, int64_t m, int64_t k, int64_t n,
                            bool transpose_a, bool transpose_b) {
  std::vector<float> out(w);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = transpose_a ? a[p * m + i] : a[i * k + p];
        const double y = transpose_b ? b[j * k + p] : b[p * n + j];
        sum += x * y;
      }
      out[i * n + j] = static_cast<float>(w[i * n + j] - alpha * sum);
    }
  }
  return out;
}

TEST_CASE("_DflowResourceApplyGradientDescentMatMul subtracts alpha times the product",
          "[kernels][apply]") {
  // 784x64 by 64x512 is the MLP's weight gradient (X^T dY), split over the pool.
  struct Case {
    int64_t m, k, n;
  };
  const Case c = GENERATE(Case{3, 4, 5}, Case{784, 64, 512});
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      INFO(c.m << "x" << c.k << "x" << c.n << " transpose_a " << ta << " transpose_b " << tb);
      const std::vector<float> w = RandomValues(c.m * c.n, 1);
      const std::vector<float> a = RandomValues(c.m * c.k, 2);
      const std::vector<float> b = RandomValues(c.k * c.n, 3);
      const Tensor at = Filled<float>(ta ? std::vector<int64_t>{c.k, c.m}
                                         : std::vector<int64_t>{c.m, c.k}, a);
      const Tensor bt = Filled<float>(tb ? std::vector<int64_t>{c.n, c.k}
                                         : std::vector<int64_t>{c.k, c.n}, b);
      const std::string var = NewResourceVariable("w", Filled<float>({c.m, c.n}, w));
      REQUIRE(Apply(var, 0.1f, at, bt, ta, tb).ok());
      CheckNear(Values<float>(ResourceValue(var)),
                Expected(w, 0.1f, a, b, c.m, c.k, c.n, ta, tb), 1e-5);
    }
  }
}

TEST_CASE("_DflowResourceApplyGradientDescentMatMul leaves a value read before intact",
          "[kernels][apply]") {
  const std::vector<float> w = {1, 2, 3, 4};
  const std::string var = NewResourceVariable("w", Filled<float>({2, 2}, w));
  const Tensor before = ResourceValue(var);  // shares the buffer, as ReadVariableOp does
  const Tensor a = Filled<float>({2, 1}, {1, 2});
  const Tensor b = Filled<float>({1, 2}, {10, 20});
  REQUIRE(Apply(var, 0.5f, a, b, false, false).ok());
  CHECK(Values<float>(before) == w);
  CHECK(Values<float>(ResourceValue(var)) == std::vector<float>{-4, -8, -7, -16});
}

TEST_CASE("_DflowResourceApplyGradientDescentMatMul errors", "[kernels][apply]") {
  const Tensor a = Filled<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Filled<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  SECTION("the product's shape is not the variable's") {
    const std::string var = NewResourceVariable("w", Filled<float>({3, 3}, RandomValues(9, 4)));
    const absl::Status status = Apply(var, 1.0f, a, b, false, false);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains("var and delta do not have the same shape[3,3] [2,2]"));
  }
  SECTION("the operands do not multiply: TF's MatMul text") {
    const std::string var = NewResourceVariable("w", Filled<float>({2, 2}, RandomValues(4, 5)));
    const absl::Status status = Apply(var, 1.0f, a, a, false, false);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::Contains("Matrix size-incompatible"));
  }
  SECTION("a variable of another dtype") {
    const std::string var = NewResourceVariable("w", Filled<double>({2, 2}, {1, 2, 3, 4}));
    const absl::Status status = Apply(var, 1.0f, a, b, false, false);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::Contains("wrong dtype"));
  }
  SECTION("a variable that does not exist") {
    const absl::Status status = Apply("no_such_variable", 1.0f, a, b, false, false);
    CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace dflow
