// The CPU array kernels: values per dtype, zero-copy views, and every error path.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <random>

#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/op_kernel.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::MakeTensor;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterArrayKernels); }

OpTester Op(const std::string& op) { return OpTester(op, Registry()); }

template <typename T>
Tensor Scalar(T value) {
  return MakeTensor<T>({}, {value});
}


// The error message of a failed run; fails the test when the run succeeded.
template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

AttrValue TypeList(const std::vector<DataType>& types) {
  AttrValue value;
  for (DataType t : types) value.mutable_list()->add_type(t);
  return value;
}

AttrValue ShapeAttr(const PartialShape& shape) {
  AttrValue value;
  *value.mutable_shape() = shape.ToProto();
  return value;
}

// ---------------------------------------------------------------------------------------
// Registration, Const, Placeholder.

TEST_CASE("RegisterArrayKernels registers each array kernel exactly once", "[kernels][array]") {
  KernelRegistry registry;
  REQUIRE(RegisterArrayKernels(&registry).ok());
  const std::vector<std::string> ops = registry.OpsWithKernels();
  // IdentityN and NoOp are routing kernels: control_flow_ops_test.
  for (const char* op : {"Const",     "Placeholder", "PlaceholderWithDefault",
                         "Identity",  "StopGradient",
                         "Snapshot",  "Fill",
                         "ZerosLike", "OnesLike",    "Reshape",
                         "Shape",     "ShapeN",      "Size",
                         "Rank",      "Cast",        "Transpose",
                         "ConcatV2",  "Concat",      "Pack",
                         "Unpack",    "ExpandDims",  "Squeeze"}) {
    CHECK(std::find(ops.begin(), ops.end(), op) != ops.end());
  }
  CHECK(RegisterArrayKernels(&registry).code() == absl::StatusCode::kAlreadyExists);
}

TEST_CASE("Const outputs its value for numeric and string dtypes", "[kernels][array]") {
  SECTION("float") {
    Tensor value = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
    auto out = Op("Const").Attr("value", value).Attr("dtype", DT_FLOAT).RunOne();
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == std::vector<int64_t>{2, 2});
    CHECK(Values<float>(*out) == std::vector<float>{1, 2, 3, 4});
  }
  SECTION("int64 from repeated typed field") {
    AttrValue value;
    TensorProto* proto = value.mutable_tensor();
    proto->set_dtype(DT_INT64);
    proto->mutable_tensor_shape()->add_dim()->set_size(3);
    proto->add_int64_val(7);
    auto out = Op("Const").Attr("value", value).Attr("dtype", DT_INT64).RunOne();
    REQUIRE(out.ok());
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>{7, 7, 7});
  }
  SECTION("string") {
    Tensor value = MakeTensor<std::string>({2}, {"a", "bc"});
    auto out = Op("Const").Attr("value", value).Attr("dtype", DT_STRING).RunOne();
    REQUIRE(out.ok());
    CHECK(Values<std::string>(*out) == std::vector<std::string>{"a", "bc"});
  }
}

TEST_CASE("Const decodes its value once and hands out the same buffer every run",
          "[kernels][array]") {
  const OpDef* op_def = OpRegistry::Global().Find("Const");
  REQUIRE(op_def != nullptr);
  NodeDef node;
  node.set_name("c");
  node.set_op("Const");
  (*node.mutable_attr())["dtype"].set_type(DT_FLOAT);
  *(*node.mutable_attr())["value"].mutable_tensor() = MakeTensor<float>({3}, {1, 2, 3}).ToProto();
  DataTypeVector in, out;
  REQUIRE(InOutTypesForNode(node, *op_def, &in, &out).ok());
  auto kernel = Registry().CreateKernel(node, *op_def, in, out, TestCpuDevice());
  REQUIRE(kernel.ok());
  CHECK_FALSE((*kernel)->IsExpensive());
  const auto run = [&] {
    OpKernelContext::Params params;
    params.kernel = kernel->get();
    params.device = TestCpuDevice();
    OpKernelContext context(params, 1);
    (*kernel)->Compute(&context);
    REQUIRE(context.status().ok());
    return *context.mutable_output(0);
  };
  Tensor first = run();
  Tensor second = run();
  CHECK(first.SharesBufferWith(second));
  CHECK(Values<float>(second) == std::vector<float>{1, 2, 3});
}

TEST_CASE("Const rejects a value whose dtype differs from its dtype attr", "[kernels][array]") {
  auto out =
      Op("Const").Attr("value", MakeTensor<int32_t>({1}, {1})).Attr("dtype", DT_FLOAT).RunOne();
  CHECK_THAT(ErrorOf(out), Contains("Type mismatch between value (int32) and dtype (float)"));
}

