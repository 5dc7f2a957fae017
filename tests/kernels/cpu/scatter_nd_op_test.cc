// ScatterNd. Expected values and messages from TF 2.21 (tf.raw_ops.ScatterNd on CPU).
#include <catch2/catch.hpp>
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
using Catch::Matchers::Equals;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterScatterNdKernels); }

absl::StatusOr<Tensor> ScatterNd(const Tensor& indices, const Tensor& updates,
                                 const Tensor& shape, const char* policy = "") {
  return OpTester("ScatterNd", Registry())
      .Attr("T", updates.dtype())
      .Attr("Tindices", indices.dtype())
      .Attr("bad_indices_policy", policy)
      .Input(indices)
      .Input(updates)
      .Input(shape)
      .RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

Tensor Shape32(const std::vector<int32_t>& dims) { return Vec<int32_t>(dims); }

TEST_CASE("ScatterNd sums updates at their rows", "[kernels][scatter_nd]") {
  SECTION("elements, duplicates summed") {
    auto out = ScatterNd(Filled<int32_t>({3, 1}, {0, 2, 0}), Vec<float>({1, 2, 3}), Shape32({4}));
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{4, 0, 2, 0});
  }
  SECTION("depth 2 of 3: rows of a [2,2,2] int32") {
    auto out = ScatterNd(Filled<int64_t>({3, 2}, {0, 1, 1, 0, 0, 1}),
                         Filled<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}), Vec<int64_t>({2, 2, 2}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 2, 2});
    CHECK(Values<int32_t>(*out) == std::vector<int32_t>{0, 0, 6, 8, 3, 4, 0, 0});
  }
  SECTION("depth 1: whole rows of a double matrix") {
    auto out = ScatterNd(Filled<int32_t>({2, 1}, {0, 1}),
                         Filled<double>({2, 3}, {1, 2, 3, 3, 4, 5}), Shape32({3, 3}));
    REQUIRE(out.ok());
    CHECK(Values<double>(*out) == std::vector<double>{1, 2, 3, 3, 4, 5, 0, 0, 0});
  }
  SECTION("a batch of batches of full-depth rows") {
    auto out = ScatterNd(Filled<int32_t>({2, 2, 2}, {1, 1, 0, 2, 1, 1, 2, 0}),
                         Filled<int64_t>({2, 2}, {10, 20, 30, 40}), Shape32({3, 3}));
    REQUIRE(out.ok());
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>{0, 0, 20, 0, 40, 0, 40, 0, 0});
  }
  SECTION("rank 7") {
    auto out = ScatterNd(Filled<int32_t>({1, 7}, std::vector<int32_t>(7, 0)), Vec<float>({5}),
                         Shape32(std::vector<int32_t>(7, 1)));
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{5});
  }
  SECTION("float sums run in row order") {
    auto out = ScatterNd(Filled<int32_t>({3, 1}, {1, 1, 2}), Vec<float>({1e8f, 1, 1}),
                         Shape32({3}));
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{0, 1e8f, 1});
  }
}

