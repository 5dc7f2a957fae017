// UnsortedSegmentSum and UnsortedSegmentMax. Expected values and error texts from
// TF 2.21 (tf.raw_ops).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterUnsortedSegmentKernels);
}

absl::StatusOr<Tensor> Unsorted(const std::string& op, const Tensor& data, const Tensor& ids,
                                const Tensor& num_segments) {
  return OpTester(op, Registry())
      .Attr("T", data.dtype())
      .Attr("Tindices", ids.dtype())
      .Attr("Tnumsegments", num_segments.dtype())
      .Input(data)
      .Input(ids)
      .Input(num_segments)
      .RunOne();
}

absl::StatusOr<Tensor> Unsorted(const std::string& op, const Tensor& data, const Tensor& ids,
                                int32_t num_segments) {
  return Unsorted(op, data, ids, Filled<int32_t>({}, {num_segments}));
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

const Tensor& Data() {
  static const Tensor* const kData =
      new Tensor(Filled<float>({4, 2}, {1, 2, 3, 4, 5, 6, -7, 8}));
  return *kData;
}

constexpr float kLowest = std::numeric_limits<float>::lowest();

TEST_CASE("Unsorted segment ops drop negative ids; empty Max segments are lowest()",
          "[kernels][unsorted_segment]") {
  const Tensor ids = Vec<int32_t>({2, 0, 2, -1});
  auto sum = Unsorted("UnsortedSegmentSum", Data(), ids, 4);
  REQUIRE(sum.ok());
  CHECK(DimsOf(*sum) == Dims{4, 2});
  CHECK(Values<float>(*sum) == std::vector<float>{3, 4, 0, 0, 6, 8, 0, 0});
  auto max = Unsorted("UnsortedSegmentMax", Data(), ids, 4);
  REQUIRE(max.ok());
  CHECK(Values<float>(*max) ==
        std::vector<float>{3, 4, kLowest, kLowest, 5, 6, kLowest, kLowest});
}

TEST_CASE("Unsorted segment ops take ids of any rank that prefixes data's shape",
          "[kernels][unsorted_segment]") {
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i);
  const Tensor data = Filled<float>({2, 3, 2}, values);
  const Tensor ids = Filled<int32_t>({2, 3}, {0, 2, 0, -1, 2, 1});
  auto sum = Unsorted("UnsortedSegmentSum", data, ids, 3);
  REQUIRE(sum.ok());
  CHECK(DimsOf(*sum) == Dims{3, 2});
  CHECK(Values<float>(*sum) == std::vector<float>{4, 6, 10, 11, 10, 12});
  auto max = Unsorted("UnsortedSegmentMax", data, ids, 3);
  REQUIRE(max.ok());
  CHECK(Values<float>(*max) == std::vector<float>{4, 5, 10, 11, 8, 9});
  // Scalar ids: all of data is one slice.
  auto scalar = Unsorted("UnsortedSegmentMax", Vec<float>({1, 2}), Filled<int32_t>({}, {1}), 2);
  REQUIRE(scalar.ok());
  CHECK(DimsOf(*scalar) == Dims{2, 2});
  CHECK(Values<float>(*scalar) == std::vector<float>{kLowest, kLowest, 1, 2});
}

TEST_CASE("Unsorted segment ops over the dtypes", "[kernels][unsorted_segment]") {
  const Tensor ids = Vec<int32_t>({1, 1, 1, 0});
  SECTION("int16 ids and int64 num_segments (UnsortedSegmentSum only)") {
    auto sum = Unsorted("UnsortedSegmentSum", Vec<int32_t>({1, 2, 3, 4}),
                        Vec<int16_t>({1, -5, 1, 0}), Filled<int64_t>({}, {3}));
    REQUIRE(sum.ok());
    CHECK(Values<int32_t>(*sum) == std::vector<int32_t>{4, 4, 0});
  }
  SECTION("uint8") {
    auto sum = Unsorted("UnsortedSegmentSum", Vec<uint8_t>({1, 2, 3, 4}), ids, 3);
    REQUIRE(sum.ok());
    CHECK(Values<uint8_t>(*sum) == std::vector<uint8_t>{4, 6, 0});
    auto max = Unsorted("UnsortedSegmentMax", Vec<uint8_t>({1, 2, 3, 4}), ids, 3);
    REQUIRE(max.ok());
    CHECK(Values<uint8_t>(*max) == std::vector<uint8_t>{4, 3, 0});
  }
  SECTION("int8 lowest is -128") {
    auto max = Unsorted("UnsortedSegmentMax", Vec<int8_t>({1, 2, 3, 4}), ids, 3);
    REQUIRE(max.ok());
    CHECK(Values<int8_t>(*max) == std::vector<int8_t>{4, 3, -128});
  }
  SECTION("half and bfloat16 lowest are -65504 and -3.38953139e38") {
    std::vector<Half> h;
    std::vector<Bfloat16> b;
    for (float v : {1.f, 2.f, 3.f, 4.f}) {
      h.push_back(Half::FromFloat(v));
      b.push_back(Bfloat16::FromFloat(v));
    }
    auto half_max = Unsorted("UnsortedSegmentMax", Vec<Half>(h), ids, 3);
    REQUIRE(half_max.ok());
    std::vector<float> got;
    for (Half x : Values<Half>(*half_max)) got.push_back(x.ToFloat());
    CHECK(got == std::vector<float>{4, 3, -65504});
    auto bf_max = Unsorted("UnsortedSegmentMax", Vec<Bfloat16>(b), ids, 3);
    REQUIRE(bf_max.ok());
    got.clear();
    for (Bfloat16 x : Values<Bfloat16>(*bf_max)) got.push_back(x.ToFloat());
    CHECK(got == std::vector<float>{4, 3, -3.3895313892515355e+38f});
    auto half_sum = Unsorted("UnsortedSegmentSum", Vec<Half>(h), ids, 3);
    REQUIRE(half_sum.ok());
    got.clear();
    for (Half x : Values<Half>(*half_sum)) got.push_back(x.ToFloat());
    CHECK(got == std::vector<float>{4, 6, 0});
  }
  SECTION("double lowest") {
    auto max = Unsorted("UnsortedSegmentMax", Vec<double>({1, 2, 3, 4}), ids, 3);
    REQUIRE(max.ok());
    CHECK(Values<double>(*max) ==
          std::vector<double>{4, 3, std::numeric_limits<double>::lowest()});
  }
}

