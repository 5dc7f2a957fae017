// CropAndResize with TF 2.21's CPU arithmetic (crop_and_resize_op.cc): box b samples image
// box_ind[b] at in_y = y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (crop_h - 1) (the box's
// centre, computed in double, when crop_h == 1), likewise along x; samples outside
// [0, H - 1] take extrapolation_value. Bilinear is TF's two float lerps along x then one
// along y; nearest rounds half away from zero. Output is always float.
// Built without -mfma (like resize_ops) so the lerps round as TF's binary does.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// The image dtypes TF 2.21 registers CropAndResize for on the CPU.
std::vector<DataType> CropTypes() {
  return {DT_UINT8, DT_UINT16, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_HALF, DT_FLOAT, DT_DOUBLE};
}

struct CropGeometry {
  int64_t batch = 0, height = 0, width = 0, depth = 0;
  int64_t num_boxes = 0, crop_height = 0, crop_width = 0;
};

// TF's checks, in its order and with its messages.
absl::StatusOr<CropGeometry> ValidateCrop(const OpKernelContext& ctx) {
  const TensorShape& image = ctx.input(0).shape();
  const TensorShape& boxes = ctx.input(1).shape();
  const TensorShape& box_ind = ctx.input(2).shape();
  const Tensor& crop_size = ctx.input(3);
  if (image.dims() != 4) return KernelError(ctx, "input image must be 4-D", image.DebugString());
  CropGeometry g{image.dim_size(0), image.dim_size(1), image.dim_size(2), image.dim_size(3)};
  if (g.height <= 0 || g.width <= 0) return KernelError(ctx, "image dimensions must be positive");
  if (boxes.dims() != 2) return KernelError(ctx, "boxes must be 2-D, got: ", boxes.DebugString());
  if (box_ind.dims() != 1) {
    return KernelError(ctx, "box_indices must be rank 1 but is shape ", box_ind.DebugString());
  }
  g.num_boxes = boxes.dim_size(0);
  // TF accepts empty boxes and box_ind of any matching-rank shape ([0, 3] boxes too).
  if (boxes.num_elements() != 0 || box_ind.num_elements() != 0) {
    if (boxes.dim_size(1) != 4) return KernelError(ctx, "boxes must have 4 columns");
    if (box_ind.dim_size(0) != g.num_boxes) {
      return KernelError(ctx, "box_index has incompatible shape");
    }
  } else {
    g.num_boxes = 0;
  }
  if (crop_size.shape().dims() != 1) {
    return KernelError(ctx, "crop_size must be 1-D", crop_size.shape().DebugString());
  }
  if (crop_size.NumElements() != 2) {
    return KernelError(ctx, "crop_size must have two elements", crop_size.shape().DebugString());
  }
  g.crop_height = crop_size.flat<int32_t>()[0];
  g.crop_width = crop_size.flat<int32_t>()[1];
  if (g.crop_height <= 0 || g.crop_width <= 0) {
    return KernelError(ctx, "crop dimensions must be positive");
  }
  return g;
}

// TF checks box_ind after allocating the output, as OUT_OF_RANGE.
absl::Status CheckBoxIndices(const Tensor& box_ind, int64_t num_boxes, int64_t batch) {
  const int32_t* ind = box_ind.data<int32_t>();
  for (int64_t b = 0; b < num_boxes; ++b) {
    if (ind[b] < 0 || ind[b] >= batch) {
      return absl::OutOfRangeError("box_index has values outside [0, batch_size)");
    }
  }
  return absl::OkStatus();
}

template <typename T>
float AsFloat(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
    return value.ToFloat();
  } else {
    return static_cast<float>(value);
  }
}

// Source coordinates along one axis of one box, TF's float (and centre: double) formulas.
std::vector<float> SourceCoords(float c1, float c2, int64_t in_size, int64_t crop_size) {
  std::vector<float> coords(crop_size);
  if (crop_size == 1) {
    coords[0] = static_cast<float>(0.5 * (c1 + c2) * (in_size - 1));
    return coords;
  }
  const float scale = (c2 - c1) * (in_size - 1) / (crop_size - 1);
  for (int64_t i = 0; i < crop_size; ++i) coords[i] = c1 * (in_size - 1) + i * scale;
  return coords;
}

