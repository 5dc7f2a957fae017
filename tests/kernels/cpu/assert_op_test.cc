// Assert: silent when true; otherwise TF 2.21's exact "assertion failed: [..] [..]" text
// (Tensor::SummarizeValue): truncation by summarize, nested dims, float digits, escapes.
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

using testing::Filled;
using testing::Iota;
using testing::OpTester;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterAssertKernels); }

absl::Status RunAssert(const Tensor& condition, const std::vector<Tensor>& data,
                       int summarize = 3) {
  AttrValue types;
  for (const Tensor& t : data) types.mutable_list()->add_type(t.dtype());
  OpTester t("Assert", Registry());
  t.Attr("T", types).Attr("summarize", summarize).Input(condition);
  for (const Tensor& d : data) t.Input(d);
  return t.Run().status();
}

std::string Failure(const std::vector<Tensor>& data, int summarize = 3) {
  absl::Status s = RunAssert(Filled<bool>({}, {false}), data, summarize);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST_CASE("Assert passes when the condition is true", "[kernels][assert]") {
  CHECK(RunAssert(Filled<bool>({}, {true}), {Filled<std::string>({2}, {"x", "y"})}).ok());
}

TEST_CASE("Assert formats its data as TF does", "[kernels][assert]") {
  CHECK(Failure({Filled<float>({4}, {1.5f, 2.0f, 0.1f, 4.0f}), Filled<int32_t>({}, {7})}) ==
        "assertion failed: [1.5 2 0.1...] [7]");
  CHECK(Failure({Iota<int32_t>({2, 3}) , Filled<std::string>({}, {"a'b\n"}),
                 Filled<bool>({2}, {true, false})}) ==
        "assertion failed: [[0 1 2]...] [a\\'b\\n] [1 0]");
  CHECK(Failure({Iota<int32_t>({2, 3})}, 10) == "assertion failed: [[0 1 2][3 4 5]]");
  CHECK(Failure({Iota<int32_t>({2, 2}), Filled<float>({1, 2, 1}, {1, 2})}, -1) ==
        "assertion failed: [[0 1][2 3]] [[[1][2]]]");
}

TEST_CASE("Assert truncates nested dimensions as TF does", "[kernels][assert]") {
  CHECK(Failure({Iota<int32_t>({2, 3})}, 0) == "assertion failed: [...]");
  CHECK(Failure({Iota<int32_t>({2, 3})}, 4) == "assertion failed: [[0 1 2][3...]...]");
  CHECK(Failure({Iota<int32_t>({2, 2, 2})}, 3) == "assertion failed: [[[0 1][2...]]...]");
  CHECK(Failure({Iota<int32_t>({2, 2, 2})}, 5) ==
        "assertion failed: [[[0 1][2 3]][[4...]]...]");
}

TEST_CASE("Assert prints floats with TF's round-trip digits", "[kernels][assert]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(Failure({Filled<double>({6}, {1.0 / 3, std::nan(""), inf, -inf, 1e20, 0.1}),
                 Filled<float>({5}, {1.0f / 3, -std::nanf(""), 1e-7f, 100000.0f, 1234567.0f})},
                10) ==
        "assertion failed: [0.33333333333333331 nan inf -inf 1e+20 0.1] "
        "[0.333333343 -nan 1e-07 100000 1234567]");
  CHECK(Failure({Filled<Half>({1}, {Half::FromFloat(1.5f)}), Filled<int8_t>({1}, {-3}),
                 Filled<uint8_t>({1}, {200}), Filled<float>({2, 0, 3}, {}),
                 Filled<int64_t>({0}, {})}) == "assertion failed: [1.5] [-3] [200] [] []");
}

TEST_CASE("Assert requires a scalar condition", "[kernels][assert]") {
  for (const auto& [shape, text] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{2}, "[2]"}, {{1}, "[1]"}, {{1, 1}, "[1,1]"}}) {
    absl::Status s = RunAssert(Filled<bool>(shape, {true, true}), {Filled<int32_t>({}, {1})});
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()) == "In[0] should be a scalar: " + text);
  }
}

}  // namespace
}  // namespace dflow