TEST_CASE("ScatterNd adds with each dtype's operator+", "[kernels][scatter_nd]") {
  const Tensor thrice = Filled<int32_t>({3, 1}, {1, 1, 1});
  auto strings = ScatterNd(thrice, Vec<std::string>({"x", "y", "z"}), Shape32({3}));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"", "xyz", ""});
  auto bools = ScatterNd(thrice, Vec<bool>({true, false, false}), Shape32({3}));
  REQUIRE(bools.ok());
  CHECK(Values<bool>(*bools) == std::vector<bool>{false, true, false});
  const Tensor twice = Filled<int32_t>({2, 1}, {1, 1});
  auto u8 = ScatterNd(twice, Vec<uint8_t>({200, 100}), Shape32({3}));
  REQUIRE(u8.ok());
  CHECK(Values<uint8_t>(*u8) == std::vector<uint8_t>{0, 44, 0});
  auto i8 = ScatterNd(twice, Vec<int8_t>({127, 1}), Shape32({3}));
  REQUIRE(i8.ok());
  CHECK(Values<int8_t>(*i8) == std::vector<int8_t>{0, -128, 0});
  auto i32 = ScatterNd(twice, Vec<int32_t>({std::numeric_limits<int32_t>::max(), 1}),
                       Shape32({3}));
  REQUIRE(i32.ok());
  CHECK(Values<int32_t>(*i32) ==
        std::vector<int32_t>{0, std::numeric_limits<int32_t>::min(), 0});
  // half and bfloat16 round after every update: 1 + 0.0004 stays 1 (TF: 0x3c00, 0x3f80),
  // 3 + 0.0025 is 3.00195 in half (0x4201) and 3 in bfloat16 (0x4040).
  const Tensor rows = Filled<int32_t>({6, 1}, {1, 1, 1, 1, 0, 0});
  const std::vector<float> adds = {1, 0.0004f, 0.0004f, 0.0004f, 3, 2.5e-3f};
  std::vector<Half> halves;
  std::vector<Bfloat16> bf16s;
  for (float v : adds) {
    halves.push_back(Half::FromFloat(v));
    bf16s.push_back(Bfloat16::FromFloat(v));
  }
  auto half = ScatterNd(rows, Vec<Half>(halves), Shape32({3}));
  REQUIRE(half.ok());
  CHECK(half->data<Half>()[0].bits == 0x4201);
  CHECK(half->data<Half>()[1].bits == 0x3c00);
  CHECK(half->data<Half>()[2].bits == 0);
  auto bf16 = ScatterNd(rows, Vec<Bfloat16>(bf16s), Shape32({3}));
  REQUIRE(bf16.ok());
  CHECK(bf16->data<Bfloat16>()[0].bits == 0x4040);
  CHECK(bf16->data<Bfloat16>()[1].bits == 0x3f80);
  // complex64 1+2j, 3j and 1 at one place: 2+5j.
  Tensor c = *Tensor::Allocate(TestCpuDevice()->allocator(), DT_COMPLEX64, TensorShape({3}));
  const std::vector<float> parts = {1, 2, 0, 3, 1, 0};
  std::copy(parts.begin(), parts.end(), static_cast<float*>(c.raw_data()));
  auto complex = ScatterNd(thrice, c, Shape32({3}));
  REQUIRE(complex.ok());
  const float* cv = static_cast<const float*>(complex->raw_data());
  CHECK(std::vector<float>(cv, cv + 6) == std::vector<float>{0, 0, 2, 5, 0, 0});
}

TEST_CASE("ScatterNd with IGNORE skips rows outside the output", "[kernels][scatter_nd]") {
  const Tensor indices = Filled<int32_t>({5, 1}, {0, 2, 0, 5, -1});
  auto out = ScatterNd(indices, Vec<float>({1, 2, 3, 4, 5}), Shape32({4}), "IGNORE");
  REQUIRE(out.ok());
  CHECK(Values<float>(*out) == std::vector<float>{4, 0, 2, 0});
  auto rows = ScatterNd(Filled<int64_t>({3, 2}, {0, 7, 1, 1, 3, -2}), Vec<float>({1, 2, 3}),
                        Vec<int64_t>({4, 3}), "IGNORE");
  REQUIRE(rows.ok());
  CHECK(Values<float>(*rows) == std::vector<float>{0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("ScatterNd reports the last bad row under every other policy",
          "[kernels][scatter_nd]") {
  const Tensor indices = Filled<int32_t>({5, 1}, {0, 2, 0, 5, -1});
  for (const char* policy : {"", "DEFAULT", "ERROR"}) {
    INFO("policy " << policy);
    CHECK_THAT(ErrorOf(ScatterNd(indices, Vec<float>({1, 2, 3, 4, 5}), Shape32({4}), policy)),
               Equals("ScatterNd: indices[4] = [-1] does not index into shape [4]"));
  }
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({2, 2, 1}, {0, 7, 9, 0}),
                               Filled<float>({2, 2}, {1, 2, 3, 4}), Shape32({4}))),
             Contains("indices[1,0] = [9] does not index into shape [4]"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int64_t>({2, 2}, {0, 7, 1, 1}), Vec<float>({1, 2}),
                               Vec<int64_t>({4, 3}))),
             Contains("indices[0] = [0, 7] does not index into shape [4,3]"));
  auto unknown = ScatterNd(indices, Vec<float>({1, 2, 3, 4, 5}), Shape32({4}), "FOO");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(std::string(unknown.status().message()),
             Contains("Unknown bad indices handling attribute: FOO"));
}

TEST_CASE("ScatterNd handles empty indices and outputs as TF does", "[kernels][scatter_nd]") {
  auto zeros = ScatterNd(Filled<int32_t>({0, 1}, {}), Vec<float>({}), Shape32({3}));
  REQUIRE(zeros.ok());
  CHECK(Values<float>(*zeros) == std::vector<float>{0, 0, 0});
  auto empty = ScatterNd(Filled<int32_t>({0}, {}), Vec<float>({}), Shape32({0}));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0});
  auto no_columns = ScatterNd(Filled<int32_t>({0, 1}, {}), Filled<float>({0, 0}, {}),
                              Shape32({3, 0}));
  REQUIRE(no_columns.ok());
  CHECK(DimsOf(*no_columns) == Dims{3, 0});
  // Indices without updates count as "specified for an empty output".
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({1, 1}, {0}), Filled<float>({1, 0}, {}),
                               Shape32({3, 0}))),
             Contains("Indices and updates specified for empty output shape"));
  auto rank1 = ScatterNd(Filled<int32_t>({0}, {}), Filled<float>({0, 2}, {}), Shape32({0, 2}));
  REQUIRE(rank1.ok());
  CHECK(DimsOf(*rank1) == Dims{0, 2});
}

TEST_CASE("ScatterNd rejects bad shapes with TF's messages", "[kernels][scatter_nd]") {
  const Tensor two_rows = Filled<int32_t>({2, 1}, {0, 1});
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({}, {1}), Vec<float>({5}), Shape32({3}))),
             Contains("Indices shape must have rank at least one. Found:[]"));
  CHECK_THAT(ErrorOf(ScatterNd(Vec<int32_t>({1}), Filled<float>({}, {5}), Shape32({3}))),
             Contains("Updates shape must have rank at least one. Found:[]"));
  CHECK_THAT(ErrorOf(ScatterNd(two_rows, Vec<double>({1, 2}), Shape32({3, -1}))),
             Contains("Dimension -1 must be >= 0"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({1, 1}, {1}), Vec<float>({5}), Shape32({}))),
             Contains("Indices and updates specified for empty output shape"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({1, 0}, {}), Filled<float>({1, 3}, {5, 6, 7}),
                               Shape32({3}))),
             Contains("Indices and updates specified for empty output shape"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({3, 1}, {0, 0, 0}),
                               Filled<float>({2, 1}, {5, 6}), Shape32({3, 1}))),
             Contains("Dimensions [0,1) of indices[shape=[3,1]] must match dimensions [0,1) of "
                      "updates[shape=[2,1]]"));
  CHECK_THAT(ErrorOf(ScatterNd(two_rows, Filled<double>({2, 2}, {1, 2, 3, 4}), Shape32({3, 3}))),
             Contains("Dimensions [1,2) of input[shape=[3,3]] must match dimensions [1,2) of "
                      "updates[shape=[2,2]]"));
  CHECK_THAT(ErrorOf(ScatterNd(two_rows, Vec<double>({1, 2, 3}), Shape32({3}))),
             Contains("Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of "
                      "updates[shape=[3]]"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({1, 4}, {0, 0, 0, 0}), Vec<float>({1}),
                               Shape32({3, 3}))),
             Contains("Dimensions [4,2) of input[shape=[3,3]] must match dimensions [1,1) of "
                      "updates[shape=[1]]"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({1, 1}, {1}), Vec<float>({5}),
                               Filled<int32_t>({}, {3}))),
             Contains("Shape must be a vector"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({2, 1}, {0, 0}), Filled<float>({2, 3}, {}),
                               Shape32({0, 3}))),
             Contains("Indices and updates specified for empty output.  indices shape: [2,1]"));
  CHECK_THAT(ErrorOf(ScatterNd(Vec<int32_t>({1}), Vec<float>({5, 6}), Shape32({3, 2}))),
             Contains("Dimensions [0,1) of indices[shape=[1]] = 1 must match dimensions [0,1) "
                      "of updates[shape=[2]] = 2"));
  CHECK_THAT(ErrorOf(ScatterNd(Vec<int32_t>({1, 2}), Vec<float>({5, 6}), Shape32({3, 3, 2}))),
             Contains("Dimensions [1,3) of input[shape=[3,3,2]] must match dimensions [1,1) of "
                      "updates[shape=[2]]"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({0, 0}, {}), Filled<float>({0, 3}, {}),
                               Shape32({3}))),
             Contains("Only indices.shape[-1] values between 1 and 5 are currently supported.  "
                      "Requested rank: 0"));
  CHECK_THAT(ErrorOf(ScatterNd(Filled<int32_t>({1, 8}, std::vector<int32_t>(8, 0)),
                               Vec<float>({5}), Shape32(std::vector<int32_t>(8, 1)))),
             Contains("Requested rank: 8"));
}

}  // namespace
}  // namespace dflow
