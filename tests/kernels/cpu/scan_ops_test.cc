// Cumsum and Cumprod. Expected values and messages from TF 2.21
// (tf.raw_ops.Cumsum / Cumprod on CPU).
#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterScanKernels); }

absl::StatusOr<Tensor> Scan(const char* op, const Tensor& x, const Tensor& axis,
                            bool exclusive = false, bool reverse = false) {
  return OpTester(op, Registry())
      .Attr("T", x.dtype())
      .Attr("Tidx", axis.dtype())
      .Attr("exclusive", exclusive)
      .Attr("reverse", reverse)
      .Input(x)
      .Input(axis)
      .RunOne();
}

template <typename T>
Tensor Scalar(T v) {
  return Filled<T>({}, {v});
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

const Tensor& X() {  // [[1, 2, 3], [4, 5, 6]]
  static const Tensor x = Filled<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  return x;
}

TEST_CASE("Cumsum along the last axis with every flag", "[kernels][scan]") {
  const Tensor axis = Scalar<int32_t>(1);
  CHECK(Values<float>(*Scan("Cumsum", X(), axis)) == std::vector<float>{1, 3, 6, 4, 9, 15});
  CHECK(Values<float>(*Scan("Cumsum", X(), axis, false, true)) ==
        std::vector<float>{6, 5, 3, 15, 11, 6});
  CHECK(Values<float>(*Scan("Cumsum", X(), axis, true, false)) ==
        std::vector<float>{0, 1, 3, 0, 4, 9});
  CHECK(Values<float>(*Scan("Cumsum", X(), axis, true, true)) ==
        std::vector<float>{5, 3, 0, 11, 6, 0});
  CHECK(Values<float>(*Scan("Cumsum", X(), Scalar<int32_t>(-1))) ==
        std::vector<float>{1, 3, 6, 4, 9, 15});
}

TEST_CASE("Cumprod along the first axis with every flag", "[kernels][scan]") {
  const Tensor axis = Scalar<int64_t>(0);
  CHECK(Values<float>(*Scan("Cumprod", X(), axis)) == std::vector<float>{1, 2, 3, 4, 10, 18});
  CHECK(Values<float>(*Scan("Cumprod", X(), axis, false, true)) ==
        std::vector<float>{4, 10, 18, 4, 5, 6});
  CHECK(Values<float>(*Scan("Cumprod", X(), axis, true, false)) ==
        std::vector<float>{1, 1, 1, 1, 2, 3});
  CHECK(Values<float>(*Scan("Cumprod", X(), axis, true, true)) ==
        std::vector<float>{4, 5, 6, 1, 1, 1});
}

TEST_CASE("Cumsum rounds sequentially and wraps integers as TF", "[kernels][scan]") {
  auto f = Scan("Cumsum", Vec<float>(std::vector<float>(10, 0.1f)), Scalar<int32_t>(0));
  REQUIRE(f.ok());
  CHECK(Values<float>(*f)[6] == 0.7000000476837158f);
  CHECK(Values<float>(*f)[9] == 1.0000001192092896f);
  auto wrap = Scan("Cumsum", Vec<int32_t>({2147483647, 1}), Scalar<int32_t>(0));
  REQUIRE(wrap.ok());
  CHECK(Values<int32_t>(*wrap) == std::vector<int32_t>{2147483647, -2147483648});
  std::vector<Half> tenths(10, Half::FromFloat(0.1f));
  auto h = Scan("Cumsum", Vec<Half>(tenths), Scalar<int32_t>(0));
  REQUIRE(h.ok());
  const std::vector<float> want_h = {
      0.0999755859375f, 0.199951171875f, 0.2998046875f,  0.39990234375f, 0.5f,
      0.60009765625f,   0.7001953125f,   0.80029296875f, 0.900390625f,   1.0f};
  for (int i = 0; i < 10; ++i) CHECK(h->data<Half>()[i].ToFloat() == want_h[i]);
  std::vector<Bfloat16> b_tenths(10, Bfloat16::FromFloat(0.1f));
  auto b = Scan("Cumsum", Vec<Bfloat16>(b_tenths), Scalar<int32_t>(0));
  REQUIRE(b.ok());
  CHECK(b->data<Bfloat16>()[2].ToFloat() == 0.30078125f);
  CHECK(b->data<Bfloat16>()[9].ToFloat() == 1.0078125f);
  auto u16 = Scan("Cumprod", Vec<uint16_t>({300, 300}), Scalar<int32_t>(0));
  REQUIRE(u16.ok());
  CHECK(Values<uint16_t>(*u16) == std::vector<uint16_t>{300, 24464});  // 90000 mod 65536
}

TEST_CASE("Cumprod multiplies complex numbers", "[kernels][scan]") {
  using C = std::complex<float>;
  Tensor x = *Tensor::Allocate(TestCpuDevice()->allocator(), DT_COMPLEX64, TensorShape{2});
  x.data<C>()[0] = C(1, 1);
  x.data<C>()[1] = C(0, 1);
  auto out = Scan("Cumprod", x, Scalar<int32_t>(0));
  REQUIRE(out.ok());
  CHECK(out->data<C>()[1] == C(-1, 1));
}

TEST_CASE("Cumsum rejects bad axes in TF's words", "[kernels][scan]") {
  CHECK(ErrorOf(Scan("Cumsum", X(), Scalar<int32_t>(2))) ==
        "Cumsum: ScanOp: Expected scan axis in the range [-2, 2), but got 2");
  CHECK(ErrorOf(Scan("Cumsum", X(), Scalar<int32_t>(-3))) ==
        "Cumsum: ScanOp: Expected scan axis in the range [-2, 2), but got -1");
  CHECK(ErrorOf(Scan("Cumprod", X(), Vec<int32_t>({1}))) ==
        "Cumprod: ScanOp: axis must be a scalar, not [1]");
  CHECK(ErrorOf(Scan("Cumsum", Scalar<float>(3), Scalar<int32_t>(0))) ==
        "Cumsum: ScanOp: Expected scan axis in the range [0, 0), but got 0");
  auto empty = Scan("Cumsum", Filled<float>({0, 3}, {}), Scalar<int32_t>(1));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 3});
}

TEST_CASE("Cumsum on the pool matches the index rule", "[kernels][scan]") {
  auto out = Scan("Cumsum", Filled<int32_t>({300, 200}, std::vector<int32_t>(60000, 1)),
                  Scalar<int32_t>(1), /*exclusive=*/true);
  REQUIRE(out.ok());
  const std::vector<int32_t> v = Values<int32_t>(*out);
  int bad = 0;
  for (int i = 0; i < 300; ++i) {
    for (int j = 0; j < 200; ++j) bad += v[i * 200 + j] != j;
  }
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow
