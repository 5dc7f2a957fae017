// SegmentSum, SegmentMean and SegmentMax. Expected values and error texts from TF 2.21
// (tf.raw_ops).
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterSegmentKernels); }

absl::StatusOr<Tensor> Segment(const std::string& op, const Tensor& data, const Tensor& ids) {
  return OpTester(op, Registry())
      .Attr("T", data.dtype())
      .Attr("Tindices", ids.dtype())
      .Input(data)
      .Input(ids)
      .RunOne();
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

TEST_CASE("Segment ops fold runs of sorted ids; unnamed rows are 0", "[kernels][segment]") {
  const Tensor ids = Vec<int32_t>({0, 0, 2, 2});
  auto sum = Segment("SegmentSum", Data(), ids);
  REQUIRE(sum.ok());
  CHECK(DimsOf(*sum) == Dims{3, 2});
  CHECK(Values<float>(*sum) == std::vector<float>{4, 6, 0, 0, -2, 14});
  auto mean = Segment("SegmentMean", Data(), ids);
  REQUIRE(mean.ok());
  CHECK(Values<float>(*mean) == std::vector<float>{2, 3, 0, 0, -1, 7});
  // TF 2.21 fills SegmentMax's empty segments with 0, not lowest().
  auto max = Segment("SegmentMax", Data(), ids);
  REQUIRE(max.ok());
  CHECK(Values<float>(*max) == std::vector<float>{3, 4, 0, 0, 5, 8});
}

TEST_CASE("Segment ops zero the rows before the first id (int32 data, int64 ids)",
          "[kernels][segment]") {
  const Tensor data = Filled<int32_t>({4, 2}, {1, 2, 3, 4, 5, 6, -7, 8});
  const Tensor ids = Vec<int64_t>({1, 1, 1, 3});
  auto sum = Segment("SegmentSum", data, ids);
  REQUIRE(sum.ok());
  CHECK(Values<int32_t>(*sum) == std::vector<int32_t>{0, 0, 9, 12, 0, 0, -7, 8});
  auto mean = Segment("SegmentMean", data, ids);
  REQUIRE(mean.ok());
  CHECK(Values<int32_t>(*mean) == std::vector<int32_t>{0, 0, 3, 4, 0, 0, -7, 8});
  auto max = Segment("SegmentMax", data, ids);
  REQUIRE(max.ok());
  CHECK(Values<int32_t>(*max) == std::vector<int32_t>{0, 0, 5, 6, 0, 0, -7, 8});
}

TEST_CASE("SegmentMean of integers truncates toward zero", "[kernels][segment]") {
  const Tensor data = Vec<int32_t>({1, 2, -3, -4, 5, 6, 6});
  const Tensor ids = Vec<int32_t>({0, 0, 1, 1, 2, 2, 2});
  auto mean = Segment("SegmentMean", data, ids);
  REQUIRE(mean.ok());
  CHECK(Values<int32_t>(*mean) == std::vector<int32_t>{1, -3, 5});
  auto max = Segment("SegmentMax", data, ids);
  REQUIRE(max.ok());
  CHECK(Values<int32_t>(*max) == std::vector<int32_t>{2, -3, 6});
  auto u8 = Segment("SegmentMean", Vec<uint8_t>({1, 2, 3, 4}), Vec<int32_t>({0, 0, 0, 2}));
  REQUIRE(u8.ok());
  CHECK(Values<uint8_t>(*u8) == std::vector<uint8_t>{2, 0, 4});
}

TEST_CASE("Segment ops reduce slices of higher-rank data", "[kernels][segment]") {
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i);
  auto sum = Segment("SegmentSum", Filled<float>({3, 2, 2}, values), Vec<int32_t>({0, 1, 1}));
  REQUIRE(sum.ok());
  CHECK(DimsOf(*sum) == Dims{2, 2, 2});
  CHECK(Values<float>(*sum) == std::vector<float>{0, 1, 2, 3, 12, 14, 16, 18});
}

