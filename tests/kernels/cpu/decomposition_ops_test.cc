// Qr, Svd and SelfAdjointEigV2 (kernels/cpu/decomposition_ops.cc) in float and double
// against TF 2.21's results (printed by tf.linalg.qr/svd/eigh on the same matrices):
// Q and R exactly as TF's (same Householder signs); singular values, eigenvalues, and
// singular vectors and eigenvectors up to sign (they are unique only up to it); only the
// lower triangle read by the eigensolver; empty matrices; TF's texts for bad shapes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
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

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterDecompositionKernels);
}

const Doubles kTall = {1, 2, 3, -4, 0.5, 6};       // 3 x 2
const Doubles kWide = {1, 3, 0.5, 2, -4, 6};       // its transpose, 2 x 3
const Doubles kSymmetric = {4, 1, 2, 1, 5, 3, 2, 3, 6};

template <typename T>
Tensor Make(const Dims& dims, const Doubles& values) {
  return Filled<T>(dims, std::vector<T>(values.begin(), values.end()));
}

template <typename T>
void CheckClose(const Tensor& got, const Dims& dims, const Doubles& want, double tol,
                bool up_to_sign = false) {
  CHECK(got.shape() == TensorShape(dims));
  const std::vector<T> values = Values<T>(got);
  REQUIRE(values.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    const double v = static_cast<double>(values[i]);
    CHECK((up_to_sign ? std::abs(v) : v) ==
          Approx(up_to_sign ? std::abs(want[i]) : want[i]).margin(tol));
  }
}

template <typename T>
std::vector<Tensor> RunOp(const char* op, const Tensor& input,
                          std::vector<std::pair<const char*, bool>> attrs) {
  OpTester t(op, Registry());
  t.Attr("T", DataTypeOf<T>());
  for (const auto& [name, value] : attrs) t.Attr(name, value);
  t.Input(input);
  absl::StatusOr<std::vector<Tensor>> out = t.Run();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *out;
}

TEMPLATE_TEST_CASE("Qr gives TF's factors, reduced and full", "[kernels][linalg]", float,
                   double) {
  using T = TestType;
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-12;
  const Tensor tall = Make<T>({3, 2}, kTall), wide = Make<T>({2, 3}, kWide);
  std::vector<Tensor> qr = RunOp<T>("Qr", tall, {{"full_matrices", false}});
  CheckClose<T>(qr[0], {3, 2},
                {-0.3123475237772122, 0.37487899712504824, -0.9370425713316364,
                 -0.27263927063639876, -0.15617376188860607, 0.886077629568296},
                tol);
  CheckClose<T>(qr[1], {2, 2}, {-3.2015621187164243, 2.186432666440485, 0.0, 7.1567808542054685},
                tol * 4);
  qr = RunOp<T>("Qr", tall, {{"full_matrices", true}});
  CheckClose<T>(qr[0], {3, 3},
                {-0.3123475237772122, 0.37487899712504824, -0.8728715609439696,
                 -0.9370425713316364, -0.27263927063639876, 0.21821789023599247,
                 -0.15617376188860607, 0.886077629568296, 0.4364357804719848},
                tol);
  CheckClose<T>(qr[1], {3, 2},
                {-3.2015621187164243, 2.186432666440485, 0.0, 7.1567808542054685, 0, 0},
                tol * 4);
  const Doubles wide_q = {-0.44721359549995787, -0.8944271909999157, -0.8944271909999157,
                          0.4472135954999581};
  const Doubles wide_r = {-2.23606797749979, 2.2360679774997894, -5.590169943749473,
                          0.0,  -4.47213595499958, 2.236067977499791};
  for (bool full : {false, true}) {
    qr = RunOp<T>("Qr", wide, {{"full_matrices", full}});
    CheckClose<T>(qr[0], {2, 2}, wide_q, tol);
    CheckClose<T>(qr[1], {2, 3}, wide_r, tol * 4);
  }
  // A batch: the same matrix twice.
  Doubles two = kTall;
  two.insert(two.end(), kTall.begin(), kTall.end());
  qr = RunOp<T>("Qr", Make<T>({2, 3, 2}, two), {{"full_matrices", false}});
  CHECK(qr[1].shape() == TensorShape({2, 2, 2}));
  CHECK(static_cast<double>(Values<T>(qr[1])[4]) == Approx(-3.2015621187164243));
}

TEMPLATE_TEST_CASE("Svd gives TF's singular values and vectors up to sign", "[kernels][linalg]",
                   float, double) {
  using T = TestType;
  const double tol = std::is_same_v<T, float> ? 4e-6 : 1e-12;
  const Tensor tall = Make<T>({3, 2}, kTall);
  std::vector<Tensor> svd = RunOp<T>("Svd", tall, {{"compute_uv", true}, {"full_matrices", false}});
  CheckClose<T>(svd[0], {2}, {7.55295134442529, 3.0336324742368195}, tol * 4);
  CheckClose<T>(svd[1], {3, 2},
                {0.242297031911697, 0.4235414813474828, -0.5825267337620693,
                 0.7829709808373794, 0.7758574307044289, 0.4555974722762761},
                tol, true);
  CheckClose<T>(svd[2], {2, 2},
                {-0.1479361382152948, 0.9889969155715023, 0.9889969155715023,
                 0.1479361382152948},
                tol, true);
  // u diag(s) v^T is the input, whatever the signs.
  const std::vector<T> s = Values<T>(svd[0]), u = Values<T>(svd[1]), v = Values<T>(svd[2]);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) {
      double sum = 0;
      for (int k = 0; k < 2; ++k) sum += double(u[r * 2 + k]) * s[k] * v[c * 2 + k];
      CHECK(sum == Approx(kTall[r * 2 + c]).margin(tol * 10));
    }
  }
  svd = RunOp<T>("Svd", tall, {{"compute_uv", true}, {"full_matrices", true}});
  CHECK(svd[1].shape() == TensorShape({3, 3}));
  CHECK(svd[2].shape() == TensorShape({2, 2}));
  svd = RunOp<T>("Svd", Make<T>({2, 3}, kWide), {{"compute_uv", false}, {"full_matrices", false}});
  CheckClose<T>(svd[0], {2}, {7.55295134442529, 3.0336324742368195}, tol * 4);
  CHECK(svd[1].shape() == TensorShape({0}));
  CHECK(svd[2].shape() == TensorShape({0}));
  // An empty 2 x 0 matrix: no singular values; full factors are identities, as TF's.
  svd = RunOp<T>("Svd", Make<T>({2, 0}, {}), {{"compute_uv", true}, {"full_matrices", true}});
  CHECK(svd[0].shape() == TensorShape({0}));
  CheckClose<T>(svd[1], {2, 2}, {1, 0, 0, 1}, 0);
}

TEMPLATE_TEST_CASE("SelfAdjointEigV2 gives TF's eigenvalues and vectors from the lower "
                   "triangle", "[kernels][linalg]", float, double) {
  using T = TestType;
  const double tol = std::is_same_v<T, float> ? 4e-6 : 1e-12;
  const Doubles want_e = {2.1943971674224088, 3.3867701566075468, 9.41883267597004};
  std::vector<Tensor> eig = RunOp<T>("SelfAdjointEigV2", Make<T>({3, 3}, kSymmetric),
                                     {{"compute_v", true}});
  CheckClose<T>(eig[0], {3}, want_e, tol * 4);
  CheckClose<T>(eig[1], {3, 3},
                {0.4412246968734647, -0.8155834192895002, 0.3743587224160359,
                 0.5773502691896256, 0.5773502691896263, 0.5773502691896257,
                 -0.6870134158337711, -0.038605088352623225, 0.7256185041863942},
                tol * 4, true);
  Doubles upper_changed = kSymmetric;
  upper_changed[2] = 100;  // above the diagonal: not read
  eig = RunOp<T>("SelfAdjointEigV2", Make<T>({1, 3, 3}, upper_changed), {{"compute_v", false}});
  CheckClose<T>(eig[0], {1, 3}, want_e, tol * 4);
  CHECK(eig[1].shape() == TensorShape({0}));
}

TEST_CASE("Decompositions refuse vectors and non-square eigenproblems", "[kernels][linalg]") {
  auto error = [](const char* op, const Tensor& in, const char* attr) {
    OpTester t(op, Registry());
    t.Attr("T", DT_FLOAT).Attr(attr, true).Input(in);
    if (std::string(op) != "SelfAdjointEigV2") t.Attr("full_matrices", false);
    absl::StatusOr<std::vector<Tensor>> out = t.Run();
    REQUIRE_FALSE(out.ok());
    return std::string(out.status().message());
  };
  CHECK_THAT(error("Qr", Make<float>({2}, {1, 2}), "full_matrices"),
             Catch::EndsWith("Input tensor 0 must have rank >= 2, got 1"));
  CHECK_THAT(error("SelfAdjointEigV2", Make<float>({2, 3}, kWide), "compute_v"),
             Catch::EndsWith("Input matrix must be square."));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_THAT(error("SelfAdjointEigV2", Filled<float>({2, 2}, {1, 0, nan, 1}), "compute_v"),
             Catch::EndsWith("Self-adjoint eigen decomposition was not successful. The input "
                             "might not be valid."));
}

}  // namespace
}  // namespace dflow
