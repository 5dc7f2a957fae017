// StridedSlice index resolution on its own; expected shapes come from TF 2.21
// (tf.raw_ops.StridedSlice on a [2,3,4] input).
#include "kernels/cpu/strided_slice_spec.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using Dims = std::vector<int64_t>;

const Dims kInput = {2, 3, 4};

absl::StatusOr<StridedSliceSpec> Resolve(const Dims& begin, const Dims& end,
                                         const Dims& strides, StridedSliceMasks masks = {}) {
  return ResolveStridedSlice(kInput, begin, end, strides, masks);
}

std::string ErrorOf(const absl::StatusOr<StridedSliceSpec>& spec) {
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST_CASE("StridedSliceSpec yields TF's output shapes for every mask kind",
          "[kernels][slice]") {
  struct Case {
    Dims begin, end, strides;
    StridedSliceMasks masks;
    Dims shape;
  };
  const std::vector<Case> cases = {
      {{0, 1, 1}, {2, 3, 3}, {1, 1, 1}, {}, {2, 2, 2}},
      {{1}, {0}, {1}, {0, 0, 0, 0, 1}, {3, 4}},
      {{-1}, {0}, {1}, {0, 0, 0, 0, 1}, {3, 4}},
      {{0, -1}, {0, 0}, {1, 1}, {1, 1, 0, 0, 2}, {2, 4}},
      {{0, 0, 3}, {0, 0, -5}, {1, 1, -1}, {}, {0, 0, 4}},
      {{0, 0}, {0, 0}, {1, -2}, {0, 0, 1, 0, 0}, {2, 3, 0}},
      {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {0, 0, 2, 1, 0}, {1, 2, 3, 0}},
      {{0, 1}, {0, 2}, {1, 1}, {0, 0, 1, 0, 0}, {2, 3, 1}},
      {{0, 0, 0}, {1, 1, 1}, {1, 1, 1}, {0, 0, 2, 5, 0}, {1, 2, 3, 4, 1}},
      {{-100, 1, -3}, {100, -1, 100}, {1, 2, 2}, {}, {2, 1, 2}},
      {{1, 2, 0}, {0, 0, 0}, {1, 1, 1}, {0, 4, 0, 0, 3}, {4}},
      {{0}, {0}, {1}, {0, 0, 0, 1, 0}, {1, 2, 3, 4}},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 1, 8, 4}, {2, 0, 1}},
      {{2, 1}, {0, 0}, {-1, -1}, {1, 1, 0, 0, 0}, {2, 1, 4}},
      {{5}, {7}, {1}, {}, {0, 3, 4}},
      {{3}, {1}, {1}, {}, {0, 3, 4}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const Case& c = cases[i];
    absl::StatusOr<StridedSliceSpec> spec = Resolve(c.begin, c.end, c.strides, c.masks);
    REQUIRE(spec.ok());
    CHECK(spec->final_shape == c.shape);
  }
}

TEST_CASE("StridedSliceSpec makes masked and negative bounds explicit", "[kernels][slice]") {
  SECTION("x[::-1, 1:0:-1] walks a masked dimension from its last element") {
    auto spec = Resolve({2, 1}, {0, 0}, {-1, -1}, {1, 1, 0, 0, 0});
    REQUIRE(spec.ok());
    CHECK(spec->begin == Dims{1, 1, 0});
    CHECK(spec->end == Dims{-1, 0, 4});
    CHECK(spec->strides == Dims{-1, -1, 1});
    CHECK(spec->processing_shape == Dims{2, 1, 4});
    CHECK_FALSE(spec->is_identity);
  }
  SECTION("out-of-range bounds clamp to the dimension") {
    auto spec = Resolve({-100, 1, -3}, {100, -1, 100}, {1, 2, 2});
    REQUIRE(spec.ok());
    CHECK(spec->begin == Dims{0, 1, 1});
    CHECK(spec->end == Dims{2, 2, 4});
    CHECK(spec->processing_shape == Dims{2, 1, 2});
  }
  SECTION("a negative shrink index counts from the end") {
    auto spec = Resolve({0, -1}, {0, 0}, {1, 1}, {1, 1, 0, 0, 2});
    REQUIRE(spec.ok());
    CHECK(spec->begin == Dims{0, 2, 0});
    CHECK(spec->end == Dims{2, 3, 4});
    CHECK(spec->final_shape == Dims{2, 4});
  }
  SECTION("taking everything in order is the identity") {
    auto spec = Resolve({0}, {0}, {1}, {1, 1, 0, 0, 0});
    REQUIRE(spec.ok());
    CHECK(spec->is_identity);
    CHECK(spec->final_shape == kInput);
  }
  SECTION("a new axis alone keeps the input order (identity with a new shape)") {
    auto spec = Resolve({0}, {0}, {1}, {0, 0, 0, 1, 0});
    REQUIRE(spec.ok());
    CHECK(spec->is_identity);
    CHECK(spec->final_shape == Dims{1, 2, 3, 4});
  }
}

TEST_CASE("StridedSliceSpec rejects bad specs with TF's messages", "[kernels][slice]") {
  CHECK(ErrorOf(Resolve({3}, {0}, {1}, {0, 0, 0, 0, 1})) ==
        "slice index 3 of dimension 0 out of bounds.");
  CHECK(ErrorOf(Resolve({-3}, {0}, {1}, {0, 0, 0, 0, 1})) ==
        "slice index -1 of dimension 0 out of bounds.");
  CHECK(ErrorOf(Resolve({0}, {1}, {0})) == "strides[0] must be non-zero");
  CHECK(ErrorOf(Resolve({0}, {1}, {-1}, {0, 0, 0, 0, 1})) ==
        "only stride 1 allowed on non-range indexing.");
  CHECK(ErrorOf(Resolve({0, 0}, {1, 1}, {1, 1}, {0, 0, 3, 0, 0})) ==
        "Multiple ellipses in slice spec not allowed");
  CHECK(ErrorOf(Resolve({0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1})) ==
        "Index out of range using input dim 3; input has only 3 dims");
  CHECK_THAT(ErrorOf(Resolve({0, 0}, {1}, {1, 1})), Contains("1D equal size"));
}

TEST_CASE("StridedSliceSpec slices a scalar's empty spec to the scalar", "[kernels][slice]") {
  auto spec = ResolveStridedSlice({}, {}, {}, {}, {});
  REQUIRE(spec.ok());
  CHECK(spec->final_shape.empty());
  CHECK(spec->is_identity);
}

}  // namespace
}  // namespace dflow
