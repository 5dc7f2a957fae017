// Numeric gradient checks for the builder API's gradient functions (TF's
// cc/framework/gradient_checker.h): the Jacobian AddSymbolicGradients builds against
// central differences of the forward graph, both run in a ClientSession.
#ifndef DFLOW_TESTS_TESTING_GRADIENT_CHECKER_H_
#define DFLOW_TESTS_TESTING_GRADIENT_CHECKER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "runtime/tensor.h"

namespace dflow::testing {

// A float, double (or int32) tensor of `shape` holding `values` (cast to `dtype`).
Tensor MakeTensor(DataType dtype, const std::vector<int64_t>& shape,
                  const std::vector<double>& values);
// Values in [-1, 1) from a fixed sequence, distinct enough to avoid ties in max/min.
std::vector<double> SpreadValues(int64_t n, double scale = 1.0, double offset = 0.0);
// A tensor's float/double values as doubles.
std::vector<double> ToDoubles(const Tensor& t);

// The largest |theoretical - numeric| entry of d ys / d xs at `x_values`, where `xs`
// are placeholders (or any tensors fed) of float or double dtype and `ys` float or
// double outputs. `delta` is the central-difference step.
absl::StatusOr<double> MaxGradientError(const Scope& scope, const std::vector<Output>& xs,
                                        const std::vector<Tensor>& x_values,
                                        const std::vector<Output>& ys, double delta = 1e-3);

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_TESTING_GRADIENT_CHECKER_H_
