// TensorArrayV3 family and StackV2 family kernels (kernels/cpu/tensor_array_ops.cc,
// stack_ops.cc), chained through one step's resources: values, unwritten slots, gradient
// arrays, and TF 2.21's error texts (recorded with tf.raw_ops in a tf.compat.v1.Session).
// Whole TF 1 graphs using them (dynamic_rnn, scan, map_fn, a while loop writing an array,
// a dynamic_rnn gradient) are zoo goldens: tests/data/zoo/goldens/tf1_*.json.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/step_resources.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;

absl::Status RegisterBoth(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterTensorArrayKernels(r));
  return RegisterStackKernels(r);
}
const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterBoth); }

Tensor I32(int v) { return Filled<int32_t>({}, {v}); }
Tensor F32(float v) { return Filled<float>({}, {v}); }
Tensor Flow() { return F32(0); }

// One step: its resources and the ops run in it.
class Step {
 public:
  OpTester Op(const std::string& op) { return std::move(OpTester(op, Registry()).Step(&resources_, 7)); }

  Tensor NewArray(int size, bool dynamic = false, std::vector<int64_t> element_shape = {},
                  bool known_shape = false, bool clear_after_read = true,
                  bool identical = false) {
    OpTester t = Op("TensorArrayV3");
    t.Attr("dtype", DT_FLOAT)
        .Attr("dynamic_size", dynamic)
        .Attr("clear_after_read", clear_after_read)
        .Attr("identical_element_shapes", identical)
        .Attr("tensor_array_name", "foo")
        .Input(I32(size));
    if (known_shape) t.Attr("element_shape", ShapeAttr(element_shape));
    auto out = t.Run();
    REQUIRE(out.ok());
    REQUIRE(out->size() == 2);
    CHECK(Values<float>((*out)[1]) == std::vector<float>{0});
    return (*out)[0];
  }

  absl::Status Write(const Tensor& h, int index, const Tensor& value) {
    return Op("TensorArrayWriteV3").Attr("T", value.dtype()).Input(h).Input(I32(index))
        .Input(value).Input(Flow()).Run().status();
  }
  absl::StatusOr<Tensor> Read(const Tensor& h, int index, DataType dtype = DT_FLOAT) {
    return Op("TensorArrayReadV3").Attr("dtype", dtype).Input(h).Input(I32(index))
        .Input(Flow()).RunOne();
  }
  absl::StatusOr<Tensor> Gather(const Tensor& h, const std::vector<int32_t>& indices) {
    return Op("TensorArrayGatherV3").Attr("dtype", DT_FLOAT).Input(h)
        .Input(Vec<int32_t>(indices)).Input(Flow()).RunOne();
  }
  int Size(const Tensor& h) {
    auto out = Op("TensorArraySizeV3").Input(h).Input(Flow()).RunOne();
    REQUIRE(out.ok());
    return out->scalar<int32_t>();
  }

  static AttrValue ShapeAttr(const std::vector<int64_t>& dims) {
    AttrValue v;
    for (int64_t d : dims) v.mutable_shape()->add_dim()->set_size(d);
    return v;
  }

 private:
  StepResources resources_;
};

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("TensorArray writes, reads and sizes; unwritten slots", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(3);
  CHECK(h.scalar<ResourceHandleProto>().name() == "foo_0");
  CHECK(h.scalar<ResourceHandleProto>().container() == "__per_step_7");
  REQUIRE(step.Write(h, 1, Vec<float>({1, 2})).ok());
  CHECK(step.Size(h) == 3);
  auto v = step.Read(h, 1);
  REQUIRE(v.ok());
  CHECK(Values<float>(*v) == std::vector<float>{1, 2});
  // Cleared after the read, as clear_after_read (the default) says.
  CHECK(Message(step.Read(h, 1).status()) ==
        "TensorArray foo_0: Could not read index 1 twice because it was cleared after a "
        "previous read (perhaps try setting clear_after_read = false?).");
  CHECK(Message(step.Read(h, 0).status()) ==
        "TensorArray foo_0: Could not read from TensorArray index 0.  Furthermore, the element "
        "shape is not fully defined: <unknown>.  It is possible you are working with a "
        "resizeable TensorArray and stop_gradients is not allowing the gradients to be "
        "written.  If you set the full element_shape property on the forward TensorArray, the "
        "proper all-zeros tensor will be returned instead of incurring this error.");
  CHECK(Message(step.Read(h, 7).status()) == "Tried to read from index 7 but array size is: 3");
  CHECK(Message(step.Read(h, 2, DT_INT32).status()) ==
        "TensorArray dtype is float but Op requested dtype int32.");

  Tensor known = step.NewArray(2, false, {2}, true);
  CHECK(known.scalar<ResourceHandleProto>().name() == "foo_1");
  auto zeros = step.Read(known, 1);
  REQUIRE(zeros.ok());
  CHECK(Values<float>(*zeros) == std::vector<float>{0, 0});
}

