// Pad, PadV2, MirrorPad and Tile. Expected values from TF 2.21 (tf.raw_ops).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterPadTileKernels); }


// [[0,1,2],[3,4,5]]
const Tensor& X() {
  static const Tensor* x = new Tensor(Filled<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  return *x;
}

absl::StatusOr<Tensor> Pad(const std::string& op, const Tensor& input, const Tensor& paddings,
                           const char* mode = nullptr, const Tensor* constant = nullptr) {
  OpTester t(op, Registry());
  t.Attr("T", input.dtype()).Attr("Tpaddings", paddings.dtype()).Input(input).Input(paddings);
  if (mode != nullptr) t.Attr("mode", mode);
  if (constant != nullptr) t.Input(*constant);
  return t.RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("Pad surrounds the input with zeros or PadV2's constant", "[kernels][pad]") {
  SECTION("float zeros, int32 paddings") {
    auto out = Pad("Pad", X(), Filled<int32_t>({2, 2}, {1, 0, 0, 2}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{3, 5});
    CHECK(Values<float>(*out) ==
          std::vector<float>{0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 5, 0, 0});
  }
  SECTION("int64 with a constant, int64 paddings") {
    const Tensor c = Filled<int64_t>({}, {-7});
    auto out = Pad("PadV2", Filled<int64_t>({2}, {1, 2}), Filled<int64_t>({1, 2}, {2, 1}), nullptr, &c);
    REQUIRE(out.ok());
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>{-7, -7, 1, 2, -7});
  }
  SECTION("double and bool") {
    auto d = Pad("Pad", Filled<double>({1}, {2.5}), Filled<int32_t>({1, 2}, {1, 1}));
    REQUIRE(d.ok());
    CHECK(Values<double>(*d) == std::vector<double>{0, 2.5, 0});
    auto b = Pad("Pad", Filled<bool>({1}, {true}), Filled<int32_t>({1, 2}, {0, 1}));
    REQUIRE(b.ok());
    CHECK(Values<bool>(*b) == std::vector<bool>{true, false});
  }
  SECTION("no padding shares the input") {
    auto out = Pad("Pad", X(), Filled<int32_t>({2, 2}, {0, 0, 0, 0}));
    REQUIRE(out.ok());
    CHECK(out->SharesBufferWith(X()));
  }
}

TEST_CASE("MirrorPad reflects with and without the edge", "[kernels][pad]") {
  auto reflect = Pad("MirrorPad", X(), Filled<int32_t>({2, 2}, {1, 1, 2, 2}), "REFLECT");
  REQUIRE(reflect.ok());
  CHECK(DimsOf(*reflect) == Dims{4, 7});
  CHECK(Values<float>(*reflect) ==
        std::vector<float>{5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0,
                           5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0});
  auto symmetric = Pad("MirrorPad", X(), Filled<int32_t>({2, 2}, {1, 0, 2, 3}), "SYMMETRIC");
  REQUIRE(symmetric.ok());
  CHECK(DimsOf(*symmetric) == Dims{3, 8});
  CHECK(Values<float>(*symmetric) ==
        std::vector<float>{1, 0, 0, 1, 2, 2, 1, 0, 1, 0, 0, 1, 2, 2, 1, 0, 4, 3, 3, 4, 5, 5, 4, 3});
}

TEST_CASE("Pad and MirrorPad reject bad paddings with TF's messages", "[kernels][pad]") {
  CHECK_THAT(ErrorOf(Pad("Pad", X(), Filled<int32_t>({1, 2}, {1, 1}))),
             Contains("The first dimension of paddings must be the rank of inputs[1,2] [2,3]"));
  CHECK_THAT(ErrorOf(Pad("Pad", X(), Filled<int32_t>({2, 2}, {1, -1, 0, 0}))),
             Contains("Paddings must be non-negative: 1 -1"));
  CHECK_THAT(ErrorOf(Pad("Pad", X(), Filled<int32_t>({2}, {1, 1}))),
             Contains("paddings must be a matrix with 2 columns: [2]"));
  const Tensor two = Filled<float>({2}, {1, 2});
  CHECK_THAT(ErrorOf(Pad("PadV2", X(), Filled<int32_t>({2, 2}, {1, 1, 0, 0}), nullptr, &two)),
             Contains("constant_values must be a scalar. Found: [2]"));
  CHECK_THAT(ErrorOf(Pad("MirrorPad", X(), Filled<int32_t>({2, 2}, {2, 0, 0, 0}), "REFLECT")),
             Contains("paddings must be less than the dimension size: 2, 0 not less than 2"));
  CHECK_THAT(ErrorOf(Pad("MirrorPad", X(), Filled<int32_t>({2, 2}, {3, 0, 0, 0}), "SYMMETRIC")),
             Contains("paddings must be no greater than the dimension size: 3, 0 greater than 2"));
}

absl::StatusOr<Tensor> Tile(const Tensor& input, const Tensor& multiples) {
  return OpTester("Tile", Registry())
      .Attr("T", input.dtype())
      .Attr("Tmultiples", multiples.dtype())
      .Input(input)
      .Input(multiples)
      .RunOne();
}

TEST_CASE("Tile repeats the input along each dimension", "[kernels][tile]") {
  auto out = Tile(X(), Filled<int32_t>({2}, {2, 2}));
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{4, 6});
  CHECK(Values<float>(*out) == std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5,
                                                  0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  auto strings = Tile(Filled<std::string>({2}, {"a", "b"}), Filled<int64_t>({1}, {2}));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"a", "b", "a", "b"});
  auto zero = Tile(X(), Filled<int32_t>({2}, {0, 3}));
  REQUIRE(zero.ok());
  CHECK(DimsOf(*zero) == Dims{0, 9});
  auto scalar = Tile(Filled<int32_t>({}, {4}), Filled<int32_t>({0}, {}));
  REQUIRE(scalar.ok());
  CHECK(scalar->scalar<int32_t>() == 4);
}

TEST_CASE("Tile rejects bad multiples with TF's messages", "[kernels][tile]") {
  CHECK_THAT(ErrorOf(Tile(X(), Filled<int32_t>({1}, {1}))),
             Contains("Expected multiples argument to be a vector of length 2 but got length 1"));
  CHECK_THAT(ErrorOf(Tile(X(), Filled<int32_t>({2}, {1, -1}))),
             Contains("Expected multiples[1] >= 0, but got -1"));
  CHECK_THAT(ErrorOf(Tile(X(), Filled<int32_t>({1, 2}, {1, 1}))),
             Contains("Expected multiples to be 1-D, but got shape [1,2]"));
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

// Sizes from input values are checked before anything is built for them: an output too
// big to allocate is RESOURCE_EXHAUSTED (TF's answer), one whose dims overflow int64 is
// INVALID_ARGUMENT, and neither throws nor crashes (issue 15).
TEST_CASE("Huge paddings and multiples are errors, never crashes", "[kernels][pad][tile]") {
  const Tensor x = Filled<float>({2}, {1, 2});
  auto padded = Pad("Pad", x, Filled<int64_t>({1, 2}, {int64_t{1} << 62, 0}));
  CHECK(padded.status().code() == absl::StatusCode::kResourceExhausted);
  auto overflow = Pad("Pad", x, Filled<int64_t>({1, 2}, {int64_t{1} << 62, int64_t{3} << 61}));
  CHECK(overflow.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(overflow.status().message(), "output dimension 0 overflows"));
  auto mirrored = Pad("MirrorPad", x, Filled<int64_t>({1, 2}, {int64_t{1} << 62, 0}), "SYMMETRIC");
  CHECK(mirrored.status().code() == absl::StatusCode::kInvalidArgument);
  auto tiled = Tile(Filled<float>({2, 2}, {1, 2, 3, 4}),
                    Filled<int64_t>({2}, {int64_t{1} << 30, int64_t{1} << 30}));
  CHECK(tiled.status().code() == absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace dflow
