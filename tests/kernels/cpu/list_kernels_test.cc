// TensorList kernels (kernels/cpu/list_kernels.cc): round trips, unset elements, value
// semantics of a shared list, and TF 2.21's error texts.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/tensor_list.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::Iota;
using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterListKernels); }

Tensor I32(int v) { return Filled<int32_t>({}, {v}); }
Tensor Shape(const std::vector<int32_t>& dims) { return Vec<int32_t>(dims); }
Tensor UnknownShape() { return I32(-1); }

Tensor FromTensor(const Tensor& t) {
  auto out = OpTester("TensorListFromTensor", Registry())
                 .Attr("element_dtype", t.dtype())
                 .Attr("shape_type", DT_INT32)
                 .Input(t)
                 .Input(UnknownShape())
                 .RunOne();
  REQUIRE(out.ok());
  return *out;
}

absl::StatusOr<Tensor> GetItem(const Tensor& list, int index, DataType dtype = DT_FLOAT,
                               Tensor shape = UnknownShape()) {
  return OpTester("TensorListGetItem", Registry())
      .Attr("element_dtype", dtype)
      .Input(list)
      .Input(I32(index))
      .Input(shape)
      .RunOne();
}

Tensor SetItem(const Tensor& list, int index, const Tensor& item) {
  auto out = OpTester("TensorListSetItem", Registry())
                 .Attr("element_dtype", item.dtype())
                 .Input(list)
                 .Input(I32(index))
                 .Input(item)
                 .RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *out;
}

absl::StatusOr<Tensor> Stack(const Tensor& list, Tensor shape = UnknownShape()) {
  return OpTester("TensorListStack", Registry())
      .Attr("element_dtype", DT_FLOAT)
      .Input(list)
      .Input(shape)
      .RunOne();
}

TEST_CASE("A list from a tensor gives its rows back, stacks to it and knows its length",
          "[kernels][tensor_list]") {
  const Tensor t = Iota<float>({3, 2});
  const Tensor list = FromTensor(t);
  CHECK(list.dtype() == DT_VARIANT);
  for (int i = 0; i < 3; ++i) {
    auto item = GetItem(list, i);
    REQUIRE(item.ok());
    CHECK(Values<float>(*item) == std::vector<float>{2.f * i, 2.f * i + 1});
  }
  auto stacked = Stack(list);
  REQUIRE(stacked.ok());
  CHECK(DimsOf(*stacked) == std::vector<int64_t>{3, 2});
  CHECK(Values<float>(*stacked) == Values<float>(t));
  auto length = OpTester("TensorListLength", Registry()).Input(list).RunOne();
  REQUIRE(length.ok());
  CHECK(length->scalar<int32_t>() == 3);
}

TEST_CASE("Reserved elements read as zeros; SetItem fills one (TF: [9, 9])",
          "[kernels][tensor_list]") {
  auto reserved = OpTester("TensorListReserve", Registry())
                      .Attr("element_dtype", DT_FLOAT)
                      .Attr("shape_type", DT_INT32)
                      .Input(Shape({2}))
                      .Input(I32(3))
                      .RunOne();
  REQUIRE(reserved.ok());
  auto zeros = GetItem(*reserved, 1);
  REQUIRE(zeros.ok());
  CHECK(Values<float>(*zeros) == std::vector<float>{0, 0});
  const Tensor set = SetItem(*reserved, 1, Vec<float>({9, 9}));
  auto item = GetItem(set, 1);
  REQUIRE(item.ok());
  CHECK(Values<float>(*item) == std::vector<float>{9, 9});
  auto stacked = Stack(set);
  REQUIRE(stacked.ok());
  CHECK(Values<float>(*stacked) == std::vector<float>{0, 0, 9, 9, 0, 0});
}

