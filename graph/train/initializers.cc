#include "graph/train/initializers.h"

#include <cmath>

#include "graph/ops.h"

namespace dflow {
namespace {

Output ShapeConst(const Scope& scope, const Dims& shape) {
  return Const(scope.WithOpName("shape"),
               Input::Initializer(shape, {static_cast<int64_t>(shape.size())}));
}

// A RandomUniform / RandomStandardNormal / TruncatedNormal draw of `shape`.
Output Draw(const Scope& scope, const char* op, const Dims& shape, int64_t seed,
            DataType dtype) {
  // TF derives the op seed pair from the graph seed; with only an op seed it uses
  // (87654321, seed) so that a nonzero seed is deterministic.
  const int64_t seed1 = seed == 0 ? 0 : 87654321;
  return AddOp(scope, op, {ShapeConst(scope, shape)},
               {{"dtype", TypeAttr(dtype)}, {"seed", IntAttr(seed1)}, {"seed2", IntAttr(seed)}})
      .output(0);
}

Output Affine(const Scope& scope, const Output& x, double scale, double shift) {
  return Add(scope, Mul(scope, x, scale), shift);
}

// Keras' fan computation (_compute_fans).
void Fans(const Dims& shape, double* fan_in, double* fan_out) {
  if (shape.empty()) {
    *fan_in = *fan_out = 1;
  } else if (shape.size() == 1) {
    *fan_in = *fan_out = static_cast<double>(shape[0]);
  } else {
    double receptive = 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
    *fan_in = static_cast<double>(shape[shape.size() - 2]) * receptive;
    *fan_out = static_cast<double>(shape.back()) * receptive;
  }
}

}  // namespace

Output Zeros(const Scope& scope, const Dims& shape, DataType dtype) {
  Scope s = scope.NewSubScope("zeros");
  return Fill(s, ShapeConst(s, shape), Cast(s, 0, dtype));
}

Output Ones(const Scope& scope, const Dims& shape, DataType dtype) {
  Scope s = scope.NewSubScope("ones");
  return Fill(s, ShapeConst(s, shape), Cast(s, 1, dtype));
}

Output RandomUniform(const Scope& scope, const Dims& shape, double minval, double maxval,
                     int64_t seed, DataType dtype) {
  Scope s = scope.NewSubScope("random_uniform");
  return Affine(s, Draw(s, "RandomUniform", shape, seed, dtype), maxval - minval, minval);
}

Output RandomNormal(const Scope& scope, const Dims& shape, double mean, double stddev,
                    int64_t seed, DataType dtype) {
  Scope s = scope.NewSubScope("random_normal");
  return Affine(s, Draw(s, "RandomStandardNormal", shape, seed, dtype), stddev, mean);
}

Output TruncatedNormal(const Scope& scope, const Dims& shape, double mean, double stddev,
                       int64_t seed, DataType dtype) {
  Scope s = scope.NewSubScope("truncated_normal");
  return Affine(s, Draw(s, "TruncatedNormal", shape, seed, dtype), stddev, mean);
}

Output GlorotUniform(const Scope& scope, const Dims& shape, int64_t seed, DataType dtype) {
  double fan_in, fan_out;
  Fans(shape, &fan_in, &fan_out);
  const double limit = std::sqrt(6.0 / (fan_in + fan_out));
  return RandomUniform(scope.NewSubScope("glorot_uniform"), shape, -limit, limit, seed,
                       dtype);
}

Output HeNormal(const Scope& scope, const Dims& shape, int64_t seed, DataType dtype) {
  double fan_in, fan_out;
  Fans(shape, &fan_in, &fan_out);
  // 0.8796... is the stddev of a unit normal truncated at two standard deviations.
  const double stddev = std::sqrt(2.0 / fan_in) / 0.87962566103423978;
  return TruncatedNormal(scope.NewSubScope("he_normal"), shape, 0.0, stddev, seed, dtype);
}

}  // namespace dflow
