// ResizeBilinearGrad and ResizeNearestNeighborGrad on NHWC images, with TF 2.21's CPU
// arithmetic (resize_bilinear_op.cc, resize_nearest_neighbor_op.cc, image_resizer_state.h),
// bit for bit:
//  - scale = (original - 1) / (resized - 1) with align_corners when both sizes exceed 1,
//    else original / resized, in float. The `original > 1` term is TF's too: a one-pixel
//    original takes the legacy scale even with align_corners, which the forward ops cannot
//    show (every source is pixel 0) but the gradient's lerps do.
//  - bilinear: a resized pixel's float gradient g goes to its four source pixels as float
//    products (g * y_weight) * x_weight, in the order top-left, top-right, bottom-left,
//    bottom-right, resized pixels in row-major order. Double accumulates in double; half
//    and bfloat16 accumulate in float and round once at the end (TF's float temporary).
//  - nearest: each gradient element is added to its source element, chosen as the forward
//    op chooses it (floor, or round with align_corners, of x * scale or (x + 0.5) * scale).
//    Additions are in the output type: half and bfloat16 round after each, integers wrap.
// TF scatters from one thread. Here each task owns whole output rows and gathers the
// resized rows that reach them, in TF's order, so every element sees TF's sequence of
// additions and no two tasks write one element.
// Built without -mfma on purpose (like resize_ops): a fused multiply-add would round the
// products differently from TF's binary.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// TF's CalculateResizeScale(original, resized, align_corners).
float GradScale(int64_t original, int64_t resized, bool align_corners) {
  return (align_corners && original > 1 && resized > 1)
             ? (original - 1) / static_cast<float>(resized - 1)
             : original / static_cast<float>(resized);
}

// Sizes of a gradient (resized) image and the original image it flows back to.
struct GradGeometry {
  int64_t batch = 0, channels = 0;
  int64_t resized_height = 0, resized_width = 0;
  int64_t original_height = 0, original_width = 0;
};

// For one original row: the resized rows [begin, end) whose gradient reaches it. Both
// source rows of a resized row grow with it, so the rows reaching one row are contiguous.
struct RowRange {
  int64_t begin = std::numeric_limits<int64_t>::max();
  int64_t end = 0;
};

// The plans tabulate a RowRange per original row in a std::vector, which can outgrow the
// output (one float per row of a one-pixel-wide image): counted against the session's
// limits by holding a temporary of its size (pages it never touches) while it lives.
absl::StatusOr<Tensor> ReserveRowRanges(OpKernelContext* ctx, const GradGeometry& g) {
  return ctx->allocate_temp(DT_INT64, TensorShape({2 * std::max<int64_t>(g.original_height, 1)}));
}

void AddToRange(int64_t original_row, int64_t resized_row, std::vector<RowRange>* ranges) {
  RowRange& range = (*ranges)[original_row];
  range.begin = std::min(range.begin, resized_row);
  range.end = resized_row + 1;  // resized rows arrive in increasing order
}

// Allocates output 0: [batch, original_height, original_width, channels].
absl::StatusOr<Tensor*> AllocateGradOutput(OpKernelContext* ctx, const GradGeometry& g) {
  DFLOW_ASSIGN_OR_RETURN(
      TensorShape shape,
      OutputShape(*ctx, {g.batch, g.original_height, g.original_width, g.channels}));
  return ctx->allocate_output(0, shape);
}

class ResizeGradOpBase : public OpKernel {
 public:
  explicit ResizeGradOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("align_corners", &align_corners_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("half_pixel_centers", &half_pixel_centers_));
  }

 protected:
  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

// ---------------------------------------------------------------------------------------
// ResizeBilinearGrad

// TF's ImageResizerGradientState::ValidateAndCreateOutput checks, in its order, with its
// messages (shapes appended without a space, as TF does). Batch and channels come from
// the gradient, as in TF: original_image only gives the height and width.
absl::StatusOr<GradGeometry> ValidateBilinearGrad(const OpKernelContext& ctx,
                                                  bool align_corners, bool half_pixel_centers) {
  if (half_pixel_centers && align_corners) {
    return KernelError(ctx, "If half_pixel_centers is True, align_corners must be False.");
  }
  const TensorShape& grads = ctx.input(0).shape();
  if (grads.dims() != 4) {
    return KernelError(ctx, "input_grad must be 4-dimensional", grads.DebugString());
  }
  GradGeometry g;
  g.batch = grads.dim_size(0);
  g.resized_height = grads.dim_size(1);
  g.resized_width = grads.dim_size(2);
  g.channels = grads.dim_size(3);
  if (g.resized_height <= 0 || g.resized_width <= 0) {
    return KernelError(ctx, "resized dimensions must be positive");
  }
  const TensorShape& original = ctx.input(1).shape();
  if (original.dims() != 4) {
    return KernelError(ctx, "original_image must be 4-dimensional", original.DebugString());
  }
  g.original_height = original.dim_size(1);
  g.original_width = original.dim_size(2);
  if (g.original_height <= 0 || g.original_width <= 0) {
    return KernelError(ctx, "original dimensions must be positive");
  }
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (g.original_height >= kInt32Max || g.original_width >= kInt32Max) {
    return KernelError(ctx, "original sizes must be between 0 and max int32");
  }
  return g;
}

