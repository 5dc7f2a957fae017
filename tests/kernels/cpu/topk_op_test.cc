// TopKV2. Expected values and messages from TF 2.21 (tf.raw_ops.TopKV2 on CPU),
// including its unsorted (heap) order and its order for rows holding NaN.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterTopKKernels); }

// TopKV2 with int32 indices unless `index_type` says otherwise.
absl::StatusOr<std::vector<Tensor>> TopK(const Tensor& input, const Tensor& k, bool sorted = true,
                                         DataType index_type = DT_INT32) {
  return OpTester("TopKV2", Registry())
      .Attr("T", input.dtype())
      .Attr("Tk", k.dtype())
      .Attr("index_type", index_type)
      .Attr("sorted", sorted)
      .Input(input)
      .Input(k)
      .Run();
}

Tensor K(int32_t k) { return Filled<int32_t>({}, {k}); }

std::string ErrorOf(const absl::StatusOr<std::vector<Tensor>>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

// Values compared as bit-identical floats, so NaN matches NaN.
void CheckFloats(const Tensor& got, const std::vector<float>& want) {
  const std::vector<float> v = Values<float>(got);
  REQUIRE(v.size() == want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(v[i]));
    } else {
      CHECK(v[i] == want[i]);
    }
  }
}

const Tensor& TieRows() {
  static const Tensor* rows =
      new Tensor(Filled<float>({2, 6}, {1, 3, 3, 2, 3, 0, 5, 5, 5, 5, 5, 5}));
  return *rows;
}

TEST_CASE("TopKV2 sorted: ties come lowest index first", "[kernels][topk]") {
  auto out = TopK(TieRows(), K(3));
  REQUIRE(out.ok());
  CHECK(DimsOf((*out)[0]) == Dims{2, 3});
  CHECK(Values<float>((*out)[0]) == std::vector<float>{3, 3, 3, 5, 5, 5});
  CHECK(Values<int32_t>((*out)[1]) == std::vector<int32_t>{1, 2, 4, 0, 1, 2});
  auto one = TopK(TieRows(), K(1));
  REQUIRE(one.ok());
  CHECK(Values<float>((*one)[0]) == std::vector<float>{3, 5});
  CHECK(Values<int32_t>((*one)[1]) == std::vector<int32_t>{1, 0});
}

TEST_CASE("TopKV2 unsorted follows TF's heap order", "[kernels][topk]") {
  auto three = TopK(TieRows(), K(3), /*sorted=*/false);
  REQUIRE(three.ok());
  CHECK(Values<int32_t>((*three)[1]) == std::vector<int32_t>{4, 1, 2, 2, 1, 0});
  auto all = TopK(TieRows(), K(6), /*sorted=*/false);
  REQUIRE(all.ok());
  CHECK(Values<float>((*all)[0]) == std::vector<float>{3, 3, 3, 2, 1, 0, 5, 5, 5, 5, 5, 5});
  CHECK(Values<int32_t>((*all)[1]) == std::vector<int32_t>{1, 2, 4, 3, 0, 5, 0, 1, 2, 3, 4, 5});
  auto one = TopK(Filled<float>({1, 2}, {1, 2}), K(1), /*sorted=*/false);
  REQUIRE(one.ok());
  CHECK(Values<int32_t>((*one)[1]) == std::vector<int32_t>{1});
  // Two random rows of 20 values in [0, 5), k = 7.
  const Tensor random = Filled<int32_t>(
      {2, 20}, {3, 4, 0, 1, 3, 0, 0, 1, 4, 4, 1, 2, 4, 2, 4, 3, 4, 2, 4, 2,
                4, 1, 1, 0, 1, 1, 1, 1, 0, 4, 1, 0, 0, 3, 2, 1, 0, 3, 1, 1});
  auto unsorted = TopK(random, K(7), /*sorted=*/false);
  REQUIRE(unsorted.ok());
  CHECK(Values<int32_t>((*unsorted)[0]) ==
        std::vector<int32_t>{4, 4, 4, 4, 4, 4, 4, 1, 1, 2, 3, 4, 4, 3});
  CHECK(Values<int32_t>((*unsorted)[1]) ==
        std::vector<int32_t>{18, 12, 16, 8, 9, 1, 14, 2, 1, 14, 13, 0, 9, 17});
  auto sorted = TopK(random, K(7));
  REQUIRE(sorted.ok());
  CHECK(Values<int32_t>((*sorted)[0]) ==
        std::vector<int32_t>{4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 2, 1, 1});
  CHECK(Values<int32_t>((*sorted)[1]) ==
        std::vector<int32_t>{1, 8, 9, 12, 14, 16, 18, 0, 9, 13, 17, 14, 1, 2});
}