TEST_CASE("A list shared by two consumers is a value: SetItem leaves the input as it was",
          "[kernels][tensor_list]") {
  const Tensor list = FromTensor(Iota<float>({2, 2}));
  const Tensor changed = SetItem(list, 0, Vec<float>({7, 7}));
  auto before = GetItem(list, 0);
  auto after = GetItem(changed, 0);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(Values<float>(*before) == std::vector<float>{0, 1});
  CHECK(Values<float>(*after) == std::vector<float>{7, 7});
}

TEST_CASE("PushBack and PopBack work as a stack and respect max_num_elements",
          "[kernels][tensor_list]") {
  auto empty = OpTester("EmptyTensorList", Registry())
                   .Attr("element_dtype", DT_FLOAT)
                   .Attr("shape_type", DT_INT32)
                   .Input(Shape({1}))
                   .Input(I32(1))
                   .RunOne();
  REQUIRE(empty.ok());
  auto pushed = OpTester("TensorListPushBack", Registry())
                    .Attr("element_dtype", DT_FLOAT)
                    .Input(*empty)
                    .Input(Vec<float>({4}))
                    .RunOne();
  REQUIRE(pushed.ok());
  auto full = OpTester("TensorListPushBack", Registry())
                  .Attr("element_dtype", DT_FLOAT)
                  .Input(*pushed)
                  .Input(Vec<float>({5}))
                  .RunOne();
  CHECK(absl::StrContains(full.status().message(), "Tried to push item into a full list"));
  auto popped = OpTester("TensorListPopBack", Registry())
                    .Attr("element_dtype", DT_FLOAT)
                    .Input(*pushed)
                    .Input(Shape({1}))
                    .Run();
  REQUIRE(popped.ok());
  CHECK(Values<float>((*popped)[1]) == std::vector<float>{4});
  auto length = OpTester("TensorListLength", Registry()).Input((*popped)[0]).RunOne();
  REQUIRE(length.ok());
  CHECK(length->scalar<int32_t>() == 0);
}

TEST_CASE("List errors name the index, the dtypes or the unknown shape as TF does",
          "[kernels][tensor_list]") {
  const Tensor list = FromTensor(Iota<float>({3, 2}));
  auto out_of_range = GetItem(list, 5);
  CHECK(absl::StrContains(out_of_range.status().message(),
                          "Trying to access element 5 in a list with 3 elements."));
  auto wrong_dtype = GetItem(list, 0, DT_INT32);
  CHECK(absl::StrContains(wrong_dtype.status().message(),
                          "Invalid data types; op elements int32 but list elements float"));
  auto reserved = OpTester("TensorListReserve", Registry())
                      .Attr("element_dtype", DT_FLOAT)
                      .Attr("shape_type", DT_INT32)
                      .Input(UnknownShape())
                      .Input(I32(2))
                      .RunOne();
  REQUIRE(reserved.ok());
  auto unknown = GetItem(*reserved, 0);
  CHECK(absl::StrContains(unknown.status().message(),
                          "Trying to read an uninitialized tensor but element_shape is not "
                          "fully defined"));
  // FromTensor keeps the requested (unknown) element shape, as TF's does, so only a list
  // with a known element shape refuses an item of another shape.
  auto shaped = OpTester("TensorListReserve", Registry()).Attr("element_dtype", DT_FLOAT)
                    .Attr("shape_type", DT_INT32).Input(Shape({2})).Input(I32(3)).RunOne();
  REQUIRE(shaped.ok());
  auto wrong_shape = OpTester("TensorListSetItem", Registry())
                         .Attr("element_dtype", DT_FLOAT)
                         .Input(*shaped)
                         .Input(I32(0))
                         .Input(Vec<float>({1, 2, 3}))
                         .RunOne();
  CHECK(absl::StrContains(wrong_shape.status().message(),
                          "Tried to set an item with incompatible shape [3]"));
  auto any_shape = OpTester("TensorListSetItem", Registry()).Attr("element_dtype", DT_FLOAT)
                       .Input(list).Input(I32(0)).Input(Vec<float>({1, 2, 3})).RunOne();
  CHECK(any_shape.ok());
  auto not_a_list = GetItem(Vec<float>({1}), 0);
  CHECK(absl::StrContains(not_a_list.status().message(), "must be a scalar variant"));
}

// ---- Split, Concat, Scatter (list_scatter_concat_kernels.cc); values and texts from
// tf.raw_ops in TF 2.21.

Tensor Reserve(Tensor shape, int n, DataType dtype = DT_FLOAT) {
  auto out = OpTester("TensorListReserve", Registry()).Attr("element_dtype", dtype)
                 .Attr("shape_type", DT_INT32).Input(shape).Input(I32(n)).RunOne();
  REQUIRE(out.ok());
  return *out;
}

absl::StatusOr<Tensor> Split(const Tensor& t, std::vector<int64_t> lengths) {
  return OpTester("TensorListSplit", Registry()).Attr("element_dtype", t.dtype())
      .Attr("shape_type", DT_INT32).Input(t).Input(Shape({-1, 2})).Input(Vec<int64_t>(lengths))
      .RunOne();
}

absl::StatusOr<std::vector<Tensor>> ConcatV2(const Tensor& list, Tensor shape,
                                             std::vector<int64_t> leading = {}) {
  return OpTester("TensorListConcatV2", Registry()).Attr("element_dtype", DT_FLOAT)
      .Attr("shape_type", DT_INT32).Input(list).Input(shape).Input(Vec<int64_t>(leading)).Run();
}

Tensor Rows3() { return Filled<float>({3, 2}, {1, 2, 3, 4, 5, 6}); }

