// MatrixInverse, MatrixSolve, Cholesky, MatrixTriangularSolve, MatrixDeterminant and
// LogMatrixDeterminant (kernels/cpu/linalg_ops.cc) in float and double against TF 2.21's
// results (testdata/linalg_tf.py prints them), batched, adjoint and broadcast forms, and
// TF's texts for singular and mismatched inputs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;
using Doubles = std::vector<double>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterLinalgKernels); }

const Doubles kA = {4, 1, 2, 1, 5, 3, 2, 3, 6};  // symmetric positive definite
const Doubles kB = {1, 2, 0, 3, -1, 4, 0.5, 2, -2};
const Doubles kRhs = {1, 2, 0, -1, 3, 0.5};

Doubles Concat(const Doubles& a, const Doubles& b) {
  Doubles out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

template <typename T>
Tensor Make(const Dims& dims, const Doubles& values) {
  return Filled<T>(dims, std::vector<T>(values.begin(), values.end()));
}

template <typename T>
void CheckClose(const absl::StatusOr<Tensor>& got, const Doubles& want, double tolerance) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  const std::vector<T> values = Values<T>(*got);
  REQUIRE(values.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(static_cast<double>(values[i]) ==
          Approx(want[i]).epsilon(tolerance).margin(tolerance));
  }
}

template <typename T>
OpTester Op(const char* op, std::initializer_list<Tensor> inputs) {
  OpTester t(op, Registry());
  t.Attr("T", DataTypeOf<T>());
  for (const Tensor& in : inputs) t.Input(in);
  return t;
}

TEMPLATE_TEST_CASE("Linear-algebra kernels give TF's results", "[kernels][linalg]", float,
                   double) {
  using T = TestType;
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-7;
  const Tensor a = Make<T>({3, 3}, kA), b = Make<T>({3, 3}, kB), rhs = Make<T>({3, 2}, kRhs);
  const Tensor ab = Make<T>({2, 3, 3}, Concat(kA, kB)), ba = Make<T>({2, 3, 3}, Concat(kB, kA));
  CheckClose<T>(Op<T>("MatrixInverse", {ab}).Attr("adjoint", false).RunOne(),
                {0.3, 0.0, -0.1, 0.0, 0.2857143, -0.1428571, -0.1, -0.1428571, 0.2714286,
                 -0.6, 0.4, 0.8, 0.8, -0.2, -0.4, 0.65, -0.1, -0.7},
                tol);
  CheckClose<T>(Op<T>("MatrixInverse", {b}).Attr("adjoint", true).RunOne(),
                {-0.6, 0.8, 0.65, 0.4, -0.2, -0.1, 0.8, -0.4, -0.7}, tol);
  CheckClose<T>(Op<T>("MatrixSolve", {b, rhs}).Attr("adjoint", false).RunOne(),
                {1.8, -1.2, -0.4, 1.6, -1.45, 1.05}, tol);
  CheckClose<T>(Op<T>("MatrixSolve", {b, rhs}).Attr("adjoint", true).RunOne(),
                {1.35, -1.675, 0.1, 0.95, -1.3, 1.65}, tol);
  CheckClose<T>(Op<T>("Cholesky", {a}).RunOne(),
                {2.0, 0.0, 0.0, 0.5, 2.1794495, 0.0, 1.0, 1.1470787, 1.9194297}, tol);
  CheckClose<T>(Op<T>("MatrixTriangularSolve", {b, rhs})
                    .Attr("lower", true)
                    .Attr("adjoint", false)
                    .RunOne(),
                {1.0, 2.0, 3.0, 7.0, 1.75, 7.25}, tol);
  // A batch of two matrices against one right-hand side (broadcast), upper, adjoint.
  CheckClose<T>(Op<T>("MatrixTriangularSolve", {ba, rhs})
                    .Attr("lower", false)
                    .Attr("adjoint", true)
                    .RunOne(),
                {1.0, 2.0, 2.0, 5.0, 2.5, 9.75, 0.25, 0.5, -0.05, -0.3, 0.4416667, 0.0666667},
                tol);
  CheckClose<T>(Op<T>("MatrixDeterminant", {ab}).RunOne(), {70.0, 10.0}, 1e-5);
  absl::StatusOr<std::vector<Tensor>> log_det = Op<T>("LogMatrixDeterminant", {ab}).Run();
  REQUIRE(log_det.ok());
  CheckClose<T>((*log_det)[0], {1.0, 1.0}, 0);
  CheckClose<T>((*log_det)[1], {4.2484952, 2.3025851}, tol);
}

