// SpaceToBatchND and BatchToSpaceND. Expected values and messages from TF 2.21
// (tf.raw_ops on CPU).
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
  return testing::TestKernelRegistry(RegisterSpaceToBatchKernels);
}

absl::StatusOr<Tensor> SpaceToBatch(const Tensor& input, const Tensor& block, const Tensor& pads) {
  return OpTester("SpaceToBatchND", Registry())
      .Attr("T", input.dtype())
      .Attr("Tblock_shape", block.dtype())
      .Attr("Tpaddings", pads.dtype())
      .Input(input)
      .Input(block)
      .Input(pads)
      .RunOne();
}

absl::StatusOr<Tensor> BatchToSpace(const Tensor& input, const Tensor& block, const Tensor& crops) {
  return OpTester("BatchToSpaceND", Registry())
      .Attr("T", input.dtype())
      .Attr("Tblock_shape", block.dtype())
      .Attr("Tcrops", crops.dtype())
      .Input(input)
      .Input(block)
      .Input(crops)
      .RunOne();
}

template <typename T = int32_t>
Tensor Pairs(const std::vector<T>& values) {
  return Filled<T>({static_cast<int64_t>(values.size() / 2), 2}, values);
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// x = arange(24).reshape(2, 3, 4, 1), block [2, 2], paddings [[1, 0], [0, 0]].
const std::vector<float> kBlocked = {0, 0, 4, 6,  0,  0,  16, 18, 0, 0, 5, 7,  0,  0,  17, 19,
                                     0, 2, 8, 10, 12, 14, 20, 22, 1, 3, 9, 11, 13, 15, 21, 23};

TEST_CASE("SpaceToBatchND pads and moves blocks into the batch", "[kernels][space_to_batch]") {
  auto out = SpaceToBatch(Iota<float>({2, 3, 4, 1}), Vec<int32_t>({2, 2}), Pairs({1, 0, 0, 0}));
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{8, 2, 2, 1});
  CHECK(Values<float>(*out) == kBlocked);
  // int64 block and paddings, trailing dims as depth.
  auto one = SpaceToBatch(Iota<int64_t>({1, 6, 2}), Vec<int64_t>({3}), Pairs<int64_t>({0, 0}));
  REQUIRE(one.ok());
  CHECK(DimsOf(*one) == Dims{3, 2, 2});
  CHECK(Values<int64_t>(*one) == std::vector<int64_t>{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11});
  // Block 1 without padding: a copy.
  auto same = SpaceToBatch(Iota<uint8_t>({1, 4, 1}), Vec<int32_t>({1}), Pairs({0, 0}));
  REQUIRE(same.ok());
  CHECK(DimsOf(*same) == Dims{1, 4, 1});
  CHECK(Values<uint8_t>(*same) == std::vector<uint8_t>{0, 1, 2, 3});
  // No block dims at all.
  auto none = SpaceToBatch(Iota<float>({2, 3, 4, 1}), Filled<int32_t>({0}, {}),
                           Filled<int32_t>({0, 2}, {}));
  REQUIRE(none.ok());
  CHECK(DimsOf(*none) == Dims{2, 3, 4, 1});
  auto empty = SpaceToBatch(Iota<float>({0, 4, 1}), Vec<int32_t>({2}), Pairs({0, 0}));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 2, 1});
}

TEST_CASE("BatchToSpaceND inverts SpaceToBatchND and crops", "[kernels][space_to_batch]") {
  auto back = BatchToSpace(Filled<float>({8, 2, 2, 1}, kBlocked), Vec<int32_t>({2, 2}),
                           Pairs({1, 0, 0, 0}));
  REQUIRE(back.ok());
  CHECK(DimsOf(*back) == Dims{2, 3, 4, 1});
  CHECK(Values<float>(*back) == Values<float>(Iota<float>({2, 3, 4, 1})));
  auto cropped = BatchToSpace(Iota<int32_t>({4, 3, 1}), Vec<int32_t>({2}), Pairs({1, 2}));
  REQUIRE(cropped.ok());
  CHECK(DimsOf(*cropped) == Dims{2, 3, 1});
  CHECK(Values<int32_t>(*cropped) == std::vector<int32_t>{6, 1, 7, 9, 4, 10});
  auto wide = BatchToSpace(Iota<uint16_t>({4, 3, 1}), Vec<int64_t>({2}), Pairs<int64_t>({1, 2}));
  REQUIRE(wide.ok());
  CHECK(Values<uint16_t>(*wide) == std::vector<uint16_t>{6, 1, 7, 9, 4, 10});
}

