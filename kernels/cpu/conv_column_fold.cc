#include "kernels/cpu/conv_column_fold.h"

#include <dnnl.h>

#include <algorithm>

namespace dflow {
namespace {

int64_t FoldedFilterWidth(int64_t fw, int64_t k) { return (fw + k - 2) / k + 1; }

int64_t FoldedPadAfter(const WindowDim& cols, int64_t k) {
  return cols.output / k + FoldedFilterWidth(cols.size, k) - 1 - cols.input / k -
         cols.pad_before / k;
}

bool CanFold(const WindowDim& cols, int64_t k) {
  return cols.input % k == 0 && cols.output % k == 0 && cols.pad_before % k == 0 &&
         FoldedPadAfter(cols, k) >= 0;
}

// Work per useful multiply: vector slots spent (whole vectors) per output channel, times
// folded taps per original tap.
double Cost(const WindowDim& cols, int64_t out_depth, int lanes, int64_t k) {
  const int64_t channels = k * out_depth;
  const int64_t slots = (channels + lanes - 1) / lanes * lanes;
  const double taps = static_cast<double>(FoldedFilterWidth(cols.size, k) * k) / cols.size;
  return static_cast<double>(slots) / channels * taps;
}

}  // namespace

int64_t ChooseColumnFold(const WindowDim& cols, int64_t out_depth, int64_t groups, int lanes) {
  if (groups != 1 || cols.stride != 1 || cols.dilation != 1 || cols.size <= 1 ||
      out_depth % lanes == 0 || out_depth > 2 * lanes || cols.output <= 0) {
    return 1;
  }
  const double unfolded = Cost(cols, out_depth, lanes, 1);
  int64_t best = 1;
  double best_cost = 0.75 * unfolded;
  for (int64_t k : {2, 4}) {
    if (!CanFold(cols, k)) continue;
    const double cost = Cost(cols, out_depth, lanes, k);
    if (cost < best_cost) {
      best = k;
      best_cost = cost;
    }
  }
  return best;
}

WindowDim FoldColumns(const WindowDim& cols, int64_t k) {
  WindowDim folded;
  folded.input = cols.input / k;
  folded.size = FoldedFilterWidth(cols.size, k);
  folded.stride = 1;
  folded.dilation = 1;
  folded.pad_before = cols.pad_before / k;
  folded.pad_after = FoldedPadAfter(cols, k);
  folded.output = cols.output / k;
  return folded;
}

void FoldFilter(const float* hwio, int64_t fh, int64_t fw, int64_t c, int64_t o, int64_t k,
                float* out) {
  const int64_t fw2 = FoldedFilterWidth(fw, k), c2 = k * c, o2 = k * o;
  std::fill(out, out + fh * fw2 * c2 * o2, 0.0f);
  for (int64_t ky = 0; ky < fh; ++ky) {
    for (int64_t kx2 = 0; kx2 < fw2; ++kx2) {
      for (int64_t j_in = 0; j_in < k; ++j_in) {
        for (int64_t j_out = 0; j_out < k; ++j_out) {
          const int64_t kx = k * kx2 + j_in - j_out;
          if (kx < 0 || kx >= fw) continue;
          for (int64_t ci = 0; ci < c; ++ci) {
            const float* src = hwio + ((ky * fw + kx) * c + ci) * o;
            float* dst = out + ((ky * fw2 + kx2) * c2 + j_in * c + ci) * o2 + j_out * o;
            std::copy(src, src + o, dst);
          }
        }
      }
    }
  }
}

int DnnlVectorLanes() {
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core ? 16 : 8;
}

}  // namespace dflow