TEST_CASE("Placeholder fails with TF's message, naming the shape only when it has dims",
          "[kernels][array]") {
  SECTION("partially known shape") {
    auto out = Op("Placeholder")
                   .Attr("dtype", DT_FLOAT)
                   .Attr("shape", ShapeAttr(PartialShape({-1, 3})))
                   .RunOne();
    CHECK(ErrorOf(out) ==
          "You must feed a value for placeholder tensor 'test_node' with dtype float and shape "
          "[?,3]");
  }
  SECTION("unknown rank") {
    auto out = Op("Placeholder").Attr("dtype", DT_INT32).RunOne();
    CHECK(ErrorOf(out) ==
          "You must feed a value for placeholder tensor 'test_node' with dtype int32");
  }
  SECTION("scalar") {
    auto out = Op("Placeholder")
                   .Attr("dtype", DT_BOOL)
                   .Attr("shape", ShapeAttr(PartialShape::Scalar()))
                   .RunOne();
    CHECK(ErrorOf(out) ==
          "You must feed a value for placeholder tensor 'test_node' with dtype bool");
  }
  SECTION("PlaceholderV2 with a known shape") {
    auto out = Op("PlaceholderV2")
                   .Attr("dtype", DT_DOUBLE)
                   .Attr("shape", ShapeAttr(PartialShape({2, 2})))
                   .RunOne();
    CHECK(ErrorOf(out) ==
          "You must feed a value for placeholder tensor 'test_node' with dtype double and shape "
          "[2,2]");
  }
}

// ---------------------------------------------------------------------------------------
// Pass-through kernels.

TEST_CASE("Identity-like kernels forward their input buffer without copying", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  for (const char* op : {"Identity", "StopGradient", "PreventGradient"}) {
    INFO(op);
    auto out = Op(op).Attr("T", DT_FLOAT).Input(input).RunOne();
    REQUIRE(out.ok());
    CHECK(out->SharesBufferWith(input));
    CHECK(out->shape() == input.shape());
  }
  auto out = Op("PlaceholderWithDefault")
                 .Attr("dtype", DT_FLOAT)
                 .Attr("shape", ShapeAttr(PartialShape({-1, 2})))
                 .Input(input)
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(out->SharesBufferWith(input));
}

TEST_CASE("Snapshot copies an input that others still hold", "[kernels][array]") {
  Tensor input = MakeTensor<int32_t>({3}, {4, 5, 6});
  auto out = Op("Snapshot").Attr("T", DT_INT32).Input(input).RunOne();
  REQUIRE(out.ok());
  CHECK_FALSE(out->SharesBufferWith(input));
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{4, 5, 6});
}

// ---------------------------------------------------------------------------------------
// Fill, ZerosLike, OnesLike.

TEST_CASE("Fill builds a tensor of the given dims holding one value", "[kernels][array]") {
  SECTION("float with int32 dims") {
    auto out =
        Op("Fill").Attr("T", DT_FLOAT).Input(Vec<int32_t>({2, 3})).Input(Scalar(1.5f)).RunOne();
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == std::vector<int64_t>{2, 3});
    CHECK(Values<float>(*out) == std::vector<float>(6, 1.5f));
  }
  SECTION("int64 with int64 dims") {
    auto out = Op("Fill")
                   .Attr("T", DT_INT64)
                   .Attr("index_type", DT_INT64)
                   .Input(Vec<int64_t>({4}))
                   .Input(Scalar<int64_t>(-9))
                   .RunOne();
    REQUIRE(out.ok());
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>(4, -9));
  }
  SECTION("bool and string") {
    auto b = Op("Fill").Attr("T", DT_BOOL).Input(Vec<int32_t>({3})).Input(Scalar(true)).RunOne();
    REQUIRE(b.ok());
    CHECK(Values<bool>(*b) == std::vector<bool>(3, true));
    auto s = Op("Fill")
                 .Attr("T", DT_STRING)
                 .Input(Vec<int32_t>({2}))
                 .Input(Scalar<std::string>("hi"))
                 .RunOne();
    REQUIRE(s.ok());
    CHECK(Values<std::string>(*s) == std::vector<std::string>{"hi", "hi"});
  }
  SECTION("a large fill runs on the pool") {
    auto out = Op("Fill")
                   .Attr("T", DT_INT32)
                   .Input(Vec<int32_t>({1000, 1000}))
                   .Input(Scalar<int32_t>(3))
                   .RunOne();
    REQUIRE(out.ok());
    const std::vector<int32_t> values = Values<int32_t>(*out);
    CHECK(std::all_of(values.begin(), values.end(), [](int32_t v) { return v == 3; }));
  }
}

TEST_CASE("Fill rejects non-vector dims, non-scalar values and negative dims", "[kernels][array]") {
  CHECK_THAT(ErrorOf(Op("Fill")
                         .Attr("T", DT_FLOAT)
                         .Input(MakeTensor<int32_t>({1, 2}, {1, 2}))
                         .Input(Scalar(1.0f))
                         .RunOne()),
             Contains("dims must be a vector, got shape [1,2]"));
  CHECK_THAT(ErrorOf(Op("Fill")
                         .Attr("T", DT_FLOAT)
                         .Input(Vec<int32_t>({2}))
                         .Input(Vec<float>({1, 2}))
                         .RunOne()),
             Contains("value must be a scalar, got shape [2]"));
  CHECK_THAT(
      ErrorOf(
          Op("Fill").Attr("T", DT_FLOAT).Input(Vec<int32_t>({2, -1})).Input(Scalar(1.0f)).RunOne()),
      Contains("dims [2,-1] are not a valid shape"));
}

TEST_CASE("ZerosLike and OnesLike match the input's shape and dtype", "[kernels][array]") {
  Tensor f = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto zeros = Op("ZerosLike").Attr("T", DT_FLOAT).Input(f).RunOne();
  REQUIRE(zeros.ok());
  CHECK(Values<float>(*zeros) == std::vector<float>(4, 0.0f));
  CHECK(Values<float>(f) == std::vector<float>{1, 2, 3, 4});  // input untouched
  auto ones =
      Op("OnesLike").Attr("T", DT_INT32).Input(MakeTensor<int32_t>({3}, {7, 8, 9})).RunOne();
  REQUIRE(ones.ok());
  CHECK(Values<int32_t>(*ones) == std::vector<int32_t>{1, 1, 1});
  auto bools =
      Op("OnesLike").Attr("T", DT_BOOL).Input(MakeTensor<bool>({2}, {false, false})).RunOne();
  REQUIRE(bools.ok());
  CHECK(Values<bool>(*bools) == std::vector<bool>{true, true});
  auto strings =
      Op("ZerosLike").Attr("T", DT_STRING).Input(MakeTensor<std::string>({2}, {"x", "y"})).RunOne();
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"", ""});
}

// ---------------------------------------------------------------------------------------
// Shape, ShapeN, Size, Rank.

TEST_CASE("Shape, Size and Rank describe the input in int32 or int64", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 3, 4}, {});
  auto shape32 = Op("Shape").Attr("T", DT_FLOAT).Input(input).RunOne();
  REQUIRE(shape32.ok());
  CHECK(shape32->dtype() == DT_INT32);
  CHECK(Values<int32_t>(*shape32) == std::vector<int32_t>{2, 3, 4});
  auto shape64 = Op("Shape").Attr("T", DT_FLOAT).Attr("out_type", DT_INT64).Input(input).RunOne();
  REQUIRE(shape64.ok());
  CHECK(Values<int64_t>(*shape64) == std::vector<int64_t>{2, 3, 4});
  auto size = Op("Size").Attr("T", DT_FLOAT).Attr("out_type", DT_INT64).Input(input).RunOne();
  REQUIRE(size.ok());
  CHECK(size->scalar<int64_t>() == 24);
  auto size32 = Op("Size").Attr("T", DT_FLOAT).Input(input).RunOne();
  REQUIRE(size32.ok());
  CHECK(size32->scalar<int32_t>() == 24);
  auto rank = Op("Rank").Attr("T", DT_FLOAT).Input(input).RunOne();
  REQUIRE(rank.ok());
  CHECK(rank->scalar<int32_t>() == 3);
  auto scalar_shape = Op("Shape").Attr("T", DT_INT32).Input(Scalar<int32_t>(1)).RunOne();
  REQUIRE(scalar_shape.ok());
  CHECK(DimsOf(*scalar_shape) == std::vector<int64_t>{0});
}

TEST_CASE("ShapeN describes each of its inputs", "[kernels][array]") {
  auto out = Op("ShapeN")
                 .Attr("N", 2)
                 .Attr("T", DT_FLOAT)
                 .Input(MakeTensor<float>({2}, {}))
                 .Input(MakeTensor<float>({1, 5}, {}))
                 .Run();
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{2});
  CHECK(Values<int32_t>((*out)[1]) == std::vector<int32_t>{1, 5});
}

TEST_CASE("Shape with int32 output rejects a dim beyond int32", "[kernels][array]") {
  Tensor huge = Filled<float>({3000000000LL, 0}, {});  // no elements, so no memory
  CHECK_THAT(ErrorOf(Op("Shape").Attr("T", DT_FLOAT).Input(huge).RunOne()),
             Contains("Shape output type is 32-bit but dim 0 of [3000000000,0] is 3000000000"));
  auto ok = Op("Shape").Attr("T", DT_FLOAT).Attr("out_type", DT_INT64).Input(huge).RunOne();
  REQUIRE(ok.ok());
  CHECK(Values<int64_t>(*ok) == std::vector<int64_t>{3000000000LL, 0});
}

// ---------------------------------------------------------------------------------------
// Reshape, ExpandDims, Squeeze.

TEST_CASE("Reshape returns a view of the input with the requested shape", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  SECTION("explicit dims") {
    auto out = Op("Reshape").Attr("T", DT_FLOAT).Input(input).Input(Vec<int32_t>({3, 2})).RunOne();
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == std::vector<int64_t>{3, 2});
    CHECK(out->SharesBufferWith(input));
    CHECK(Values<float>(*out) == Values<float>(input));
  }
  SECTION("one -1 is inferred, with int64 shape") {
    auto out = Op("Reshape")
                   .Attr("T", DT_FLOAT)
                   .Attr("Tshape", DT_INT64)
                   .Input(input)
                   .Input(Vec<int64_t>({-1, 2, 1}))
                   .RunOne();
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == std::vector<int64_t>{3, 2, 1});
    CHECK(out->SharesBufferWith(input));
  }
  SECTION("to a scalar and back") {
    Tensor one = MakeTensor<int32_t>({1, 1}, {42});
    auto out = Op("Reshape").Attr("T", DT_INT32).Input(one).Input(Vec<int32_t>({})).RunOne();
    REQUIRE(out.ok());
    CHECK(out->shape().dims() == 0);
    CHECK(out->scalar<int32_t>() == 42);
  }
  SECTION("an empty tensor with -1 next to non-zero dims") {
    Tensor empty = Filled<float>({0, 4}, {});
    auto out = Op("Reshape").Attr("T", DT_FLOAT).Input(empty).Input(Vec<int32_t>({2, -1})).RunOne();
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == std::vector<int64_t>{2, 0});
  }
}

