// StringSplitV2. Expected sparse outputs and messages from TF 2.21
// (tf.raw_ops.StringSplitV2 on CPU).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Strings = std::vector<std::string>;
using I64 = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterStringSplitKernels); }

struct Sparse {
  I64 indices;
  Strings values;
  I64 shape;
};

absl::StatusOr<std::vector<Tensor>> Split(const Tensor& input, const Tensor& sep, int maxsplit) {
  return OpTester("StringSplitV2", Registry()).Attr("maxsplit", maxsplit).Input(input).Input(sep).Run();
}

Sparse SplitOk(const Strings& input, const std::string& sep, int maxsplit = -1) {
  auto out = Split(Vec<std::string>(input), Filled<std::string>({}, {sep}), maxsplit);
  REQUIRE(out.ok());
  REQUIRE(out->size() == 3);
  CHECK(testing::DimsOf((*out)[0]) == I64{(*out)[1].NumElements(), 2});
  return {Values<int64_t>((*out)[0]), Values<std::string>((*out)[1]), Values<int64_t>((*out)[2])};
}

TEST_CASE("StringSplitV2 with a separator keeps empty tokens", "[kernels][strings]") {
  Sparse s = SplitOk({"a,b,,c", "", "x"}, ",");
  CHECK(s.indices == I64{0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 2, 0});
  CHECK(s.values == Strings{"a", "b", "", "c", "", "x"});
  CHECK(s.shape == I64{3, 4});
  s = SplitOk({"a<>b<>c", "<><>"}, "<>");
  CHECK(s.values == Strings{"a", "b", "c", "", "", ""});
  CHECK(s.shape == I64{2, 3});
  s = SplitOk({"aaa"}, "aa");
  CHECK(s.values == Strings{"", "a"});
  s = SplitOk({"a,b,c", "a,"}, ",", 1);
  CHECK(s.indices == I64{0, 0, 0, 1, 1, 0, 1, 1});
  CHECK(s.values == Strings{"a", "b,c", "a", ""});
  CHECK(s.shape == I64{2, 2});
  s = SplitOk({"a,b,c"}, ",", -5);
  CHECK(s.values == Strings{"a", "b", "c"});
}

TEST_CASE("StringSplitV2 with an empty separator splits on whitespace runs",
          "[kernels][strings]") {
  Sparse s = SplitOk({"  a  b c ", "", "   ", "d\te\nf"}, "");
  CHECK(s.indices == I64{0, 0, 0, 1, 0, 2, 3, 0, 3, 1, 3, 2});
  CHECK(s.values == Strings{"a", "b", "c", "d", "e", "f"});
  CHECK(s.shape == I64{4, 3});
  s = SplitOk({"a b c d", "a ", " a  b  "}, "", 1);
  CHECK(s.indices == I64{0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1});
  CHECK(s.values == Strings{"a", "b c d", "a", "", "a", "b  "});
  CHECK(s.shape == I64{3, 2});
  s = SplitOk({"a\x0b" "b\x0c" "c\rd"}, "");
  CHECK(s.values == Strings{"a", "b", "c", "d"});
  s = SplitOk({"a b"}, "", 0);
  CHECK(s.indices == I64{0, 0});
  CHECK(s.values == Strings{"a b"});
  CHECK(s.shape == I64{1, 1});
  s = SplitOk({}, ",");
  CHECK(s.values.empty());
  CHECK(s.shape == I64{0, 0});
}

TEST_CASE("StringSplitV2 checks shapes in TF's words", "[kernels][strings]") {
  auto scalar = Split(Filled<std::string>({}, {"a b"}), Filled<std::string>({}, {","}), -1);
  REQUIRE_FALSE(scalar.ok());
  CHECK(scalar.status().message() == "StringSplitV2: input must be a vector, got shape: []");
  auto sep = Split(Vec<std::string>({"a"}), Vec<std::string>({","}), -1);
  REQUIRE_FALSE(sep.ok());
  CHECK(sep.status().message() == "StringSplitV2: sep must be a scalar, got shape: [1]");
}

}  // namespace
}  // namespace dflow
