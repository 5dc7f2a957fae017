// MatrixBandPart. Expected values and messages from TF 2.21
// (tf.raw_ops.MatrixBandPart on CPU).
#include <catch2/catch.hpp>
#include <cstdint>
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

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterMatrixBandPartKernels);
}

template <typename I>
absl::StatusOr<Tensor> BandPart(const Tensor& input, const Tensor& lower, const Tensor& upper) {
  return OpTester("MatrixBandPart", Registry())
      .Attr("T", input.dtype())
      .Attr("Tindex", lower.dtype())
      .Input(input)
      .Input(lower)
      .Input(upper)
      .RunOne();
}

absl::StatusOr<Tensor> BandPart(const Tensor& input, int64_t lower, int64_t upper) {
  return BandPart<int64_t>(input, Filled<int64_t>({}, {lower}), Filled<int64_t>({}, {upper}));
}

const Tensor& X() {  // 1..12 as [3, 4]
  static const Tensor x = Filled<float>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  return x;
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("MatrixBandPart keeps the band and zeroes the rest", "[kernels][band_part]") {
  CHECK(Values<float>(*BandPart(X(), 1, 0)) ==
        std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 0, 10, 11, 0});
  CHECK(Values<float>(*BandPart(X(), -1, 1)) ==
        std::vector<float>{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  CHECK(Values<float>(*BandPart(X(), 0, -1)) ==
        std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  CHECK(Values<float>(*BandPart(X(), 3, 4)) == Values<float>(X()));
  CHECK(Values<float>(*BandPart(X(), -2, 0)) ==
        std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  auto batch = BandPart<int32_t>(Iota<int64_t>({2, 2, 2}), Filled<int32_t>({}, {0}),
                                 Filled<int32_t>({}, {0}));
  REQUIRE(batch.ok());
  CHECK(Values<int64_t>(*batch) == std::vector<int64_t>{0, 0, 0, 3, 4, 0, 0, 7});
  auto flags = BandPart(Filled<bool>({2, 2}, {true, true, true, true}), 0, 0);
  REQUIRE(flags.ok());
  CHECK(Values<bool>(*flags) == std::vector<bool>{true, false, false, true});
  auto empty = BandPart(Filled<float>({0, 3}, {}), 0, 0);
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 3});
}

TEST_CASE("MatrixBandPart rejects bad inputs in TF's words", "[kernels][band_part]") {
  CHECK(ErrorOf(BandPart(X(), 4, 0)) ==
        "MatrixBandPart: num_lower must be negative or less or equal to number "
        "of rows (3) "
        "got: 4");
  CHECK(ErrorOf(BandPart(X(), 0, 5)) ==
        "MatrixBandPart: num_upper must be negative or less or equal to number "
        "of columns (4) "
        "got: 5");
  CHECK(ErrorOf(BandPart(Vec<float>({1, 2}), 1, 0)) ==
        "MatrixBandPart: input must be at least 2-dim, received shape: [2]");
  CHECK(ErrorOf(BandPart<int32_t>(X(), Vec<int32_t>({1}), Filled<int32_t>({}, {0}))) ==
        "MatrixBandPart: num_lower must be scalar, got shape [1]");
  CHECK(ErrorOf(BandPart<int32_t>(X(), Filled<int32_t>({}, {0}), Vec<int32_t>({0}))) ==
        "MatrixBandPart: num_upper must be scalar, got shape [1]");
}

TEST_CASE("MatrixBandPart on the pool matches the band rule", "[kernels][band_part]") {
  auto out = BandPart(Iota<float>({10, 100, 100}), 3, 5);
  REQUIRE(out.ok());
  const std::vector<float> v = Values<float>(*out);
  int bad = 0;
  for (int b = 0; b < 10; ++b) {
    for (int r = 0; r < 100; ++r) {
      for (int c = 0; c < 100; ++c) {
        const int flat = (b * 100 + r) * 100 + c;
        const bool kept = r - c <= 3 && c - r <= 5;
        bad += v[flat] != (kept ? static_cast<float>(flat) : 0.0f);
      }
    }
  }
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow
