// Gradients of Qr, Svd and SelfAdjointEigV2 (graph/gradients/decomposition_grads.cc),
// checked numerically on tall, square and wide matrices, batched, with losses that do not
// depend on the signs of singular vectors and eigenvectors (which are not unique); and
// the refusals TF makes too.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

// Distinct, well-separated values (no repeated singular values or eigenvalues).
std::vector<double> Matrix(int64_t count) {
  std::vector<double> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(std::sin(1.7 * i + 0.3) + 0.2 * i);
  return v;
}

Output Ints(const Scope& s, std::vector<int32_t> values) {
  const Input::Initializer init(values, {static_cast<int64_t>(values.size())});
  return Const(s, init);
}

Output Shaped(const Scope& s, const Output& x, std::vector<int32_t> dims) {
  return Reshape(s, x, Ints(s, dims));
}

Operation Decompose(const Scope& s, const char* op, const Output& a,
                    std::vector<std::pair<const char*, bool>> attrs) {
  AttrMap map;
  for (const auto& [name, value] : attrs) map[name] = BoolAttr(value);
  return AddOp(s, op, {a}, map);
}

TEST_CASE("Qr's gradient for tall, square and wide matrices") {
  struct Case {
    std::vector<int32_t> dims;
    bool full;
  };
  for (const Case& c : std::vector<Case>{{{4, 3}, false},
                                         {{3, 3}, false},
                                         {{3, 3}, true},
                                         {{2, 4, 2}, false},
                                         {{3, 5}, false},
                                         {{2, 2, 3}, true}}) {
    int64_t count = 1;
    for (int32_t d : c.dims) count *= d;
    INFO("dims " << c.dims.size() << " full " << c.full << " count " << count);
    auto f = [&](const Scope& s, const Xs& in) -> Xs {
      Operation qr = Decompose(s, "Qr", Shaped(s, in[0], c.dims), {{"full_matrices", c.full}});
      return {Add(s, WeightedSum(s, qr.output(0)), WeightedSum(s, qr.output(1)))};
    };
    CHECK(CheckGradient({{{count}, Matrix(count)}}, f) < kTol);
  }
}

TEST_CASE("Svd's gradient, tall and wide, reduced and full, with and without vectors") {
  struct Case {
    std::vector<int32_t> dims;
    bool full;
    bool compute_uv;
  };
  for (const Case& c : std::vector<Case>{{{3, 3}, false, true},
                                         {{4, 3}, false, true},
                                         {{3, 5}, false, true},
                                         {{2, 3, 2}, false, true},
                                         {{3, 4}, true, true},
                                         {{4, 3}, true, true},
                                         {{3, 4}, false, false}}) {
    int64_t count = 1;
    for (int32_t d : c.dims) count *= d;
    INFO("dims " << c.dims.size() << " full " << c.full << " uv " << c.compute_uv);
    auto f = [&](const Scope& s, const Xs& in) -> Xs {
      Operation svd = Decompose(s, "Svd", Shaped(s, in[0], c.dims),
                                {{"compute_uv", c.compute_uv}, {"full_matrices", c.full}});
      Output loss = WeightedSum(s, svd.output(0));
      if (c.compute_uv) {
        // Squares: a singular vector's sign flips with its partner's, the squares do not.
        // Full matrices' extra columns are any basis of a subspace: left out.
        Output u = svd.output(1), v = svd.output(2);
        if (c.full) {
          const int32_t k = std::min(c.dims[c.dims.size() - 2], c.dims.back());
          Output begin = Ints(s, {0, 0}), size = Ints(s, {-1, k});
          u = Slice(s, u, begin, size);
          v = Slice(s, v, begin, size);
        }
        loss = Add(s, loss, Add(s, WeightedSum(s, Square(s, u)), WeightedSum(s, Square(s, v))));
      }
      return {loss};
    };
    CHECK(CheckGradient({{{count}, Matrix(count)}}, f) < kTol);
  }
}

TEST_CASE("SelfAdjointEigV2's gradient reads the lower triangle") {
  for (bool compute_v : {true, false}) {
    INFO("compute_v " << compute_v);
    auto f = [&](const Scope& s, const Xs& in) -> Xs {
      // Any matrix: the op reads its lower triangle, and so must the gradient.
      Operation eig = Decompose(s, "SelfAdjointEigV2", Shaped(s, in[0], {2, 3, 3}),
                                {{"compute_v", compute_v}});
      Output loss = WeightedSum(s, eig.output(0));
      if (compute_v) loss = Add(s, loss, WeightedSum(s, Square(s, eig.output(1))));
      return {loss};
    };
    CHECK(CheckGradient({{{18}, Matrix(18)}}, f) < kTol);
  }
}

TEST_CASE("Decomposition gradients TF does not define are refused, naming the node") {
  auto refusal = [](const char* op, std::vector<std::pair<const char*, bool>> attrs,
                    std::vector<int32_t> dims) {
    Scope root = Scope::NewRootScope();
    Output x = Placeholder(root, DT_DOUBLE);
    Output a = dims.empty() ? x : Shaped(root, x, dims);
    Operation d = Decompose(root.WithOpName("decomposed"), op, a, attrs);
    Xs grads;
    absl::Status status = AddSymbolicGradients(root, {d.output(0)}, {x}, &grads);
    CHECK(status.code() == absl::StatusCode::kUnimplemented);
    return std::string(status.message());
  };
  CHECK_THAT(refusal("Qr", {{"full_matrices", true}}, {4, 2}),
             Catch::Contains("Qr (node 'decomposed') with full_matrices"));
  CHECK_THAT(refusal("Svd", {{"compute_uv", true}, {"full_matrices", true}}, {2, 5}),
             Catch::Contains("differ by at most 1"));
  CHECK_THAT(refusal("Svd", {{"compute_uv", true}, {"full_matrices", false}}, {}),
             Catch::Contains("needs the static input matrix dims"));
}

}  // namespace
}  // namespace dflow::testing
