// Where (one input). Expected values and messages from TF 2.21
// (tf.raw_ops.Where on CPU).
#include <catch2/catch.hpp>
#include <complex>
#include <cstdint>
#include <limits>
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterWhereKernels); }

absl::StatusOr<Tensor> Where(const Tensor& condition) {
  return OpTester("Where", Registry()).Attr("T", condition.dtype()).Input(condition).RunOne();
}

TEST_CASE("Where lists the coordinates of true elements in row-major order", "[kernels][where]") {
  auto out = Where(Filled<bool>({2, 2}, {true, false, false, true}));
  REQUIRE(out.ok());
  CHECK(out->dtype() == DT_INT64);
  CHECK(DimsOf(*out) == Dims{2, 2});
  CHECK(Values<int64_t>(*out) == std::vector<int64_t>{0, 0, 1, 1});
  auto three = Where(Filled<int32_t>({2, 1, 3}, {0, 5, 0, 0, 0, -1}));
  REQUIRE(three.ok());
  CHECK(DimsOf(*three) == Dims{2, 3});
  CHECK(Values<int64_t>(*three) == std::vector<int64_t>{0, 0, 1, 1, 0, 2});
}

TEST_CASE("Where counts NaN as true and -0 as false", "[kernels][where]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = Where(Vec<float>({0.0f, 1.0f, -0.0f, nan}));
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{2, 1});
  CHECK(Values<int64_t>(*out) == std::vector<int64_t>{1, 3});
  auto bf = Where(Vec<Bfloat16>({Bfloat16::FromFloat(0), Bfloat16::FromFloat(2)}));
  REQUIRE(bf.ok());
  CHECK(Values<int64_t>(*bf) == std::vector<int64_t>{1});
  using C = std::complex<float>;
  Tensor c = *Tensor::Allocate(TestCpuDevice()->allocator(), DT_COMPLEX64, TensorShape{3});
  c.data<C>()[0] = C(0, 0);
  c.data<C>()[1] = C(0, 1);
  c.data<C>()[2] = C(1, 0);
  auto complex = Where(c);
  REQUIRE(complex.ok());
  CHECK(Values<int64_t>(*complex) == std::vector<int64_t>{1, 2});
}

TEST_CASE("Where handles empty inputs and rejects scalars and half", "[kernels][where]") {
  auto empty = Where(Filled<double>({2, 0, 3}, {}));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 3});
  auto none = Where(Vec<uint8_t>({0, 0}));
  REQUIRE(none.ok());
  CHECK(DimsOf(*none) == Dims{0, 1});
  auto scalar = Where(Filled<int32_t>({}, {5}));
  REQUIRE_FALSE(scalar.ok());
  CHECK(std::string(scalar.status().message()) == "Where: WhereOp : Unhandled input dimensions: 0");
  auto half = Where(Vec<Half>({Half::FromFloat(1)}));
  REQUIRE_FALSE(half.ok());
  CHECK(half.status().code() == absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace dflow
