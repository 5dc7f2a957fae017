// MatrixDiag, MatrixDiagPart and MatrixSetDiag (V1, V2, V3). Expected values and messages
// from TF 2.21 (tf.raw_ops on CPU), printed by testdata/matrix_diag_tf.py.
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::Iota;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;
using Floats = std::vector<float>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterMatrixDiagKernels); }

template <typename T>
Tensor Scalar(T value) {
  return Filled<T>({}, {value});
}

// Runs `op` on `inputs` with T from the first input and, when given, the align attr.
absl::StatusOr<Tensor> Run(const char* op, const std::vector<Tensor>& inputs,
                           const char* align = nullptr) {
  OpTester tester(op, Registry());
  tester.Attr("T", inputs[0].dtype());
  if (align != nullptr) tester.Attr("align", align);
  for (const Tensor& input : inputs) tester.Input(input);
  return tester.RunOne();
}

absl::StatusOr<Tensor> DiagV3(const Tensor& diagonal, const Tensor& k, int32_t rows, int32_t cols,
                              const Tensor& padding, const char* align = nullptr) {
  return Run("MatrixDiagV3", {diagonal, k, Scalar<int32_t>(rows), Scalar<int32_t>(cols), padding},
             align);
}

absl::StatusOr<Tensor> PartV3(const Tensor& input, const Tensor& k, const Tensor& padding,
                              const char* align = nullptr) {
  return Run("MatrixDiagPartV3", {input, k, padding}, align);
}

absl::StatusOr<Tensor> SetV3(const Tensor& input, const Tensor& diagonal, const Tensor& k,
                             const char* align = nullptr) {
  return Run("MatrixSetDiagV3", {input, diagonal, k}, align);
}

