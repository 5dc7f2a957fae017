// Gradients of TensorList ops (graph/gradients/list_grads.cc), each checked numerically:
// a list's gradient is a list, missing ones are zeros like it and meeting ones are summed
// (ZerosLike and AddN of lists), and a list carried through a while loop gets one too.
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "graph/while_loop.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

const AttrMap kDouble = {{"element_dtype", TypeAttr(DT_DOUBLE)}};

Output FromTensor(const Scope& s, const Output& t, Input element_shape) {
  return AddOp(s, "TensorListFromTensor", {t, element_shape}).output(0);
}
Output Stack(const Scope& s, const Output& list, Input element_shape) {
  return AddOp(s, "TensorListStack", {list, element_shape}, kDouble).output(0);
}
Output GetItem(const Scope& s, const Output& list, Input index, Input element_shape) {
  return AddOp(s, "TensorListGetItem", {list, index, element_shape}, kDouble).output(0);
}
Output SetItem(const Scope& s, const Output& list, Input index, const Output& item) {
  return AddOp(s, "TensorListSetItem", {list, index, item}, kDouble).output(0);
}

TEST_CASE("FromTensor and Stack undo each other's gradients") {
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output list = FromTensor(s, Tanh(s, in[0]), {2});
    return {WeightedSum(s, Stack(s, list, {2}))};
  };
  CHECK(CheckGradient({{{3, 2}}}, f) < kTol);
}

TEST_CASE("Items read twice from one list: the two list gradients are summed") {
  // Two GetItem gradients meet at the list (AddN of lists); item 1 is never read, so its
  // gradient stays an unset element and reads as zeros.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output list = FromTensor(s, in[0], {2});
    Output a = GetItem(s, list, 0, {2});
    Output b = GetItem(s, list, 2, {2});
    return {WeightedSum(s, Mul(s, Tanh(s, a), b))};
  };
  CHECK(CheckGradient({{{3, 2}}}, f) < kTol);
}

TEST_CASE("SetItem: the item's gradient, and zeros where it overwrote the list") {
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output list = FromTensor(s, in[0], {2});
    list = SetItem(s, list, 1, Square(s, in[1]));
    Output reserved = AddOp(s, "TensorListReserve", {Input({2}), Input(3)}, kDouble).output(0);
    reserved = SetItem(s, reserved, 2, Mul(s, in[1], 3.0));
    return {WeightedSum(s, Stack(s, list, {2})), WeightedSum(s, Stack(s, reserved, {2}))};
  };
  CHECK(CheckGradient({{{3, 2}}, {{2}}}, f) < kTol);
}

TEST_CASE("PushBack and PopBack mirror each other") {
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output list = AddOp(s, "EmptyTensorList", {Input({2}), Input(-1)}, kDouble).output(0);
    list = AddOp(s, "TensorListPushBack", {list, in[0]}).output(0);
    list = AddOp(s, "TensorListPushBack", {list, Tanh(s, in[1])}).output(0);
    Operation top = AddOp(s, "TensorListPopBack", {list, Input({2})}, kDouble);
    Operation bottom = AddOp(s, "TensorListPopBack", {top.output(0), Input({2})}, kDouble);
    return {WeightedSum(s, Mul(s, top.output(1), bottom.output(1)))};
  };
  CHECK(CheckGradient({{{2}}, {{2}}}, f) < kTol);
}

TEST_CASE("Scatter, Gather and ScatterIntoExistingList") {
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output list = AddOp(s, "TensorListScatterV2",
                        {in[0], Input({2, 0, 1}), Input({2}), Input(4)}).output(0);
    Output more = AddOp(s, "TensorListScatterIntoExistingList",
                        {list, Square(s, in[1]), Input({3})}).output(0);
    Output gathered = AddOp(s, "TensorListGather", {more, Input({1, 3, 2}), Input({2})},
                            kDouble).output(0);
    return {WeightedSum(s, Tanh(s, gathered))};
  };
  CHECK(CheckGradient({{{3, 2}}, {{1, 2}}}, f) < kTol);
}

TEST_CASE("Split and ConcatV2, and Resize") {
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output list = AddOp(s, "TensorListSplit", {in[0], Input({-1, 2}), Input({2, 3})})
                      .output(0);
    TensorProto empty;  // int64 [0]: no leading dims
    empty.set_dtype(DT_INT64);
    empty.mutable_tensor_shape()->add_dim()->set_size(0);
    Operation concat =
        AddOp(s, "TensorListConcatV2", {list, Input({-1, 2}), Const(s, empty)}, kDouble);
    Output rows = FromTensor(s, in[0], {2});
    Output resized = AddOp(s, "TensorListResize", {rows, Input(3)}).output(0);
    return {WeightedSum(s, Square(s, concat.output(0))),
            WeightedSum(s, Tanh(s, Stack(s, resized, {2})))};
  };
  CHECK(CheckGradient({{{5, 2}}}, f) < kTol);
}

TEST_CASE("A list carried by a while loop gets a list gradient through it") {
  // h <- tanh(h * w + x[i]), each step's h written into a list the loop carries; the
  // loss reads the stacked list: gradients flow back through the list, step by step.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Output outputs = AddOp(s, "TensorListReserve", {Input({2}), Input(3)}, kDouble).output(0);
    Xs out;
    REQUIRE(BuildWhileLoop(
                s, {Const(s, 0), in[2], outputs},
                [](const Scope& c, const Xs& v, Output* pred) {
                  *pred = Less(c, v[0], 3);
                  return c.status();
                },
                [&](const Scope& b, const Xs& v, Xs* next) {
                  Output step = GatherV2(b, in[0], v[0], 0);
                  Output h = Tanh(b, Add(b, Mul(b, v[1], in[1]), step));
                  *next = {Add(b, v[0], 1), h, SetItem(b, v[2], v[0], h)};
                  return b.status();
                },
                "rnn", &out)
                .ok());
    return {WeightedSum(s, Stack(s, out[2], {2}))};
  };
  CHECK(CheckGradient({{{3, 2}}, {{2}}, {{2}}}, f) < kTol);
}

}  // namespace
}  // namespace dflow::testing
