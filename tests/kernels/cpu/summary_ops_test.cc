// ScalarSummary and MergeSummary. Expected bytes are TF 2.21's serialized Summary protos
// (tf.raw_ops.ScalarSummary / MergeSummary .numpy()), which the kernels must reproduce
// byte for byte.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterSummaryKernels); }

// A string literal's bytes, embedded NULs included.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// b'\n\x0b\n\x04loss\x15\x00\x00\x00?\n\n\n\x03acc\x15\x00\x00\x00@'
const std::string kLossAcc = Bytes("\n\x0b\n\x04loss\x15\x00\x00\x00?\n\n\n\x03"
                                   "acc\x15\x00\x00\x00@");
// b'\n\x08\n\x01x\x15\x00\x00P@'
const std::string kX = Bytes("\n\x08\n\x01x\x15\x00\x00P@");
// b'\n\x08\n\x01a\x15\x00\x00\x80?\n\x08\n\x01b\x15\x00\x00\x00\xc0'
const std::string kAB = Bytes("\n\x08\n\x01"
                              "a\x15\x00\x00\x80?\n\x08\n\x01"
                              "b\x15\x00\x00\x00\xc0");
// b'\n\x05\x15\x00\x00\x00\x00' (an empty tag is left out)
const std::string kUntagged = Bytes("\n\x05\x15\x00\x00\x00\x00");

template <typename T>
absl::StatusOr<Tensor> ScalarSummary(const Tensor& tags, const Tensor& values) {
  return OpTester("ScalarSummary", Registry())
      .Attr("T", DataTypeOf<T>())
      .Input(tags)
      .Input(values)
      .RunOne();
}

std::string SummaryOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE(result.ok());
  REQUIRE(DimsOf(*result) == Dims{});
  return result->data<std::string>()[0];
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("ScalarSummary writes TF's Summary bytes", "[kernels][summary]") {
  CHECK(SummaryOf(ScalarSummary<float>(Filled<std::string>({2}, {"loss", "acc"}),
                                       Filled<float>({2}, {0.5f, 2.0f}))) == kLossAcc);
  CHECK(SummaryOf(ScalarSummary<double>(Filled<std::string>({}, {"x"}),
                                        Filled<double>({}, {3.25}))) == kX);
  CHECK(SummaryOf(ScalarSummary<int32_t>(Filled<std::string>({1, 2}, {"a", "b"}),
                                         Filled<int32_t>({1, 2}, {1, -2}))) == kAB);
  CHECK(SummaryOf(ScalarSummary<float>(Filled<std::string>({}, {""}),
                                       Filled<float>({}, {0.0f}))) == kUntagged);
}

TEST_CASE("ScalarSummary needs tags and values of one shape", "[kernels][summary]") {
  CHECK_THAT(ErrorOf(ScalarSummary<float>(Filled<std::string>({2}, {"a", "b"}),
                                          Filled<float>({3}, {1, 2, 3}))),
             Contains("tags and values are not the same shape: [2] != [3]"));
  CHECK_THAT(ErrorOf(ScalarSummary<float>(Filled<std::string>({}, {"a"}),
                                          Filled<float>({3}, {1, 2, 3}))),
             Contains("tags and values are not the same shape: [] != [3] (tag 'a')"));
}

absl::StatusOr<Tensor> Merge(const std::vector<Tensor>& inputs) {
  OpTester tester("MergeSummary", Registry());
  tester.Attr("N", static_cast<int64_t>(inputs.size()));
  for (const Tensor& input : inputs) tester.Input(input);
  return tester.RunOne();
}

Tensor Scalar(const std::string& s) { return Filled<std::string>({}, {s}); }

TEST_CASE("MergeSummary concatenates the values of every input", "[kernels][summary]") {
  CHECK(SummaryOf(Merge({Scalar(kLossAcc), Scalar(kX)})) == kLossAcc + kX);
  CHECK(SummaryOf(Merge({Filled<std::string>({2}, {kX, kAB})})) == kX + kAB);
  CHECK(SummaryOf(Merge({Scalar(kUntagged), Scalar(kUntagged)})) == kUntagged + kUntagged);
  CHECK(SummaryOf(Merge({Scalar("")})).empty());
}

TEST_CASE("MergeSummary rejects duplicate tags and garbage", "[kernels][summary]") {
  CHECK_THAT(ErrorOf(Merge({Scalar(kLossAcc), Scalar(kLossAcc)})),
             Contains("Duplicate tag loss found in summary inputs "));
  CHECK_THAT(ErrorOf(Merge({Scalar(kLossAcc), Scalar("\xff\xff")})),
             Contains("Could not parse one of the summary inputs"));
}

}  // namespace
}  // namespace dflow
