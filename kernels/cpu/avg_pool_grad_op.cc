// AvgPoolGrad (float, double): each pooling window's incoming gradient, divided by the
// number of input elements the window covers (padding excluded, as AvgPool divides), added
// to each of them. NHWC as TF's CPU kernel, and NCHW; SAME or VALID padding; TF's checks.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

template <typename T>
class AvgPoolGradOp : public OpKernel {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format, padding;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_ASSIGN_OR_RETURN(c, layout_, ParseDataFormat(format));
    OP_REQUIRES_OK(c, c->GetAttr("ksize", &ksize_));
    OP_REQUIRES_OK(c, c->GetAttr("strides", &strides_));
    OP_REQUIRES_OK(c, c->GetAttr("padding", &padding));
    OP_ASSIGN_OR_RETURN(c, padding_, ParsePadding(padding, /*allow_explicit=*/false));
    OP_REQUIRES(c, ksize_.size() == 4 && strides_.size() == 4,
                absl::InvalidArgumentError(
                    "Sliding window ksize and strides fields must specify 4 dimensions"));
    OP_REQUIRES(c, ksize_[layout_.batch] == 1 && strides_[layout_.batch] == 1,
                absl::UnimplementedError("Pooling is not yet supported on the batch dimension."));
    OP_REQUIRES(c, ksize_[layout_.channel] == 1 && strides_[layout_.channel] == 1,
                absl::UnimplementedError("Non-spatial pooling is not yet supported."));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    OP_REQUIRES(ctx, sizes.shape().dims() == 1 && sizes.NumElements() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "orig_input_shape must be 1-dimensional and 4 elements, got ",
                    sizes.shape().DebugString())));
    OP_REQUIRES(ctx, grad.shape().dims() == 4,
                absl::InvalidArgumentError("out_backprop must be 4-dimensional"));
    const std::vector<int64_t> dims = ReadIndices(sizes);
    OP_ASSIGN_OR_RETURN(ctx, TensorShape in_shape, OutputShape(*ctx, dims));
    WindowDim rows{dims[layout_.height], ksize_[layout_.height], strides_[layout_.height]};
    WindowDim cols{dims[layout_.width], ksize_[layout_.width], strides_[layout_.width]};
    OP_REQUIRES_OK(ctx, ComputeWindow(padding_, &rows));
    OP_REQUIRES_OK(ctx, ComputeWindow(padding_, &cols));
    const int64_t batch = dims[layout_.batch], depth = dims[layout_.channel];
    const TensorShape want(ImageDims(layout_, batch, rows.output, cols.output, depth));
    OP_REQUIRES(ctx, grad.shape() == want,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected grad shape to be ", want.DebugString(), ", but got ",
                    grad.shape().DebugString())));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, in_shape));
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T(0));
    const Strides in_s = StridesOf(rows.input, cols.input, depth);
    const Strides g_s = StridesOf(rows.output, cols.output, depth);
    const T* src = grad.data<T>();
    const int64_t cost = rows.output * cols.output * depth * rows.size * cols.size + 1;
    ParallelForElements(ctx, batch, cost, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        Image(rows, cols, depth, in_s, g_s, src + b * g_s.image, dst + b * in_s.image);
      }
    });
  }

 private:
  struct Strides {
    int64_t image, row, col, channel;
  };
  Strides StridesOf(int64_t height, int64_t width, int64_t depth) const {
    if (layout_.nchw) return {depth * height * width, width, 1, height * width};
    return {height * width * depth, width * depth, depth, 1};
  }

  static void Image(const WindowDim& rows, const WindowDim& cols, int64_t depth,
                    const Strides& in_s, const Strides& g_s, const T* grad, T* out) {
    for (int64_t oy = 0; oy < rows.output; ++oy) {
      const int64_t y0 = std::max<int64_t>(oy * rows.stride - rows.pad_before, 0);
      const int64_t y1 = std::min(oy * rows.stride - rows.pad_before + rows.size, rows.input);
      for (int64_t ox = 0; ox < cols.output; ++ox) {
        const int64_t x0 = std::max<int64_t>(ox * cols.stride - cols.pad_before, 0);
        const int64_t x1 = std::min(ox * cols.stride - cols.pad_before + cols.size, cols.input);
        const int64_t count = (y1 - y0) * (x1 - x0);
        if (count <= 0) continue;
        for (int64_t c = 0; c < depth; ++c) {
          const T share = grad[oy * g_s.row + ox * g_s.col + c * g_s.channel] / static_cast<T>(count);
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) out[y * in_s.row + x * in_s.col + c * in_s.channel] += share;
          }
        }
      }
    }
  }

  ImageLayout layout_;
  Padding padding_ = Padding::kValid;
  std::vector<int64_t> ksize_, strides_;
};

}  // namespace

absl::Status RegisterAvgPoolGradKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<AvgPoolGradOp<float>>(
      KernelDefBuilder("AvgPoolGrad").Device("CPU").TypeConstraint<float>("T").HostMemory(
          "orig_input_shape")));
  return registry->Register<AvgPoolGradOp<double>>(
      KernelDefBuilder("AvgPoolGrad").Device("CPU").TypeConstraint<double>("T").HostMemory(
          "orig_input_shape"));
}

}  // namespace dflow
