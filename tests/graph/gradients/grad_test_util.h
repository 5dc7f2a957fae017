// Shared by the gradient tests: one numeric check of an op built on fed placeholders.
#ifndef DFLOW_TESTS_GRAPH_GRADIENTS_GRAD_TEST_UTIL_H_
#define DFLOW_TESTS_GRAPH_GRADIENTS_GRAD_TEST_UTIL_H_

#include <functional>
#include <vector>

#include "catch2/catch.hpp"
#include "graph/ops.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {

struct GradInput {
  std::vector<int64_t> shape;
  std::vector<double> values;  // empty: SpreadValues
  DataType dtype = DT_DOUBLE;
};

// Builds `f` on one placeholder per input and checks its gradient numerically.
inline double CheckGradient(
    const std::vector<GradInput>& inputs,
    const std::function<std::vector<Output>(const Scope&, const std::vector<Output>&)>& f,
    double delta = 1e-4) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> xs;
  std::vector<Tensor> values;
  for (const GradInput& in : inputs) {
    xs.push_back(Placeholder(root, in.dtype));
    int64_t n = 1;
    for (int64_t d : in.shape) n *= d;
    values.push_back(MakeTensor(in.dtype, in.shape,
                                in.values.empty() ? SpreadValues(n) : in.values));
  }
  std::vector<Output> ys = f(root, xs);
  absl::StatusOr<double> error = MaxGradientError(root, xs, values, ys, delta);
  INFO(error.status().ToString());
  REQUIRE(error.ok());
  return *error;
}

// `y` times a fixed ramp (1, 1.1, 1.2, ... in y's shape): every element's gradient is
// distinct, so a gradient routed to the wrong place cannot pass.
inline Output Weighted(const Scope& s, const Output& y) {
  Output ramp = AddOp(s, "Range", {Input(0), Size(s, y), Input(1)}).output(0);
  Output w = Add(s, Mul(s, Cast(s, Reshape(s, ramp, Shape(s, y)), BaseType(y.dtype())), 0.1),
                 1.0);
  return Mul(s, y, w);
}

// The sum of Weighted(y): one scalar, so a check runs one backward pass.
inline Output WeightedSum(const Scope& s, const Output& y) {
  return Sum(s, Reshape(s, Weighted(s, y), {-1}), 0);
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_GRAPH_GRADIENTS_GRAD_TEST_UTIL_H_