// Values and dims of a result that must be OK.
template <typename T>
std::vector<T> ValuesOf(const absl::StatusOr<Tensor>& result, const Dims& dims) {
  REQUIRE(result.ok());
  CHECK(DimsOf(*result) == dims);
  return Values<T>(*result);
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

const Tensor& X() {  // two 3x4 matrices holding 1..24
  static const Tensor x = [] {
    Floats v(24);
    std::iota(v.begin(), v.end(), 1.0f);
    return Filled<float>({2, 3, 4}, v);
  }();
  return x;
}

// np.arange(101, 125).reshape(2, 3, 4)[:, :, :3]: diagonals k = [-1, 1] of X's matrices.
const Tensor& D() {
  static const Tensor d = Filled<float>({2, 3, 3}, {101, 102, 103, 105, 106, 107, 109, 110, 111,
                                                    113, 114, 115, 117, 118, 119, 121, 122, 123});
  return d;
}

Tensor K(int32_t lower, int32_t upper) { return Vec<int32_t>({lower, upper}); }

TEST_CASE("MatrixDiagV3 builds tf.eye and infers num_rows/num_cols", "[kernels][matrix_diag]") {
  const Tensor zero = Scalar<float>(0);
  CHECK(ValuesOf<float>(DiagV3(Vec<float>({1, 1, 1}), Scalar<int32_t>(0), -1, -1, zero), {3, 3}) ==
        Floats{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(ValuesOf<float>(DiagV3(Vec<float>({1, 1}), Scalar<int32_t>(0), 2, 3, zero), {2, 3}) ==
        Floats{1, 0, 0, 0, 1, 0});
  CHECK(ValuesOf<float>(DiagV3(Vec<float>({1, 2}), Scalar<int32_t>(1), -1, -1, zero), {3, 3}) ==
        Floats{0, 1, 0, 0, 0, 2, 0, 0, 0});
  CHECK(ValuesOf<float>(DiagV3(Vec<float>({1, 2}), Scalar<int32_t>(1), 2, -1, zero), {2, 3}) ==
        Floats{0, 1, 0, 0, 0, 2});
  CHECK(ValuesOf<float>(DiagV3(Vec<float>({1, 2}), Scalar<int32_t>(-1), -1, 4, Scalar<float>(7)),
                        {3, 4}) == Floats{7, 7, 7, 7, 1, 7, 7, 7, 7, 2, 7, 7});
  // Two sub-diagonals only: the matrix grows to hold the lowest one.
  CHECK(ValuesOf<float>(
            DiagV3(Filled<float>({2, 2}, {1, 2, 3, 4}), K(-2, -1), -1, -1, zero, "RIGHT_LEFT"),
            {3, 3}) == Floats{0, 0, 0, 1, 0, 0, 3, 2, 0});
}

TEST_CASE("MatrixDiagPartV3 and MatrixDiagV3 pad each align as TF", "[kernels][matrix_diag]") {
  struct Case {
    const char* align;
    Floats part;  // MatrixDiagPartV3(X, k=[-1, 2], padding 9): [2, 4, 3]
  };
  const Case cases[] = {
      {"RIGHT_LEFT",
       {9, 3, 8, 2, 7, 12, 1, 6, 11, 5, 10, 9, 9, 15, 20, 14, 19, 24, 13, 18, 23, 17, 22, 9}},
      {"LEFT_RIGHT",
       {3, 8, 9, 2, 7, 12, 1, 6, 11, 9, 5, 10, 15, 20, 9, 14, 19, 24, 13, 18, 23, 9, 17, 22}},
      {"LEFT_LEFT",
       {3, 8, 9, 2, 7, 12, 1, 6, 11, 5, 10, 9, 15, 20, 9, 14, 19, 24, 13, 18, 23, 17, 22, 9}},
      {"RIGHT_RIGHT",
       {9, 3, 8, 2, 7, 12, 1, 6, 11, 9, 5, 10, 9, 15, 20, 14, 19, 24, 13, 18, 23, 9, 17, 22}},
  };
  // MatrixDiagV3 of the part back into [2, 3, 4], padding -1: the same for every align.
  const Floats band = {1,  2,  3,  -1, 5,  6,  7,  8,  -1, 10, 11, 12,
                       13, 14, 15, -1, 17, 18, 19, 20, -1, 22, 23, 24};
  for (const Case& c : cases) {
    INFO(c.align);
    CHECK(ValuesOf<float>(PartV3(X(), K(-1, 2), Scalar<float>(9), c.align), {2, 4, 3}) == c.part);
    const Tensor part = Filled<float>({2, 4, 3}, c.part);
    CHECK(ValuesOf<float>(DiagV3(part, K(-1, 2), 3, 4, Scalar<float>(-1), c.align), {2, 3, 4}) ==
          band);
  }
  // An empty matrix has an empty diagonal.
  CHECK(
      ValuesOf<float>(PartV3(Filled<float>({0, 3}, {}), Scalar<int32_t>(0), Scalar<float>(0)), {0})
          .empty());
}

TEST_CASE("A k range far outside the matrix costs nothing per missing diagonal",
          "[kernels][matrix_diag]") {
  // Empty diagonals [8, 2^31 - 1, 0] with k = [1, 2^31 - 1]: an [8, 1, 1] result. Visiting
  // every diagonal of the range took ~3 s a matrix (a review's hostile input).
  const Tensor empty = Filled<float>({8, 2147483647, 0}, {});
  const Tensor k = Filled<int32_t>({2}, {1, 2147483647});
  absl::StatusOr<Tensor> r = DiagV3(empty, k, -1, -1, Scalar<float>(0.0f), "RIGHT_LEFT");
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(DimsOf(*r) == Dims{8, 1, 1});
}

TEST_CASE("MatrixSetDiagV3 writes a band of diagonals", "[kernels][matrix_diag]") {
  CHECK(ValuesOf<float>(SetV3(X(), D(), K(-1, 1)), {2, 3, 4}) ==
        Floats{105, 101, 3,  4,  109, 106, 102, 8,  9,  110, 107, 103,
               117, 113, 15, 16, 121, 118, 114, 20, 21, 122, 119, 115});
  CHECK(ValuesOf<float>(SetV3(X(), D(), K(-1, 1), "LEFT_RIGHT"), {2, 3, 4}) ==
        Floats{105, 101, 3,  4,  110, 106, 102, 8,  9,  111, 107, 103,
               117, 113, 15, 16, 122, 118, 114, 20, 21, 123, 119, 115});
  const Tensor upper = Filled<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  CHECK(ValuesOf<float>(SetV3(X(), upper, Scalar<int32_t>(1)), {2, 3, 4}) ==
        Floats{1,  -1, 3,  4,  5,  6,  -2, 8,  9,  10, 11, -3,
               13, -4, 15, 16, 17, 18, -5, 20, 21, 22, 23, -6});
  CHECK(ValuesOf<float>(
            SetV3(Filled<float>({2, 0, 0}, {}), Filled<float>({2, 0}, {}), Scalar<int32_t>(0)),
            {2, 0, 0})
            .empty());
}

TEST_CASE("MatrixDiag, MatrixDiagPart, MatrixSetDiag and their V2 forms",
          "[kernels][matrix_diag]") {
  const Tensor two_by_two = Filled<float>({2, 2}, {1, 2, 3, 4});
  CHECK(ValuesOf<float>(Run("MatrixDiag", {two_by_two}), {2, 2, 2}) ==
        Floats{1, 0, 0, 2, 3, 0, 0, 4});
  CHECK(ValuesOf<float>(Run("MatrixDiagPart", {X()}), {2, 3}) == Floats{1, 6, 11, 13, 18, 23});
  CHECK(ValuesOf<float>(Run("MatrixSetDiag", {X(), Filled<float>({2, 3}, {0, 0, 0, 1, 1, 1})}),
                        {2, 3, 4}) ==
        Floats{0, 2, 3, 4, 5, 0, 7, 8, 9, 10, 0, 12, 1, 14, 15, 16, 17, 1, 19, 20, 21, 22, 1, 24});
  // V2 has no align attr: LEFT_LEFT.
  CHECK(
      ValuesOf<float>(Run("MatrixDiagPartV2", {X(), K(-1, 2), Scalar<float>(9)}), {2, 4, 3}) ==
      Floats{3, 8, 9, 2, 7, 12, 1, 6, 11, 5, 10, 9, 15, 20, 9, 14, 19, 24, 13, 18, 23, 17, 22, 9});
  CHECK(ValuesOf<float>(
            Run("MatrixDiagV2", {Filled<float>({2, 2}, {1, 2, 3, 0}), K(0, 1), Scalar<int32_t>(-1),
                                 Scalar<int32_t>(-1), Scalar<float>(0)}),
            {2, 2}) == Floats{3, 1, 0, 0});
  CHECK(ValuesOf<float>(Run("MatrixSetDiagV2",
                            {Filled<float>({2, 3}, {0, 0, 0, 0, 0, 0}), two_by_two, K(0, 1)}),
                        {2, 3}) == Floats{3, 1, 0, 0, 4, 2});
}

TEST_CASE("Matrix diag kernels move int, double and bool elements", "[kernels][matrix_diag]") {
  CHECK(ValuesOf<int32_t>(
            PartV3(Iota<int32_t>({3, 4}), K(-1, 0), Scalar<int32_t>(-1), "LEFT_RIGHT"), {2, 3}) ==
        std::vector<int32_t>{0, 5, 10, -1, 4, 9});
  CHECK(ValuesOf<int64_t>(
            DiagV3(Vec<int64_t>({5, 6}), Scalar<int32_t>(-1), -1, -1, Scalar<int64_t>(8)),
            {3, 3}) == std::vector<int64_t>{8, 8, 8, 5, 8, 8, 8, 6, 8});
  CHECK(ValuesOf<double>(SetV3(Filled<double>({2, 2}, {1, 1, 1, 1}), Vec<double>({0.5, -0.5}),
                               Scalar<int32_t>(0)),
                         {2, 2}) == std::vector<double>{0.5, 1, 1, -0.5});
  CHECK(ValuesOf<bool>(
            DiagV3(Vec<bool>({false, true}), Scalar<int32_t>(0), -1, 3, Scalar<bool>(true)),
            {2, 3}) == std::vector<bool>{false, true, true, true, true, true});
}

TEST_CASE("Matrix diag kernels reject bad k and shapes in TF's words", "[kernels][matrix_diag]") {
  const Tensor zero = Scalar<float>(0);
  CHECK(ErrorOf(DiagV3(Filled<float>({2, 2}, {1, 2, 3, 4}), K(1, 0), -1, -1, zero)) ==
        "MatrixDiagV3: lower_diag_index must not be larger than upper_diag_index: 1 > 0");
  CHECK(ErrorOf(PartV3(X(), K(-3, 0), zero)) ==
        "MatrixDiagPartV3: lower_diag_index is out of bound: -3. It must be between -3 and 4");
  CHECK(ErrorOf(PartV3(X(), K(0, 4), zero)) ==
        "MatrixDiagPartV3: upper_diag_index is out of bound: 4 It must be between -3 and 4");
  CHECK(ErrorOf(SetV3(X(), D(), K(0, 4))) ==
        "MatrixSetDiagV3: upper_diag_index is out of bound: 4 It must be between -3 and 4");
  CHECK(ErrorOf(PartV3(X(), Vec<int32_t>({0, 1, 2}), zero)) ==
        "MatrixDiagPartV3: diag_index must have only one or two elements, received 3 "
        "elements.");
  CHECK(ErrorOf(PartV3(X(), Vec<int32_t>({}), zero)) ==
        "MatrixDiagPartV3: Expected diag_index to have at least 1 element");
  CHECK(ErrorOf(SetV3(X(), D(), Vec<int32_t>({}))) ==
        "MatrixSetDiagV3: diag_index must have at least one element");
  CHECK(ErrorOf(PartV3(X(), Scalar<int32_t>(0), Vec<float>({0, 1}))) ==
        "MatrixDiagPartV3: Padding must be scalar.");
  CHECK(ErrorOf(Run("MatrixDiagPart", {Vec<float>({1, 2})})) ==
        "MatrixDiagPart: input must be at least 2-dim, received shape: [2]");
}

TEST_CASE("MatrixDiagV3 and MatrixSetDiagV3 check sizes in TF's words", "[kernels][matrix_diag]") {
  const Tensor zero = Scalar<float>(0);
  CHECK(ErrorOf(DiagV3(Vec<float>({1, 2}), Scalar<int32_t>(0), 1, -1, zero)) ==
        "MatrixDiagV3: The number of rows is too small.");
  CHECK(ErrorOf(DiagV3(Vec<float>({1, 2}), Scalar<int32_t>(0), 3, 3, zero)) ==
        "MatrixDiagV3: The number of rows or columns is not consistent with the specified "
        "d_lower, d_upper, and diagonal.");
  CHECK(ErrorOf(DiagV3(Filled<float>({2, 2}, {1, 2, 3, 4}), K(0, 2), -1, -1, zero)) ==
        "MatrixDiagV3: The number of diagonals provided in the input does not match the "
        "lower_diag_index and upper_diag_index range.");
  CHECK(ErrorOf(Run("MatrixSetDiag", {X(), Filled<float>({2, 2}, {1, 2, 3, 4})})) ==
        "MatrixSetDiag: Either first dimensions of diagonal don't match input.shape[:-2], or "
        "diagonal.shape[:-1] is not equal to the longests diagonal in range "
        "[lower_diag_index:upper_diag_index].\nInput shape: [2,3,4]\nDiagonal shape: "
        "[2,2]\nExpected diagonal shape: [2,3]");
  CHECK(ErrorOf(SetV3(X(), Filled<float>({2, 2, 3}, {}), K(-1, 1))) ==
        "MatrixSetDiagV3: The number of diagonals provided in `diag` is not consistent with "
        "`lower_diag_index` and `upper_diag_index`");
  CHECK(ErrorOf(SetV3(X(), Vec<float>({1, 2, 3}), K(0, 1))) ==
        "MatrixSetDiagV3: Diagonal tensor rank must be large enough to contain a "
        "diagonal-count dimension. Input rank: 3, Expected diagonal rank >= 2, Received "
        "diagonal rank: 1");
}

TEST_CASE("Matrix diag kernels on the pool keep the band", "[kernels][matrix_diag]") {
  // Part then Diag (or SetDiag into zeros) of a band is MatrixBandPart's rule.
  const Tensor x = Iota<float>({10, 100, 100});
  auto part = PartV3(x, K(-3, 5), Scalar<float>(-1));
  REQUIRE(part.ok());
  CHECK(DimsOf(*part) == Dims{10, 9, 100});
  auto built = DiagV3(*part, K(-3, 5), 100, 100, Scalar<float>(0));
  auto set = SetV3(Filled<float>({10, 100, 100}, Floats(100000, 0.0f)), *part, K(-3, 5));
  const Floats b = ValuesOf<float>(built, {10, 100, 100});
  const Floats s = ValuesOf<float>(set, {10, 100, 100});
  int bad = 0;
  for (int flat = 0; flat < 100000; ++flat) {
    const int d = flat % 100 - flat / 100 % 100;  // col - row
    const float want = d >= -3 && d <= 5 ? static_cast<float>(flat) : 0.0f;
    bad += b[flat] != want;
    bad += s[flat] != want;
  }
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow
