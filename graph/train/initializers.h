// Initial values for variables (TF's tf.keras.initializers / tf.compat.v1 initializers):
// each returns an Output of `shape` that draws its values when the initializer runs.
//
// `seed` follows TF's op-level seeds: 0 draws differently every time; a nonzero seed
// gives the same values every run of a fresh session.
#ifndef DFLOW_GRAPH_TRAIN_INITIALIZERS_H_
#define DFLOW_GRAPH_TRAIN_INITIALIZERS_H_

#include <cstdint>
#include <vector>

#include "graph/scope.h"
#include "graph/types.h"

namespace dflow {

using Dims = std::vector<int64_t>;

Output Zeros(const Scope& scope, const Dims& shape, DataType dtype = DT_FLOAT);
Output Ones(const Scope& scope, const Dims& shape, DataType dtype = DT_FLOAT);
// Uniform in [minval, maxval).
Output RandomUniform(const Scope& scope, const Dims& shape, double minval, double maxval,
                     int64_t seed = 0, DataType dtype = DT_FLOAT);
Output RandomNormal(const Scope& scope, const Dims& shape, double mean, double stddev,
                    int64_t seed = 0, DataType dtype = DT_FLOAT);
// Normal, redrawn beyond two standard deviations (tf.random.truncated_normal).
Output TruncatedNormal(const Scope& scope, const Dims& shape, double mean, double stddev,
                       int64_t seed = 0, DataType dtype = DT_FLOAT);

// Keras' defaults, with fans computed as Keras does: a matrix [in, out]; a convolution
// kernel [kh, kw, in, out] multiplies both fans by kh * kw.
// Uniform in +-sqrt(6 / (fan_in + fan_out)) (Dense and Conv2D's default).
Output GlorotUniform(const Scope& scope, const Dims& shape, int64_t seed = 0,
                     DataType dtype = DT_FLOAT);
// Truncated normal with stddev sqrt(2 / fan_in) / 0.8796 (for ReLU networks).
Output HeNormal(const Scope& scope, const Dims& shape, int64_t seed = 0,
                DataType dtype = DT_FLOAT);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_INITIALIZERS_H_
