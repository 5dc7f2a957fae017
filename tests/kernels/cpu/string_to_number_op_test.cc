// StringToNumber. Expected values and messages from TF 2.21 (tf.raw_ops.StringToNumber).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterStringToNumberKernels); }

template <typename T>
absl::StatusOr<Tensor> ToNumber(const std::vector<std::string>& s) {
  return OpTester("StringToNumber", Registry())
      .Attr("out_type", DataTypeOf<T>())
      .Input(Vec<std::string>(s))
      .RunOne();
}

template <typename T>
std::vector<T> Parsed(const std::vector<std::string>& s) {
  auto out = ToNumber<T>(s);
  REQUIRE(out.ok());
  return Values<T>(*out);
}

template <typename T>
std::string ErrorOf(const std::string& s) {
  auto out = ToNumber<T>({s});
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(out.status().message());
}

TEST_CASE("StringToNumber parses floats as TF", "[kernels][strings]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(Parsed<float>({"1.5", "  2.5  ", "-3", "+4", "0x1A", "0X1a", "inf", "-INF", "infinity",
                       "1e5", "1E-2", ".5", "5.", "0x1.8p1", "010", "1e400", "\t7\n", "-0x10",
                       "+.5e+3", "3.4028235e38", "3.4028236e38", "1e-46", "16777217",
                       "12345678901234567890123456789012"}) ==
        std::vector<float>{1.5f, 2.5f, -3, 4, 26, 26, inf, -inf, inf, 1e5f, 0.01f, 0.5f, 5, 3, 10,
                           inf, 7, -16, 500, 3.4028235e38f, inf, 0, 16777216,
                           1.2345679e+31f});
  CHECK(std::isnan(Parsed<float>({"NaN"})[0]));
  CHECK(Parsed<double>({"0.1", "-0x10", "1e400"}) ==
        std::vector<double>{0.1, -16, std::numeric_limits<double>::infinity()});
  for (const char* bad : {"1e", ".", "", " ", "1 2", "- 1", "1,5", "+-1", "0x", "1.5f", "1_000"}) {
    CHECK(ErrorOf<float>(bad) ==
          std::string("StringToNumber: StringToNumberOp could not correctly convert string: ") + bad);
    CHECK(ErrorOf<double>(bad) ==
          std::string("StringToNumber: StringToNumberOp could not correctly convert string: ") + bad);
  }
}

TEST_CASE("StringToNumber parses base-10 integers as TF", "[kernels][strings]") {
  CHECK(Parsed<int32_t>({"12", " 12 ", "-12", "+12", "2147483647", "-2147483648", "012", "\t5\n"}) ==
        std::vector<int32_t>{12, 12, -12, 12, 2147483647, -2147483647 - 1, 12, 5});
  CHECK(Parsed<int64_t>({"2147483648", "9223372036854775807", "-9223372036854775808"}) ==
        std::vector<int64_t>{2147483648, std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min()});
  CHECK(Parsed<uint32_t>({"+12", "4294967295"}) == std::vector<uint32_t>{12, 4294967295u});
  CHECK(Parsed<uint64_t>({"18446744073709551615"}) ==
        std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()});
  const std::string prefix = "StringToNumber: StringToNumberOp could not correctly convert string: ";
  for (const char* bad : {"2147483648", "-2147483649", "0x10", "", "1.0", "- 1", "-"}) {
    CHECK(ErrorOf<int32_t>(bad) == prefix + bad);
  }
  CHECK(ErrorOf<int64_t>("9223372036854775808") == prefix + "9223372036854775808");
  CHECK(ErrorOf<uint32_t>("-12") == prefix + "-12");
  CHECK(ErrorOf<uint32_t>("4294967296") == prefix + "4294967296");
  CHECK(ErrorOf<uint64_t>("18446744073709551616") == prefix + "18446744073709551616");
}

TEST_CASE("StringToNumber prints a string up to its NUL and keeps the shape", "[kernels][strings]") {
  CHECK(ErrorOf<float>(std::string("1\0x", 3)) ==
        "StringToNumber: StringToNumberOp could not correctly convert string: 1");
  auto matrix = OpTester("StringToNumber", Registry())
                    .Attr("out_type", DT_INT32)
                    .Input(Filled<std::string>({2, 2}, {"1", "2", "3", "4"}))
                    .RunOne();
  REQUIRE(matrix.ok());
  CHECK(testing::DimsOf(*matrix) == std::vector<int64_t>{2, 2});
  CHECK(Values<int32_t>(*matrix) == std::vector<int32_t>{1, 2, 3, 4});
}

}  // namespace
}  // namespace dflow
