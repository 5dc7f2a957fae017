// `dflow run` output: the exact JSON document of the contract, round-tripping numbers,
// and numpy-style text.
#include "tools/tensor_printer.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow {
namespace {

Allocator* TestAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

template <typename T>
Tensor Make(DataType dtype, std::vector<int64_t> dims, std::vector<T> values) {
  Tensor t = *Tensor::Allocate(TestAllocator(), dtype, TensorShape(dims));
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

TEST_CASE("The seed MatMul prints exactly the contract's JSON document", "[tools][printer]") {
  Tensor c = Make<float>(DT_FLOAT, {2, 2}, {22, 28, 49, 64});
  CHECK(OutputsJson({"c:0"}, {c}) ==
        "{\"outputs\": [{\"name\": \"c:0\", \"dtype\": \"float32\", \"shape\": [2, 2], "
        "\"values\": [22, 28, 49, 64]}]}\n");
  CHECK(OutputsJson({}, {}) == "{\"outputs\": []}\n");
}

TEST_CASE("Several outputs keep fetch order", "[tools][printer]") {
  Tensor a = Make<int32_t>(DT_INT32, {}, {5});
  Tensor b = Make<bool>(DT_BOOL, {2}, {true, false});
  CHECK(OutputsJson({"z:0", "m:1"}, {a, b}) ==
        "{\"outputs\": [{\"name\": \"z:0\", \"dtype\": \"int32\", \"shape\": [], \"values\": "
        "[5]}, {\"name\": \"m:1\", \"dtype\": \"bool\", \"shape\": [2], \"values\": [true, "
        "false]}]}\n");
}

TEST_CASE("Floats print shortest, integral ones as integers", "[tools][printer]") {
  CHECK(FormatFloat(22.0f) == "22");
  CHECK(FormatFloat(0.1f) == "0.1");
  CHECK(FormatFloat(-0.0f) == "-0");
  CHECK(FormatFloat(1e20f) == "1e+20");
  CHECK(FormatFloat(1.2634871f) == "1.2634871");
  // Strict JSON (RFC 8259 has no NaN): protobuf's JSON mapping, as strings.
  CHECK(FormatFloat(std::nanf("")) == "\"NaN\"");
  CHECK(FormatFloat(std::numeric_limits<float>::infinity()) == "\"Infinity\"");
  CHECK(FormatFloat(-std::numeric_limits<float>::infinity()) == "\"-Infinity\"");
  CHECK(FormatDouble(0.1) == "0.1");
  CHECK(FormatDouble(64.0) == "64");
  CHECK(FormatDouble(1.0 / 3) == "0.3333333333333333");
}

TEST_CASE("Printed floats read back to the same value", "[tools][printer]") {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    if (!std::isfinite(f)) continue;
    const std::string text = FormatFloat(f);
    INFO(text);
    CHECK(std::strtof(text.c_str(), nullptr) == f);
    uint64_t dbits = (static_cast<uint64_t>(rng()) << 32) | rng();
    double d;
    std::memcpy(&d, &dbits, sizeof(d));
    if (!std::isfinite(d)) continue;
    const std::string dtext = FormatDouble(d);
    CHECK(std::strtod(dtext.c_str(), nullptr) == d);
  }
}

TEST_CASE("Integers print exactly, bytes as numbers", "[tools][printer]") {
  CHECK(TensorValuesJson(Make<int64_t>(DT_INT64, {3}, {INT64_MIN, INT64_MAX, 9007199254740993LL})) ==
        "[-9223372036854775808, 9223372036854775807, 9007199254740993]");
  CHECK(TensorValuesJson(Make<uint64_t>(DT_UINT64, {1}, {UINT64_MAX})) ==
        "[18446744073709551615]");
  CHECK(TensorValuesJson(Make<uint8_t>(DT_UINT8, {2}, {65, 255})) == "[65, 255]");
  CHECK(TensorValuesJson(Make<int8_t>(DT_INT8, {2}, {-128, 10})) == "[-128, 10]");
  CHECK(TensorValuesJson(Make<double>(DT_DOUBLE, {0}, {})) == "[]");
}

TEST_CASE("NaN and infinities are JSON strings, and numpy's words in text",
          "[tools][printer]") {
  Tensor t = Make<double>(DT_DOUBLE, {3}, {std::nan(""), INFINITY, -INFINITY});
  CHECK(TensorValuesJson(t) == "[\"NaN\", \"Infinity\", \"-Infinity\"]");
  CHECK(TensorValuesText(t) == "[ nan  inf -inf]");
  Tensor f = Make<float>(DT_FLOAT, {2}, {NAN, 1.5f});
  CHECK(TensorValuesJson(f) == "[\"NaN\", 1.5]");
  CHECK(TensorValuesJson(Make<uint16_t>(DT_HALF, {2}, {0x7C00, 0x7E00})) ==
        "[\"Infinity\", \"NaN\"]");
  CHECK(TensorValuesJson(Make<float>(DT_COMPLEX64, {1}, {NAN, -INFINITY})) ==
        "[[\"NaN\", \"-Infinity\"]]");
}

TEST_CASE("Strings are escaped JSON strings", "[tools][printer]") {
  CHECK(JsonString("a\"b\\c\nd\te") == "\"a\\\"b\\\\c\\nd\\te\"");
  CHECK(JsonString(std::string("\x01", 1)) == "\"\\u0001\"");
  CHECK(JsonString("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
  CHECK(JsonString("\xff") == "\"\\u00ff\"");
  CHECK(JsonString("\xe2\x82") == "\"\\u00e2\\u0082\"");
  Tensor s = Make<std::string>(DT_STRING, {2}, {"x", "y\"z"});
  CHECK(TensorJson("s:0", s) ==
        "{\"name\": \"s:0\", \"dtype\": \"string\", \"shape\": [2], \"values\": [\"x\", "
        "\"y\\\"z\"]}");
}

TEST_CASE("half, bfloat16 and complex print as numbers", "[tools][printer]") {
  CHECK(TensorValuesJson(Make<uint16_t>(DT_HALF, {3}, {0x3C00, 0xC000, 0x3555})) ==
        "[1, -2, 0.33325195]");
  CHECK(TensorValuesJson(Make<uint16_t>(DT_BFLOAT16, {1}, {0x3F80})) == "[1]");
  CHECK(TensorValuesJson(Make<float>(DT_COMPLEX64, {1}, {1.5f, -2})) == "[[1.5, -2]]");
}

TEST_CASE("half and bfloat16 print their exact float values", "[tools][printer][half]") {
  // Subnormals, the extremes, and 0.1 rounded (tests/tools/feed_parser_test.cc reads
  // every value back).
  CHECK(TensorValuesJson(Make<Half>(DT_HALF, {5}, {{0x0001}, {0x03ff}, {0xfbff}, {0x2e66},
                                                   {0x8000}})) ==
        "[5.9604645e-08, 6.097555e-05, -65504, 0.099975586, -0]");
  CHECK(TensorValuesJson(Make<Bfloat16>(DT_BFLOAT16, {3}, {{0x0001}, {0x7f7f}, {0x3dcd}})) ==
        "[9.1835e-41, 3.3895314e+38, 0.100097656]");
  CHECK(TensorValuesText(Make<Half>(DT_HALF, {2, 2}, {{0x3e00}, {0x7c00}, {0xfe00}, {0x2e66}})) ==
        "[[        1.5         inf]\n [        nan 0.099975586]]");
}

TEST_CASE("Text output nests like numpy with aligned columns", "[tools][printer]") {
  CHECK(TensorValuesText(Make<float>(DT_FLOAT, {2, 2}, {22, 28, 49, 64})) ==
        "[[22 28]\n [49 64]]");
  CHECK(TensorValuesText(Make<int32_t>(DT_INT32, {2, 2}, {1, 10, 100, 2})) ==
        "[[  1  10]\n [100   2]]");
  CHECK(TensorValuesText(Make<int32_t>(DT_INT32, {2, 1, 2}, {1, 2, 3, 4})) ==
        "[[[1 2]]\n\n [[3 4]]]");
  CHECK(TensorValuesText(Make<int32_t>(DT_INT32, {}, {5})) == "5");
  CHECK(TensorValuesText(Make<float>(DT_FLOAT, {0}, {})) == "[]");
  CHECK(OutputsText({"c:0"}, {Make<float>(DT_FLOAT, {2}, {1.5f, 2})}) ==
        "c:0: float32 [2]\n[1.5   2]\n");
}

TEST_CASE("Large tensors are summarised in text, never in JSON", "[tools][printer]") {
  std::vector<int32_t> values(2000);
  for (int i = 0; i < 2000; ++i) values[i] = i;
  Tensor t = Make<int32_t>(DT_INT32, {2000}, values);
  CHECK(TensorValuesText(t) == "[   0    1    2 ... 1997 1998 1999]");
  Tensor m = Make<int32_t>(DT_INT32, {40, 50}, values);
  const std::string text = TensorValuesText(m);
  CHECK(absl::StartsWith(text, "[[   0    1    2 ...   47   48   49]\n [  50"));
  CHECK_THAT(text, Catch::Contains("\n ...\n"));
  CHECK(absl::EndsWith(text, "1997 1998 1999]]"));
  CHECK_FALSE(absl::StrContains(TensorValuesJson(t), "..."));
}

TEST_CASE("Unprintable dtypes give null values instead of failing", "[tools][printer]") {
  Tensor t;
  CHECK(TensorValuesJson(t) == "null");
  CHECK(TensorValuesText(t) == "<uninitialized>");
}

}  // namespace
}  // namespace dflow
