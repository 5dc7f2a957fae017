#include "runtime/tensor_values.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow {
namespace {

TEST_CASE("Tensors round-trip through TensorFromValues and TensorValues", "[runtime][tensor]") {
  absl::StatusOr<Tensor> x = TensorFromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  REQUIRE(x.ok());
  CHECK(x->dtype() == DT_FLOAT);
  CHECK(x->shape() == TensorShape({2, 3}));
  CHECK(*TensorValues<float>(*x) == std::vector<float>{1, 2, 3, 4, 5, 6});

  const std::vector<int64_t> ids = {7, 8};
  absl::StatusOr<Tensor> v = TensorFromValues<int64_t>(std::vector<int64_t>{2}, ids);
  REQUIRE(v.ok());
  CHECK(v->dtype() == DT_INT64);
  CHECK(*TensorValues<int64_t>(*v) == ids);

  absl::StatusOr<Tensor> s = TensorFromValues<std::string>({}, {"scalar"});
  REQUIRE(s.ok());
  CHECK(s->shape().dims() == 0);
  CHECK(*TensorValues<std::string>(*s) == std::vector<std::string>{"scalar"});
}

TEST_CASE("TensorFromValues and TensorValues refuse mismatches, naming both sides",
          "[runtime][tensor]") {
  absl::StatusOr<Tensor> short_list = TensorFromValues<float>({2, 2}, {1, 2, 3});
  REQUIRE(short_list.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(short_list.status().message() ==
        "TensorFromValues: shape [2,2] holds 4 elements, but 3 values were given");
  CHECK(TensorFromValues<float>({-2}, {}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<int32_t>> wrong =
      TensorValues<int32_t>(*TensorFromValues<float>({1}, {1}));
  REQUIRE(wrong.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(wrong.status().message() == "TensorValues: the tensor holds float, not int32");
}

}  // namespace
}  // namespace dflow
