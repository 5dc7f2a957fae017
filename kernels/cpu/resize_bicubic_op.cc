// ResizeBicubic on NHWC images with TF 2.21's CPU arithmetic (resize_bicubic_op.cc):
//  - weights come from a 1025-entry table of the cubic convolution kernel, a = -0.5 (Keys)
//    with half_pixel_centers, else the legacy a = -0.75, built in double and stored as float;
//    the fractional source offset is rounded to the nearest 1/1024;
//  - the four taps are clamped to the image; with half_pixel_centers (Keys) a clamped tap
//    gets weight 0 and the rest are renormalized to sum to 1, the legacy kernel keeps them;
//  - each output is four float dot products along y (one per x tap), then one along x.
// Output is always float. Built without -mfma so the sums round as TF's do.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/resize_util.h"
#include "runtime/half.h"

namespace dflow {
namespace {

constexpr int64_t kTableSize = 1 << 10;

// TF's InitCoeffsTable: entry 2i is the kernel at i/1024, entry 2i+1 at 1 + i/1024.
std::vector<float> CoefficientTable(double a) {
  std::vector<float> table((kTableSize + 1) * 2);
  for (int64_t i = 0; i <= kTableSize; ++i) {
    float x = static_cast<float>(i * 1.0 / kTableSize);
    table[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    x = static_cast<float>(x + 1.0);
    table[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  return table;
}

const std::vector<float>& Coefficients(bool keys) {
  static const auto* const kKeys = new std::vector<float>(CoefficientTable(-0.5f));
  static const auto* const kLegacy = new std::vector<float>(CoefficientTable(-0.75f));
  return keys ? *kKeys : *kLegacy;
}

// One output coordinate's four source taps (times `stride` elements) and their weights.
struct Taps {
  std::array<int64_t, 4> index;
  std::array<float, 4> weight;
};

Taps ComputeTaps(int64_t out, float scale, bool half_pixel, int64_t limit, int64_t stride) {
  const float in_f = half_pixel ? (static_cast<float>(out) + 0.5f) * scale - 0.5f
                                : static_cast<float>(out) * scale;
  const int64_t in = static_cast<int64_t>(std::floor(in_f));
  const int64_t offset = std::lrint((in_f - in) * kTableSize);
  const std::vector<float>& c = Coefficients(half_pixel);
  const std::array<float, 4> raw = {c[offset * 2 + 1], c[offset * 2], c[(kTableSize - offset) * 2],
                                    c[(kTableSize - offset) * 2 + 1]};
  Taps t;
  float sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t want = in - 1 + k;
    const int64_t bounded = std::min(limit - 1, std::max<int64_t>(0, want));
    t.index[k] = bounded * stride;
    t.weight[k] = (!half_pixel || bounded == want) ? raw[k] : 0.0f;
    sum += t.weight[k];
  }
  // Keys only: renormalize after dropping out-of-image taps (TF skips tiny sums).
  if (half_pixel && std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
    const float inverse = 1.0f / sum;
    for (float& w : t.weight) w *= inverse;
  }
  return t;
}

std::vector<Taps> AxisTaps(int64_t out_size, int64_t in_size, float scale, bool half_pixel,
                           int64_t stride) {
  std::vector<Taps> taps(out_size);
  for (int64_t i = 0; i < out_size; ++i) {
    taps[i] = ComputeTaps(i, scale, half_pixel, in_size, stride);
  }
  return taps;
}

template <typename T>
float ToFloat(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
    return value.ToFloat();
  } else {
    return static_cast<float>(value);
  }
}

// TF's Interpolate1D / Compute: a left-to-right float sum of four products.
inline float Dot4(const std::array<float, 4>& w, float v0, float v1, float v2, float v3) {
  return v0 * w[0] + v1 * w[1] + v2 * w[2] + v3 * w[3];
}

template <typename T>
void ResizeBicubicRows(OpKernelContext* ctx, const ResizeGeometry& g, bool half_pixel,
                       const T* in, float* out) {
  const int64_t c = g.channels, row = g.in_width * c, out_row = g.out_width * c;
  const std::vector<Taps> ys = AxisTaps(g.out_height, g.in_height, g.height_scale, half_pixel, row);
  const std::vector<Taps> xs = AxisTaps(g.out_width, g.in_width, g.width_scale, half_pixel, c);
  ParallelForElements(ctx, g.batch * g.out_height, out_row * 40, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const Taps& y = ys[r % g.out_height];
      const T* image = in + (r / g.out_height) * g.in_height * row;
      float* dst = out + r * out_row;
      for (const Taps& x : xs) {
        for (int64_t k = 0; k < c; ++k) {
          std::array<float, 4> column;  // the y interpolation at each x tap
          for (int j = 0; j < 4; ++j) {
            const int64_t p = x.index[j] + k;
            column[j] = Dot4(y.weight, ToFloat(image[y.index[0] + p]),
                             ToFloat(image[y.index[1] + p]), ToFloat(image[y.index[2] + p]),
                             ToFloat(image[y.index[3] + p]));
          }
          *dst++ = Dot4(x.weight, column[0], column[1], column[2], column[3]);
        }
      }
    }
  });
}

class ResizeBicubicOp : public OpKernel {
 public:
  explicit ResizeBicubicOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("align_corners", &align_corners_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("half_pixel_centers", &half_pixel_centers_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResizeGeometry g,
                        ValidateResize(*ctx, align_corners_, half_pixel_centers_));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, AllocateResized(ctx, g));
    if (output->NumElements() == 0) return;
    const Tensor& input = ctx->input(0);
    DispatchNumericOrHalf(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      ResizeBicubicRows<T>(ctx, g, half_pixel_centers_, input.data<T>(), output->data<float>());
    });
  }

 private:
  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

}  // namespace

absl::Status RegisterResizeBicubicKernel(KernelRegistry* registry) {
  return registry->Register<ResizeBicubicOp>(
      CpuKernel("ResizeBicubic").TypeConstraint("T", ResizeTypes()));
}

}  // namespace dflow
