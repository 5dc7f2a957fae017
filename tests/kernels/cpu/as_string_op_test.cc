// AsString. Expected strings and messages from TF 2.21 (tf.raw_ops.AsString on CPU).
#include <catch2/catch.hpp>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Strings = std::vector<std::string>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterAsStringKernels); }

struct Opts {
  int precision = -1;
  bool scientific = false;
  bool shortest = false;
  int width = -1;
  const char* fill = "";
  Opts& Precision(int v) { precision = v; return *this; }
  Opts& Scientific() { scientific = true; return *this; }
  Opts& Shortest() { shortest = true; return *this; }
  Opts& Width(int v) { width = v; return *this; }
  Opts& Fill(const char* v) { fill = v; return *this; }
};

absl::StatusOr<Tensor> AsString(const Tensor& input, const Opts& o = Opts()) {
  return OpTester("AsString", Registry())
      .Attr("T", input.dtype())
      .Attr("precision", o.precision)
      .Attr("scientific", o.scientific)
      .Attr("shortest", o.shortest)
      .Attr("width", o.width)
      .Attr("fill", o.fill)
      .Input(input)
      .RunOne();
}

Strings Text(const Tensor& input, const Opts& o = Opts()) {
  auto out = AsString(input, o);
  REQUIRE(out.ok());
  return Values<std::string>(*out);
}

std::string ErrorOf(const Tensor& input, const Opts& o) {
  auto out = AsString(input, o);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(out.status().message());
}

const float kInf = std::numeric_limits<float>::infinity();

TEST_CASE("AsString formats floats with TF's printf formats", "[kernels][strings]") {
  const Tensor x = Vec<float>({1.5f, -0.25f, 3.14159265f, 1e10f, 1e-7f, kInf, -kInf,
                               std::numeric_limits<float>::quiet_NaN()});
  CHECK(Text(x) == Strings{"1.500000", "-0.250000", "3.141593", "10000000000.000000", "0.000000",
                           "inf", "-inf", "nan"});
  CHECK(Text(x, Opts().Scientific()) ==
        Strings{"1.500000e+00", "-2.500000e-01", "3.141593e+00", "1.000000e+10", "1.000000e-07",
                "inf", "-inf", "nan"});
  CHECK(Text(x, Opts().Shortest()) ==
        Strings{"1.5", "-0.25", "3.14159", "1e+10", "1e-07", "inf", "-inf", "nan"});
  CHECK(Text(x, Opts().Precision(2).Width(10).Fill("0")) ==
        Strings{"0000001.50", "-000000.25", "0000003.14", "10000000000.00", "0000000.00",
                "       inf", "      -inf", "       nan"});
  CHECK(Text(x, Opts().Width(8).Fill("-"))[5] == "inf     ");
  CHECK(Text(Vec<double>({0.1, 123456789.0, 1e-5}), Opts().Precision(3).Shortest()) ==
        Strings{"0.1", "1.23e+08", "1e-05"});
  CHECK(Text(Vec<float>({2.5f, 3.5f}), Opts().Precision(0)) == Strings{"2", "4"});
  CHECK(Text(Vec<float>({2.0f}), Opts().Precision(0).Fill("#")) == Strings{"2."});
  CHECK(Text(Vec<float>({2.0f}), Opts().Width(10).Fill("+")) == Strings{" +2.000000"});
  CHECK(Text(Vec<float>({-0.0f})) == Strings{"-0.000000"});
  CHECK(Text(Vec<Half>({Half{0x3c66}, Half{0x7bff}})) == Strings{"1.099609", "65504.000000"});
  CHECK(Text(Vec<Bfloat16>({Bfloat16{0x3f8d}}), Opts().Shortest()) == Strings{"1.10156"});
}