// Outside [0, size - 1] (or NaN, which TF would index with) extrapolates.
bool Inside(float coord, int64_t size) { return coord >= 0 && coord <= size - 1; }

template <typename T>
void CropBox(const CropGeometry& g, const T* image, const float* box, bool bilinear,
             float extrapolation, float* out) {
  const std::vector<float> ys = SourceCoords(box[0], box[2], g.height, g.crop_height);
  const std::vector<float> xs = SourceCoords(box[1], box[3], g.width, g.crop_width);
  const int64_t d = g.depth, row = g.width * d;
  for (float in_y : ys) {
    for (float in_x : xs) {
      if (!Inside(in_y, g.height) || !Inside(in_x, g.width)) {
        out = std::fill_n(out, d, extrapolation);
        continue;
      }
      if (!bilinear) {
        const T* src = image + std::lround(in_y) * row + std::lround(in_x) * d;
        for (int64_t k = 0; k < d; ++k) *out++ = AsFloat(src[k]);
        continue;
      }
      const float top_y = std::floor(in_y), left_x = std::floor(in_x);
      const float y_lerp = in_y - top_y, x_lerp = in_x - left_x;
      const T* top = image + static_cast<int64_t>(top_y) * row;
      const T* bottom = image + static_cast<int64_t>(std::ceil(in_y)) * row;
      const int64_t left = static_cast<int64_t>(left_x) * d;
      const int64_t right = static_cast<int64_t>(std::ceil(in_x)) * d;
      for (int64_t k = 0; k < d; ++k) {
        const float tl = AsFloat(top[left + k]), tr = AsFloat(top[right + k]);
        const float bl = AsFloat(bottom[left + k]), br = AsFloat(bottom[right + k]);
        const float t = tl + (tr - tl) * x_lerp;
        const float b = bl + (br - bl) * x_lerp;
        *out++ = t + (b - t) * y_lerp;
      }
    }
  }
}

class CropAndResizeOp : public OpKernel {
 public:
  explicit CropAndResizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string method;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("method", &method));
    OP_REQUIRES(ctx, method == "bilinear" || method == "nearest",
                absl::InvalidArgumentError(
                    absl::StrCat("method must be 'bilinear' or 'nearest'", method)));
    bilinear_ = method == "bilinear";
    OP_REQUIRES_OK(ctx, ctx->GetAttr("extrapolation_value", &extrapolation_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const CropGeometry g, ValidateCrop(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape,
                        OutputShape(*ctx, {g.num_boxes, g.crop_height, g.crop_width, g.depth}));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    OP_REQUIRES_OK(ctx, CheckBoxIndices(ctx->input(2), g.num_boxes, g.batch));
    if (output->NumElements() == 0) return;
    const Tensor& image = ctx->input(0);
    const float* boxes = ctx->input(1).data<float>();
    const int32_t* box_ind = ctx->input(2).data<int32_t>();
    const int64_t crop_elements = g.crop_height * g.crop_width * g.depth;
    float* out = output->data<float>();
    DispatchNumericOrHalf(image.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* in = image.data<T>();
      const int64_t image_elements = g.height * g.width * g.depth;
      ParallelForElements(ctx, g.num_boxes, crop_elements * 8, [&](int64_t first, int64_t end) {
        for (int64_t b = first; b < end; ++b) {
          CropBox<T>(g, in + box_ind[b] * image_elements, boxes + 4 * b, bilinear_,
                     extrapolation_, out + b * crop_elements);
        }
      });
    });
  }

 private:
  bool bilinear_ = true;
  float extrapolation_ = 0;
};

}  // namespace

absl::Status RegisterCropAndResizeKernels(KernelRegistry* registry) {
  return registry->Register<CropAndResizeOp>(
      CpuKernel("CropAndResize").TypeConstraint("T", CropTypes()));
}

}  // namespace dflow
