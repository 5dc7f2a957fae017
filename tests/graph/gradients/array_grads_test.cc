// Numeric checks of array_grads.cc.
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "session/client_session.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

TEST_CASE("Reshape, ExpandDims, Squeeze, Identity, Transpose") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    Output r = Reshape(s, x[0], {3, 2});
    Output e = ExpandDims(s, r, 1);
    Output q = Squeeze(s, e, {1});
    Output t = Transpose(s, Identity(s, q), {1, 0});
    return {Weighted(s, t)};
  };
  CHECK(CheckGradient({{{2, 3}}}, f) < kTol);
}

TEST_CASE("ConcatV2 with a negative axis, Pack and Unpack") {
  auto concat = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, ConcatV2(s, {x[0], x[1]}, -1))};
  };
  CHECK(CheckGradient({{{2, 2}}, {{2, 3}}}, concat) < kTol);
  auto pack = [](const Scope& s, const Xs& x) -> Xs {
    OutputList parts = Unpack(s, Weighted(s, Pack(s, {x[0], x[1]}, 1)), 2, 0);
    return {Mul(s, parts[0], 2.0), parts[1]};
  };
  CHECK(CheckGradient({{{2, 3}}, {{2, 3}}}, pack) < kTol);
}

TEST_CASE("Slice and StridedSlice") {
  auto slice = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, Slice(s, x[0], {1, 0}, {2, -1}))};
  };
  CHECK(CheckGradient({{{3, 4}}}, slice) < kTol);
  auto strided = [](const Scope& s, const Xs& x) -> Xs {
    StridedSliceAttrs attrs;
    attrs.end_mask = 2;
    return {Weighted(s, StridedSlice(s, x[0], {0, 1}, {3, 0}, {2, 2}, attrs))};
  };
  CHECK(CheckGradient({{{3, 4}}}, strided) < kTol);
}

TEST_CASE("GatherV2 on axis 0 and 1, with repeated indices") {
  for (int axis : {0, 1}) {
    auto f = [axis](const Scope& s, const Xs& x) -> Xs {
      return {Weighted(s, GatherV2(s, x[0], {2, 0, 2}, axis))};
    };
    CHECK(CheckGradient({{{3, 3}}}, f) < kTol);
  }
}

TEST_CASE("Tile, Pad, BroadcastTo, Fill") {
  auto tile = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, Tile(s, x[0], {2, 3}))};
  };
  CHECK(CheckGradient({{{2, 2}}}, tile) < kTol);
  auto pad = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, Pad(s, x[0], {{1, 0}, {2, 1}}))};
  };
  CHECK(CheckGradient({{{2, 2}}}, pad) < kTol);
  auto broadcast = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, BroadcastTo(s, x[0], {2, 3}))};
  };
  CHECK(CheckGradient({{{1, 3}}}, broadcast) < kTol);
  auto fill = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, Fill(s, {2, 2}, x[0]))};
  };
  CHECK(CheckGradient({{{}, {0.5}}}, fill) < kTol);
}

TEST_CASE("SelectV2 routes the gradient to the chosen side, with broadcasting") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    Output cond = Greater(s, x[0], 0.0);
    return {Weighted(s, SelectV2(s, cond, x[0], x[1]))};
  };
  CHECK(CheckGradient({{{2, 3}}, {{3}}}, f) < kTol);
}

TEST_CASE("Split, SplitV, ReverseV2") {
  auto split = [](const Scope& s, const Xs& x) -> Xs {
    Operation op = AddOp(s, "Split", {Input(1), x[0]}, {{"num_split", IntAttr(2)}});
    return {Weighted(s, op.output(0)), Mul(s, op.output(1), 3.0)};
  };
  CHECK(CheckGradient({{{2, 4}}}, split) < kTol);
  auto split_v = [](const Scope& s, const Xs& x) -> Xs {
    Operation op = AddOp(s, "SplitV", {x[0], Input({1, 3}), Input(-1)},
                         {{"num_split", IntAttr(2)}});
    return {Weighted(s, op.output(1))};  // piece 0 unused: its gradient is zeros
  };
  CHECK(CheckGradient({{{2, 4}}}, split_v) < kTol);
  auto reverse = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, AddOp(s, "ReverseV2", {x[0], Input({1})}).output(0))};
  };
  CHECK(CheckGradient({{{2, 3}}}, reverse) < kTol);
}

TEST_CASE("UnsortedSegmentSum with a dropped (negative) id, TopKV2") {
  auto segments = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, AddOp(s, "UnsortedSegmentSum", {x[0], Input({2, -1, 0, 2}), Input(3)})
                            .output(0))};
  };
  CHECK(CheckGradient({{{4, 2}}}, segments) < kTol);
  auto top_k = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, AddOp(s, "TopKV2", {x[0], Input(2)}).output(0))};
  };
  CHECK(CheckGradient({{{2, 3, 4}}}, top_k) < kTol);
}

TEST_CASE("GatherNd (a repeated index sums) and ScatterNd") {
  auto gather = [](const Scope& s, const Xs& x) -> Xs {
    Output indices = Const(s, {{0, 1}, {2, 0}, {0, 1}});
    return {WeightedSum(s, AddOp(s, "GatherNd", {x[0], indices}).output(0))};
  };
  CHECK(CheckGradient({{{3, 2, 2}}}, gather) < kTol);
  auto scatter = [](const Scope& s, const Xs& x) -> Xs {
    Output indices = Const(s, {{1}, {3}});
    Output shape = Const(s, {4, 3});
    return {WeightedSum(s, AddOp(s, "ScatterNd", {indices, x[0], shape}).output(0))};
  };
  CHECK(CheckGradient({{{2, 3}}}, scatter) < kTol);
}

TEST_CASE("StopGradient blocks, the other path still counts") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output y = Add(root, Mul(root, StopGradient(root, x), x), x);  // d/dx = x + 1
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{x, MakeTensor(DT_DOUBLE, {2}, {2.0, -3.0})}}, grads, &out).ok());
  CHECK(ToDoubles(out[0]) == std::vector<double>{3.0, -2.0});
}

}  // namespace
}  // namespace dflow::testing
