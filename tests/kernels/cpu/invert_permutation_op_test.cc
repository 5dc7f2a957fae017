// InvertPermutation (kernels/cpu/invert_permutation_op.cc): the inverse, and TF's checks.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterInvertPermutationKernels);
}

TEST_CASE("InvertPermutation inverts int32 and int64 permutations", "[invert_permutation]") {
  auto a = OpTester("InvertPermutation", Registry()).Attr("T", DT_INT32)
               .Input(Vec<int32_t>({3, 4, 0, 2, 1})).RunOne();
  REQUIRE(a.ok());
  CHECK(Values<int32_t>(*a) == std::vector<int32_t>{2, 4, 3, 0, 1});
  auto b = OpTester("InvertPermutation", Registry()).Attr("T", DT_INT64)
               .Input(Vec<int64_t>({1, 0})).RunOne();
  REQUIRE(b.ok());
  CHECK(Values<int64_t>(*b) == std::vector<int64_t>{1, 0});
}

TEST_CASE("InvertPermutation refuses what is not a permutation", "[invert_permutation]") {
  auto run = [](std::vector<int32_t> x) {
    return OpTester("InvertPermutation", Registry()).Attr("T", DT_INT32).Input(Vec<int32_t>(x))
        .RunOne().status();
  };
  CHECK(run({0, 3}).message() == "3 is not between 0 and 2");
  CHECK(run({1, 1}).message() == "1 is duplicated in the input.");
  CHECK(run({-1, 0}).message() == "-1 is not between 0 and 2");
}

}  // namespace
}  // namespace dflow
