// RaggedTensorToTensor. Expected values and messages from TF 2.21
// (tf.raw_ops.RaggedTensorToTensor and RaggedTensor.to_tensor on CPU).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;
using Strings = std::vector<std::string>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterRaggedToTensorKernels); }

template <typename T>
Tensor Scalar(T v) {
  return Filled<T>({}, {v});
}

absl::StatusOr<Tensor> ToTensor(const Tensor& shape, const Tensor& values,
                                const Tensor& default_value, const std::vector<Tensor>& partitions,
                                const Strings& types) {
  AttrValue list;
  for (const std::string& t : types) list.mutable_list()->add_s(t);
  OpTester tester("RaggedTensorToTensor", Registry());
  tester.Attr("T", values.dtype())
      .Attr("Tindex", partitions[0].dtype())
      .Attr("Tshape", shape.dtype())
      .Attr("num_row_partition_tensors", static_cast<int64_t>(partitions.size()))
      .Attr("row_partition_types", list)
      .Input(shape)
      .Input(values)
      .Input(default_value);
  for (const Tensor& p : partitions) tester.Input(p);
  return tester.RunOne();
}

const Strings kSplits = {"ROW_SPLITS"};
const Strings kRowids = {"FIRST_DIM_SIZE", "VALUE_ROWIDS"};

// [[1, 2], [], [3, 4, 5]] as row splits.
const Tensor& Values5() {
  static const Tensor* t = new Tensor(Vec<int32_t>({1, 2, 3, 4, 5}));
  return *t;
}
const Tensor& Splits() {
  static const Tensor* t = new Tensor(Vec<int64_t>({0, 2, 2, 5}));
  return *t;
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("RaggedTensorToTensor pads and truncates row splits", "[kernels][ragged]") {
  auto full = ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0), {Splits()}, kSplits);
  REQUIRE(full.ok());
  CHECK(DimsOf(*full) == Dims{3, 3});
  CHECK(Values<int32_t>(*full) == std::vector<int32_t>{1, 2, 0, 0, 0, 0, 3, 4, 5});
  auto small = ToTensor(Vec<int64_t>({2, 2}), Values5(), Scalar<int32_t>(9), {Splits()}, kSplits);
  REQUIRE(small.ok());
  CHECK(Values<int32_t>(*small) == std::vector<int32_t>{1, 2, 9, 9});
  auto big = ToTensor(Vec<int64_t>({4, 4}), Values5(), Scalar<int32_t>(9), {Splits()}, kSplits);
  REQUIRE(big.ok());
  CHECK(Values<int32_t>(*big) ==
        std::vector<int32_t>{1, 2, 9, 9, 9, 9, 9, 9, 3, 4, 5, 9, 9, 9, 9, 9});
  auto cols = ToTensor(Vec<int64_t>({-1, 4}), Values5(), Scalar<int32_t>(9), {Splits()}, kSplits);
  REQUIRE(cols.ok());
  CHECK(DimsOf(*cols) == Dims{3, 4});
  auto rows = ToTensor(Vec<int64_t>({5, -1}), Values5(), Scalar<int32_t>(9), {Splits()}, kSplits);
  REQUIRE(rows.ok());
  CHECK(DimsOf(*rows) == Dims{5, 3});
  CHECK(Values<int32_t>(*rows) ==
        std::vector<int32_t>{1, 2, 9, 9, 9, 9, 3, 4, 5, 9, 9, 9, 9, 9, 9});
  auto i32_shape = ToTensor(Vec<int32_t>({3, 1}), Values5(), Scalar<int32_t>(0), {Splits()}, kSplits);
  REQUIRE(i32_shape.ok());
  CHECK(Values<int32_t>(*i32_shape) == std::vector<int32_t>{1, 0, 3});
  auto extra = ToTensor(Scalar<int32_t>(-1), Vec<int32_t>({1, 2, 3, 4, 5, 6, 7}), Scalar<int32_t>(0),
                        {Splits()}, kSplits);  // values past the last split are ignored
  REQUIRE(extra.ok());
  CHECK(Values<int32_t>(*extra) == Values<int32_t>(*full));
}

