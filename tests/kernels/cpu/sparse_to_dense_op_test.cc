// SparseToDense (kernels/cpu/sparse_to_dense_op.cc) against TF 2.21: matrix, vector and
// scalar indices, one value for all, empty indices, strings, and TF's texts for indices
// out of bounds, out of order and repeated (checked or not) and bad shapes.
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
  return testing::TestKernelRegistry(RegisterSparseToDenseKernels);
}

absl::StatusOr<Tensor> Run(const Tensor& indices, const Tensor& shape, const Tensor& values,
                           const Tensor& fill, bool validate = true) {
  OpTester t("SparseToDense", Registry());
  t.Attr("validate_indices", validate).Attr("T", values.dtype());
  t.Attr("Tindices", indices.dtype()).Input(indices).Input(shape).Input(values).Input(fill);
  return t.RunOne();
}

TEST_CASE("SparseToDense builds TF's dense tensors", "[kernels]") {
  absl::StatusOr<Tensor> out = Run(Filled<int32_t>({2, 2}, {0, 1, 1, 2}),
                                   Filled<int32_t>({2}, {2, 3}), Filled<float>({2}, {5, 6}),
                                   Filled<float>({}, {0}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 3}));
  CHECK(Values<float>(*out) == std::vector<float>{0, 5, 0, 0, 0, 6});
  // Scalar index, one value for all, int64 indices.
  out = Run(Filled<int64_t>({}, {3}), Filled<int64_t>({1}, {5}), Filled<int32_t>({}, {1}),
            Filled<int32_t>({}, {0}));
  REQUIRE(out.ok());
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{0, 0, 0, 1, 0});
  // No indices: all default.
  out = Run(Filled<int64_t>({0, 2}, {}), Filled<int64_t>({2}, {2, 3}), Filled<float>({0}, {}),
            Filled<float>({}, {1}));
  REQUIRE(out.ok());
  CHECK(Values<float>(*out) == std::vector<float>(6, 1));
  // Unchecked order is fine; strings move as strings.
  out = Run(Filled<int32_t>({2}, {3, 0}), Filled<int32_t>({1}, {4}),
            Filled<std::string>({2}, {"d", "a"}), Filled<std::string>({}, {"-"}), false);
  REQUIRE(out.ok());
  CHECK(Values<std::string>(*out) == std::vector<std::string>{"a", "-", "-", "d"});
}

TEST_CASE("SparseToDense refuses bad indices and shapes with TF's texts", "[kernels]") {
  const Tensor shape = Filled<int32_t>({2}, {2, 3});
  const Tensor values = Filled<float>({2}, {5, 6}), zero = Filled<float>({}, {0});
  auto error = [](const absl::StatusOr<Tensor>& out) {
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(out.status().message());
  };
  CHECK_THAT(error(Run(Filled<int32_t>({2, 2}, {1, 2, 0, 1}), shape, values, zero)),
             Catch::Contains("indices[1] = [0,1] is out of order. Many sparse ops require "
                             "sorted indices.\n    Use `tf.sparse.reorder`"));
  CHECK_THAT(error(Run(Filled<int32_t>({2, 2}, {0, 1, 0, 1}), shape, values, zero)),
             Catch::EndsWith("indices[1] = [0,1] is repeated"));
  CHECK_THAT(error(Run(Filled<int32_t>({2, 2}, {0, 1, 2, 1}), shape, values, zero)),
             Catch::EndsWith("indices[1] = [2,1] is out of bounds: need 0 <= index < [2,3]"));
  CHECK_THAT(error(Run(Filled<int32_t>({2, 2}, {0, 1, 2, 1}), shape, values, zero, false)),
             Catch::EndsWith("Indices are not valid (out of bounds).  Shape: [2,3]"));
  CHECK_THAT(error(Run(Filled<int32_t>({2}, {1, 3}), Filled<int32_t>({1}, {5}),
                       Filled<float>({3}, {1, 2, 3}), zero)),
             Catch::EndsWith("sparse_values has incorrect shape [3], should be [] or [2]"));
  CHECK_THAT(error(Run(Filled<int32_t>({1, 1, 1}, {1}), Filled<int32_t>({1}, {5}), zero, zero)),
             Catch::EndsWith("sparse_indices should be a scalar, vector, or matrix, got shape "
                             "[1,1,1]"));
  CHECK_THAT(error(Run(Filled<int32_t>({}, {3}), Filled<int32_t>({}, {5}), zero, zero)),
             Catch::EndsWith("output_shape must be rank 1, got shape []"));
  CHECK_THAT(error(Run(Filled<int32_t>({2}, {1, 3}), shape, zero, zero)),
             Catch::EndsWith("output_shape has incorrect number of elements: 2 should be: 1"));
  CHECK_THAT(error(Run(Filled<int32_t>({2}, {1, 3}), Filled<int32_t>({1}, {5}), zero,
                       Filled<float>({2}, {0, 1}))),
             Catch::EndsWith("default_value should be a scalar."));
}

}  // namespace
}  // namespace dflow