TEST_CASE("TensorArray write errors are TF's", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(3);
  CHECK(Message(step.Write(h, 5, F32(1))) ==
        "TensorArray foo_0: Tried to write to index 5 but array is not resizeable and size is: 3");
  CHECK(Message(step.Write(h, -1, F32(1))) ==
        "TensorArray foo_0: Tried to write to index -1 but array is not resizeable and size is: 3");
  REQUIRE(step.Write(h, 1, F32(1)).ok());
  CHECK(Message(step.Write(h, 1, F32(2))) ==
        "TensorArray foo_0: Could not write to TensorArray index 1 because it has already been "
        "written to.");
  CHECK(Message(step.Write(h, 2, Vec<int32_t>({1, 2}))) ==
        "TensorArray dtype is float but Op is trying to write dtype int32.");

  Tensor inferred = step.NewArray(2, false, {}, false, true, /*identical=*/true);
  REQUIRE(step.Write(inferred, 0, Vec<float>({1, 2})).ok());
  CHECK(Message(step.Write(inferred, 1, Vec<float>({1, 2, 3}))) ==
        "TensorArray foo_1: Could not write to TensorArray index 1 because the value shape is "
        "[3] which is incompatible with the TensorArray's inferred element shape: [2] (consider "
        "setting infer_shape=False).");
}

TEST_CASE("A dynamic TensorArray grows on writes past its size", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(1, /*dynamic=*/true);
  REQUIRE(step.Write(h, 4, F32(1)).ok());
  CHECK(step.Size(h) == 5);
}