TEST_CASE("RaggedTensorToTensor reads FIRST_DIM_SIZE and VALUE_ROWIDS", "[kernels][ragged]") {
  auto full = ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0),
                       {Scalar<int64_t>(4), Vec<int64_t>({0, 0, 2, 2, 2})}, kRowids);
  REQUIRE(full.ok());
  CHECK(DimsOf(*full) == Dims{4, 3});
  CHECK(Values<int32_t>(*full) == std::vector<int32_t>{1, 2, 0, 0, 0, 0, 3, 4, 5, 0, 0, 0});
  auto small = ToTensor(Vec<int64_t>({2, 2}), Values5(), Scalar<int32_t>(0),
                        {Scalar<int64_t>(4), Vec<int64_t>({0, 0, 1, 1, 1})}, kRowids);
  REQUIRE(small.ok());
  CHECK(Values<int32_t>(*small) == std::vector<int32_t>{1, 2, 3, 4});
  auto rows = ToTensor(Vec<int64_t>({3, -1}), Values5(), Scalar<int32_t>(0),
                       {Scalar<int64_t>(2), Vec<int64_t>({0, 0, 1, 1, 1})}, kRowids);
  REQUIRE(rows.ok());
  CHECK(DimsOf(*rows) == Dims{3, 3});
  CHECK(Values<int32_t>(*rows) == std::vector<int32_t>{1, 2, 0, 3, 4, 5, 0, 0, 0});
  auto none = ToTensor(Scalar<int64_t>(-1), Vec<int32_t>({}), Scalar<int32_t>(0),
                       {Scalar<int64_t>(0), Vec<int64_t>({})}, kRowids);
  REQUIRE(none.ok());
  CHECK(DimsOf(*none) == Dims{0, 0});
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0),
                         {Scalar<int64_t>(2), Vec<int64_t>({0, 0, 2, 2, 2})}, kRowids)) ==
        "RaggedTensorToTensor: Got next_value_rowid=2 which is not less than 2");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0),
                         {Scalar<int64_t>(2), Vec<int64_t>({5, 5, 5, 5, 5})}, kRowids)) ==
        "RaggedTensorToTensor: Got current_value_rowid=5 which is not less than 2");
}

TEST_CASE("RaggedTensorToTensor handles nested rows and inner dims", "[kernels][ragged]") {
  const Tensor vals = Filled<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto nested = ToTensor(Scalar<int32_t>(-1), vals, Scalar<float>(0),
                         {Vec<int32_t>({0, 2, 3}), Vec<int32_t>({0, 1, 3, 4})},
                         {"ROW_SPLITS", "ROW_SPLITS"});
  REQUIRE(nested.ok());
  CHECK(DimsOf(*nested) == Dims{2, 2, 2, 2});
  CHECK(Values<float>(*nested) ==
        std::vector<float>{1, 2, 0, 0, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0});
  auto cut = ToTensor(Vec<int32_t>({1, 1, 1, 2}), vals, Scalar<float>(0),
                      {Vec<int32_t>({0, 2, 3}), Vec<int32_t>({0, 1, 3, 4})},
                      {"ROW_SPLITS", "ROW_SPLITS"});
  REQUIRE(cut.ok());
  CHECK(Values<float>(*cut) == std::vector<float>{1, 2});
  auto inner = ToTensor(Vec<int64_t>({2, 3, 2}), vals, Scalar<float>(0), {Vec<int64_t>({0, 1, 3})},
                        kSplits);
  REQUIRE(inner.ok());
  CHECK(Values<float>(*inner) == std::vector<float>{1, 2, 0, 0, 0, 0, 3, 4, 5, 6, 0, 0});
  auto unknown = ToTensor(Vec<int64_t>({-1, -1, -1}), vals, Scalar<float>(0),
                          {Vec<int64_t>({0, 1, 3})}, kSplits);
  REQUIRE(unknown.ok());
  CHECK(DimsOf(*unknown) == Dims{2, 2, 2});
}

TEST_CASE("RaggedTensorToTensor broadcasts default_value", "[kernels][ragged]") {
  const Tensor vals = Filled<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor splits = Vec<int64_t>({0, 1, 3});
  auto row = ToTensor(Scalar<int64_t>(-1), vals, Vec<float>({-1, -2}), {splits}, kSplits);
  REQUIRE(row.ok());
  CHECK(Values<float>(*row) == std::vector<float>{1, 2, -1, -2, 3, 4, 5, 6});
  auto one = ToTensor(Scalar<int64_t>(-1), vals, Vec<float>({-1}), {splits}, kSplits);
  REQUIRE(one.ok());
  CHECK(Values<float>(*one) == std::vector<float>{1, 2, -1, -1, 3, 4, 5, 6});
  const Tensor cube = Filled<float>({3, 2, 3}, std::vector<float>(18, 0));
  auto column = ToTensor(Scalar<int64_t>(-1), cube, Filled<float>({2, 1}, {1, 2}), {splits}, kSplits);
  REQUIRE(column.ok());
  CHECK(DimsOf(*column) == Dims{2, 2, 2, 3});
  std::vector<float> want(24, 0);
  for (int i = 6; i < 9; ++i) want[i] = 1;
  for (int i = 9; i < 12; ++i) want[i] = 2;
  CHECK(Values<float>(*column) == want);
  auto row3 = ToTensor(Scalar<int64_t>(-1), cube, Filled<float>({1, 3}, {7, 8, 9}), {splits}, kSplits);
  REQUIRE(row3.ok());
  CHECK(Values<float>(*row3)[6] == 7);
  CHECK(Values<float>(*row3)[11] == 9);
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), cube, Vec<float>({7, 8}), {splits}, kSplits)) ==
        "RaggedTensorToTensor: Error broadcasting default_value");
}