TEST_CASE("AsString formats integers, bools, complex and strings", "[kernels][strings]") {
  const Tensor ints = Vec<int32_t>({1, -22, 333});
  CHECK(Text(ints, Opts().Width(5).Fill("0")) == Strings{"00001", "-0022", "00333"});
  CHECK(Text(ints, Opts().Fill("+")) == Strings{"+1", "-22", "+333"});
  CHECK(Text(ints, Opts().Width(6).Fill(" ")) == Strings{"     1", "   -22", "   333"});
  CHECK(Text(Vec<int8_t>({-128, 127})) == Strings{"-128", "127"});
  CHECK(Text(Vec<uint8_t>({255})) == Strings{"255"});
  CHECK(Text(Vec<int16_t>({-5}), Opts().Width(4).Fill("-")) == Strings{"-5  "});
  CHECK(Text(Vec<uint32_t>({4294967295u}), Opts().Width(12).Fill("0")) == Strings{"004294967295"});
  CHECK(Text(Vec<int64_t>({std::numeric_limits<int64_t>::min()})) ==
        Strings{"-9223372036854775808"});
  CHECK(Text(Vec<uint64_t>({std::numeric_limits<uint64_t>::max()})) ==
        Strings{"18446744073709551615"});
  CHECK(Text(Vec<bool>({true, false}), Opts().Width(7).Fill("0")) == Strings{"true", "false"});
  Tensor c64 = *Tensor::Allocate(testing::TestCpuDevice()->allocator(), DT_COMPLEX64,
                                 TensorShape({2}));
  const float parts[] = {1, 2, -0.5f, -1};
  std::copy(parts, parts + 4, static_cast<float*>(c64.raw_data()));
  CHECK(Text(c64) == Strings{"(1.000000,2.000000)", "(-0.500000,-1.000000)"});
  Tensor c128 = *Tensor::Allocate(testing::TestCpuDevice()->allocator(), DT_COMPLEX128,
                                  TensorShape({1}));
  const double dparts[] = {1, 2};
  std::copy(dparts, dparts + 2, static_cast<double*>(c128.raw_data()));
  CHECK(Text(c128, Opts().Precision(1).Width(6)) == Strings{"(   1.0,   2.0)"});
  const Tensor words = Vec<std::string>({"ab", "c"});
  CHECK(Text(words, Opts().Width(4)) == Strings{"  ab", "   c"});
  CHECK(Text(words, Opts().Width(4).Fill("-")) == Strings{"ab  ", "c   "});
  CHECK(Text(words, Opts().Width(4).Fill("0")) == Strings{"  ab", "   c"});
  CHECK(Text(Vec<std::string>({"abcdef"}), Opts().Precision(2)) == Strings{"abcdef"});
  CHECK(Text(Vec<std::string>({"abcdef"}), Opts().Precision(2).Width(8)) == Strings{"      ab"});
  auto matrix = AsString(Filled<int32_t>({2, 2}, {1, 2, 3, 4}));
  REQUIRE(matrix.ok());
  CHECK(testing::DimsOf(*matrix) == std::vector<int64_t>{2, 2});
}

TEST_CASE("AsString rejects bad attrs in TF's words", "[kernels][strings]") {
  CHECK(ErrorOf(Vec<int32_t>({1}), Opts().Precision(2)) ==
        "precision not supported for datatype int32");
  CHECK(ErrorOf(Vec<int32_t>({1}), Opts().Scientific()) ==
        "scientific and shortest format not supported for datatype int32");
  CHECK(ErrorOf(Vec<bool>({true}), Opts().Shortest()) ==
        "scientific and shortest format not supported for datatype bool");
  CHECK(ErrorOf(Vec<float>({1}), Opts().Fill("00")) == "Fill string must be one or fewer characters");
  CHECK(ErrorOf(Vec<float>({1}), Opts().Fill("x")) == "Fill argument not supported: \"x\"");
  CHECK(ErrorOf(Vec<float>({1}), Opts().Scientific().Shortest()) ==
        "Cannot select both scientific and shortest notation");
}

}  // namespace
}  // namespace dflow
