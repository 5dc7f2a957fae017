// ZerosLike and AddN of TensorLists (kernels/cpu/list_arithmetic_kernels.cc): what list
// gradients are built from. Unset elements stay unset and add nothing; TF's error texts.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterListKernels); }

Tensor I32(int v) { return Filled<int32_t>({}, {v}); }

Tensor Run(OpTester tester) {
  auto out = tester.RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *out;
}

Tensor Reserve(int n) {
  return Run(OpTester("TensorListReserve", Registry())
                 .Attr("element_dtype", DT_FLOAT)
                 .Attr("shape_type", DT_INT32)
                 .Input(Vec<int32_t>({2}))
                 .Input(I32(n)));
}

Tensor SetItem(const Tensor& list, int index, const Tensor& item) {
  return Run(OpTester("TensorListSetItem", Registry())
                 .Attr("element_dtype", DT_FLOAT)
                 .Input(list)
                 .Input(I32(index))
                 .Input(item));
}

std::vector<float> Stacked(const Tensor& list) {
  return Values<float>(Run(OpTester("TensorListStack", Registry())
                               .Attr("element_dtype", DT_FLOAT)
                               .Input(list)
                               .Input(Vec<int32_t>({2}))));
}

absl::StatusOr<Tensor> AddN(const std::vector<Tensor>& lists) {
  OpTester tester("AddN", Registry());
  tester.Attr("T", DT_VARIANT).Attr("N", static_cast<int64_t>(lists.size()));
  for (const Tensor& list : lists) tester.Input(list);
  return tester.RunOne();
}

TEST_CASE("ZerosLike of a list: set elements become zeros, the length stays",
          "[kernels][tensor_list]") {
  const Tensor list = SetItem(Reserve(3), 1, Vec<float>({4, 5}));
  const Tensor zeros =
      Run(OpTester("ZerosLike", Registry()).Attr("T", DT_VARIANT).Input(list));
  CHECK(zeros.dtype() == DT_VARIANT);
  CHECK(Stacked(zeros) == std::vector<float>(6, 0.0f));
  CHECK(Stacked(list) == std::vector<float>{0, 0, 4, 5, 0, 0});  // the input is untouched
  const Tensor length = Run(OpTester("TensorListLength", Registry()).Input(zeros));
  CHECK(length.scalar<int32_t>() == 3);
}

TEST_CASE("AddN of lists adds element by element; unset elements add nothing",
          "[kernels][tensor_list]") {
  const Tensor a = SetItem(SetItem(Reserve(3), 0, Vec<float>({1, 2})), 1, Vec<float>({3, 4}));
  const Tensor b = SetItem(Reserve(3), 1, Vec<float>({10, 20}));
  const Tensor c = SetItem(Reserve(3), 2, Vec<float>({100, 200}));
  auto sum = AddN({a, b, c});
  INFO(sum.status().ToString());
  REQUIRE(sum.ok());
  CHECK(Stacked(*sum) == std::vector<float>{1, 2, 13, 24, 100, 200});
  CHECK(Stacked(a) == std::vector<float>{1, 2, 3, 4, 0, 0});
}

// A list holding one list (as a nested loop's accumulators do).
Tensor ListOfList(const Tensor& inner) {
  Tensor outer = Run(OpTester("EmptyTensorList", Registry())
                         .Attr("element_dtype", DT_VARIANT)
                         .Attr("shape_type", DT_INT32)
                         .Input(I32(-1))
                         .Input(I32(-1)));
  return Run(OpTester("TensorListPushBack", Registry())
                 .Attr("element_dtype", DT_VARIANT)
                 .Input(outer)
                 .Input(inner));
}

Tensor Inner(const Tensor& outer) {
  auto popped = OpTester("TensorListPopBack", Registry())
                    .Attr("element_dtype", DT_VARIANT)
                    .Input(outer)
                    .Input(I32(-1))
                    .Run();
  INFO(popped.status().ToString());
  REQUIRE(popped.ok());
  return (*popped)[1];
}

TEST_CASE("Lists of lists: ZerosLike and AddN recurse into the inner lists",
          "[kernels][tensor_list]") {
  const Tensor outer = ListOfList(SetItem(Reserve(2), 0, Vec<float>({1, 2})));
  const Tensor zeros =
      Run(OpTester("ZerosLike", Registry()).Attr("T", DT_VARIANT).Input(outer));
  CHECK(Stacked(Inner(zeros)) == std::vector<float>(4, 0.0f));
  auto sum = AddN({outer, outer});
  INFO(sum.status().ToString());
  REQUIRE(sum.ok());
  CHECK(Stacked(Inner(*sum)) == std::vector<float>{2, 4, 0, 0});
}

TEST_CASE("AddN of lists of different lengths fails with TF's text",
          "[kernels][tensor_list]") {
  auto sum = AddN({Reserve(2), Reserve(3)});
  REQUIRE(!sum.ok());
  CHECK(sum.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(sum.status().message()),
             Catch::Contains("Trying to add two lists of tensors with different lengths. One "
                             "is 2 and the other is 3"));
}

}  // namespace
}  // namespace dflow