TEST_CASE("RaggedTensorToTensor handles strings and bools", "[kernels][ragged]") {
  auto words = ToTensor(Vec<int64_t>({3, 3}), Vec<std::string>({"a", "b", "c", "d", "e"}),
                        Scalar<std::string>(""), {Splits()}, kSplits);
  REQUIRE(words.ok());
  CHECK(Values<std::string>(*words) == Strings{"a", "b", "", "", "", "", "c", "d", "e"});
  auto flags = ToTensor(Scalar<int64_t>(-1), Vec<bool>({true, true, false, true, true}),
                        Scalar<bool>(false), {Splits()}, kSplits);
  REQUIRE(flags.ok());
  CHECK(Values<bool>(*flags) ==
        std::vector<bool>{true, true, false, false, false, false, false, true, true});
  auto empty = ToTensor(Vec<int64_t>({0, 3}), Values5(), Scalar<int32_t>(0), {Splits()}, kSplits);
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 3});
  auto no_rows = ToTensor(Scalar<int64_t>(-1), Vec<int32_t>({}), Scalar<int32_t>(0),
                          {Vec<int64_t>({0})}, kSplits);
  REQUIRE(no_rows.ok());
  CHECK(DimsOf(*no_rows) == Dims{0, 0});
}

TEST_CASE("RaggedTensorToTensor rejects bad inputs in TF's words", "[kernels][ragged]") {
  const Tensor vals = Filled<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor splits = Vec<int64_t>({0, 1, 3});
  const std::string op = "RaggedTensorToTensor: ";
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), vals, Vec<float>({-1, -2, -3}), {splits}, kSplits)) ==
        op + "default_value.shape=[3] and rt_input.flat_values.shape=[4,2] are incompatible: "
             "default_value.shape[-1] = 3 but rt_input.flat_values.shape[-1] = 2");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), vals, Filled<float>({1, 2}, {1, 2}), {splits},
                         kSplits)) ==
        op + "default_value.shape=[1,2] and rt_input.flat_values.shape=[4,2] are incompatible: "
             "default_value.rank = 2  must be less than rt_input.flat_values.rank = 2");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Vec<int32_t>({0}), {Splits()}, kSplits)) ==
        op + "default_value.shape=[1] and rt_input.flat_values.shape=[5] are incompatible: "
             "default_value.rank = 1  must be less than rt_input.flat_values.rank = 1");
  CHECK(ErrorOf(ToTensor(Vec<int64_t>({2, 3, 3}), vals, Scalar<float>(0), {splits}, kSplits)) ==
        op + "rt_input.shape and shape=[2,3,3] are incompatible: rt_input.shape[2] = 2 but "
             "shape[2] = 3");
  CHECK(ErrorOf(ToTensor(Vec<int64_t>({2, 3}), vals, Scalar<float>(0), {splits}, kSplits)) ==
        op + "rt_input.shape and shape=[2,3] are incompatible: rt_input.rank = 3 but shape.rank = 2");
  CHECK(ErrorOf(ToTensor(Vec<int64_t>({}), Values5(), Scalar<int32_t>(0), {Splits()}, kSplits)) ==
        op + "rt_input.shape and shape=[] are incompatible: rt_input.rank = 2 but shape.rank = 0");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(5), Values5(), Scalar<int32_t>(0), {Splits()}, kSplits)) ==
        op + "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
  CHECK(ErrorOf(ToTensor(Vec<int64_t>({-2, 3}), Values5(), Scalar<int32_t>(0), {Splits()}, kSplits)) ==
        op + "Dimension -2 must be >= -1");
  CHECK(ErrorOf(ToTensor(Filled<int64_t>({1, 2}, {2, 3}), Values5(), Scalar<int32_t>(0), {Splits()},
                         kSplits)) == op + "Shape must be at most rank 1 but is rank 2");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0), {Vec<int64_t>({})},
                         kSplits)) ==
        op + "Invalid first partition input. Tensor requires at least one element.");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0), {Splits()},
                         {"VALUE_ROWIDS"})) ==
        op + "Cannot handle VALUE_ROWIDS in first dimension.");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0),
                         {Vec<int64_t>({0, 3, 2, 5})}, kSplits)) ==
        op + "Invalid row split size.");
  CHECK(ErrorOf(ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0),
                         {Vec<int64_t>({1, 3, 5})}, kSplits)) ==
        op + "Invalid row split size.");
  auto bad_type = ToTensor(Scalar<int64_t>(-1), Values5(), Scalar<int32_t>(0), {Splits()},
                           {"ROW_SPLIT"});
  REQUIRE_FALSE(bad_type.ok());
  CHECK(bad_type.status().message() == "Unknown string for partition info type: ROW_SPLIT");
  // TF reads past the values here; this kernel refuses.
  CHECK_FALSE(ToTensor(Scalar<int64_t>(-1), Vec<int32_t>({1, 2}), Scalar<int32_t>(0), {Splits()},
                       kSplits)
                  .ok());
}

}  // namespace
}  // namespace dflow
