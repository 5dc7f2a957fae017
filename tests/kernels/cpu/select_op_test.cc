// Select and SelectV2. Expected values from TF 2.21 (tf.raw_ops).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterSelectKernels); }


absl::StatusOr<Tensor> Select(const std::string& op, const Tensor& cond, const Tensor& t,
                              const Tensor& e) {
  return OpTester(op, Registry()).Attr("T", t.dtype()).Input(cond).Input(t).Input(e).RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

const Tensor& X() {  // [[0,1,2],[3,4,5]]
  static const Tensor* x = new Tensor(Filled<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  return *x;
}
const Tensor& NegX() {
  static const Tensor* x = new Tensor(Filled<float>({2, 3}, {-0.f, -1, -2, -3, -4, -5}));
  return *x;
}

TEST_CASE("Select picks elementwise, by row, or whole tensors", "[kernels][select]") {
  SECTION("same shapes") {
    auto out = Select("Select", Filled<bool>({3}, {true, false, true}), Filled<int32_t>({3}, {1, 2, 3}),
                      Filled<int32_t>({3}, {4, 5, 6}));
    REQUIRE(out.ok());
    CHECK(Values<int32_t>(*out) == std::vector<int32_t>{1, 5, 3});
  }
  SECTION("a vector condition picks rows") {
    auto out = Select("Select", Filled<bool>({2}, {true, false}), X(), NegX());
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 3});
    CHECK(Values<float>(*out) == std::vector<float>{0, 1, 2, -3, -4, -5});
  }
  SECTION("a scalar condition picks a whole tensor (shared)") {
    auto out = Select("Select", Filled<bool>({}, {false}), X(), NegX());
    REQUIRE(out.ok());
    CHECK(out->SharesBufferWith(NegX()));
  }
  SECTION("strings and doubles") {
    auto s = Select("Select", Filled<bool>({2}, {false, true}), Filled<std::string>({2}, {"a", "b"}),
                    Filled<std::string>({2}, {"c", "d"}));
    REQUIRE(s.ok());
    CHECK(Values<std::string>(*s) == std::vector<std::string>{"c", "b"});
    auto d = Select("Select", Filled<bool>({1}, {true}), Filled<double>({1}, {1.5}),
                    Filled<double>({1}, {2.5}));
    REQUIRE(d.ok());
    CHECK(Values<double>(*d) == std::vector<double>{1.5});
  }
}

TEST_CASE("Select rejects mismatched shapes with TF's messages", "[kernels][select]") {
  const Tensor row = Filled<float>({1, 3}, {0, 1, 2});
  CHECK_THAT(ErrorOf(Select("Select", Filled<bool>({2}, {true, false}), X(), row)),
             Contains("'then' and 'else' must have the same size.  but received: [2,3] vs. [1,3]"));
  CHECK_THAT(ErrorOf(Select("Select", Filled<bool>({3}, {true, false, true}), X(), X())),
             Contains("Number of batches of 'then' must match size of 'cond', but saw: 2 vs. 3"));
  CHECK_THAT(ErrorOf(Select("Select", Filled<bool>({1, 2}, {true, false}), X(), X())),
             Contains("must have the same size and shape.  Input 0: [1,2] != input 1: [2,3]"));
  CHECK_THAT(ErrorOf(Select("Select", Filled<bool>({}, {true}), X(), row)),
             Contains("'then' and 'else' must have the same size."));
  CHECK_THAT(ErrorOf(Select("Select", Filled<bool>({2}, {true, false}), Filled<int32_t>({3}, {1, 2, 3}),
                            Filled<int32_t>({3}, {4, 5, 6}))),
             Contains("Input 0: [2] != input 1: [3]"));
}

TEST_CASE("SelectV2 broadcasts condition, then and else", "[kernels][select]") {
  auto out = Select("SelectV2", Filled<bool>({2, 1}, {true, false}), Filled<float>({3}, {1, 2, 3}),
                    Filled<float>({}, {-1}));
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{2, 3});
  CHECK(Values<float>(*out) == std::vector<float>{1, 2, 3, -1, -1, -1});
  auto same = Select("SelectV2", Filled<bool>({2, 3}, {true, false, true, false, true, false}), X(), NegX());
  REQUIRE(same.ok());
  CHECK(Values<float>(*same) == std::vector<float>{0, -1, 2, -3, 4, -5});
  CHECK_THAT(ErrorOf(Select("SelectV2", Filled<bool>({2}, {true, false}), X(), X())),
             Contains("condition [2], then [2,3], and else [2,3] must be broadcastable"));
}

}  // namespace
}  // namespace dflow