TEST_CASE("TensorListSplit and TensorListConcatV2 round trip", "[list]") {
  auto list = Split(Rows3(), {1, 2});
  REQUIRE(list.ok());
  auto second = GetItem(*list, 1);
  REQUIRE(second.ok());
  CHECK(DimsOf(*second) == std::vector<int64_t>{2, 2});
  auto joined = ConcatV2(*list, Shape({-1, 2}));
  REQUIRE(joined.ok());
  CHECK(Values<float>((*joined)[0]) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(Values<int64_t>((*joined)[1]) == std::vector<int64_t>{1, 2});
  auto v1 = OpTester("TensorListConcat", Registry()).Attr("element_dtype", DT_FLOAT)
                .Input(*list).Run();
  REQUIRE(v1.ok());
  CHECK(Values<int64_t>((*v1)[1]) == std::vector<int64_t>{1, 2});

  CHECK(Split(Rows3(), {1, 1}).status().message() ==
        "Unused values in tensor. Length of tensor: 3 Values used: 2");
  CHECK(Split(Rows3(), {2, 2}).status().message() ==
        "Attempting to slice [2, 4] from tensor with length 3");
  CHECK(Split(Filled<float>({}, {1}), {1}).status().message() ==
        "Tensor must be at least a vector, but saw shape: []");
}

TEST_CASE("TensorListConcatV2 fills unset elements as TF does", "[list]") {
  const Tensor reserved = Reserve(Shape({-1, 2}), 2);
  CHECK(ConcatV2(reserved, Shape({-1, 2})).status().message() ==
        "List contains uninitialized tensor at index 0 but leading_dims has only 0 elements.");
  auto led = ConcatV2(reserved, Shape({-1, 2}), {1, 3});
  REQUIRE(led.ok());
  CHECK(DimsOf((*led)[0]) == std::vector<int64_t>{4, 2});
  CHECK(Values<int64_t>((*led)[1]) == std::vector<int64_t>{1, 3});
  auto known = ConcatV2(Reserve(Shape({2, 2}), 2), UnknownShape());
  REQUIRE(known.ok());
  CHECK(Values<float>((*known)[0]) == std::vector<float>(8, 0));
  CHECK(Values<int64_t>((*known)[1]) == std::vector<int64_t>{2, 2});

  const Tensor empty = Reserve(UnknownShape(), 0);
  CHECK(ConcatV2(empty, UnknownShape()).status().message() ==
        "All except the first dimension must be fully defined when concating an empty tensor "
        "list. element_shape: <unknown>");
  auto empty_known = ConcatV2(Reserve(Shape({-1, 2}), 0), Shape({-1, 2}));
  REQUIRE(empty_known.ok());
  CHECK(DimsOf((*empty_known)[0]) == std::vector<int64_t>{0, 2});
  CHECK(ConcatV2(FromTensor(Vec<float>({1, 2})), UnknownShape()).status().message() ==
        "Concat saw a scalar shape at index 0 but requires at least vectors.");
}

absl::StatusOr<Tensor> Scatter(std::vector<int32_t> indices, int num_elements = -2) {
  OpTester t(num_elements == -2 ? "TensorListScatter" : "TensorListScatterV2", Registry());
  t.Attr("element_dtype", DT_FLOAT).Attr("shape_type", DT_INT32).Input(Rows3())
      .Input(Vec<int32_t>(indices)).Input(Shape({2}));
  if (num_elements != -2) t.Input(I32(num_elements));
  return t.RunOne();
}

TEST_CASE("TensorListScatter, V2 and into an existing list", "[list]") {
  auto list = Scatter({3, 0, 1});
  REQUIRE(list.ok());
  auto stacked = Stack(*list);
  REQUIRE(stacked.ok());
  CHECK(Values<float>(*stacked) == std::vector<float>{3, 4, 5, 6, 0, 0, 1, 2});
  auto v2 = Scatter({3, 0, 1}, 6);
  REQUIRE(v2.ok());
  CHECK(v2->data<Variant>()[0].get<TensorList>()->tensors.size() == 6);
  CHECK(Scatter({3, 0, 1}, 2).status().message() ==
        "TensorListScatter: Trying to scatter at index 3 in list with size 2");
  CHECK(Scatter({-1, 0, 1}).status().message() ==
        "Indices in TensorListScatter must all be non-negative.");
  CHECK(Scatter({0, 1}).status().message() ==
        "Invalid number of rows in input tensor. Expected: 2 Actual: 3");
  auto repeated = Stack(*Scatter({0, 0, 1}));  // the last write wins
  REQUIRE(repeated.ok());
  CHECK(Values<float>(*repeated) == std::vector<float>{3, 4, 5, 6});

  auto into = [](const Tensor& list, std::vector<int32_t> indices) {
    return OpTester("TensorListScatterIntoExistingList", Registry()).Attr("element_dtype", DT_FLOAT)
        .Input(list).Input(Rows3()).Input(Vec<int32_t>(indices)).RunOne();
  };
  auto existing = into(Reserve(Shape({2}), 4), {3, 0, 1});
  REQUIRE(existing.ok());
  CHECK(Values<float>(*Stack(*existing)) == std::vector<float>{3, 4, 5, 6, 0, 0, 1, 2});
  CHECK(into(Reserve(Shape({2}), 2, DT_INT32), {1, 0, 1}).status().message() ==
        "Invalid data types; input tensor type: float list element_type: int32");
}

TEST_CASE("Hostile list sizes and leading_dims get errors, not crashes", "[list]") {
  const Tensor reserved = Reserve(Shape({-1, 2}), 2);
  auto negative = ConcatV2(reserved, Shape({-1, 2}), {0, -1});
  CHECK(negative.status().message() == "leading_dims[1] = -1 is negative");
  auto huge = OpTester("TensorListReserve", Registry()).Attr("element_dtype", DT_FLOAT)
                  .Attr("shape_type", DT_INT32).Input(UnknownShape()).Input(I32(2147483647))
                  .RunOne();
  CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(Scatter({0, 1, 2147483000}).status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(Split(Filled<float>({1, 2}, {1, 2}), {1, INT64_MAX}).status().message() ==
        "Attempting to slice [1, 9223372036854775807] from tensor with length 1");
}

}  // namespace
}  // namespace dflow