TEST_CASE("SpaceToBatchND rejects bad block shapes and paddings with TF's words",
          "[kernels][space_to_batch]") {
  const Tensor x = Iota<float>({2, 3, 4, 1});
  CHECK(Contains(ErrorOf(SpaceToBatch(x, Vec<int32_t>({2, 2}), Pairs({0, 0, 0, 0}))),
                 "padded_shape[0]=3 is not divisible by block_shape[0]=2"));
  CHECK(Contains(ErrorOf(SpaceToBatch(x, Filled<int32_t>({1, 2}, {2, 2}), Pairs({0, 0, 0, 0}))),
                 "block_shape rank should be 1 instead of 2"));
  CHECK(Contains(ErrorOf(SpaceToBatch(x, Vec<int32_t>({2, 2}), Filled<int32_t>({2, 3}, {}))),
                 "paddings should have shape [2, 2] instead of [2,3]"));
  CHECK(
      Contains(ErrorOf(SpaceToBatch(x, Vec<int32_t>({2, 2, 2, 2}), Pairs(std::vector<int32_t>(8)))),
               "input rank should be >= 5 instead of 4"));
  CHECK(Contains(ErrorOf(SpaceToBatch(x, Vec<int32_t>({0, 2}), Pairs({1, 0, 0, 0}))),
                 "All values in block_shape must be positive, got value, 0 at index 0."));
  CHECK(Contains(ErrorOf(SpaceToBatch(x, Vec<int32_t>({-2, 2}), Pairs({1, 0, 0, 0}))),
                 "All values in block_shape must be positive, got value, -2 at index 0."));
  CHECK(Contains(ErrorOf(SpaceToBatch(x, Vec<int32_t>({2, 2}), Pairs({-1, 0, 0, 0}))),
                 "Paddings must be non-negative"));
  CHECK(Contains(
      ErrorOf(SpaceToBatch(Iota<float>({1, 2, 2, 2, 2, 2, 1}), Vec<int32_t>({2, 2, 2, 2, 2}),
                           Pairs(std::vector<int32_t>(10)))),
      "Maximum number of non-combined block dimensions is 5 but must not exceed 4"));
  // Hostile sizes: a clean error, not an overflow.
  ErrorOf(SpaceToBatch(Iota<float>({3, 4, 1}), Vec<int64_t>({int64_t{1} << 62, 4}),
                       Pairs<int64_t>({(int64_t{1} << 62) - 4, 0, 0, 0})));
  ErrorOf(SpaceToBatch(Iota<float>({1, 4, 1}), Vec<int64_t>({2}),
                       Pairs<int64_t>({int64_t{1} << 62, int64_t{1} << 62})));
}

TEST_CASE("BatchToSpaceND rejects bad block shapes and crops with TF's words",
          "[kernels][space_to_batch]") {
  const Tensor x = Iota<float>({8, 3, 4, 1});
  CHECK(Contains(
      ErrorOf(BatchToSpace(Iota<float>({2, 3, 4, 1}), Vec<int32_t>({2, 2}), Pairs({0, 0, 0, 0}))),
      "Input batch dimension (2) is not divisible by product of block sizes (4)"));
  CHECK(Contains(ErrorOf(BatchToSpace(x, Vec<int32_t>({2, 2}), Pairs({-1, 0, 0, 0}))),
                 "Crops must be non-negative"));
  CHECK(Contains(ErrorOf(BatchToSpace(x, Vec<int32_t>({2, 2}), Pairs({4, 3, 0, 0}))),
                 "cropped_shape[0]=-1 must be non-negative"));
  CHECK(Contains(ErrorOf(BatchToSpace(x, Vec<int32_t>({0, 2}), Pairs({0, 0, 0, 0}))),
                 "Product of block sizes must be positive, got 0"));
  CHECK(Contains(ErrorOf(BatchToSpace(x, Vec<int32_t>({-2, -2}), Pairs({0, 0, 0, 0}))),
                 "cropped_shape[0]=-6 must be non-negative"));
  CHECK(Contains(ErrorOf(BatchToSpace(x, Vec<int32_t>({2, 2}), Pairs({0, 0}))),
                 "crops should have shape [2, 2] instead of [1,2]"));
  CHECK(Contains(ErrorOf(BatchToSpace(Iota<float>({8}), Vec<int32_t>({2}), Pairs({0, 0}))),
                 "input rank should be >= 2 instead of 1"));
  CHECK(Contains(
      ErrorOf(BatchToSpace(Iota<float>({32, 1, 1, 1, 1, 1, 1}), Vec<int32_t>({2, 2, 2, 2, 2}),
                           Pairs(std::vector<int32_t>(10)))),
      "Maximum number of non-combined block dimensions is 5 but must not exceed 4"));
  ErrorOf(BatchToSpace(x, Vec<int64_t>({int64_t{1} << 62, 4}), Pairs<int64_t>({0, 0, 0, 0})));
}

}  // namespace
}  // namespace dflow