// One resized coordinate's two source pixels (indices times `stride`) and their weights.
struct GradLerp {
  int64_t lower = 0, upper = 0;
  float lower_weight = 0, upper_weight = 0;  // 1 - lerp and lerp
};

std::vector<GradLerp> GradLerps(int64_t resized, int64_t original, float scale,
                                bool half_pixel_centers, int64_t stride) {
  std::vector<GradLerp> lerps(resized);
  for (int64_t i = 0; i < resized; ++i) {
    const float in = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                                        : static_cast<float>(i) * scale;
    const float in_floor = std::floor(in);
    const float lerp = in - in_floor;
    // Clamped above too: past 2^24 float rounding could put floor(in) past the last pixel.
    lerps[i].lower =
        std::clamp<int64_t>(static_cast<int64_t>(in_floor), 0, original - 1) * stride;
    lerps[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(in)), original - 1) * stride;
    lerps[i].lower_weight = 1.0f - lerp;
    lerps[i].upper_weight = lerp;
  }
  return lerps;
}

// What every bilinear gradient row needs: the lerps of both axes and each original row's
// resized rows.
struct BilinearGradPlan {
  int64_t channels = 0, resized_height = 0, original_height = 0;
  int64_t resized_row = 0, original_row = 0;  // elements per row
  std::vector<GradLerp> ys;                   // source rows, in rows
  std::vector<GradLerp> xs;                   // source columns, in elements
  std::vector<RowRange> ranges;               // per original row
};

BilinearGradPlan PlanBilinearGrad(const GradGeometry& g, bool align_corners,
                                  bool half_pixel_centers) {
  BilinearGradPlan plan;
  plan.channels = g.channels;
  plan.resized_height = g.resized_height;
  plan.original_height = g.original_height;
  plan.resized_row = g.resized_width * g.channels;
  plan.original_row = g.original_width * g.channels;
  const float height_scale = GradScale(g.original_height, g.resized_height, align_corners);
  const float width_scale = GradScale(g.original_width, g.resized_width, align_corners);
  plan.ys = GradLerps(g.resized_height, g.original_height, height_scale, half_pixel_centers, 1);
  plan.xs = GradLerps(g.resized_width, g.original_width, width_scale, half_pixel_centers,
                      g.channels);
  plan.ranges.resize(g.original_height);
  for (int64_t y = 0; y < g.resized_height; ++y) {
    AddToRange(plan.ys[y].lower, y, &plan.ranges);
    AddToRange(plan.ys[y].upper, y, &plan.ranges);
  }
  return plan;
}

// Adds resized row `g`'s share to one original row `out`: the share of pixels whose top
// source row it is when kTop, whose bottom source row it is when kBottom (both when the
// two coincide), per element in TF's order: top-left, top-right, bottom-left, bottom-right.
template <bool kTop, bool kBottom, typename Acc>
void AddResizedRow(const float* g, const std::vector<GradLerp>& xs, int64_t channels,
                   const GradLerp& y, Acc* out) {
  for (const GradLerp& x : xs) {
    Acc* left = out + x.lower;
    Acc* right = out + x.upper;  // may be `left`: the additions stay in order
    for (int64_t c = 0; c < channels; ++c) {
      const float v = g[c];
      if constexpr (kTop) {
        left[c] += static_cast<Acc>(v * y.lower_weight * x.lower_weight);
        right[c] += static_cast<Acc>(v * y.lower_weight * x.upper_weight);
      }
      if constexpr (kBottom) {
        left[c] += static_cast<Acc>(v * y.upper_weight * x.lower_weight);
        right[c] += static_cast<Acc>(v * y.upper_weight * x.upper_weight);
      }
    }
    g += channels;
  }
}