TEST_CASE("Singular, non-square and mismatched inputs get TF's texts", "[kernels][linalg]") {
  const Tensor singular = Make<float>({2, 2}, {1, 2, 2, 4});
  auto error = [](const absl::StatusOr<Tensor>& r) {
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  CHECK_THAT(error(Op<float>("MatrixInverse", {singular}).Attr("adjoint", false).RunOne()),
             Catch::EndsWith("Input is not invertible."));
  CHECK_THAT(error(Op<float>("MatrixSolve", {singular, Make<float>({2, 1}, {1, 2})})
                       .Attr("adjoint", false)
                       .RunOne()),
             Catch::EndsWith("Input matrix is not invertible."));
  CHECK_THAT(error(Op<float>("MatrixInverse", {Make<float>({2}, {1, 2})})
                       .Attr("adjoint", false)
                       .RunOne()),
             Catch::EndsWith("Input tensor 0 must have rank >= 2, got 1"));
  CHECK_THAT(error(Op<float>("MatrixInverse", {Make<float>({2, 3}, {1, 2, 3, 4, 5, 6})})
                       .Attr("adjoint", false)
                       .RunOne()),
             Catch::EndsWith("Input matrix must be square."));
  CHECK_THAT(error(Op<float>("MatrixSolve", {Make<float>({2, 2}, {1, 2, 3, 4}),
                                             Make<float>({3, 1}, {1, 2, 3})})
                       .Attr("adjoint", false)
                       .RunOne()),
             Catch::EndsWith("Input matrix and rhs are incompatible."));
  // An empty tensor whose matrix size overflows: TF's text, not a division by zero.
  CHECK_THAT(error(Op<float>("MatrixInverse", {Make<float>({0, 4294967296, 4294967296}, {})})
                       .Attr("adjoint", false)
                       .RunOne()),
             Catch::EndsWith("Encountered overflow when multiplying 4294967296 with 4294967296"));
  CHECK_THAT(error(Op<float>("MatrixTriangularSolve", {Make<float>({2, 2}, {2, 0, 1, 4}),
                                                       Make<float>({3, 1}, {1, 2, 3})})
                       .Attr("lower", true)
                       .Attr("adjoint", false)
                       .RunOne()),
             Catch::EndsWith("In[0] mismatch In[1] shape: 2 vs. 3: [2,2] [3,1] 1 0"));
}

TEST_CASE("Edge cases: not positive definite, singular determinants, empty matrices",
          "[kernels][linalg]") {
  // TF 2.21 fills the lower triangle with NaN where Cholesky fails (a warning, no error).
  absl::StatusOr<Tensor> l = Op<float>("Cholesky", {Make<float>({2, 2}, {1, 2, 2, 1})}).RunOne();
  REQUIRE(l.ok());
  const std::vector<float> lv = Values<float>(*l);
  CHECK(std::isnan(lv[0]));
  CHECK(lv[1] == 0.0f);
  CHECK(std::isnan(lv[2]));
  CHECK(std::isnan(lv[3]));
  absl::StatusOr<std::vector<Tensor>> singular =
      Op<double>("LogMatrixDeterminant", {Make<double>({2, 2}, {1, 2, 2, 4})}).Run();
  REQUIRE(singular.ok());
  CHECK(Values<double>((*singular)[0])[0] == 0.0);
  CHECK(Values<double>((*singular)[1])[0] == -INFINITY);
  CheckClose<double>(Op<double>("MatrixDeterminant", {Make<double>({2, 2}, {1, 2, 2, 4})})
                         .RunOne(),
                     {0.0}, 0);
  CheckClose<float>(Op<float>("MatrixDeterminant", {Make<float>({0, 0}, {})}).RunOne(), {1.0},
                    0);
  absl::StatusOr<Tensor> empty =
      Op<float>("MatrixInverse", {Make<float>({2, 0, 0}, {})}).Attr("adjoint", false).RunOne();
  REQUIRE(empty.ok());
  CHECK(empty->shape().dim_size(0) == 2);
}

}  // namespace
}  // namespace dflow
