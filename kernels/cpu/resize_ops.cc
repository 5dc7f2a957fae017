// ResizeBilinear and ResizeNearestNeighbor on NHWC images, with TF 2.21's CPU arithmetic
// (image_resizer_state.h, resize_bilinear_op.cc, resize_nearest_neighbor_op.cc), so
// tf.image.resize and Keras UpSampling2D graphs give TF's values bit for bit:
//  - scale = (in - 1) / (out - 1) with align_corners (and out > 1), else in / out, in float;
//  - bilinear source coordinate: legacy x * scale, or half-pixel (x + 0.5) * scale - 0.5;
//    lower = max(floor, 0), upper = min(ceil, in - 1), lerp = coordinate - floor;
//    the value is two float lerps along x, then one along y (output always float);
//  - nearest source index: legacy floor(x * scale), align_corners round(x * scale),
//    half-pixel floor((x + 0.5) * scale) clamped to >= 0; always clamped to <= in - 1.
// This target is built without -mfma on purpose: a fused multiply-add would round the
// lerps differently from TF's binary.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/resize_util.h"
#include "runtime/half.h"

namespace dflow {
namespace {

template <typename T>
float AsFloat(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
    return value.ToFloat();
  } else {
    return static_cast<float>(value);
  }
}

// One output coordinate's two source neighbours (in elements, already times the stride)
// and the weight of the upper one.
struct Interpolation {
  int64_t lower = 0, upper = 0;
  float lerp = 0;
};

std::vector<Interpolation> BilinearWeights(int64_t out_size, int64_t in_size, float scale,
                                           bool half_pixel_centers, int64_t stride) {
  std::vector<Interpolation> weights(out_size);
  for (int64_t i = 0; i < out_size; ++i) {
    const float in = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                        : static_cast<float>(i) * scale;
    const float in_floor = std::floor(in);
    // Clamped above too: for sizes past 2^24 float rounding can put floor(in) at
    // in_size, one past the last pixel (TF's own code reads there).
    weights[i].lower =
        std::clamp<int64_t>(static_cast<int64_t>(in_floor), 0, in_size - 1) * stride;
    weights[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(in)), in_size - 1) * stride;
    weights[i].lerp = in - in_floor;
  }
  return weights;
}

// TF's compute_lerp, operation for operation.
inline float Lerp2D(float top_left, float top_right, float bottom_left, float bottom_right,
                    float x_lerp, float y_lerp) {
  const float top = top_left + (top_right - top_left) * x_lerp;
  const float bottom = bottom_left + (bottom_right - bottom_left) * x_lerp;
  return top + (bottom - top) * y_lerp;
}

template <typename T>
void ResizeBilinearRows(OpKernelContext* ctx, const ResizeGeometry& g, bool half_pixel_centers,
                        const T* in, float* out) {
  const int64_t c = g.channels;
  const int64_t row = g.in_width * c;
  const std::vector<Interpolation> ys =
      BilinearWeights(g.out_height, g.in_height, g.height_scale, half_pixel_centers, row);
  const std::vector<Interpolation> xs =
      BilinearWeights(g.out_width, g.in_width, g.width_scale, half_pixel_centers, c);
  const int64_t out_row = g.out_width * c;
  ParallelForElements(ctx, g.batch * g.out_height, out_row * 8, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const Interpolation& y = ys[r % g.out_height];
      const T* image = in + (r / g.out_height) * g.in_height * row;
      const T* top = image + y.lower;
      const T* bottom = image + y.upper;
      float* dst = out + r * out_row;
      for (const Interpolation& x : xs) {
        for (int64_t k = 0; k < c; ++k) {
          *dst++ = Lerp2D(AsFloat(top[x.lower + k]), AsFloat(top[x.upper + k]),
                          AsFloat(bottom[x.lower + k]), AsFloat(bottom[x.upper + k]), x.lerp,
                          y.lerp);
        }
      }
    }
  });
}

class ResizeOpBase : public OpKernel {
 public:
  explicit ResizeOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("align_corners", &align_corners_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("half_pixel_centers", &half_pixel_centers_));
  }

 protected:
  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

class ResizeBilinearOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResizeGeometry g,
                        ValidateResize(*ctx, align_corners_, half_pixel_centers_));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, AllocateResized(ctx, g));
    if (output->NumElements() == 0) return;
    const Tensor& input = ctx->input(0);
    DispatchNumericOrHalf(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      ResizeBilinearRows<T>(ctx, g, half_pixel_centers_, input.data<T>(), output->data<float>());
    });
  }
};

// Source row or column of each output one, times `stride` elements.
std::vector<int64_t> NearestSources(int64_t out_size, int64_t in_size, float scale,
                                    bool align_corners, bool half_pixel_centers, int64_t stride) {
  std::vector<int64_t> sources(out_size);
  for (int64_t i = 0; i < out_size; ++i) {
    const float in = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale
                                        : static_cast<float>(i) * scale;
    int64_t source = std::min<int64_t>(
        align_corners ? static_cast<int64_t>(std::round(in)) : static_cast<int64_t>(std::floor(in)),
        in_size - 1);
    if (half_pixel_centers) source = std::max<int64_t>(source, 0);
    sources[i] = source * stride;
  }
  return sources;
}

template <typename T>
void ResizeNearestRows(OpKernelContext* ctx, const ResizeGeometry& g, bool align_corners,
                       bool half_pixel_centers, const T* in, T* out) {
  const int64_t c = g.channels;
  const int64_t row = g.in_width * c;
  const std::vector<int64_t> ys = NearestSources(g.out_height, g.in_height, g.height_scale,
                                                 align_corners, half_pixel_centers, row);
  const std::vector<int64_t> xs = NearestSources(g.out_width, g.in_width, g.width_scale,
                                                 align_corners, half_pixel_centers, c);
  const int64_t out_row = g.out_width * c;
  ParallelForElements(ctx, g.batch * g.out_height, out_row + 1, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const T* src = in + (r / g.out_height) * g.in_height * row + ys[r % g.out_height];
      T* dst = out + r * out_row;
      for (int64_t x : xs) dst = std::copy(src + x, src + x + c, dst);
    }
  });
}

// Moves elements only, so one instantiation per element size serves every dtype.
class ResizeNearestNeighborOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResizeGeometry g,
                        ValidateResize(*ctx, align_corners_, half_pixel_centers_));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, AllocateResized(ctx, g));
    if (output->NumElements() == 0) return;
    const Tensor& input = ctx->input(0);
    DispatchByElementSize(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      ResizeNearestRows<T>(ctx, g, align_corners_, half_pixel_centers_, input.data<T>(),
                           output->data<T>());
    });
  }
};

}  // namespace

absl::Status RegisterResizeKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<ResizeBilinearOp>(
      CpuKernel("ResizeBilinear").TypeConstraint("T", ResizeTypes())));
  DFLOW_RETURN_IF_ERROR(registry->Register<ResizeNearestNeighborOp>(
      CpuKernel("ResizeNearestNeighbor").TypeConstraint("T", ResizeTypes())));
  return RegisterResizeBicubicKernel(registry);
}

}  // namespace dflow