TEST_CASE("UnsortedSegmentMax treats NaN as TF's std::max(x, acc) does",
          "[kernels][unsorted_segment]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor data = Vec<float>({1, nan, 3, nan, 1});
  const Tensor ids = Vec<int32_t>({0, 0, 1, 1, 1});
  auto max = Unsorted("UnsortedSegmentMax", data, ids, 2);
  REQUIRE(max.ok());
  CHECK(std::isnan(Values<float>(*max)[0]));
  CHECK(Values<float>(*max)[1] == 1);
}

TEST_CASE("Unsorted segment ops with no segments or no data", "[kernels][unsorted_segment]") {
  auto none = Unsorted("UnsortedSegmentSum", Data(), Vec<int32_t>({-1, -1, -1, -1}), 0);
  REQUIRE(none.ok());
  CHECK(DimsOf(*none) == Dims{0, 2});
  auto empty =
      Unsorted("UnsortedSegmentMax", Filled<float>({0, 2}, {}), Filled<int32_t>({0}, {}), 2);
  REQUIRE(empty.ok());
  CHECK(Values<float>(*empty) == std::vector<float>(4, kLowest));
}

TEST_CASE("Unsorted segment ops reject bad arguments with TF's messages",
          "[kernels][unsorted_segment]") {
  for (const char* op : {"UnsortedSegmentSum", "UnsortedSegmentMax"}) {
    INFO(op);
    CHECK_THAT(ErrorOf(Unsorted(op, Data(), Vec<int32_t>({0, 5, 1, 1}), 3)),
               Contains("segment_ids[1] = 5 is out of range [0, 3)"));
    CHECK_THAT(ErrorOf(Unsorted(op, Filled<float>({2, 3, 2}, {}),
                                Filled<int32_t>({2, 3}, {0, 2, 0, -1, 7, 1}), 3)),
               Contains("segment_ids[1,1] = 7 is out of range [0, 3)"));
    CHECK_THAT(ErrorOf(Unsorted(op, Data(), Vec<int32_t>({-1, 0, -1, -1}), 0)),
               Contains("segment_ids[1] = 0 is out of range [0, 0)"));
    CHECK_THAT(ErrorOf(Unsorted(op, Data(), Vec<int32_t>({0, 0, 1, 1}), -2)),
               Contains("Input num_segments == -2 must not be negative."));
    CHECK_THAT(ErrorOf(Unsorted(op, Data(), Vec<int32_t>({0, 0, 1, 1}), Vec<int32_t>({2}))),
               Contains("num_segments should be a scalar, not shape [1]"));
    CHECK_THAT(ErrorOf(Unsorted(op, Data(), Vec<int32_t>({0, 0, 1}), 2)),
               Contains("data.shape = [4,2] does not start with segment_ids.shape = [3]"));
    CHECK_THAT(ErrorOf(Unsorted(op, Data(), Filled<int32_t>({2, 2}, {0, 0, 1, 1}), 2)),
               Contains("data.shape = [4,2] does not start with segment_ids.shape = [2,2]"));
  }
}

TEST_CASE("Unsorted segment ops fail cleanly on huge num_segments",
          "[kernels][unsorted_segment]") {
  for (const char* op : {"UnsortedSegmentSum", "UnsortedSegmentMax"}) {
    INFO(op);
    auto huge = Unsorted(op, Vec<float>({1}), Vec<int32_t>({0}),
                         Filled<int64_t>({}, {int64_t{1} << 62}));
    REQUIRE_FALSE(huge.ok());
    CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
    auto overflow = Unsorted(op, Filled<float>({1, 4}, {1, 2, 3, 4}), Vec<int32_t>({0}),
                             Filled<int64_t>({}, {int64_t{1} << 62}));
    REQUIRE_FALSE(overflow.ok());
    CHECK(overflow.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace dflow