TEST_CASE("TopKV2 orders rows holding NaN as TF does", "[kernels][topk]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Vec<float>({3, nan, 1, 7, nan, 7, -inf, 2, nan, 5});
  struct Case {
    int32_t k;
    bool sorted;
    std::vector<float> values;
    std::vector<int32_t> indices;
  };
  const std::vector<Case> cases = {
      {4, false, {7, 3, nan, 7}, {3, 0, 1, 5}},
      {4, true, {3, nan, 7, 7}, {0, 1, 5, 3}},
      {9, false, {1, 5, nan, nan, nan, 7, 3, 2, 7}, {2, 9, 1, 8, 4, 5, 0, 7, 3}},
      {9, true, {3, nan, 7, 7, nan, 2, nan, 5, 1}, {0, 1, 3, 5, 4, 7, 8, 9, 2}},
      {10, false, {7, 3, nan, 1, nan, 7, 2, -inf, nan, 5}, {3, 0, 1, 2, 4, 5, 7, 6, 8, 9}},
  };
  for (const Case& c : cases) {
    INFO("k " << c.k << " sorted " << c.sorted);
    auto out = TopK(x, K(c.k), c.sorted);
    REQUIRE(out.ok());
    CheckFloats((*out)[0], c.values);
    CHECK(Values<int32_t>((*out)[1]) == c.indices);
  }
  auto six = TopK(Vec<float>({nan, 1, inf, -inf, nan, 2}), K(6));
  REQUIRE(six.ok());
  CheckFloats((*six)[0], {nan, inf, 1, -inf, nan, 2});
  CHECK(Values<int32_t>((*six)[1]) == std::vector<int32_t>{0, 2, 1, 3, 4, 5});
  // k = 1 takes Eigen's maximum: 8 floats or 4 doubles at a time ignore NaN, the columns
  // left over take it, and a NaN maximum gives column 0.
  auto one_f = TopK(Vec<float>({1, nan, 5, nan}), K(1));
  REQUIRE(one_f.ok());
  CHECK(Values<float>((*one_f)[0]) == std::vector<float>{1});
  CHECK(Values<int32_t>((*one_f)[1]) == std::vector<int32_t>{0});
  auto one_d = TopK(Vec<double>({1, nan, 5, nan}), K(1));
  REQUIRE(one_d.ok());
  CHECK(Values<double>((*one_d)[0]) == std::vector<double>{5});
  CHECK(Values<int32_t>((*one_d)[1]) == std::vector<int32_t>{2});
  auto nine_d = TopK(Vec<double>({5, 1, 2, 3, nan, 0, 0, nan, 7}), K(1));
  REQUIRE(nine_d.ok());
  CHECK(Values<int32_t>((*nine_d)[1]) == std::vector<int32_t>{8});
  auto after_nan = TopK(Vec<float>({nan, -inf}), K(1));
  REQUIRE(after_nan.ok());
  CHECK(Values<int32_t>((*after_nan)[1]) == std::vector<int32_t>{1});
  auto signed_zeros = TopK(Vec<float>({-0.0f, 0.0f, -0.0f}), K(2));
  REQUIRE(signed_zeros.ok());
  CHECK(std::signbit(Values<float>((*signed_zeros)[0])[0]));
  CHECK(Values<int32_t>((*signed_zeros)[1]) == std::vector<int32_t>{0, 1});
}

