// DynamicStitch and ParallelDynamicStitch (kernels/cpu/dynamic_stitch_op.cc) against TF
// 2.21's values and error texts (testdata/stitch_and_strided_slice_grad_tf.py): rows of
// several inputs merged by index, indices of any rank, rows no index names (zero),
// duplicates (the last wins), strings, an empty result, and every shape error.
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
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterDynamicStitchKernels);
}

const char* const kOps[] = {"DynamicStitch", "ParallelDynamicStitch"};

// `op` on indices[m] and data[m] (equal counts).
absl::StatusOr<Tensor> Stitch(const char* op, const std::vector<Tensor>& indices,
                              const std::vector<Tensor>& data) {
  OpTester t(op, Registry());
  t.Attr("N", static_cast<int64_t>(indices.size())).Attr("T", data[0].dtype());
  for (const Tensor& i : indices) t.Input(i);
  for (const Tensor& d : data) t.Input(d);
  return t.RunOne();
}

void CheckFloats(const absl::StatusOr<Tensor>& got, const Dims& shape,
                 const std::vector<float>& want) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(DimsOf(*got) == shape);
  CHECK(Values<float>(*got) == want);
}

TEST_CASE("DynamicStitch and ParallelDynamicStitch merge rows as TF does",
          "[kernels][dynamic_stitch]") {
  for (const char* op : kOps) {
    INFO(op);
    CheckFloats(Stitch(op, {Vec<int32_t>({0, 2}), Vec<int32_t>({1})},
                       {Filled<float>({2, 2}, {1, 2, 3, 4}), Filled<float>({1, 2}, {5, 6})}),
                {3, 2}, {1, 2, 5, 6, 3, 4});
    // Row 2 is named by no index: zero.
    CheckFloats(Stitch(op, {Vec<int32_t>({0, 3}), Vec<int32_t>({1})},
                       {Vec<float>({1, 2}), Vec<float>({5})}),
                {4}, {1, 5, 0, 2});
    // Indices of rank 2 and 0: data is indices' shape followed by the row's, [2].
    CheckFloats(Stitch(op, {Filled<int32_t>({2, 2}, {0, 1, 2, 3}), Filled<int32_t>({}, {4})},
                       {Filled<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Vec<float>({9, 10})}),
                {5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    CheckFloats(Stitch(op, {Filled<int32_t>({0}, {})}, {Filled<float>({0, 3}, {})}), {0, 3}, {});
    auto strings = Stitch(op, {Vec<int32_t>({1, 0})}, {Vec<std::string>({"a", "b"})});
    REQUIRE(strings.ok());
    CHECK(Values<std::string>(*strings) == std::vector<std::string>{"b", "a"});
  }
}

TEST_CASE("DynamicStitch: a later duplicate index overwrites an earlier one",
          "[kernels][dynamic_stitch]") {
  CheckFloats(Stitch("DynamicStitch", {Vec<int32_t>({0, 1, 2}), Vec<int32_t>({1})},
                     {Vec<float>({1, 2, 3}), Vec<float>({9})}),
              {3}, {1, 9, 3});
  CheckFloats(Stitch("DynamicStitch", {Vec<int32_t>({2, 0, 2})}, {Vec<float>({1, 2, 3})}), {3},
              {2, 0, 3});
}

TEST_CASE("DynamicStitch on int64 rows large enough to matter", "[kernels][dynamic_stitch]") {
  // Even indices from the first input, odd from the second, rows of 3.
  const int32_t half = 500;
  std::vector<int32_t> even, odd;
  std::vector<int64_t> a, b;
  for (int32_t i = 0; i < half; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
    for (int64_t k = 0; k < 3; ++k) {
      a.push_back(2 * i * 10 + k);
      b.push_back((2 * i + 1) * 10 + k);
    }
  }
  auto out = Stitch("DynamicStitch", {Vec<int32_t>(even), Vec<int32_t>(odd)},
                    {Filled<int64_t>({half, 3}, a), Filled<int64_t>({half, 3}, b)});
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{2 * half, 3});
  const std::vector<int64_t> got = Values<int64_t>(*out);
  for (int64_t r = 0; r < 2 * half; ++r) {
    for (int64_t k = 0; k < 3; ++k) REQUIRE(got[r * 3 + k] == r * 10 + k);
  }
}

void CheckInvalid(const absl::StatusOr<Tensor>& got, const std::string& text) {
  INFO(got.status().ToString());
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(got.status().message()).find(text) != std::string::npos);
}

TEST_CASE("DynamicStitch and ParallelDynamicStitch reject bad arguments with TF's errors",
          "[kernels][dynamic_stitch]") {
  for (const char* op : kOps) {
    INFO(op);
    // The position is within its own indices tensor.
    CheckInvalid(Stitch(op, {Vec<int32_t>({0, 2}), Vec<int32_t>({-1, 1})},
                        {Vec<float>({1, 2}), Vec<float>({5, 6})}),
                 "indices[0] is out of range");
    CheckInvalid(Stitch(op, {Vec<int32_t>({0, 2}), Vec<int32_t>({1})},
                        {Vec<float>({1, 2}), Vec<float>({5, 6})}),
                 "data[1].shape = [2] does not start with indices[1].shape = [1]");
    CheckInvalid(Stitch(op, {Vec<int32_t>({0, 2}), Vec<int32_t>({1})},
                        {Filled<float>({2, 1}, {1, 2}), Filled<float>({1, 2}, {5, 6})}),
                 "Need data[0].shape[1:] = data[1].shape[1:], got data[0].shape = [2,1], "
                 "data[1].shape = [1,2], indices[0].shape = [2], indices[1].shape = [1]");
    CheckInvalid(Stitch(op, {Vec<int32_t>({0, 2}), Vec<int32_t>({1})},
                        {Vec<float>({1, 2, 3}), Vec<float>({5})}),
                 "data[0].shape = [3] does not start with indices[0].shape = [2]");
  }
}

}  // namespace
}  // namespace dflow