TEST_CASE("Reshape errors name the element counts and both shapes", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto reshape = [&](std::vector<int32_t> dims) {
    return ErrorOf(
        Op("Reshape").Attr("T", DT_FLOAT).Input(input).Input(Vec<int32_t>(dims)).RunOne());
  };
  const std::string count = reshape({2, 2});
  CHECK_THAT(count,
             Contains("Input to reshape is a tensor with 6 values, but the requested shape has 4"));
  CHECK_THAT(count, Contains("input shape [2,3]"));
  CHECK_THAT(count, Contains("requested shape [2,2]"));
  CHECK_THAT(reshape({-1, 4}), Contains("Input to reshape is a tensor with 6 values, but the "
                                        "requested shape requires a multiple of 4"));
  CHECK_THAT(reshape({-1, -1}), Contains("Only one input size may be -1, not both 0 and 1"));
  CHECK_THAT(reshape({3, -2}), Contains("Size 1 must be non-negative, not -2"));
  CHECK_THAT(ErrorOf(Op("Reshape")
                         .Attr("T", DT_FLOAT)
                         .Input(input)
                         .Input(MakeTensor<int32_t>({1, 2}, {2, 3}))
                         .RunOne()),
             Contains("sizes input must be 1-D, not [1,2]"));
  Tensor empty = Filled<float>({0, 4}, {});
  CHECK_THAT(
      ErrorOf(Op("Reshape").Attr("T", DT_FLOAT).Input(empty).Input(Vec<int32_t>({0, -1})).RunOne()),
      Contains("Reshape cannot infer the missing input size for an empty tensor"));
  CHECK_THAT(ErrorOf(Op("Reshape")
                         .Attr("T", DT_FLOAT)
                         .Attr("Tshape", DT_INT64)
                         .Input(input)
                         .Input(Vec<int64_t>({1LL << 40, 1LL << 40}))
                         .RunOne()),
             Contains("too many elements"));
}

TEST_CASE("ExpandDims inserts a size-1 dim as a view of the input", "[kernels][array]") {
  Tensor input = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto expand = [&](int64_t dim) {
    return Op("ExpandDims")
        .Attr("T", DT_INT32)
        .Attr("Tdim", DT_INT64)
        .Input(input)
        .Input(Scalar<int64_t>(dim))
        .RunOne();
  };
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> cases = {
      {0, {1, 2, 3}}, {1, {2, 1, 3}}, {2, {2, 3, 1}}, {-1, {2, 3, 1}}, {-3, {1, 2, 3}}};
  for (const auto& [dim, dims] : cases) {
    INFO("dim " << dim);
    auto out = expand(dim);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == dims);
    CHECK(out->SharesBufferWith(input));
  }
  auto from_vector =
      Op("ExpandDims").Attr("T", DT_INT32).Input(input).Input(Vec<int32_t>({0})).RunOne();
  REQUIRE(from_vector.ok());
  CHECK(DimsOf(*from_vector) == std::vector<int64_t>{1, 2, 3});
}

TEST_CASE("ExpandDims rejects out-of-range and multi-valued dims", "[kernels][array]") {
  Tensor input = MakeTensor<int32_t>({2, 3}, {});
  CHECK_THAT(
      ErrorOf(Op("ExpandDims").Attr("T", DT_INT32).Input(input).Input(Scalar<int32_t>(3)).RunOne()),
      Contains("Tried to expand dim index 3 for tensor with 2 dimensions (input shape [2,3])"));
  CHECK_THAT(
      ErrorOf(
          Op("ExpandDims").Attr("T", DT_INT32).Input(input).Input(Scalar<int32_t>(-4)).RunOne()),
      Contains("Tried to expand dim index -4"));
  CHECK_THAT(
      ErrorOf(
          Op("ExpandDims").Attr("T", DT_INT32).Input(input).Input(Vec<int32_t>({0, 1})).RunOne()),
      Contains("'dim' must be a tensor with a single value, got shape [2]"));
}

TEST_CASE("Squeeze removes size-1 dims as a view of the input", "[kernels][array]") {
  Tensor input = MakeTensor<float>({1, 2, 1, 3, 1}, {1, 2, 3, 4, 5, 6});
  auto all = Op("Squeeze").Attr("T", DT_FLOAT).Input(input).RunOne();
  REQUIRE(all.ok());
  CHECK(DimsOf(*all) == std::vector<int64_t>{2, 3});
  CHECK(all->SharesBufferWith(input));
  auto some = Op("Squeeze")
                  .Attr("T", DT_FLOAT)
                  .Attr("squeeze_dims", std::vector<int64_t>{0, -1})
                  .Input(input)
                  .RunOne();
  REQUIRE(some.ok());
  CHECK(DimsOf(*some) == std::vector<int64_t>{2, 1, 3});
  CHECK(some->SharesBufferWith(input));
}

