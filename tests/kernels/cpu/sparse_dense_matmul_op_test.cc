// SparseTensorDenseMatMul (kernels/cpu/sparse_dense_matmul_op.cc) against TF 2.21: all
// four adjoint combinations, a repeated index summed, and TF's texts for an index out of
// bounds and mismatched inner dimensions.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterSparseDenseMatMulKernels);
}

// A: [3, 3] with (0,1) twice (1.5 and 0.5), (2,0) = -2, (1,2) = 3. B: 0..11 as [3, 4].
absl::StatusOr<Tensor> Multiply(const Tensor& indices, std::vector<int64_t> shape, bool adj_a,
                                bool adj_b, bool b_transposed) {
  std::vector<float> b(12);
  for (int i = 0; i < 12; ++i) b[i] = static_cast<float>(i);
  Tensor b_tensor = Filled<float>({3, 4}, b);
  if (b_transposed) {
    std::vector<float> t(12);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) t[c * 3 + r] = b[r * 4 + c];
    }
    b_tensor = Filled<float>({4, 3}, t);
  }
  OpTester op("SparseTensorDenseMatMul", Registry());
  op.Attr("T", DT_FLOAT).Attr("Tindices", DT_INT64).Attr("adjoint_a", adj_a);
  op.Attr("adjoint_b", adj_b).Input(indices).Input(Filled<float>({4}, {1.5f, -2, 0.5f, 3}));
  op.Input(Filled<int64_t>({2}, shape)).Input(b_tensor);
  return op.RunOne();
}

const Tensor kIndices = Filled<int64_t>({4, 2}, {0, 1, 2, 0, 0, 1, 1, 2});

TEST_CASE("SparseTensorDenseMatMul gives TF's products for every adjoint", "[kernels]") {
  const std::vector<float> plain = {8, 10, 12, 14, 24, 27, 30, 33, 0, -2, -4, -6};
  const std::vector<float> adjoint_a = {-16, -18, -20, -22, 0, 2, 4, 6, 12, 15, 18, 21};
  for (bool adj_b : {false, true}) {
    INFO("adjoint_b " << adj_b);
    absl::StatusOr<Tensor> out = Multiply(kIndices, {3, 3}, false, adj_b, adj_b);
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape({3, 4}));
    CHECK(Values<float>(*out) == plain);
    out = Multiply(kIndices, {3, 3}, true, adj_b, adj_b);
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == adjoint_a);
  }
}

TEST_CASE("SparseTensorDenseMatMul refuses bad indices and shapes with TF's texts",
          "[kernels]") {
  absl::StatusOr<Tensor> out =
      Multiply(Filled<int64_t>({4, 2}, {0, 5, 2, 0, 0, 1, 1, 2}), {3, 3}, false, false, false);
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(std::string(out.status().message()),
             Catch::EndsWith("k (5) from index[0,1] out of bounds (>=3)"));
  out = Multiply(kIndices, {3, 2}, false, false, false);
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(std::string(out.status().message()),
             Catch::EndsWith("Cannot multiply A and B because inner dimension does not match: 2 "
                             "vs. 3.  Did you forget a transpose?  Dimensions of A: [3, 2).  "
                             "Dimensions of B: [3,4]"));
}

}  // namespace
}  // namespace dflow