// Original row `oy` of one image from that image's gradient `image`.
template <typename Acc>
void BilinearGradRow(const BilinearGradPlan& plan, const float* image, int64_t oy, Acc* out) {
  std::fill_n(out, plan.original_row, Acc(0));
  const RowRange& range = plan.ranges[oy];
  for (int64_t y = range.begin; y < range.end; ++y) {
    const GradLerp& w = plan.ys[y];
    const float* g = image + y * plan.resized_row;
    const bool top = w.lower == oy, bottom = w.upper == oy;
    if (top && bottom) {
      AddResizedRow<true, true>(g, plan.xs, plan.channels, w, out);
    } else if (top) {
      AddResizedRow<true, false>(g, plan.xs, plan.channels, w, out);
    } else if (bottom) {
      AddResizedRow<false, true>(g, plan.xs, plan.channels, w, out);
    }
  }
}

template <typename T>
void BilinearGradImages(OpKernelContext* ctx, const BilinearGradPlan& plan, int64_t batch,
                        const float* grads, T* out) {
  // TF accumulates double in double and everything else in float.
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t rows = batch * plan.original_height;
  const int64_t rows_in = plan.resized_height / plan.original_height + 2;
  const int64_t cost = rows_in * plan.resized_row * 4 + plan.original_row;
  ParallelForElements(ctx, rows, cost, [&](int64_t first, int64_t end) {
    std::vector<Acc> buffer(std::is_same_v<T, Acc> ? 0 : plan.original_row);
    for (int64_t r = first; r < end; ++r) {
      const float* image = grads + (r / plan.original_height) * plan.resized_height *
                                       plan.resized_row;
      const int64_t oy = r % plan.original_height;
      T* dst = out + r * plan.original_row;
      if constexpr (std::is_same_v<T, Acc>) {
        BilinearGradRow(plan, image, oy, dst);
      } else {
        BilinearGradRow(plan, image, oy, buffer.data());
        for (int64_t i = 0; i < plan.original_row; ++i) dst[i] = T::FromFloat(buffer[i]);
      }
    }
  });
}

// T is original_image's dtype and the output's; the gradient input is always float.
template <typename T>
class ResizeBilinearGradOp : public ResizeGradOpBase {
 public:
  using ResizeGradOpBase::ResizeGradOpBase;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const GradGeometry g,
                        ValidateBilinearGrad(*ctx, align_corners_, half_pixel_centers_));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, AllocateGradOutput(ctx, g));
    if (output->NumElements() == 0) return;
    OP_ASSIGN_OR_RETURN(ctx, const Tensor reserved, ReserveRowRanges(ctx, g));
    const BilinearGradPlan plan = PlanBilinearGrad(g, align_corners_, half_pixel_centers_);
    BilinearGradImages<T>(ctx, plan, g.batch, ctx->input(0).data<float>(), output->data<T>());
  }
};

// ---------------------------------------------------------------------------------------
// ResizeNearestNeighborGrad

// TF's checks, in its order. Unlike the bilinear gradient (and the forward ops), TF does
// not reject align_corners with half_pixel_centers here: it rounds (x + 0.5) * scale.
absl::StatusOr<GradGeometry> ValidateNearestGrad(const OpKernelContext& ctx) {
  const TensorShape& grads = ctx.input(0).shape();
  if (grads.dims() != 4) {
    return KernelError(ctx, "input must be 4-dimensional", grads.DebugString());
  }
  const Tensor& size = ctx.input(1);
  if (size.shape().dims() != 1) {
    return KernelError(ctx, "shape_t must be 1-dimensional", size.shape().DebugString());
  }
  if (size.NumElements() != 2) {
    return KernelError(ctx, "shape_t must have two elements", size.shape().DebugString());
  }
  GradGeometry g;
  g.original_height = size.flat<int32_t>()[0];
  g.original_width = size.flat<int32_t>()[1];
  if (g.original_height <= 0 || g.original_width <= 0) {
    return KernelError(ctx, "shape_t's elements must be positive");
  }
  g.batch = grads.dim_size(0);
  g.resized_height = grads.dim_size(1);
  g.resized_width = grads.dim_size(2);
  g.channels = grads.dim_size(3);
  return g;
}

// The original row or column each gradient one goes to, times `stride`. Never below 0:
// the scale and the coordinate are both non-negative.
std::vector<int64_t> NearestGradTargets(int64_t resized, int64_t original, float scale,
                                        bool align_corners, bool half_pixel_centers,
                                        int64_t stride) {
  std::vector<int64_t> targets(resized);
  for (int64_t i = 0; i < resized; ++i) {
    const float in = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale
                                        : static_cast<float>(i) * scale;
    const int64_t target = align_corners ? static_cast<int64_t>(std::round(in))
                                         : static_cast<int64_t>(std::floor(in));
    targets[i] = std::min<int64_t>(target, original - 1) * stride;
  }
  return targets;
}

