// Numeric checks of math_grads.cc: each op's symbolic Jacobian against central
// differences, in double precision.
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/ops.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

TEST_CASE("Binary ops with broadcasting") {
  using BinaryFn = Output (*)(const Scope&, Input, Input);
  const std::vector<std::pair<const char*, BinaryFn>> ops = {
      {"Add", Add},     {"AddV2", AddV2},     {"Sub", Sub},
      {"Mul", Mul},     {"RealDiv", RealDiv}, {"SquaredDifference", SquaredDifference},
      {"Maximum", Maximum}, {"Minimum", Minimum}};
  for (const auto& [name, fn] : ops) {
    SECTION(name) {
      // [2,3] against [3] and [2,1]: both inputs are broadcast.
      auto f = [fn = fn](const Scope& s, const Xs& x) -> Xs { return {fn(s, x[0], x[1])}; };
      CHECK(CheckGradient({{{2, 3}}, {{3}, SpreadValues(3, 1.0, 2.5)}}, f) < kTol);
      CHECK(CheckGradient({{{2, 1}, SpreadValues(2, 0.5, 2.0)},
                           {{1, 3}, SpreadValues(3, 0.5, 2.1)}},
                          f) < kTol);
      CHECK(CheckGradient({{{2, 3}}, {{}, {1.7}}}, f) < kTol);
    }
  }
}

TEST_CASE("Pow") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    return {AddOp(s, "Pow", {x[0], x[1]}).output(0)};
  };
  CHECK(CheckGradient({{{2, 2}, {0.5, 1.5, 2.0, 0.7}}, {{2}, {1.3, 2.2}}}, f) < kTol);
}

TEST_CASE("Unary ops") {
  using UnaryFn = Output (*)(const Scope&, Input);
  const std::vector<std::pair<const char*, UnaryFn>> ops = {
      {"Neg", Neg},   {"Abs", Abs},     {"Square", Square},   {"Sqrt", Sqrt},
      {"Rsqrt", Rsqrt}, {"Exp", Exp},   {"Log", Log},         {"Sigmoid", Sigmoid},
      {"Tanh", Tanh}};
  for (const auto& [name, fn] : ops) {
    SECTION(name) {
      auto f = [fn = fn](const Scope& s, const Xs& x) -> Xs { return {fn(s, x[0])}; };
      // Positive values keep Sqrt, Rsqrt and Log defined and Abs away from its kink.
      CHECK(CheckGradient({{{2, 3}, SpreadValues(6, 0.5, 1.0)}}, f) < kTol);
    }
  }
  SECTION("Reciprocal, Log1p") {
    for (const char* op : {"Reciprocal", "Log1p"}) {
      auto f = [op](const Scope& s, const Xs& x) -> Xs {
        return {AddOp(s, op, {x[0]}).output(0)};
      };
      CHECK(CheckGradient({{{4}, SpreadValues(4, 0.5, 1.0)}}, f) < kTol);
    }
  }
}

TEST_CASE("AddN sums a tensor reached along several paths") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    return {AddN(s, {x[0], Mul(s, x[0], x[1]), x[1]})};
  };
  CHECK(CheckGradient({{{3}}, {{3}}}, f) < kTol);
}

TEST_CASE("Cast between float types passes the gradient") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    return {Cast(s, Mul(s, Cast(s, x[0], DT_FLOAT), 3.0f), DT_DOUBLE)};
  };
  CHECK(CheckGradient({{{3}}}, f, 1e-2) < 1e-4);
}

TEST_CASE("MatMul with every transpose") {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      auto f = [ta, tb](const Scope& s, const Xs& x) -> Xs {
        return {MatMul(s, x[0], x[1], MatMulAttrs{ta, tb})};
      };
      std::vector<int64_t> a = ta ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3};
      std::vector<int64_t> b = tb ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4};
      CHECK(CheckGradient({{a, {}, DT_FLOAT}, {b, {}, DT_FLOAT}}, f, 1e-2) < 2e-3);
    }
  }
}