TEST_CASE("TensorArray gather packs slots and checks shapes", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(3, false, {}, false, /*clear_after_read=*/false);
  REQUIRE(step.Write(h, 0, Vec<float>({1, 2})).ok());
  REQUIRE(step.Write(h, 2, Vec<float>({5, 6})).ok());
  auto g = step.Gather(h, {2, 0, 2});
  REQUIRE(g.ok());
  CHECK(DimsOf(*g) == std::vector<int64_t>{3, 2});
  CHECK(Values<float>(*g) == std::vector<float>{5, 6, 1, 2, 5, 6});
  CHECK(step.Gather(h, {0, 1}).status().message().find("Could not read from TensorArray index 1") !=
        std::string::npos);
  REQUIRE(step.Write(h, 1, Vec<float>({1, 2, 3})).ok());
  CHECK(Message(step.Gather(h, {1, 0}).status()) ==
        "TensorArray has inconsistent shapes.  Index 0 has shape: [3] but index 1 has shape: [2]");

  Tensor empty = step.NewArray(0);
  auto unknown = step.Gather(empty, {});
  CHECK(unknown.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(Message(unknown.status()) ==
        "TensorArray has size zero, but element shape <unknown> is not fully defined. Currently "
        "only static shapes are supported when packing zero-size TensorArrays.");
  auto known = step.Op("TensorArrayGatherV3").Attr("dtype", DT_FLOAT)
                   .Attr("element_shape", Step::ShapeAttr({2})).Input(empty)
                   .Input(Vec<int32_t>({})).Input(Flow()).RunOne();
  REQUIRE(known.ok());
  CHECK(DimsOf(*known) == std::vector<int64_t>{0, 2});
}

TEST_CASE("TensorArray concat and split", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(2);
  REQUIRE(step.Write(h, 0, Filled<float>({1, 2}, {1, 2})).ok());
  REQUIRE(step.Write(h, 1, Filled<float>({2, 2}, {3, 4, 5, 6})).ok());
  auto c = step.Op("TensorArrayConcatV3").Attr("dtype", DT_FLOAT).Input(h).Input(Flow()).Run();
  REQUIRE(c.ok());
  CHECK(DimsOf((*c)[0]) == std::vector<int64_t>{3, 2});
  CHECK(Values<float>((*c)[0]) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(Values<int64_t>((*c)[1]) == std::vector<int64_t>{1, 2});

  Tensor scalars = step.NewArray(1);
  REQUIRE(step.Write(scalars, 0, F32(1)).ok());
  CHECK(Message(step.Op("TensorArrayConcatV3").Attr("dtype", DT_FLOAT).Input(scalars)
                    .Input(Flow()).Run().status()) ==
        "Concat saw a scalar shape at index 0 but requires at least vectors.  Did you mean to "
        "call pack?");

  auto split = [&](const Tensor& array, std::vector<int64_t> lengths) {
    return step.Op("TensorArraySplitV3").Attr("T", DT_FLOAT).Input(array)
        .Input(Vec<float>({1, 2, 3})).Input(Vec<int64_t>(lengths)).Input(Flow()).Run().status();
  };
  Tensor fixed = step.NewArray(2);
  CHECK(Message(split(fixed, {1, 1})) ==
        "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is 2 and "
        "value's shape is: [3]");
  CHECK(Message(split(fixed, {1, 1, 1})) ==
        "TensorArray's size is not equal to the size of lengths (2 vs. 3), and the TensorArray "
        "is not marked as dynamically resizeable");
  Tensor dynamic = step.NewArray(0, true);
  REQUIRE(split(dynamic, {1, 2}).ok());
  CHECK(step.Size(dynamic) == 2);
  auto second = step.Read(dynamic, 1);
  REQUIRE(second.ok());
  CHECK(Values<float>(*second) == std::vector<float>{2, 3});
}

TEST_CASE("TensorArray scatter", "[tensor_array]") {
  Step step;
  auto scatter = [&](const Tensor& array, std::vector<int32_t> indices) {
    return step.Op("TensorArrayScatterV3").Attr("T", DT_FLOAT).Input(array)
        .Input(Vec<int32_t>(indices)).Input(Filled<float>({2, 2}, {1, 2, 3, 4})).Input(Flow())
        .Run().status();
  };
  Tensor h = step.NewArray(2);
  REQUIRE(scatter(h, {1, 0}).ok());
  auto first = step.Read(h, 0);
  REQUIRE(first.ok());
  CHECK(Values<float>(*first) == std::vector<float>{3, 4});
  CHECK(Message(scatter(step.NewArray(2), {0, 5})) ==
        "Max scatter index must be < array size (5 vs. 2)");
  CHECK(Message(scatter(step.NewArray(2), {0, -1})) ==
        "TensorArray foo_2: Tried to write to index -1 but array is not resizeable and size is: 2");
}

TEST_CASE("Gradient TensorArrays sum repeated writes", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(2, false, {2}, true);
  REQUIRE(step.Write(h, 0, Vec<float>({1, 2})).ok());
  auto grad = [&] {
    auto out = step.Op("TensorArrayGradV3").Attr("source", "gradients").Input(h).Input(Flow()).Run();
    REQUIRE(out.ok());
    return (*out)[0];
  };
  Tensor g = grad();
  CHECK(g.scalar<ResourceHandleProto>().name() == "foo_0@gradients");
  REQUIRE(step.Write(g, 0, Vec<float>({1, 2})).ok());
  REQUIRE(step.Write(grad(), 0, Vec<float>({10, 20})).ok());  // the same array again
  CHECK(Message(step.Write(g, 0, Vec<float>({1, 2, 3}))).find(
            "incompatible with the TensorArray's inferred element shape: [2]") != std::string::npos);
  auto sum = step.Read(g, 0);
  REQUIRE(sum.ok());
  CHECK(Values<float>(*sum) == std::vector<float>{11, 22});
  auto unwritten = step.Read(g, 1);  // zeros of the forward element shape
  REQUIRE(unwritten.ok());
  CHECK(Values<float>(*unwritten) == std::vector<float>{0, 0});
  CHECK(step.Size(g) == 2);

  // Without a known element shape, a write of another shape fails at the sum.
  Tensor unknown = step.NewArray(1);
  auto ug = step.Op("TensorArrayGradV3").Attr("source", "gradients").Input(unknown)
                .Input(Flow()).Run();
  REQUIRE(ug.ok());
  REQUIRE(step.Write((*ug)[0], 0, Vec<float>({1, 2})).ok());
  CHECK(Message(step.Write((*ug)[0], 0, Vec<float>({1, 2, 3}))) ==
        "TensorArray foo_1@gradients: Could not aggregate to TensorArray index 0 because the "
        "existing shape is [2] but the new input shape is [3].");
}

TEST_CASE("A closed TensorArray, and a handle from another step", "[tensor_array]") {
  Step step;
  Tensor h = step.NewArray(1);
  REQUIRE(step.Op("TensorArrayCloseV3").Input(h).Run().ok());
  CHECK(Message(step.Write(h, 0, F32(1))) == "TensorArray foo_0 has already been closed.");

  Step other;
  auto stale = other.Read(h, 0);
  CHECK(stale.status().code() == absl::StatusCode::kNotFound);
  CHECK(Message(stale.status()) ==
        "Resource __per_step_7/foo_0/N10tensorflow11TensorArrayE does not exist.");
}

TEST_CASE("Stacks push and pop last-in first-out", "[stack]") {
  Step step;
  auto stack = step.Op("StackV2").Attr("elem_type", DT_FLOAT).Attr("stack_name", "st")
                   .Input(I32(-1)).RunOne();
  REQUIRE(stack.ok());
  const Tensor h = *stack;
  CHECK(h.scalar<ResourceHandleProto>().name() == "st_0");
  auto push = [&](const Tensor& v) {
    return step.Op("StackPushV2").Attr("T", v.dtype()).Input(h).Input(v).RunOne();
  };
  auto pop = [&](DataType dtype = DT_FLOAT) {
    return step.Op("StackPopV2").Attr("elem_type", dtype).Input(h).RunOne();
  };
  auto pushed = push(Vec<float>({1, 2}));
  REQUIRE(pushed.ok());
  CHECK(Values<float>(*pushed) == std::vector<float>{1, 2});
  REQUIRE(push(Vec<float>({3})).ok());
  CHECK(Values<float>(*pop()) == std::vector<float>{3});
  CHECK(Values<float>(*pop()) == std::vector<float>{1, 2});
  CHECK(Message(pop().status()) == "Stack[st_0] is empty when calling Pop().");
  CHECK(Message(push(I32(1)).status()) ==
        "Stack[st_0]: cannot push a int32 tensor onto a stack of float");
  REQUIRE(push(F32(1)).ok());
  CHECK(Message(pop(DT_INT32).status()) == "Stack[st_0] holds float but the op pops int32");
  REQUIRE(step.Op("StackCloseV2").Input(h).Run().ok());
  CHECK(push(F32(1)).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Outside a step, TensorArray ops say they need one", "[tensor_array]") {
  auto out = OpTester("TensorArrayV3", Registry()).Attr("dtype", DT_FLOAT).Input(I32(1)).Run();
  CHECK(out.status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("Hostile TensorArray inputs get errors, not crashes", "[tensor_array]") {
  Step step;
  auto huge = step.Op("TensorArrayV3").Attr("dtype", DT_FLOAT).Input(I32(2147483647)).Run();
  CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
  Tensor dynamic = step.NewArray(0, true);
  CHECK(step.Write(dynamic, 2147483600, F32(1)).code() == absl::StatusCode::kResourceExhausted);
  // An index that is not a scalar.
  Tensor h = step.NewArray(2);
  auto vector_index = step.Op("TensorArrayWriteV3").Attr("T", DT_FLOAT).Input(h)
                          .Input(Vec<int32_t>({})).Input(F32(1)).Input(Flow()).Run();
  CHECK(vector_index.status().message() == "TensorArray index must be scalar, but had shape: [0]");
  // A huge element shape: zeros for an unwritten slot would not fit int64.
  Tensor big = step.NewArray(1, false, {4294967296, 4294967296}, true);
  CHECK(step.Read(big, 0).status().code() == absl::StatusCode::kInvalidArgument);
  // Scatter of values of another dtype is refused before slicing them.
  auto ints = step.Op("TensorArrayScatterV3").Attr("T", DT_INT32).Input(step.NewArray(2))
                  .Input(Vec<int32_t>({0})).Input(Vec<int32_t>({7})).Input(Flow()).Run();
  CHECK(ints.status().message() == "TensorArray dtype is float but Op is trying to write dtype int32.");
  // Split lengths whose sum overflows int64.
  auto overflow = step.Op("TensorArraySplitV3").Attr("T", DT_FLOAT).Input(step.NewArray(0, true))
                      .Input(Filled<float>({0, 0}, {}))
                      .Input(Vec<int64_t>({INT64_MAX, INT64_MAX, 2})).Input(Flow()).Run();
  CHECK(overflow.status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
