// --feed values: JSON numbers and nested lists, @files, conversion to the fed dtype, and
// the errors hostile input gets.
#include "tools/feed_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/proto_io.h"
#include "tools/npy.h"
#include "tools/tensor_printer.h"

namespace dflow {
namespace {

Allocator* TestAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

Tensor ParseOk(const std::string& json, DataType dtype) {
  absl::StatusOr<Tensor> tensor = ParseJsonTensor(json, dtype, TestAllocator());
  INFO(json << " -> " << tensor.status().ToString());
  REQUIRE(tensor.ok());
  REQUIRE(tensor->dtype() == dtype);
  return *tensor;
}

std::string ParseError(const std::string& json, DataType dtype) {
  absl::StatusOr<Tensor> tensor = ParseJsonTensor(json, dtype, TestAllocator());
  INFO(json);
  REQUIRE_FALSE(tensor.ok());
  CHECK(tensor.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(tensor.status().message());
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto flat = t.flat<T>();
  return std::vector<T>(flat.begin(), flat.end());
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST_CASE("A JSON number becomes a scalar of the fed dtype", "[tools][feed]") {
  Tensor t = ParseOk("2", DT_INT32);
  CHECK(t.shape() == TensorShape({}));
  CHECK(t.scalar<int32_t>() == 2);
  CHECK(ParseOk(" 2.5 ", DT_FLOAT).scalar<float>() == 2.5f);
  CHECK(ParseOk("-7", DT_INT64).scalar<int64_t>() == -7);
  CHECK(ParseOk("3", DT_DOUBLE).scalar<double>() == 3.0);
}

TEST_CASE("Nested lists give the shape, row-major", "[tools][feed]") {
  Tensor t = ParseOk("[[1,2,3],[4,5,6]]", DT_FLOAT);
  CHECK(t.shape() == TensorShape({2, 3}));
  CHECK(Values<float>(t) == std::vector<float>{1, 2, 3, 4, 5, 6});
  Tensor deep = ParseOk(" [ [ [1] , [2] ] ,\n [ [3],[4] ] ] ", DT_INT32);
  CHECK(deep.shape() == TensorShape({2, 2, 1}));
  CHECK(Values<int32_t>(deep) == std::vector<int32_t>{1, 2, 3, 4});
}

TEST_CASE("Empty lists give zero-sized dimensions", "[tools][feed]") {
  CHECK(ParseOk("[]", DT_FLOAT).shape() == TensorShape({0}));
  CHECK(ParseOk("[[],[]]", DT_FLOAT).shape() == TensorShape({2, 0}));
  CHECK(ParseOk("[[[]]]", DT_INT32).shape() == TensorShape({1, 1, 0}));
}

TEST_CASE("Ragged lists are rejected with their position", "[tools][feed]") {
  CHECK_THAT(ParseError("[[1,2],[3]]", DT_FLOAT), Catch::Contains("ragged"));
  CHECK_THAT(ParseError("[[1,2],[3]]", DT_FLOAT), Catch::Contains("character"));
  CHECK_THAT(ParseError("[1,[2]]", DT_FLOAT), Catch::Contains("ragged"));
  CHECK_THAT(ParseError("[[1],2]", DT_FLOAT), Catch::Contains("ragged"));
  CHECK_THAT(ParseError("[[],[1]]", DT_FLOAT), Catch::Contains("ragged"));
  CHECK_THAT(ParseError("[[[1]],[[]]]", DT_FLOAT), Catch::Contains("ragged"));
  CHECK_THAT(ParseError("[[[]],[1]]", DT_FLOAT), Catch::Contains("ragged"));
}

TEST_CASE("Nesting is limited to 254 levels, without deep recursion", "[tools][feed]") {
  const int limit = kMaxFeedNesting;
  const std::string ok = std::string(limit, '[') + "1" + std::string(limit, ']');
  CHECK(ParseOk(ok, DT_FLOAT).shape().dims() == limit);
  const std::string too_deep = std::string(limit + 1, '[') + "1" + std::string(limit + 1, ']');
  CHECK_THAT(ParseError(too_deep, DT_FLOAT), Catch::Contains("deeper than 254"));
  CHECK_THAT(ParseError(std::string(1000000, '['), DT_FLOAT), Catch::Contains("deeper"));
}

TEST_CASE("Malformed JSON is INVALID_ARGUMENT saying where", "[tools][feed]") {
  for (const char* bad : {"", " ", "[", "[1,", "[1 2]", "[1,]", "[,1]", "01", "1.", "-", "1e",
                          "1e+", ".5", "+1", "abc", "1 2", "[1]]", "[1]x", "tru", "nul",
                          "\"unterminated", "[1,2", "{}", "0x10", "--1"}) {
    CHECK_THAT(ParseError(bad, DT_FLOAT), Catch::Contains("malformed JSON at character"));
  }
}

TEST_CASE("Integers convert only when integral and in range", "[tools][feed]") {
  CHECK(ParseOk("2.0", DT_INT32).scalar<int32_t>() == 2);
  CHECK(ParseOk("1e3", DT_INT32).scalar<int32_t>() == 1000);
  CHECK_THAT(ParseError("2.5", DT_INT32), Catch::Contains("not an integer"));
  CHECK_THAT(ParseError("[1, 2.5]", DT_INT32), Catch::Contains("element 1"));
  CHECK_THAT(ParseError("300", DT_UINT8), Catch::Contains("out of range"));
  CHECK_THAT(ParseError("-1", DT_UINT8), Catch::Contains("out of range"));
  CHECK_THAT(ParseError("2147483648", DT_INT32), Catch::Contains("out of range"));
  CHECK(ParseOk("-2147483648", DT_INT32).scalar<int32_t>() ==
        std::numeric_limits<int32_t>::min());
  CHECK_THAT(ParseError("NaN", DT_INT32), Catch::Contains("not an integer"));
  CHECK_THAT(ParseError("1e30", DT_INT64), Catch::Contains("out of range"));
  CHECK(ParseOk("[-128, 127]", DT_INT8).flat<int8_t>()[0] == -128);
  CHECK(ParseOk("65535", DT_UINT16).scalar<uint16_t>() == 65535);
}

TEST_CASE("int64 and uint64 are parsed exactly beyond 2^53", "[tools][feed]") {
  CHECK(ParseOk("9007199254740993", DT_INT64).scalar<int64_t>() == 9007199254740993LL);
  CHECK(ParseOk("9223372036854775807", DT_INT64).scalar<int64_t>() ==
        std::numeric_limits<int64_t>::max());
  CHECK(ParseOk("-9223372036854775808", DT_INT64).scalar<int64_t>() ==
        std::numeric_limits<int64_t>::min());
  CHECK_THAT(ParseError("9223372036854775808", DT_INT64), Catch::Contains("out of range"));
  CHECK(ParseOk("18446744073709551615", DT_UINT64).scalar<uint64_t>() ==
        std::numeric_limits<uint64_t>::max());
  CHECK_THAT(ParseError("18446744073709551616", DT_UINT64), Catch::Contains("out of range"));
  CHECK_THAT(ParseError("99999999999999999999999999", DT_INT64), Catch::Contains("out of range"));
}

TEST_CASE("Huge numbers are errors, not infinities", "[tools][feed]") {
  CHECK_THAT(ParseError("1e400", DT_DOUBLE), Catch::Contains("too large"));
  CHECK_THAT(ParseError("-1e400", DT_FLOAT), Catch::Contains("too large"));
  CHECK_THAT(ParseError("1e39", DT_FLOAT), Catch::Contains("out of range"));
  CHECK(ParseOk("1e39", DT_DOUBLE).scalar<double>() == 1e39);
  // FLT_MAX printed with 9 digits is slightly above FLT_MAX and must round back to it.
  CHECK(ParseOk("3.40282347e+38", DT_FLOAT).scalar<float>() == std::numeric_limits<float>::max());
  CHECK(ParseOk("1e-400", DT_DOUBLE).scalar<double>() == 0.0);
  const std::string long_digits(5000, '7');
  CHECK(std::isfinite(ParseOk("0." + long_digits, DT_DOUBLE).scalar<double>()));
}

TEST_CASE("NaN and infinities are accepted for floats", "[tools][feed]") {
  Tensor t = ParseOk("[NaN, Infinity, -Infinity, nan, inf, -inf]", DT_FLOAT);
  std::vector<float> v = Values<float>(t);
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == std::numeric_limits<float>::infinity());
  CHECK(v[2] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(v[3]));
  CHECK(v[4] == std::numeric_limits<float>::infinity());
  CHECK(v[5] == -std::numeric_limits<float>::infinity());
}

TEST_CASE("-0 keeps its sign for floats and is 0 for integers", "[tools][feed]") {
  CHECK(std::signbit(ParseOk("-0", DT_FLOAT).scalar<float>()));
  CHECK(std::signbit(ParseOk("[-0]", DT_DOUBLE).flat<double>()[0]));
  CHECK(ParseOk("-0", DT_INT32).scalar<int32_t>() == 0);
  CHECK(ParseOk("-0", DT_UINT8).scalar<uint8_t>() == 0);
  CHECK(ParseOk("-0", DT_BOOL).scalar<bool>() == false);
}

TEST_CASE("The JSON strings NaN, Infinity and -Infinity read as numbers", "[tools][feed]") {
  // What --output=json writes for non-finite values.
  std::vector<double> v =
      Values<double>(ParseOk("[\"NaN\", \"Infinity\", \"-Infinity\"]", DT_DOUBLE));
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == std::numeric_limits<double>::infinity());
  CHECK(v[2] == -std::numeric_limits<double>::infinity());
  CHECK_THAT(ParseError("\"NaN\"", DT_INT32), Catch::Contains("not an integer"));
  CHECK_THAT(ParseError("\"nan\"", DT_FLOAT), Catch::Contains("not a number"));
  CHECK(ParseOk("[\"NaN\"]", DT_STRING).flat<std::string>()[0] == "NaN");
}

// The raw bits of a half or bfloat16 tensor.
std::vector<uint16_t> Bits(const Tensor& t) {
  const auto* data = static_cast<const uint16_t*>(t.raw_data());
  return std::vector<uint16_t>(data, data + t.NumElements());
}

TEST_CASE("Numbers round to float16 and bfloat16 through float32", "[tools][feed][half]") {
  // Expected bits: TF 2.21's tf.constant(value, tf.float16 / tf.bfloat16).
  CHECK(Bits(ParseOk("[1.5, -2, 65504, 65519, 0.1, -0.0, 2049, 1e-8, true]", DT_HALF)) ==
        std::vector<uint16_t>{0x3e00, 0xc000, 0x7bff, 0x7bff, 0x2e66, 0x8000, 0x6800, 0x0000,
                              0x3c00});
  CHECK(Bits(ParseOk("[1.5, -2, 65504, 0.1, 3.38e38, 16777217]", DT_BFLOAT16)) ==
        std::vector<uint16_t>{0x3fc0, 0xc000, 0x4780, 0x3dcd, 0x7f7e, 0x4b80});
  // 1 + 2^-11 + 2^-40 becomes the tie 1 + 2^-11 in float32, then rounds to even.
  CHECK(Bits(ParseOk("1.0004882812509095", DT_HALF)) == std::vector<uint16_t>{0x3c00});
  const Tensor specials = ParseOk("[NaN, \"-Infinity\", inf]", DT_HALF);
  CHECK(std::isnan(specials.flat<Half>()[0].ToFloat()));
  CHECK(Bits(specials)[1] == 0xfc00);
  CHECK(Bits(specials)[2] == 0x7c00);
}

TEST_CASE("Finite numbers that become infinite in float16 or bfloat16 are errors",
          "[tools][feed][half]") {
  CHECK_THAT(ParseError("[1, 65520]", DT_HALF),
             Catch::Contains("value 65520 (element 1) cannot be float16: out of range"));
  CHECK_THAT(ParseError("-1e5", DT_HALF), Catch::Contains("out of range"));
  CHECK_THAT(ParseError("3.4e38", DT_BFLOAT16),
             Catch::Contains("cannot be bfloat16: out of range"));
  CHECK_THAT(ParseError("1e39", DT_BFLOAT16), Catch::Contains("out of range"));
  CHECK_THAT(ParseError("\"x\"", DT_HALF), Catch::Contains("not a number"));
}

TEST_CASE("Every float16 and bfloat16 value round-trips through --output=json",
          "[tools][feed][half]") {
  for (DataType dtype : {DT_HALF, DT_BFLOAT16}) {
    Tensor all = *Tensor::Allocate(TestAllocator(), dtype, TensorShape({65536}));
    auto* bits = static_cast<uint16_t*>(all.raw_data());
    for (uint32_t b = 0; b <= 0xffff; ++b) bits[b] = static_cast<uint16_t>(b);
    const Tensor back = ParseOk(TensorValuesJson(all), dtype);
    const uint16_t exponent = dtype == DT_HALF ? 0x7c00 : 0x7f80;
    int wrong = 0;
    for (uint32_t b = 0; b <= 0xffff; ++b) {
      const uint16_t got = Bits(back)[b];
      if ((b & 0x7fff) > exponent) {  // NaNs come back as a NaN
        wrong += (got & 0x7fff) <= exponent;
      } else {
        wrong += got != b;
      }
    }
    INFO(DataTypeString(dtype));
    CHECK(wrong == 0);
  }
}

TEST_CASE("Bools take true, false, 0 and 1; numbers take true and false", "[tools][feed]") {
  CHECK(Values<bool>(ParseOk("[true, false, 1, 0, 1.0]", DT_BOOL)) ==
        std::vector<bool>{true, false, true, false, true});
  CHECK_THAT(ParseError("2", DT_BOOL), Catch::Contains("true, false, 0 or 1"));
  CHECK(Values<float>(ParseOk("[true, false]", DT_FLOAT)) == std::vector<float>{1, 0});
}

TEST_CASE("Strings feed string tensors only", "[tools][feed]") {
  Tensor t = ParseOk("[\"a\", \"b\\n\\u00e9\\\"\", \"\\ud83d\\ude00\"]", DT_STRING);
  REQUIRE(t.NumElements() == 3);
  CHECK(t.flat<std::string>()[0] == "a");
  CHECK(t.flat<std::string>()[1] == "b\n\xc3\xa9\"");
  CHECK(t.flat<std::string>()[2] == "\xf0\x9f\x98\x80");
  CHECK_THAT(ParseError("[1]", DT_STRING), Catch::Contains("expected a JSON string"));
  CHECK_THAT(ParseError("\"x\"", DT_FLOAT), Catch::Contains("not a number"));
  CHECK_THAT(ParseError("\"\\q\"", DT_STRING), Catch::Contains("escape"));
  CHECK_THAT(ParseError("\"\\u12\"", DT_STRING), Catch::Contains("hex"));
}

TEST_CASE("Dtypes without a conversion are refused", "[tools][feed]") {
  CHECK_THAT(ParseError("1", DT_RESOURCE), Catch::Contains("not supported"));
  CHECK_THAT(ParseError("1", DT_COMPLEX64), Catch::Contains("not supported"));
}

TEST_CASE("SplitFeedFlag splits at the first '='", "[tools][feed]") {
  absl::StatusOr<FeedFlag> flag = SplitFeedFlag("x:1=[1,2]");
  REQUIRE(flag.ok());
  CHECK(flag->name == "x:1");
  CHECK(flag->value == "[1,2]");
  flag = SplitFeedFlag("x=a=b");
  REQUIRE(flag.ok());
  CHECK(flag->value == "a=b");
  for (const char* bad : {"x", "=1", "x=", ""}) {
    INFO(bad);
    CHECK(SplitFeedFlag(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("ParseFeedValue names the feed in every error", "[tools][feed]") {
  absl::StatusOr<Tensor> t = ParseFeedValue("x", "[1,", DT_FLOAT, TestAllocator());
  REQUIRE_FALSE(t.ok());
  CHECK(absl::StartsWith(t.status().message(), "--feed x: malformed JSON"));
  t = ParseFeedValue("x", "@/nonexistent/file.npy", DT_FLOAT, TestAllocator());
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StartsWith(t.status().message(), "--feed x: "));
}

TEST_CASE("@file feeds read .npy (converted) and JSON files", "[tools][feed]") {
  Tensor doubles = *Tensor::Allocate(TestAllocator(), DT_DOUBLE, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) doubles.flat<double>()[i] = i + 0.5;
  const std::string npy = TempPath("feed_doubles.npy");
  REQUIRE(WriteNpyFile(npy, doubles).ok());
  absl::StatusOr<Tensor> t = ParseFeedValue("x", "@" + npy, DT_FLOAT, TestAllocator());
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->dtype() == DT_FLOAT);
  CHECK(t->shape() == TensorShape({2, 2}));
  CHECK(Values<float>(*t) == std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});

  t = ParseFeedValue("n", "@" + npy, DT_INT32, TestAllocator());
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(std::string(t.status().message()), Catch::Contains("not an integer"));
  CHECK_THAT(std::string(t.status().message()), Catch::Contains(npy));

  const std::string json = TempPath("feed.json");
  REQUIRE(WriteStringToFile(json, "[[1, 2],\n [3, 4]]\n").ok());
  t = ParseFeedValue("x", "@" + json, DT_INT64, TestAllocator());
  REQUIRE(t.ok());
  CHECK(Values<int64_t>(*t) == std::vector<int64_t>{1, 2, 3, 4});
}

TEST_CASE("@file feeds read float16 and bfloat16 .npy files", "[tools][feed][half]") {
  Tensor halves = *Tensor::Allocate(TestAllocator(), DT_HALF, TensorShape({3}));
  const std::vector<uint16_t> half_bits = {0x3e00, 0x7bff, 0x2e66};  // 1.5, 65504, ~0.1
  std::copy(half_bits.begin(), half_bits.end(), static_cast<uint16_t*>(halves.raw_data()));
  const std::string npy = TempPath("feed_halves.npy");
  REQUIRE(WriteNpyFile(npy, halves).ok());
  absl::StatusOr<Tensor> t = ParseFeedValue("x", "@" + npy, DT_HALF, TestAllocator());
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(Bits(*t) == half_bits);
  t = ParseFeedValue("x", "@" + npy, DT_FLOAT, TestAllocator());
  REQUIRE(t.ok());
  CHECK(Values<float>(*t) == std::vector<float>{1.5f, 65504.0f, 0.0999755859375f});
  t = ParseFeedValue("x", "@" + npy, DT_BFLOAT16, TestAllocator());
  REQUIRE(t.ok());
  CHECK(Bits(*t) == std::vector<uint16_t>{0x3fc0, 0x4780, 0x3dcd});

  // A float32 file fed to a float16 placeholder rounds; one that overflows is refused.
  Tensor floats = *Tensor::Allocate(TestAllocator(), DT_FLOAT, TensorShape({2}));
  floats.flat<float>()[0] = 0.1f;
  floats.flat<float>()[1] = 65520.0f;
  const std::string float_npy = TempPath("feed_floats.npy");
  REQUIRE(WriteNpyFile(float_npy, floats).ok());
  t = ParseFeedValue("x", "@" + float_npy, DT_BFLOAT16, TestAllocator());
  REQUIRE(t.ok());
  CHECK(Bits(*t) == std::vector<uint16_t>{0x3dcd, 0x4780});
  t = ParseFeedValue("x", "@" + float_npy, DT_HALF, TestAllocator());
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(std::string(t.status().message()),
             Catch::Contains("converting float32 to float16: value 65520 (element 1)"));
}

TEST_CASE("ConvertTensor keeps same-dtype tensors and checks every element", "[tools][feed]") {
  Tensor ints = ParseOk("[1, 2, 300]", DT_INT32);
  absl::StatusOr<Tensor> same = ConvertTensor(ints, DT_INT32, TestAllocator());
  REQUIRE(same.ok());
  CHECK(same->SharesBufferWith(ints));
  absl::StatusOr<Tensor> bytes = ConvertTensor(ints, DT_UINT8, TestAllocator());
  REQUIRE_FALSE(bytes.ok());
  CHECK_THAT(std::string(bytes.status().message()), Catch::Contains("element 2"));
  absl::StatusOr<Tensor> floats = ConvertTensor(ints, DT_FLOAT, TestAllocator());
  REQUIRE(floats.ok());
  CHECK(Values<float>(*floats) == std::vector<float>{1, 2, 300});
  absl::StatusOr<Tensor> bools = ConvertTensor(ParseOk("[0, 1]", DT_UINT8), DT_BOOL,
                                               TestAllocator());
  REQUIRE(bools.ok());
  CHECK(Values<bool>(*bools) == std::vector<bool>{false, true});
}

TEST_CASE("Floats read exactly as strtod rounds them", "[tools][feed]") {
  // Random bit patterns at full precision, short decimals and exponent forms: the
  // parser's from_chars must agree with strtod bit for bit.
  std::string json = "[";
  std::vector<double> expected;
  uint64_t state = 88172645463325252ull;
  for (int i = 0; i < 3000; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    double value = 0;
    // A finite double: any sign and mantissa, a biased exponent in [1, 2046].
    const uint64_t exponent = (state >> 3) % 2046 + 1;
    const uint64_t bits = (state & ~(uint64_t{0x7ff} << 52)) | (exponent << 52);
    std::memcpy(&value, &bits, sizeof(value));
    char text[40];
    const char* format = i % 3 == 0 ? "%.17g" : i % 3 == 1 ? "%.3g" : "%.9e";
    std::snprintf(text, sizeof(text), format, value);
    if (i > 0) json += ",";
    json += text;
    expected.push_back(std::strtod(text, nullptr));
  }
  json += "]";
  const std::vector<double> parsed = Values<double>(ParseOk(json, DT_DOUBLE));
  REQUIRE(parsed.size() == expected.size());
  int mismatches = 0;
  for (size_t i = 0; i < parsed.size(); ++i) mismatches += parsed[i] != expected[i];
  CHECK(mismatches == 0);
  // Underflow to zero and to a denormal, as strtod gives them.
  CHECK(ParseOk("4e-320", DT_DOUBLE).scalar<double>() == std::strtod("4e-320", nullptr));
  CHECK(ParseOk("-1e-999", DT_DOUBLE).scalar<double>() == 0.0);
}

TEST_CASE("A syntax error after an unconvertible element is reported first", "[tools][feed]") {
  // Elements convert as they are parsed; the first bad one is named only when the whole
  // text is well-formed, as before.
  CHECK_THAT(ParseError("[1, 2.5, 3", DT_INT32), Catch::Contains("malformed JSON"));
  CHECK_THAT(ParseError("[1, 2.5, [3]]", DT_INT32), Catch::Contains("ragged"));
  const std::string message = ParseError("[1, 2.5, 3, 4.5]", DT_INT32);
  CHECK_THAT(message, Catch::Contains("value 2.5 (element 1) cannot be int32: not an integer"));
}

TEST_CASE("A large feed parses into a packed tensor", "[tools][feed]") {
  std::string json = "[";
  const int n = 200000;
  for (int i = 0; i < n; ++i) absl::StrAppend(&json, i > 0 ? "," : "", i % 1000, ".5");
  json += "]";
  const Tensor t = ParseOk(json, DT_FLOAT);
  REQUIRE(t.NumElements() == n);
  CHECK(t.flat<float>()[0] == 0.5f);
  CHECK(t.flat<float>()[n - 1] == 999.5f);
  CHECK(ParseOk("[\"a\", \"\\u00e9\"]", DT_STRING).flat<std::string>()[1] == "\xc3\xa9");
}

}  // namespace
}  // namespace dflow