TEST_CASE("Reductions over constant, negative and all axes") {
  using ReduceFn = Output (*)(const Scope&, Input, Input, bool);
  const std::vector<std::pair<const char*, ReduceFn>> ops = {
      {"Sum", Sum}, {"Mean", Mean}, {"Max", Max}, {"Min", Min}, {"Prod", Prod}};
  for (const auto& [name, fn] : ops) {
    SECTION(name) {
      for (bool keep : {false, true}) {
        auto axis1 = [fn = fn, keep](const Scope& s, const Xs& x) -> Xs {
          return {fn(s, x[0], 1, keep)};
        };
        auto neg = [fn = fn, keep](const Scope& s, const Xs& x) -> Xs {
          return {fn(s, x[0], {-1, 0}, keep)};
        };
        auto all = [fn = fn, keep](const Scope& s, const Xs& x) -> Xs {
          return {fn(s, x[0], {0, 1, 2}, keep)};
        };
        CHECK(CheckGradient({{{2, 3, 2}}}, axis1) < kTol);
        CHECK(CheckGradient({{{2, 3, 2}}}, neg) < kTol);
        CHECK(CheckGradient({{{2, 2, 2}}}, all) < kTol);
      }
    }
  }
  SECTION("Prod with a zero entry") {
    auto f = [](const Scope& s, const Xs& x) -> Xs { return {Prod(s, x[0], 1)}; };
    CHECK(CheckGradient({{{2, 3}, {0.0, 2.0, 3.0, 0.5, -1.5, 2.5}}}, f) < kTol);
  }
  SECTION("Int64 axes") {
    auto f = [](const Scope& s, const Xs& x) -> Xs {
      return {Mean(s, x[0], Const(s, {int64_t{1}}))};
    };
    CHECK(CheckGradient({{{2, 3}}}, f) < kTol);
  }
}

TEST_CASE("Expm1, Erf, Erfc, DivNoNan, FloorMod, TruncateMod, Cumsum") {
  for (const char* op : {"Expm1", "Erf", "Erfc"}) {
    auto f = [op](const Scope& s, const Xs& x) -> Xs { return {AddOp(s, op, {x[0]}).output(0)}; };
    CHECK(CheckGradient({{{5}}}, f) < kTol);
  }
  for (const char* op : {"DivNoNan", "FloorMod", "TruncateMod"}) {
    auto f = [op](const Scope& s, const Xs& x) -> Xs {
      return {AddOp(s, op, {x[0], x[1]}).output(0)};
    };
    // Quotients away from integers, so FloorMod's steps are not crossed.
    CHECK(CheckGradient({{{2, 2}, {1.3, -2.6, 3.45, 0.55}}, {{2}, {0.5, 0.7}}}, f) < kTol);
  }
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      auto f = [=](const Scope& s, const Xs& x) -> Xs {
        return {AddOp(s, "Cumsum", {x[0], Input(1)},
                      {{"exclusive", BoolAttr(exclusive)}, {"reverse", BoolAttr(reverse)}})
                    .output(0)};
      };
      CHECK(CheckGradient({{{2, 3}}}, f) < kTol);
    }
  }
}

TEST_CASE("BatchMatMulV2 with broadcast batch dims and adjoints") {
  for (bool ax : {false, true}) {
    for (bool ay : {false, true}) {
      auto f = [=](const Scope& s, const Xs& x) -> Xs {
        return {AddOp(s, "BatchMatMulV2", {x[0], x[1]},
                      {{"adj_x", BoolAttr(ax)}, {"adj_y", BoolAttr(ay)}})
                    .output(0)};
      };
      std::vector<int64_t> a = ax ? std::vector<int64_t>{2, 1, 3, 2}
                                  : std::vector<int64_t>{2, 1, 2, 3};
      std::vector<int64_t> b = ay ? std::vector<int64_t>{3, 4, 3} : std::vector<int64_t>{3, 3, 4};
      CHECK(CheckGradient({{a}, {b}}, f) < kTol);
    }
  }
}

}  // namespace
}  // namespace dflow::testing
