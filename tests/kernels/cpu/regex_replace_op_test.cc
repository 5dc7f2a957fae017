// StaticRegexReplace and RegexReplace. Expected strings and messages from TF 2.21
// (tf.raw_ops on CPU; its RE2 and the system's agree on these).
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterRegexReplaceKernels); }

absl::StatusOr<Tensor> Static(const Tensor& input, const char* pattern, const char* rewrite,
                              bool global = true) {
  return OpTester("StaticRegexReplace", Registry())
      .Attr("pattern", pattern)
      .Attr("rewrite", rewrite)
      .Attr("replace_global", global)
      .Input(input)
      .RunOne();
}

absl::StatusOr<Tensor> Dynamic(const Tensor& input, const Tensor& pattern, const Tensor& rewrite,
                               bool global = true) {
  return OpTester("RegexReplace", Registry())
      .Attr("replace_global", global)
      .Input(input)
      .Input(pattern)
      .Input(rewrite)
      .RunOne();
}

Tensor Scalar(const std::string& s) { return Filled<std::string>({}, {s}); }

Strings StaticOk(const Strings& input, const char* pattern, const char* rewrite, bool global = true) {
  auto out = Static(Vec<std::string>(input), pattern, rewrite, global);
  REQUIRE(out.ok());
  return Values<std::string>(*out);
}

TEST_CASE("StaticRegexReplace replaces as RE2 does", "[kernels][strings]") {
  CHECK(StaticOk({"hello world", "aaa", ""}, "o", "0") == Strings{"hell0 w0rld", "aaa", ""});
  CHECK(StaticOk({"hello world", "aaa"}, "a|o", "X", false) == Strings{"hellX world", "Xaa"});
  CHECK(StaticOk({"john smith", "ab"}, R"((\w+) (\w+))", R"(\2 \1)") ==
        Strings{"smith john", "ab"});
  CHECK(StaticOk({"abc"}, "", "-") == Strings{"-a-b-c-"});
  CHECK(StaticOk({"abc"}, "x*", "-") == Strings{"-a-b-c-"});
  CHECK(StaticOk({"abc"}, "b", R"(\0\0\\)") == Strings{"abb\\c"});
  CHECK(StaticOk({"abc"}, "b", R"(\2)") == Strings{"abc"});   // bad rewrite: unchanged
  CHECK(StaticOk({"abc"}, "b", "\\") == Strings{"ac"});
  CHECK(StaticOk({"aXbXc"}, "X", R"(\n)") == Strings{"abc"});  // bad rewrite drops matches
  CHECK(StaticOk({"abc"}, "(?P<n>b)", R"(\1\1)") == Strings{"abbc"});
  CHECK(StaticOk({"h\xc3\xa9llo"}, ".", "x") == Strings{"xxxxx"});  // UTF-8 characters
  CHECK(StaticOk({"a\xff" "b"}, ".", "x") == Strings{"x\xffx"});
  auto matrix = Static(Filled<std::string>({2, 2}, {"ab", "b", "bb", "c"}), "b", "Z");
  REQUIRE(matrix.ok());
  CHECK(testing::DimsOf(*matrix) == std::vector<int64_t>{2, 2});
  CHECK(Values<std::string>(*matrix) == Strings{"aZ", "Z", "ZZ", "c"});
}

TEST_CASE("StaticRegexReplace rejects a bad pattern in TF's words", "[kernels][strings]") {
  const Tensor x = Vec<std::string>({"abc"});
  auto open = Static(x, "(", "-");
  REQUIRE_FALSE(open.ok());
  CHECK(open.status().message() == "Invalid pattern: (, error: missing ): (");
  CHECK(Static(x, "[a-", "-").status().message() == "Invalid pattern: [a-, error: missing ]: [a-");
  CHECK(Static(x, "a++", "-").status().message() ==
        "Invalid pattern: a++, error: bad repetition operator: ++");
  CHECK(Static(x, "a{1001}", "-").status().message() ==
        "Invalid pattern: a{1001}, error: invalid repetition size: {1001}");
  CHECK(Static(x, R"(\8)", "-").status().message() ==
        R"(Invalid pattern: \8, error: invalid escape sequence: \8)");
}

TEST_CASE("RegexReplace takes pattern and rewrite as scalar inputs", "[kernels][strings]") {
  const Tensor x = Vec<std::string>({"hello world", "aaa"});
  auto global = Dynamic(x, Scalar("a|o"), Scalar("X"));
  REQUIRE(global.ok());
  CHECK(Values<std::string>(*global) == Strings{"hellX wXrld", "XXX"});
  auto first = Dynamic(x, Scalar("a|o"), Scalar("X"), false);
  REQUIRE(first.ok());
  CHECK(Values<std::string>(*first) == Strings{"hellX world", "Xaa"});
  auto bad = Dynamic(x, Scalar("("), Scalar("-"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "RegexReplace: Invalid pattern: (, error: missing ): (");
  CHECK(Dynamic(x, Vec<std::string>({"a"}), Scalar("x")).status().message() ==
        "RegexReplace: Pattern must be scalar, but received [1]");
  CHECK(Dynamic(x, Scalar("a"), Vec<std::string>({"x"})).status().message() ==
        "RegexReplace: Rewrite must be scalar, but received [1]");
}

}  // namespace
}  // namespace dflow