TEST_CASE("TopKV2 covers value, k and index dtypes", "[kernels][topk]") {
  auto u8 = TopK(Vec<uint8_t>({3, 250, 7, 250}), Filled<int16_t>({}, {2}), true, DT_INT16);
  REQUIRE(u8.ok());
  CHECK(Values<uint8_t>((*u8)[0]) == std::vector<uint8_t>{250, 250});
  CHECK(Values<int16_t>((*u8)[1]) == std::vector<int16_t>{1, 3});
  auto i8 = TopK(Vec<int8_t>({3, -5, 7}), Filled<int64_t>({}, {3}), true, DT_INT64);
  REQUIRE(i8.ok());
  CHECK(Values<int8_t>((*i8)[0]) == std::vector<int8_t>{7, 3, -5});
  CHECK(Values<int64_t>((*i8)[1]) == std::vector<int64_t>{2, 0, 1});
  // half [3, 1, NaN, 7, 7, 2] as bits; TF: 7, 7, 3 at 3, 4, 0. bfloat16 [3, 7, 7]
  // unsorted, k = 2; TF: 2, 1.
  const std::vector<uint16_t> half_bits = {0x4200, 0x3C00, 0x7E00, 0x4700, 0x4700, 0x4000};
  std::vector<Half> halves;
  for (uint16_t bits : half_bits) halves.push_back(Half{bits});
  auto half = TopK(Vec<Half>(halves), K(3));
  REQUIRE(half.ok());
  CHECK(Values<int32_t>((*half)[1]) == std::vector<int32_t>{3, 4, 0});
  CHECK((*half)[0].data<Half>()[2].bits == 0x4200);
  auto bf16 = TopK(Vec<Bfloat16>({Bfloat16{0x4040}, Bfloat16{0x40E0}, Bfloat16{0x40E0}}), K(2),
                   /*sorted=*/false);
  REQUIRE(bf16.ok());
  CHECK(Values<int32_t>((*bf16)[1]) == std::vector<int32_t>{2, 1});
  auto u64 = TopK(Vec<uint64_t>({1, std::numeric_limits<uint64_t>::max(), 2}), K(2));
  REQUIRE(u64.ok());
  CHECK(Values<uint64_t>((*u64)[0]) == std::vector<uint64_t>{std::numeric_limits<uint64_t>::max(), 2});
  auto d3 = TopK(Filled<double>({2, 3, 4}, std::vector<double>(24, 0)), K(2));
  REQUIRE(d3.ok());
  CHECK(DimsOf((*d3)[0]) == Dims{2, 3, 2});
  CHECK(Values<int32_t>((*d3)[1]) == std::vector<int32_t>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  // TF reads k into an int: 2^32 + 2 means 2, 2^33 means 0.
  const Tensor x = Vec<float>({1, 3, 3, 2, 3, 0});
  auto wrapped = TopK(x, Filled<int64_t>({}, {(int64_t{1} << 32) + 2}));
  REQUIRE(wrapped.ok());
  CHECK(Values<int32_t>((*wrapped)[1]) == std::vector<int32_t>{1, 2});
  auto zero = TopK(x, Filled<int64_t>({}, {int64_t{1} << 33}));
  REQUIRE(zero.ok());
  CHECK(DimsOf((*zero)[0]) == Dims{0});
}

TEST_CASE("TopKV2 with k = 0 or no rows gives empty outputs", "[kernels][topk]") {
  auto none = TopK(TieRows(), K(0));
  REQUIRE(none.ok());
  CHECK(DimsOf((*none)[0]) == Dims{2, 0});
  CHECK(DimsOf((*none)[1]) == Dims{2, 0});
  auto no_columns = TopK(Filled<float>({2, 0}, {}), K(0));
  REQUIRE(no_columns.ok());
  CHECK(DimsOf((*no_columns)[0]) == Dims{2, 0});
  auto no_rows = TopK(Filled<float>({0, 4}, {}), K(2));
  REQUIRE(no_rows.ok());
  CHECK(DimsOf((*no_rows)[1]) == Dims{0, 2});
}

TEST_CASE("TopKV2 rejects bad arguments with TF's messages", "[kernels][topk]") {
  CHECK_THAT(ErrorOf(TopK(TieRows(), K(7))),
             Contains("input must have at least k columns. Had 6, needed 7"));
  CHECK_THAT(ErrorOf(TopK(Filled<float>({0, 4}, {}), K(5))),
             Contains("input must have at least k columns. Had 4, needed 5"));
  CHECK_THAT(ErrorOf(TopK(TieRows(), K(-1))), Contains("Need k >= 0, got -1"));
  CHECK_THAT(ErrorOf(TopK(TieRows(), Filled<int16_t>({}, {-3}))), Contains("Need k >= 0, got -3"));
  CHECK_THAT(ErrorOf(TopK(TieRows(), Vec<int32_t>({1}))), Contains("k must be scalar, got shape [1]"));
  CHECK_THAT(ErrorOf(TopK(Filled<float>({}, {3}), K(0))),
             Contains("input must be >= 1-D, got shape []"));
  CHECK_THAT(ErrorOf(TopK(Filled<float>({40000}, {}), K(2), true, DT_INT16)),
             Contains("Second dimension of flattened input must be <= 32767, got 40000"));
  CHECK_THAT(ErrorOf(TopK(Filled<float>({40000, 1}, {}), K(1), true, DT_INT16)),
             Contains("First dimension of flattened input must be <= 32767, got 40000"));
}

}  // namespace
}  // namespace dflow