TEST_CASE("Segment ops on half", "[kernels][segment]") {
  std::vector<Half> in;
  for (float v : {1.5f, 2.25f, 3.f}) in.push_back(Half::FromFloat(v));
  const Tensor data = Vec<Half>(in);
  const Tensor ids = Vec<int32_t>({0, 0, 1});
  auto as_floats = [](const Tensor& t) {
    std::vector<float> out;
    for (Half h : Values<Half>(t)) out.push_back(h.ToFloat());
    return out;
  };
  auto sum = Segment("SegmentSum", data, ids);
  REQUIRE(sum.ok());
  CHECK(as_floats(*sum) == std::vector<float>{3.75, 3});
  auto mean = Segment("SegmentMean", data, ids);
  REQUIRE(mean.ok());
  CHECK(as_floats(*mean) == std::vector<float>{1.875, 3});
  auto max = Segment("SegmentMax", data, ids);
  REQUIRE(max.ok());
  CHECK(as_floats(*max) == std::vector<float>{2.25, 3});
}

TEST_CASE("SegmentMax treats NaN as TF's std::max(x, acc) does", "[kernels][segment]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // TF 2.21: [1, nan] -> nan; [3, nan, 1] -> 1 (a later number replaces the NaN).
  auto max = Segment("SegmentMax", Vec<float>({1, nan, 3, nan, 1}), Vec<int32_t>({0, 0, 1, 1, 1}));
  REQUIRE(max.ok());
  const std::vector<float> got = Values<float>(*max);
  CHECK(std::isnan(got[0]));
  CHECK(got[1] == 1);
  auto sum = Segment("SegmentSum", Vec<float>({1, nan, 3, nan, 1}), Vec<int32_t>({0, 0, 1, 1, 1}));
  REQUIRE(sum.ok());
  CHECK(std::isnan(Values<float>(*sum)[0]));
  CHECK(std::isnan(Values<float>(*sum)[1]));
}

TEST_CASE("Segment ops accept empty inputs", "[kernels][segment]") {
  auto out = Segment("SegmentMax", Filled<float>({0, 3}, {}), Filled<int32_t>({0}, {}));
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{0, 3});
}

TEST_CASE("Segment ops reject bad ids with TF's messages", "[kernels][segment]") {
  for (const char* op : {"SegmentSum", "SegmentMean", "SegmentMax"}) {
    INFO(op);
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({0, 2, 1, 2}))),
               Contains("segment ids are not increasing"));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({1, 0, 0, 1}))),
               Contains("segment ids are not increasing"));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({0, -1, 2, 2}))),
               Contains("segment ids are not increasing"));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({-1, 0, 0, 1}))),
               Contains("Segment id -1 out of range [0, 2), possibly because 'segment_ids' "
                        "input is not sorted."));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({-3, -2, -2, -1}))),
               Contains("segment ids must be >= 0"));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({0, 1, 1, -1}))),
               Contains("segment ids must be >= 0"));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int64_t>({0, 0, 0, INT64_MAX}))),
               Contains("segment ids must be >= 0"));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Vec<int32_t>({0, 0, 1}))),
               Contains("segment_ids should be the same size as dimension 0 of input."));
    CHECK_THAT(ErrorOf(Segment(op, Data(), Filled<int32_t>({2, 2}, {0, 0, 1, 1}))),
               Contains("segment_ids should be a vector."));
    CHECK_THAT(ErrorOf(Segment(op, Filled<float>({}, {1}), Filled<int32_t>({}, {0}))),
               Contains("input must be at least rank 1"));
  }
}

TEST_CASE("Segment ops fail cleanly on huge ids", "[kernels][segment]") {
  // TF 2.21: RESOURCE_EXHAUSTED "OOM when allocating tensor with shape[4611686018427387905]".
  auto huge = Segment("SegmentSum", Vec<float>({1}), Vec<int64_t>({int64_t{1} << 62}));
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
  // More elements than int64 holds: INVALID_ARGUMENT from the output shape.
  auto overflow = Segment("SegmentSum", Filled<float>({1, 4}, {1, 2, 3, 4}),
                          Vec<int64_t>({int64_t{1} << 62}));
  REQUIRE_FALSE(overflow.ok());
  CHECK(overflow.status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
