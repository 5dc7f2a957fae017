// StringLength, StringLower, StringUpper. Expected values and messages from TF 2.21
// (tf.raw_ops on CPU).
#include <catch2/catch.hpp>
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
using Strings = std::vector<std::string>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterStringCaseLengthKernels);
}

absl::StatusOr<Tensor> Length(const Tensor& input, const char* unit) {
  return OpTester("StringLength", Registry()).Attr("unit", unit).Input(input).RunOne();
}

absl::StatusOr<Tensor> Case(const char* op, const Strings& input, const char* encoding) {
  return OpTester(op, Registry()).Attr("encoding", encoding).Input(Vec<std::string>(input)).RunOne();
}

TEST_CASE("StringLength counts bytes or UTF-8 characters", "[kernels][strings]") {
  const Tensor words = Vec<std::string>({"", "abc", "h\xc3\xa9llo", "\xe6\x97\xa5\xe6\x9c\xac",
                                         "\xff\xfe", "\xe6\x97"});
  auto bytes = Length(words, "BYTE");
  REQUIRE(bytes.ok());
  CHECK(Values<int32_t>(*bytes) == std::vector<int32_t>{0, 3, 6, 6, 2, 2});
  auto chars = Length(words, "UTF8_CHAR");
  REQUIRE(chars.ok());
  CHECK(Values<int32_t>(*chars) == std::vector<int32_t>{0, 3, 5, 2, 2, 1});
  auto matrix = Length(Filled<std::string>({2, 1}, {"a", "bb"}), "UTF8_CHAR");
  REQUIRE(matrix.ok());
  CHECK(DimsOf(*matrix) == std::vector<int64_t>{2, 1});
  CHECK(Values<int32_t>(*matrix) == std::vector<int32_t>{1, 2});
}

const Strings kMixed = {"Hello WORLD",
                        "\xc3\x80\xc3\x89\xc3\x8e stra\xc3\x9f" "e",                // ÀÉÎ straße
                        "\xce\x91\xce\x92\xce\x93 \xce\xa3 \xce\x9f\xce\x94\xce\x9f\xce\xa3",  // ΑΒΓ Σ ΟΔΟΣ
                        "\xc4\xb0stanbul",                                           // İstanbul
                        "\xc7\x85",                                                  // ǅ
                        "a\xff" "B",
                        "\xef\xac\x81"};                                             // ﬁ

TEST_CASE("StringLower and StringUpper without encoding change ASCII only",
          "[kernels][strings]") {
  auto lower = Case("StringLower", kMixed, "");
  REQUIRE(lower.ok());
  CHECK(Values<std::string>(*lower) ==
        Strings{"hello world", "\xc3\x80\xc3\x89\xc3\x8e stra\xc3\x9f" "e", kMixed[2], kMixed[3],
                kMixed[4], "a\xff" "b", kMixed[6]});
  auto upper = Case("StringUpper", kMixed, "");
  REQUIRE(upper.ok());
  CHECK(Values<std::string>(*upper) ==
        Strings{"HELLO WORLD", "\xc3\x80\xc3\x89\xc3\x8e STRA\xc3\x9f" "E", kMixed[2],
                "\xc4\xb0STANBUL", kMixed[4], "A\xff" "B", kMixed[6]});
}

TEST_CASE("StringLower and StringUpper with utf-8 map as ICU does", "[kernels][strings]") {
  auto lower = Case("StringLower", kMixed, "utf-8");
  REQUIRE(lower.ok());
  CHECK(Values<std::string>(*lower) ==
        Strings{"hello world", "\xc3\xa0\xc3\xa9\xc3\xae stra\xc3\x9f" "e",
                "\xce\xb1\xce\xb2\xce\xb3 \xcf\x83 \xce\xbf\xce\xb4\xce\xbf\xcf\x82",  // final ς
                "i\xcc\x87stanbul", "\xc7\x86", "a\xef\xbf\xbd" "b", "\xef\xac\x81"});
  auto upper = Case("StringUpper", kMixed, "utf-8");
  REQUIRE(upper.ok());
  CHECK(Values<std::string>(*upper) ==
        Strings{"HELLO WORLD", "\xc3\x80\xc3\x89\xc3\x8e STRASSE", kMixed[2], "\xc4\xb0STANBUL",
                "\xc7\x84", "A\xef\xbf\xbd" "B", "FI"});
}

TEST_CASE("StringLower rejects other encodings in TF's words", "[kernels][strings]") {
  auto latin = Case("StringLower", kMixed, "latin1");
  REQUIRE_FALSE(latin.ok());
  CHECK(latin.status().message() == "only utf-8 or '' (no encoding) is supported, received latin1");
  auto upper = Case("StringUpper", kMixed, "UTF-8");
  REQUIRE_FALSE(upper.ok());
  CHECK(upper.status().message() == "only utf-8 or '' (no encoding) is supported, received UTF-8");
}

}  // namespace
}  // namespace dflow