TEST_CASE("Squeeze rejects dims that are not 1 or out of range, naming the shape",
          "[kernels][array]") {
  Tensor input = MakeTensor<float>({1, 2, 1}, {});
  CHECK_THAT(
      ErrorOf(Op("Squeeze")
                  .Attr("T", DT_FLOAT)
                  .Attr("squeeze_dims", std::vector<int64_t>{1})
                  .Input(input)
                  .RunOne()),
      Contains("Can not squeeze dim[1], expected a dimension of 1, got 2 (input shape [1,2,1])"));
  CHECK_THAT(
      ErrorOf(Op("Squeeze")
                  .Attr("T", DT_FLOAT)
                  .Attr("squeeze_dims", std::vector<int64_t>{3})
                  .Input(input)
                  .RunOne()),
      Contains("Tried to squeeze dim index 3 for tensor with 3 dimensions (input shape [1,2,1])"));
}

// ---------------------------------------------------------------------------------------
// Cast.

TEST_CASE("Cast float to int32 truncates toward zero", "[kernels][array]") {
  auto out = Op("Cast")
                 .Attr("SrcT", DT_FLOAT)
                 .Attr("DstT", DT_INT32)
                 .Input(Vec<float>({1.7f, -1.7f, 0.5f, -0.5f, 3.0f}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{1, -1, 0, 0, 3});
}

TEST_CASE("Cast to and from bool uses nonzero and 0/1", "[kernels][array]") {
  auto to_bool = Op("Cast")
                     .Attr("SrcT", DT_FLOAT)
                     .Attr("DstT", DT_BOOL)
                     .Input(Vec<float>({0.0f, 0.1f, -2.0f}))
                     .RunOne();
  REQUIRE(to_bool.ok());
  CHECK(Values<bool>(*to_bool) == std::vector<bool>{false, true, true});
  auto from_bool = Op("Cast")
                       .Attr("SrcT", DT_BOOL)
                       .Attr("DstT", DT_FLOAT)
                       .Input(MakeTensor<bool>({2}, {true, false}))
                       .RunOne();
  REQUIRE(from_bool.ok());
  CHECK(Values<float>(*from_bool) == std::vector<float>{1.0f, 0.0f});
  auto int_to_bool =
      Op("Cast").Attr("SrcT", DT_INT64).Attr("DstT", DT_BOOL).Input(Vec<int64_t>({0, 5})).RunOne();
  REQUIRE(int_to_bool.ok());
  CHECK(Values<bool>(*int_to_bool) == std::vector<bool>{false, true});
}

TEST_CASE("Cast converts between integer and floating dtypes", "[kernels][array]") {
  auto widened = Op("Cast")
                     .Attr("SrcT", DT_INT64)
                     .Attr("DstT", DT_DOUBLE)
                     .Input(Vec<int64_t>({-3, 1LL << 40}))
                     .RunOne();
  REQUIRE(widened.ok());
  CHECK(Values<double>(*widened) == std::vector<double>{-3.0, 1099511627776.0});
  auto wrapped = Op("Cast")
                     .Attr("SrcT", DT_INT32)
                     .Attr("DstT", DT_UINT8)
                     .Input(Vec<int32_t>({300, -1}))
                     .RunOne();
  REQUIRE(wrapped.ok());
  CHECK(Values<uint8_t>(*wrapped) == std::vector<uint8_t>{44, 255});
  auto truncated = Op("Cast")
                       .Attr("SrcT", DT_FLOAT)
                       .Attr("DstT", DT_FLOAT)
                       .Attr("Truncate", true)
                       .Input(Vec<float>({1.5f}))
                       .RunOne();
  REQUIRE(truncated.ok());
  CHECK(Values<float>(*truncated) == std::vector<float>{1.5f});
}

TEST_CASE("Cast gives defined results for NaN and out-of-range floats", "[kernels][array]") {
  auto out = Op("Cast")
                 .Attr("SrcT", DT_DOUBLE)
                 .Attr("DstT", DT_INT32)
                 .Input(Vec<double>({std::nan(""), 1e12, -1e12}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                                                      std::numeric_limits<int32_t>::min()});
}

TEST_CASE("Cast to the same dtype forwards the input buffer", "[kernels][array]") {
  Tensor input = Vec<int32_t>({1, 2});
  auto out = Op("Cast").Attr("SrcT", DT_INT32).Attr("DstT", DT_INT32).Input(input).RunOne();
  REQUIRE(out.ok());
  CHECK(out->SharesBufferWith(input));
}

// ---------------------------------------------------------------------------------------
// Transpose.

// out[i0..in] = in[...] with out axis k = in axis perm[k], the obvious way.
template <typename T>
std::vector<T> NaiveTranspose(const std::vector<T>& in, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> in_strides(rank, 1), out_dims(rank);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * dims[i];
  for (size_t k = 0; k < rank; ++k) out_dims[k] = dims[perm[k]];
  std::vector<T> out(in.size());
  for (size_t linear = 0; linear < in.size(); ++linear) {
    size_t rest = linear;
    int64_t offset = 0;
    for (size_t k = rank; k-- > 0;) {
      offset += static_cast<int64_t>(rest % out_dims[k]) * in_strides[perm[k]];
      rest /= out_dims[k];
    }
    out[linear] = in[offset];
  }
  return out;
}

std::vector<float> Iota(int64_t n) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

// Checks Transpose of an iota tensor of `dims` under every permutation.
void CheckAllPermutations(const std::vector<int64_t>& dims) {
  const int64_t n = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  const std::vector<float> values = Iota(n);
  Tensor input = Filled<float>(dims, values);
  std::vector<int64_t> perm(dims.size());
  std::iota(perm.begin(), perm.end(), 0);
  do {
    INFO("dims " << TensorShape(dims).DebugString() << " perm " << TensorShape(perm).DebugString());
    std::vector<int32_t> perm32(perm.begin(), perm.end());
    auto out =
        Op("Transpose").Attr("T", DT_FLOAT).Input(input).Input(Vec<int32_t>(perm32)).RunOne();
    REQUIRE(out.ok());
    std::vector<int64_t> out_dims;
    for (int64_t p : perm) out_dims.push_back(dims[p]);
    CHECK(DimsOf(*out) == out_dims);
    CHECK(Values<float>(*out) == NaiveTranspose(values, dims, perm));
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST_CASE("Transpose of 2-D matrices matches the reference, including tiled sizes",
          "[kernels][array]") {
  auto small = Op("Transpose")
                   .Attr("T", DT_FLOAT)
                   .Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .Input(Vec<int32_t>({1, 0}))
                   .RunOne();
  REQUIRE(small.ok());
  CHECK(DimsOf(*small) == std::vector<int64_t>{3, 2});
  CHECK(Values<float>(*small) == std::vector<float>{1, 4, 2, 5, 3, 6});
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{33, 65}, {300, 517}, {3, 4000}, {2049, 2}}) {
    CheckAllPermutations(dims);
  }
}

TEST_CASE("Transpose of 3-D tensors matches the reference for every permutation",
          "[kernels][array]") {
  CheckAllPermutations({2, 3, 4});
  CheckAllPermutations({5, 1, 7});
  CheckAllPermutations({40, 33, 70});
}

TEST_CASE("Transpose of 4-D tensors matches the reference for every permutation",
          "[kernels][array]") {
  CheckAllPermutations({2, 3, 4, 5});
  CheckAllPermutations({3, 1, 2, 1});
  CheckAllPermutations({4, 17, 19, 36});
}

TEST_CASE("Transpose handles 5-D tensors, int64 perms and other dtypes", "[kernels][array]") {
  CheckAllPermutations({2, 3, 2, 4, 3});
  const std::vector<int64_t> dims = {3, 4, 5};
  const std::vector<int64_t> perm = {2, 0, 1};
  SECTION("int64 perm, int8 values") {
    std::vector<int8_t> values(60);
    std::iota(values.begin(), values.end(), int8_t{0});
    auto out = Op("Transpose")
                   .Attr("T", DT_INT8)
                   .Attr("Tperm", DT_INT64)
                   .Input(Filled<int8_t>(dims, values))
                   .Input(Vec<int64_t>(perm))
                   .RunOne();
    REQUIRE(out.ok());
    CHECK(Values<int8_t>(*out) == NaiveTranspose(values, dims, perm));
  }
  SECTION("double, bool and string") {
    std::vector<double> d(60);
    std::iota(d.begin(), d.end(), 0.5);
    auto dout = Op("Transpose")
                    .Attr("T", DT_DOUBLE)
                    .Input(Filled<double>(dims, d))
                    .Input(Vec<int32_t>({2, 0, 1}))
                    .RunOne();
    REQUIRE(dout.ok());
    CHECK(Values<double>(*dout) == NaiveTranspose(d, dims, perm));
    std::vector<std::string> s;
    for (int i = 0; i < 60; ++i) s.push_back(std::to_string(i));
    auto sout = Op("Transpose")
                    .Attr("T", DT_STRING)
                    .Input(Filled<std::string>(dims, s))
                    .Input(Vec<int32_t>({2, 0, 1}))
                    .RunOne();
    REQUIRE(sout.ok());
    CHECK(Values<std::string>(*sout) == NaiveTranspose(s, dims, perm));
  }
  SECTION("complex128 moves 16-byte elements") {
    std::vector<std::complex<double>> c(60);
    for (int i = 0; i < 60; ++i) c[i] = {double(i), -double(i)};
    Tensor input =
        *Tensor::Allocate(TestCpuDevice()->allocator(), DT_COMPLEX128, TensorShape(dims));
    std::copy(c.begin(), c.end(), input.data<std::complex<double>>());
    auto out = Op("Transpose")
                   .Attr("T", DT_COMPLEX128)
                   .Input(input)
                   .Input(Vec<int32_t>({2, 0, 1}))
                   .RunOne();
    REQUIRE(out.ok());
    const auto* data = out->data<std::complex<double>>();
    CHECK(std::vector<std::complex<double>>(data, data + 60) == NaiveTranspose(c, dims, perm));
  }
}

TEST_CASE("Transpose that moves no data returns a view", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  // Moving only a size-1 dim keeps the element order.
  for (const std::vector<int32_t>& perm :
       std::vector<std::vector<int32_t>>{{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {2, 1, 0}}) {
    auto out = Op("Transpose").Attr("T", DT_FLOAT).Input(input).Input(Vec<int32_t>(perm)).RunOne();
    REQUIRE(out.ok());
    const bool moves_data = perm == std::vector<int32_t>{2, 1, 0};
    CHECK(out->SharesBufferWith(input) == !moves_data);
  }
  auto scalar =
      Op("Transpose").Attr("T", DT_FLOAT).Input(Scalar(2.0f)).Input(Vec<int32_t>({})).RunOne();
  REQUIRE(scalar.ok());
  CHECK(scalar->scalar<float>() == 2.0f);
  auto empty = Op("Transpose")
                   .Attr("T", DT_FLOAT)
                   .Input(Filled<float>({0, 3, 2}, {}))
                   .Input(Vec<int32_t>({2, 1, 0}))
                   .RunOne();
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == std::vector<int64_t>{2, 3, 0});
}

TEST_CASE("Transpose rejects perms that are not permutations of the input's dims",
          "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 3}, {});
  const auto transpose = [&](Tensor perm) {
    return ErrorOf(Op("Transpose").Attr("T", DT_FLOAT).Input(input).Input(perm).RunOne());
  };
  CHECK_THAT(transpose(Vec<int32_t>({0})),
             Contains("transpose expects a vector of size 2. But input(1) is a vector of size 1 "
                      "(input shape [2,3])"));
  CHECK_THAT(transpose(Vec<int32_t>({0, 2})),
             Contains("2 is out of range [0 .. 2) in perm [0,2] (input shape [2,3])"));
  CHECK_THAT(transpose(Vec<int32_t>({0, -1})), Contains("-1 is out of range"));
  CHECK_THAT(transpose(Vec<int32_t>({1, 1})), Contains("0 is missing from perm [1,1]"));
  CHECK_THAT(transpose(MakeTensor<int32_t>({1, 2}, {1, 0})),
             Contains("perm must be a vector, not [1,2]"));
}

// ---------------------------------------------------------------------------------------
// ConcatV2, Concat, Pack, Unpack.

absl::StatusOr<Tensor> ConcatV2(const std::vector<Tensor>& values, int64_t axis,
                                DataType dtype = DT_FLOAT) {
  OpTester op = Op("ConcatV2");
  op.Attr("N", static_cast<int64_t>(values.size())).Attr("T", dtype).Attr("Tidx", DT_INT64);
  for (const Tensor& value : values) op.Input(value);
  return op.Input(Scalar<int64_t>(axis)).RunOne();
}

TEST_CASE("ConcatV2 joins inputs along axis 0, 1 and -1", "[kernels][array]") {
  Tensor a = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  Tensor b = MakeTensor<float>({2, 1}, {5, 6});
  Tensor c = MakeTensor<float>({1, 2}, {7, 8});
  auto rows = ConcatV2({a, c}, 0);
  REQUIRE(rows.ok());
  CHECK(DimsOf(*rows) == std::vector<int64_t>{3, 2});
  CHECK(Values<float>(*rows) == std::vector<float>{1, 2, 3, 4, 7, 8});
  for (int64_t axis : {1, -1}) {
    auto cols = ConcatV2({a, b, a}, axis);
    REQUIRE(cols.ok());
    CHECK(DimsOf(*cols) == std::vector<int64_t>{2, 5});
    CHECK(Values<float>(*cols) == std::vector<float>{1, 2, 5, 1, 2, 3, 4, 6, 3, 4});
  }
  auto empty = ConcatV2({a, Filled<float>({2, 0}, {})}, 1);
  REQUIRE(empty.ok());
  CHECK(Values<float>(*empty) == Values<float>(a));
}

TEST_CASE("ConcatV2 handles int32 axes, strings and large row-parallel copies",
          "[kernels][array]") {
  auto v2 = Op("ConcatV2")
                .Attr("N", 2)
                .Attr("T", DT_STRING)
                .Input(MakeTensor<std::string>({1}, {"a"}))
                .Input(MakeTensor<std::string>({2}, {"b", "c"}))
                .Input(Scalar<int32_t>(0))
                .RunOne();
  REQUIRE(v2.ok());
  CHECK(Values<std::string>(*v2) == std::vector<std::string>{"a", "b", "c"});
  std::vector<int32_t> left(4000 * 30), right(4000 * 20);
  std::iota(left.begin(), left.end(), 0);
  std::iota(right.begin(), right.end(), 1000000);
  auto big = Op("ConcatV2")
                 .Attr("N", 2)
                 .Attr("T", DT_INT32)
                 .Input(Filled<int32_t>({4000, 30}, left))
                 .Input(Filled<int32_t>({4000, 20}, right))
                 .Input(Scalar<int32_t>(1))
                 .RunOne();
  REQUIRE(big.ok());
  const std::vector<int32_t> out = Values<int32_t>(*big);
  bool match = true;
  for (int r = 0; r < 4000; ++r) {
    for (int j = 0; j < 50; ++j) {
      match &= out[r * 50 + j] == (j < 30 ? left[r * 30 + j] : right[r * 20 + j - 30]);
    }
  }
  CHECK(match);
}

TEST_CASE("Concat (v1) takes its axis first", "[kernels][array]") {
  auto out = Op("Concat")
                 .Attr("N", 2)
                 .Attr("T", DT_INT64)
                 .Input(Scalar<int32_t>(-1))
                 .Input(MakeTensor<int64_t>({2, 1}, {1, 2}))
                 .Input(MakeTensor<int64_t>({2, 1}, {3, 4}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<int64_t>(*out) == std::vector<int64_t>{1, 3, 2, 4});
}

TEST_CASE("ConcatV2 errors name the mismatching input and shapes", "[kernels][array]") {
  Tensor a = MakeTensor<float>({2, 3}, {});
  CHECK_THAT(
      ErrorOf(ConcatV2({a, MakeTensor<float>({2, 3, 1}, {})}, 0)),
      Contains("Ranks of all input tensors should match: shape[0] = [2,3] vs. shape[1] = [2,3,1]"));
  CHECK_THAT(ErrorOf(ConcatV2({a, a, MakeTensor<float>({4, 3}, {})}, 1)),
             Contains("Dimension 0 in both shapes must be equal: shape[0] = [2,3] vs. "
                      "shape[2] = [4,3]"));
  CHECK_THAT(ErrorOf(ConcatV2({a, a}, 2)),
             Contains("Expected concatenating dimensions in the range [-2, 2), but got 2"));
  CHECK_THAT(ErrorOf(ConcatV2({a, a}, -3)), Contains("but got -3"));
  CHECK_THAT(ErrorOf(ConcatV2({Scalar(1.0f), Scalar(2.0f)}, 0)),
             Contains("Can't concatenate scalars (use tf.stack instead)"));
  CHECK_THAT(ErrorOf(Op("ConcatV2")
                         .Attr("N", 2)
                         .Attr("T", DT_FLOAT)
                         .Input(a)
                         .Input(a)
                         .Input(Vec<int32_t>({0, 1}))
                         .RunOne()),
             Contains("axis tensor should be a scalar integer, but got shape [2]"));
}

absl::StatusOr<Tensor> Pack(const std::vector<Tensor>& values, int64_t axis) {
  OpTester op = Op("Pack");
  op.Attr("N", static_cast<int64_t>(values.size())).Attr("T", values[0].dtype()).Attr("axis", axis);
  for (const Tensor& value : values) op.Input(value);
  return op.RunOne();
}

TEST_CASE("Pack stacks inputs along a new axis 0, 1 or -1", "[kernels][array]") {
  Tensor a = MakeTensor<int32_t>({2}, {1, 2});
  Tensor b = MakeTensor<int32_t>({2}, {3, 4});
  Tensor c = MakeTensor<int32_t>({2}, {5, 6});
  auto axis0 = Pack({a, b, c}, 0);
  REQUIRE(axis0.ok());
  CHECK(DimsOf(*axis0) == std::vector<int64_t>{3, 2});
  CHECK(Values<int32_t>(*axis0) == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  for (int64_t axis : {1, -1}) {
    auto stacked = Pack({a, b, c}, axis);
    REQUIRE(stacked.ok());
    CHECK(DimsOf(*stacked) == std::vector<int64_t>{2, 3});
    CHECK(Values<int32_t>(*stacked) == std::vector<int32_t>{1, 3, 5, 2, 4, 6});
  }
  auto scalars = Pack({Scalar(1.5f), Scalar(2.5f)}, 0);
  REQUIRE(scalars.ok());
  CHECK(Values<float>(*scalars) == std::vector<float>{1.5f, 2.5f});
  auto single = Pack({a}, 0);
  REQUIRE(single.ok());
  CHECK(DimsOf(*single) == std::vector<int64_t>{1, 2});
  CHECK(single->SharesBufferWith(a));
}

TEST_CASE("Pack rejects mismatching shapes and out-of-range axes", "[kernels][array]") {
  Tensor a = MakeTensor<float>({2, 3}, {});
  CHECK_THAT(
      ErrorOf(Pack({a, MakeTensor<float>({3, 2}, {})}, 0)),
      Contains(
          "Shapes of all inputs must match: values[0].shape = [2,3] != values[1].shape = [3,2]"));
  CHECK_THAT(ErrorOf(Pack({a, a}, 3)), Contains("axis = 3 not in [-3, 3)"));
  CHECK_THAT(ErrorOf(Pack({a, a}, -4)), Contains("axis = -4 not in [-3, 3)"));
}

TEST_CASE("Unpack splits a tensor along an axis into num outputs", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = Op("Unpack").Attr("num", 2).Attr("T", DT_FLOAT).Input(input).Run();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK(Values<float>((*rows)[0]) == std::vector<float>{1, 2, 3});
  CHECK(Values<float>((*rows)[1]) == std::vector<float>{4, 5, 6});
  auto cols = Op("Unpack").Attr("num", 3).Attr("T", DT_FLOAT).Attr("axis", -1).Input(input).Run();
  REQUIRE(cols.ok());
  REQUIRE(cols->size() == 3);
  CHECK(DimsOf((*cols)[2]) == std::vector<int64_t>{2});
  CHECK(Values<float>((*cols)[0]) == std::vector<float>{1, 4});
  CHECK(Values<float>((*cols)[2]) == std::vector<float>{3, 6});
}

TEST_CASE("Unpack rejects a wrong num or axis, naming the shape", "[kernels][array]") {
  Tensor input = MakeTensor<float>({2, 3}, {});
  CHECK_THAT(ErrorOf(Op("Unpack").Attr("num", 3).Attr("T", DT_FLOAT).Input(input).Run()),
             Contains("Input shape axis 0 must equal 3, got shape [2,3]"));
  CHECK_THAT(
      ErrorOf(Op("Unpack").Attr("num", 2).Attr("T", DT_FLOAT).Attr("axis", 2).Input(input).Run()),
      Contains("axis = 2 not in [-2, 2) (input shape [2,3])"));
}

}  // namespace
}  // namespace dflow