struct NearestGradPlan {
  int64_t channels = 0, resized_height = 0, original_height = 0;
  int64_t resized_row = 0, original_row = 0;  // elements per row
  std::vector<int64_t> xs;                    // target columns, in elements
  std::vector<RowRange> ranges;               // per original row: the rows sent to it
};

// REQUIRES: the gradient has rows and columns (the scales divide by their counts).
NearestGradPlan PlanNearestGrad(const GradGeometry& g, bool align_corners,
                                bool half_pixel_centers) {
  NearestGradPlan plan;
  plan.channels = g.channels;
  plan.resized_height = g.resized_height;
  plan.original_height = g.original_height;
  plan.resized_row = g.resized_width * g.channels;
  plan.original_row = g.original_width * g.channels;
  const float height_scale = GradScale(g.original_height, g.resized_height, align_corners);
  const float width_scale = GradScale(g.original_width, g.resized_width, align_corners);
  plan.xs = NearestGradTargets(g.resized_width, g.original_width, width_scale, align_corners,
                               half_pixel_centers, g.channels);
  const std::vector<int64_t> ys = NearestGradTargets(
      g.resized_height, g.original_height, height_scale, align_corners, half_pixel_centers, 1);
  plan.ranges.resize(g.original_height);
  for (int64_t y = 0; y < g.resized_height; ++y) AddToRange(ys[y], y, &plan.ranges);
  return plan;
}

// a + b as TF's Eigen types add: half and bfloat16 round the float sum, integers wrap
// (computed unsigned: signed overflow is undefined in C++).
template <typename T>
T AddElement(T a, T b) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return T::FromFloat(a.ToFloat() + b.ToFloat());
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

// Original row `oy` of one image from that image's gradient `image`.
template <typename T>
void NearestGradRow(const NearestGradPlan& plan, const T* image, int64_t oy, T* out) {
  std::fill_n(out, plan.original_row, T{});
  const RowRange& range = plan.ranges[oy];
  for (int64_t y = range.begin; y < range.end; ++y) {
    const T* g = image + y * plan.resized_row;
    for (int64_t x : plan.xs) {
      T* dst = out + x;
      for (int64_t c = 0; c < plan.channels; ++c) dst[c] = AddElement(dst[c], g[c]);
      g += plan.channels;
    }
  }
}

template <typename T>
void NearestGradImages(OpKernelContext* ctx, const NearestGradPlan& plan, int64_t batch,
                       const T* grads, T* out) {
  const int64_t rows = batch * plan.original_height;
  const int64_t rows_in = plan.resized_height / plan.original_height + 1;
  const int64_t cost = rows_in * plan.resized_row + plan.original_row;
  ParallelForElements(ctx, rows, cost, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const T* image =
          grads + (r / plan.original_height) * plan.resized_height * plan.resized_row;
      NearestGradRow(plan, image, r % plan.original_height, out + r * plan.original_row);
    }
  });
}

template <typename T>
class ResizeNearestNeighborGradOp : public ResizeGradOpBase {
 public:
  using ResizeGradOpBase::ResizeGradOpBase;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const GradGeometry g, ValidateNearestGrad(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, AllocateGradOutput(ctx, g));
    if (output->NumElements() == 0) return;
    T* out = output->data<T>();
    const Tensor& grads = ctx->input(0);
    if (grads.NumElements() == 0) {  // no rows or columns: all zeros, as TF
      std::fill_n(out, output->NumElements(), T{});
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, const Tensor reserved, ReserveRowRanges(ctx, g));
    const NearestGradPlan plan = PlanNearestGrad(g, align_corners_, half_pixel_centers_);
    NearestGradImages<T>(ctx, plan, g.batch, grads.data<T>(), out);
  }
};

// Registers Kernel<T> for `op` once per T, constrained on attr "T".
template <template <typename> class Kernel, typename... Ts>
absl::Status RegisterForTypes(KernelRegistry* registry, const std::string& op) {
  absl::Status status;
  auto register_one = [&](auto zero) {
    using T = decltype(zero);
    if (status.ok()) status = registry->Register<Kernel<T>>(CpuKernel(op).TypeConstraint<T>("T"));
  };
  (register_one(Ts{}), ...);
  return status;
}

}  // namespace

// The dtypes TF 2.21 registers on the CPU: ResizeBilinearGrad for half, float, double and
// bfloat16; ResizeNearestNeighborGrad for every real type its OpDef allows.
absl::Status RegisterResizeGradKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<ResizeBilinearGradOp, float, double, Half, Bfloat16>(
      registry, "ResizeBilinearGrad")));
  return RegisterForTypes<ResizeNearestNeighborGradOp, uint8_t, int8_t, int32_t, Half, float,
                          double, Bfloat16>(registry, "ResizeNearestNeighborGrad");
}

}  // namespace dflow
