// MaxPoolGrad and MaxPoolGradV2 (float, double) as TF's CPU kernel computes them, and
// _DflowMaxPoolGradRelu (graph/max_pool_grad_relu_fusion.h), the same with ReluGrad's
// rule applied as the gradient is written: each pooling window's incoming gradient goes
// to the window's maximum in orig_input, found again here (orig_output is only checked
// for its shape, as TF does); a tie goes to the first maximum in scan order (row by row,
// left to right), and a NaN wins only where it comes first (TF keeps the first element
// unless a later one compares greater). Windows that overlap add their gradients into
// the same element in output order, TF's order.
//
// Not a oneDNN primitive: oneDNN's max-pool backward takes its argmax from a forward
// workspace, so it would need a forward pass anyway and TF's tie and NaN rules are
// simplest to keep in this loop (one compare per window element, as the forward pool).
//
// TF's CPU kernel takes only NHWC; this one also takes NCHW (TF's GPU kernel does).
// ksize/strides are 4-vectors in data_format order (V2: int32 inputs); SAME, VALID or
// EXPLICIT padding, explicit pads smaller than the window. Errors use TF's words.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// One call's sizes: the forward pool's input image, window and output, per image.
struct PoolGradGeometry {
  int64_t batch = 0, depth = 0;
  WindowDim rows, cols;
};

// Strides (in elements) of an image batch laid out as `layout`, for an image of
// `height` x `width` x `depth`.
struct ImageStrides {
  int64_t image, row, col, channel;
};

ImageStrides StridesOf(const ImageLayout& layout, int64_t height, int64_t width, int64_t depth) {
  if (layout.nchw) return {depth * height * width, width, 1, height * width};
  return {height * width * depth, width * depth, depth, 1};
}

// TF's window checks for MaxPoolGrad (its texts differ from MaxPool's).
absl::Status CheckWindow(const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                         const ImageLayout& layout) {
  if (ksize.size() != 4) {
    return absl::InvalidArgumentError("Sliding window ksize field must specify 4 dimensions");
  }
  if (strides.size() != 4) {
    return absl::InvalidArgumentError("Sliding window strides field must specify 4 dimensions");
  }
  if (ksize[layout.batch] != 1 || strides[layout.batch] != 1) {
    return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[layout.channel] != 1 || strides[layout.channel] != 1) {
    return absl::UnimplementedError("MaxPoolingGrad is not yet supported on the depth dimension.");
  }
  // TF does not check the window size (a zero makes it read outside the window); this
  // kernel refuses it with MaxPool's words.
  for (int i = 0; i < 4; ++i) {
    if (ksize[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sliding window ksize for dimension ", i, " was zero or negative"));
    }
  }
  for (int i : {layout.height, layout.width}) {
    if (strides[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("Stride must be > 0, but got ", strides[i]));
    }
  }
  return absl::OkStatus();
}

// The int32 vector input `index` (V2's ksize, strides), read flat as TF does.
std::vector<int64_t> IntsOf(const Tensor& t) {
  const int32_t* data = t.data<int32_t>();
  return std::vector<int64_t>(data, data + t.NumElements());
}

// The gradient of one image: `out` (the input's shape, zeroed) gets each window's
// gradient at the window's first maximum of `in`. Channels are the innermost loop (they
// are contiguous in NHWC): every channel of a window is scanned in the same order, so
// the winner is each channel's first maximum as before, but the compare is a select the
// compiler vectorises instead of a branch that mispredicts on every other element.
// `best_value` and `best_index` are scratch of g.depth entries.
template <typename T>
void MaxPoolGradImage(const PoolGradGeometry& g, const ImageStrides& in_s,
                      const ImageStrides& out_s, const T* in, const T* grad, T* out,
                      T* best_value, int64_t* best_index) {
  const int64_t depth = g.depth;
  const int64_t ch = in_s.channel;
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const int64_t y0 = std::max<int64_t>(oy * g.rows.stride - g.rows.pad_before, 0);
    const int64_t y1 = std::min(oy * g.rows.stride - g.rows.pad_before + g.rows.size, g.rows.input);
    for (int64_t ox = 0; ox < g.cols.output; ++ox) {
      const int64_t x0 = std::max<int64_t>(ox * g.cols.stride - g.cols.pad_before, 0);
      const int64_t x1 =
          std::min(ox * g.cols.stride - g.cols.pad_before + g.cols.size, g.cols.input);
      if (y0 >= y1 || x0 >= x1) continue;  // a window of padding only: no maximum
      const int64_t first = y0 * in_s.row + x0 * in_s.col;
      for (int64_t c = 0; c < depth; ++c) {
        best_index[c] = first + c * ch;
        best_value[c] = in[first + c * ch];
      }
      for (int64_t y = y0; y < y1; ++y) {
        for (int64_t x = (y == y0 ? x0 + 1 : x0); x < x1; ++x) {
          const int64_t base = y * in_s.row + x * in_s.col;
          for (int64_t c = 0; c < depth; ++c) {
            const T v = in[base + c * ch];
            const bool greater = best_value[c] < v;  // NaN: never greater, never beaten
            best_value[c] = greater ? v : best_value[c];
            best_index[c] = greater ? base + c * ch : best_index[c];
          }
        }
      }
      const T* window_grad = grad + oy * out_s.row + ox * out_s.col;
      for (int64_t c = 0; c < depth; ++c) out[best_index[c]] += window_grad[c * out_s.channel];
    }
  }
}

