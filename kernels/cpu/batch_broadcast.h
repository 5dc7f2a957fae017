// BatchBroadcast: two operands' batch dims broadcast onto an output's, as TF's
// MatMulBCast does, for the batched products (BatchMatMul(V2) in matmul_op.cc, Einsum).
//
// Dims align on the right; a dim of 1 (or a missing one) broadcasts. Which x and y
// matrix an output matrix reads is computed when it is needed, not tabulated: a table is
// 16 bytes per output matrix, allocated before the output's size was checked against the
// step's limits (2^28 broadcast batches took 4.3 GB, issue 15).
//
// Thread-safe: an immutable value.
#ifndef DFLOW_KERNELS_CPU_BATCH_BROADCAST_H_
#define DFLOW_KERNELS_CPU_BATCH_BROADCAST_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace dflow {

struct BatchBroadcast {
  std::vector<int64_t> out_dims;
  // Per output batch dim, each input's stride in matrices; 0 where it is broadcast.
  std::vector<int64_t> x_stride;
  std::vector<int64_t> y_stride;

  // The x and y matrix output matrix `batch` (row-major over out_dims) reads.
  std::pair<int64_t, int64_t> Sources(int64_t batch) const {
    int64_t x = 0, y = 0;
    for (int i = static_cast<int>(out_dims.size()) - 1; i >= 0; --i) {
      const int64_t index = batch % out_dims[i];
      batch /= out_dims[i];
      x += index * x_stride[i];
      y += index * y_stride[i];
    }
    return {x, y};
  }
};

// nullopt when a pair of dims differs and neither is 1.
inline std::optional<BatchBroadcast> BroadcastBatches(absl::Span<const int64_t> x,
                                                      absl::Span<const int64_t> y) {
  const int xb = static_cast<int>(x.size());
  const int yb = static_cast<int>(y.size());
  const int rank = std::max(xb, yb);
  BatchBroadcast b;
  b.out_dims.resize(rank);
  b.x_stride.assign(rank, 0);
  b.y_stride.assign(rank, 0);
  int64_t xs = 1, ys = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const int xi = i - (rank - xb);
    const int yi = i - (rank - yb);
    const int64_t xd = xi >= 0 ? x[xi] : 1;
    const int64_t yd = yi >= 0 ? y[yi] : 1;
    if (xd != yd && xd != 1 && yd != 1) return std::nullopt;
    b.out_dims[i] = xd == 1 ? yd : xd;
    if (xd != 1) b.x_stride[i] = xs;
    if (yd != 1) b.y_stride[i] = ys;
    xs *= xd;  // the inputs' element counts: no overflow
    ys *= yd;
  }
  return b;
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_BATCH_BROADCAST_H_