// Whether every input element lies in at most one window and every window is whole:
// stride equal to the window, no window reaching into padding on either side (LeNet's
// and VGG's 2x2 pools; SAME on an odd size pads after, so it is not).
bool DisjointWholeWindows(const PoolGradGeometry& g) {
  const auto whole = [](const WindowDim& d) {
    return d.stride == d.size && d.pad_before == 0 && d.output > 0 &&
           d.output * d.size <= d.input;  // no window reaches into padding after
  };
  return whole(g.rows) && whole(g.cols) && g.rows.size * g.cols.size < (int64_t{1} << 31);
}

// MaxPoolGradImage for disjoint whole windows over NHWC. Per output row, the scan runs
// over whole input rows: for every position p of the row's first window row and each
// window element k in scan order, v = in[p + offset(k)] replaces the running best of p
// when best < v (TF's rule, NaN included), and p remembers k. The loop over p is
// contiguous, so it vectorises whatever the channel count (LeNet's 6 channels ran as
// scalars when scanned window by window); positions that start no window are computed
// and ignored. Then each window's elements are written once: the gradient at the
// remembered element, zeros elsewhere; rows and columns no window covers are zeroed.
// `best` and `code` are scratch of one input row each; `offsets[k]` is window element
// k's offset from the window's first element. With `relu` (_DflowMaxPoolGradRelu) a
// window's gradient is written only where its maximum is positive (ReluGrad's rule).
template <typename T>
void MaxPoolGradDisjointNhwc(const PoolGradGeometry& g, const int64_t* offsets, bool relu,
                             const T* in, const T* grad, T* out, T* best, int32_t* code) {
  const int64_t depth = g.depth;
  const int64_t row = g.cols.input * depth;
  const int64_t kh = g.rows.size, kw = g.cols.size;
  const int64_t window_row = kw * depth;  // one window's elements in one input row
  const int64_t covered_cols = g.cols.output * kw;
  // Positions p of the first window row that start a window, or lie between two that do.
  const int64_t span = ((g.cols.output - 1) * kw + 1) * depth;
  for (int64_t oy = 0; oy < g.rows.output; ++oy) {
    const T* top = in + oy * kh * row;
    std::copy(top, top + span, best);
    std::fill_n(code, span, 0);
    for (int64_t k = 1; k < kh * kw; ++k) {
      const T* candidate = top + offsets[k];
      const int32_t index = static_cast<int32_t>(k);
      for (int64_t p = 0; p < span; ++p) {
        const T v = candidate[p];
        const bool greater = best[p] < v;  // NaN: never greater, never beaten
        best[p] = greater ? v : best[p];
        code[p] = greater ? index : code[p];
      }
    }
    T* out_top = out + oy * kh * row;
    for (int64_t y = 0; y < kh; ++y) std::fill_n(out_top + y * row, covered_cols * depth, T(0));
    const T* row_grad = grad + oy * g.cols.output * depth;
    for (int64_t ox = 0; ox < g.cols.output; ++ox) {
      const int64_t first = ox * window_row;
      for (int64_t c = 0; c < depth; ++c) {
        const T value = row_grad[ox * depth + c];
        out_top[first + offsets[code[first + c]] + c] =
            !relu || best[first + c] > T(0) ? value : T(0);
      }
    }
    for (int64_t y = 0; y < kh; ++y) {
      std::fill(out_top + y * row + covered_cols * depth, out_top + (y + 1) * row, T(0));
    }
  }
  const int64_t covered_rows = g.rows.output * kh;
  std::fill(out + covered_rows * row, out + g.rows.input * row, T(0));
}

template <typename T>
class MaxPoolGradOp : public OpKernel {
 public:
  // `window_from_inputs`: V2, whose ksize and strides are inputs 3 and 4. `relu`:
  // _DflowMaxPoolGradRelu, ReluGrad(MaxPoolGrad(x, ...), x) in one pass.
  MaxPoolGradOp(OpKernelConstruction* c, bool window_from_inputs, bool relu = false)
      : OpKernel(c), window_from_inputs_(window_from_inputs), relu_(relu) {
    std::string format, padding;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_ASSIGN_OR_RETURN(c, layout_, ParseDataFormat(format));
    if (!window_from_inputs_) {
      OP_REQUIRES_OK(c, c->GetAttr("ksize", &ksize_));
      OP_REQUIRES_OK(c, c->GetAttr("strides", &strides_));
      OP_REQUIRES_OK(c, CheckWindow(ksize_, strides_, layout_));
    }
    OP_REQUIRES_OK(c, c->GetAttr("padding", &padding));
    OP_ASSIGN_OR_RETURN(c, padding_, ParsePadding(padding, /*allow_explicit=*/true));
    // Like TF, explicit_paddings is looked at only for EXPLICIT padding.
    if (padding_ == Padding::kExplicit) {
      std::vector<int64_t> pads;
      OP_REQUIRES_OK(c, c->GetAttr("explicit_paddings", &pads));
      OP_ASSIGN_OR_RETURN(c, pads_, ParseExplicitPaddings(padding_, pads, layout_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<PoolGradGeometry> geometry = Geometry(*ctx);
    OP_REQUIRES(ctx, geometry.ok(),
                absl::Status(geometry.status().code(),
                             absl::StrCat(type_string(), ": ", geometry.status().message())));
    const PoolGradGeometry& g = *geometry;
    const Tensor& in = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, in.shape()));
    T* out_data = out->data<T>();
    const ImageStrides in_s = StridesOf(layout_, g.rows.input, g.cols.input, g.depth);
    const ImageStrides grad_s = StridesOf(layout_, g.rows.output, g.cols.output, g.depth);
    const T* in_data = in.data<T>();
    const T* grad_data = ctx->input(2).data<T>();
    const int64_t cost = g.depth * g.rows.output * g.cols.output * g.rows.size * g.cols.size + 1;
    const bool disjoint = !layout_.nchw && DisjointWholeWindows(g);
    std::vector<int64_t> offsets;  // of each window element from the first (disjoint)
    for (int64_t k = 0; disjoint && k < g.rows.size * g.cols.size; ++k) {
      offsets.push_back((k / g.cols.size) * in_s.row + (k % g.cols.size) * in_s.col);
    }
    // Each shard zeroes (or writes once) its own images: in its cache, on its thread.
    ParallelForElements(ctx, g.batch, cost, [&](int64_t begin, int64_t end) {
      std::vector<T> best_value(disjoint ? g.cols.input * g.depth : g.depth);
      std::vector<int64_t> best_index(g.depth);
      std::vector<int32_t> code(disjoint ? g.cols.input * g.depth : 0);
      for (int64_t b = begin; b < end; ++b) {
        const T* image = in_data + b * in_s.image;
        const T* image_grad = grad_data + b * grad_s.image;
        T* image_out = out_data + b * in_s.image;
        if (disjoint) {
          MaxPoolGradDisjointNhwc(g, offsets.data(), relu_, image, image_grad, image_out,
                                  best_value.data(), code.data());
          continue;
        }
        std::fill_n(image_out, in_s.image, T(0));
        MaxPoolGradImage(g, in_s, grad_s, image, image_grad, image_out, best_value.data(),
                         best_index.data());
        for (int64_t i = 0; relu_ && i < in_s.image; ++i) {
          image_out[i] = image[i] > T(0) ? image_out[i] : T(0);
        }
      }
    });
  }

 private:
  // TF's checks in its order: ranks, the window, its output size, then the shapes of
  // orig_output and grad.
  absl::StatusOr<PoolGradGeometry> Geometry(const OpKernelContext& ctx) const {
    const char* names[] = {"tensor_in", "tensor_out", "out_backprop"};
    for (int i = 0; i < 3; ++i) {
      if (ctx.input(i).shape().dims() != 4) {
        return absl::InvalidArgumentError(absl::StrCat(names[i], " must be 4-dimensional"));
      }
    }
    std::vector<int64_t> ksize = ksize_, strides = strides_;
    if (window_from_inputs_) {
      ksize = IntsOf(ctx.input(3));
      strides = IntsOf(ctx.input(4));
      DFLOW_RETURN_IF_ERROR(CheckWindow(ksize, strides, layout_));
    }
    const TensorShape& in = ctx.input(0).shape();
    PoolGradGeometry g;
    g.batch = in.dim_size(layout_.batch);
    g.depth = in.dim_size(layout_.channel);
    g.rows = {in.dim_size(layout_.height),
              ksize[layout_.height],
              strides[layout_.height],
              1,
              pads_[0],
              pads_[1]};
    g.cols = {in.dim_size(layout_.width),
              ksize[layout_.width],
              strides[layout_.width],
              1,
              pads_[2],
              pads_[3]};
    if (padding_ == Padding::kExplicit) DFLOW_RETURN_IF_ERROR(CheckExplicitPoolPads(g.rows, g.cols));
    DFLOW_RETURN_IF_ERROR(ComputeWindow(padding_, &g.rows));
    DFLOW_RETURN_IF_ERROR(ComputeWindow(padding_, &g.cols));
    const TensorShape want(ImageDims(layout_, g.batch, g.rows.output, g.cols.output, g.depth));
    const char* what[] = {"orig_output", "grad"};
    for (int i = 1; i <= 2; ++i) {
      if (ctx.input(i).shape() != want) {
        return absl::InvalidArgumentError(absl::StrCat("Expected ", what[i - 1], " shape to be ",
                                                       want.DebugString(), ", but got ",
                                                       ctx.input(i).shape().DebugString()));
      }
    }
    return g;
  }

  const bool window_from_inputs_;
  const bool relu_;
  ImageLayout layout_;
  Padding padding_ = Padding::kValid;
  std::vector<int64_t> ksize_, strides_;
  std::vector<int64_t> pads_ = std::vector<int64_t>(4, 0);  // {top, bottom, left, right}
};

template <typename T, bool kWindowFromInputs, bool kRelu = false>
std::unique_ptr<OpKernel> MakeMaxPoolGrad(OpKernelConstruction* c) {
  return std::make_unique<MaxPoolGradOp<T>>(c, kWindowFromInputs, kRelu);
}

template <typename T>
absl::Status RegisterForType(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register(KernelDefBuilder("MaxPoolGrad").Device("CPU").TypeConstraint<T>("T"),
                         MakeMaxPoolGrad<T, false>));
  DFLOW_RETURN_IF_ERROR(registry->Register(
      KernelDefBuilder("_DflowMaxPoolGradRelu").Device("CPU").TypeConstraint<T>("T"),
      MakeMaxPoolGrad<T, false, true>));
  return registry->Register(KernelDefBuilder("MaxPoolGradV2")
                                .Device("CPU")
                                .TypeConstraint<T>("T")
                                .HostMemory("ksize")
                                .HostMemory("strides"),
                            MakeMaxPoolGrad<T, true>);
}

}  // namespace

absl::Status RegisterMaxPoolGradKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterForType<float>(registry));
  return RegisterForType<double>(registry);
}

}  // namespace dflow
