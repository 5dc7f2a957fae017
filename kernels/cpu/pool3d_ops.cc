// MaxPool3D, AvgPool3D and the gradients MaxPool3DGrad, AvgPool3DGrad and
// MaxPool3DGradGrad, for float and bfloat16 (TF's CPU types), as TF 2.21's CPU kernels
// (pooling_ops_3d.cc) compute them:
//  - ksize and strides are 5-vectors in data_format order; SAME puts the odd pad after.
//  - MaxPool3D: the largest of the window's elements inside the input, NaNs skipped (a
//    window of NaNs gives -inf). That is TF's result when the channels fill Eigen's
//    vectors (8 floats); for other channel counts TF's scalar loop returns the largest
//    element after the window's last NaN.
//  - AvgPool3D: their sum divided by their number (padding excluded).
//    Unlike TF's Eigen code, SAME padding never takes part: there a window of -inf next to
//    the padding gives -FLT_MAX (the padding value), and AvgPool3D skips input elements
//    equal to -FLT_MAX.
//  - MaxPool3DGrad does not search for an argmax: every element within 1e-5 of
//    orig_output gets the window's gradient, so tied maxima all receive it (TF's CPU
//    kernel; orig_output is taken as given).
//  - AvgPool3DGrad adds grad * (1 / count) to every element of the window.
//    Both gradients use TF's ranges (GradRangeOf): the window inside the input, except
//    that a window sticking out on both sides spreads over [0, min(input, ksize)).
//  - MaxPool3DGradGrad: for each output, grad at the window's first element (scan order)
//    equal to orig_output, or 0.
// The gradients add the windows' shares in TF's order (output cols outermost, then rows,
// then planes, as TF loops) and bfloat16 rounds after each operation as Eigen's does, so
// they give TF's bits (when built without -mfma: products are rounded before they are
// added). AvgPool3D in bfloat16 rounds once, where Eigen rounds after each add.
//
// TF's CPU kernels take only NDHWC; these also take NCDHW (TF's GPU and oneDNN kernels do).
// Loops run channels innermost (contiguous in NDHWC, so they vectorise), and each worker
// owns whole planes of the output: the forward ops and GradGrad loop over output planes,
// the gradients over input planes, gathering from every window that covers an element.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/half.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// float computes as itself, bfloat16 as float rounded back after each operation.
inline float Widen(float v) { return v; }
inline float Widen(Bfloat16 v) { return v.ToFloat(); }

template <typename T>
T Narrow(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return T::FromFloat(v);
  }
}

// `v` rounded to T's precision (Eigen's bfloat16 operators round each result).
template <typename T>
float Round(float v) {
  return Widen(Narrow<T>(v));
}

// Positions of the five dims of a batch of volumes.
struct VolumeLayout {
  bool ncdhw = false;
  int batch = 0;
  int channel = 4;
  int spatial[3] = {1, 2, 3};  // planes, rows, cols
};

absl::StatusOr<VolumeLayout> ParseVolumeFormat(const std::string& format) {
  if (format == "NDHWC") return VolumeLayout{false, 0, 4, {1, 2, 3}};
  if (format == "NCDHW") return VolumeLayout{true, 0, 1, {2, 3, 4}};
  return absl::InvalidArgumentError("Invalid data format");
}

// Element strides of a batch of volumes, per dim.
struct VolumeStrides {
  int64_t image, plane, row, col, channel;
};

// The four kernels whose attr checks differ in TF's words.
enum class Kind { kPool, kMaxPoolGrad, kAvgPoolGrad, kMaxPoolGradGrad };

// TF's constructor checks on ksize and strides, in TF's order and words.
absl::Status CheckWindowAttrs(Kind kind, const std::vector<int64_t>& ksize,
                              const std::vector<int64_t>& strides, const VolumeLayout& layout) {
  if (ksize.size() != 5) {
    return absl::InvalidArgumentError("Sliding window ksize field must specify 5 dimensions");
  }
  const bool positive = std::all_of(ksize.begin(), ksize.end(), [](int64_t k) { return k > 0; });
  constexpr const char* kNonPositive =
      "Sliding window ksize field must have non-negative dimensions";
  if (kind == Kind::kPool && !positive) return absl::InvalidArgumentError(kNonPositive);
  for (int64_t k : ksize) {
    if (kind == Kind::kAvgPoolGrad && k <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("ksize must be positive, got: ", k));
    }
  }
  if (strides.size() != 5) {
    return absl::InvalidArgumentError(
        kind == Kind::kMaxPoolGradGrad ? "Sliding window strides field must specify 5 dimensions"
                                       : "Sliding window stride field must specify 5 dimensions");
  }
  if (ksize[layout.batch] != 1 || strides[layout.batch] != 1) {
    return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[layout.channel] != 1 || strides[layout.channel] != 1) {
    return absl::UnimplementedError(
        kind == Kind::kMaxPoolGradGrad
            ? "MaxPooling3dGradGrad is not yet supported on the depth dimension."
            : "Pooling is not yet supported on the depth dimension.");
  }
  // TF's MaxPool3DGrad and MaxPool3DGradGrad do not check the window (a zero reads outside
  // it); these refuse it with MaxPool3D's words.
  if (!positive) return absl::InvalidArgumentError(kNonPositive);
  return absl::OkStatus();
}

struct Pool3DAttrs {
  VolumeLayout layout;
  Padding padding = Padding::kValid;
  std::vector<int64_t> ksize, strides;
};

absl::StatusOr<Pool3DAttrs> ParseAttrs(OpKernelConstruction* c, Kind kind) {
  Pool3DAttrs attrs;
  std::string format, padding;
  DFLOW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  DFLOW_ASSIGN_OR_RETURN(attrs.layout, ParseVolumeFormat(format));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("ksize", &attrs.ksize));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("strides", &attrs.strides));
  DFLOW_RETURN_IF_ERROR(CheckWindowAttrs(kind, attrs.ksize, attrs.strides, attrs.layout));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  DFLOW_ASSIGN_OR_RETURN(attrs.padding, ParsePadding(padding, /*allow_explicit=*/false));
  return attrs;
}

// [begin, end) along one dim.
struct Range {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
};

// The input positions that output `o`'s window covers inside the input.
Range WindowOf(const WindowDim& d, int64_t o) {
  const int64_t start = o * d.stride - d.pad_before;
  return {std::max<int64_t>(start, 0), std::min(start + d.size, d.input)};
}

// One call's sizes: batch, channels and the window along planes, rows and cols.
struct Pool3DGeometry {
  int64_t batch = 0, channels = 0;
  WindowDim dim[3];

  std::vector<int64_t> Dims(const VolumeLayout& l, bool output) const {
    std::vector<int64_t> dims(5);
    dims[l.batch] = batch;
    dims[l.channel] = channels;
    for (int i = 0; i < 3; ++i) dims[l.spatial[i]] = output ? dim[i].output : dim[i].input;
    return dims;
  }
  VolumeStrides Strides(const VolumeLayout& l, bool output) const {
    const int64_t p = output ? dim[0].output : dim[0].input;
    const int64_t r = output ? dim[1].output : dim[1].input;
    const int64_t c = output ? dim[2].output : dim[2].input;
    if (l.ncdhw) return {channels * p * r * c, r * c, c, 1, p * r * c};
    return {p * r * c * channels, r * c * channels, c * channels, channels, 1};
  }
};

// The geometry of pooling a volume batch of shape `in` (5-D). Each spatial dim gets TF's
// stride check and output size (ComputeWindow); `planes_first` sizes planes, rows, cols
// in that order (MaxPool3DGradGrad's Pool3dParameters), otherwise cols first (TF's
// Get3dOutputSize), which decides the error reported when several dims are bad.
absl::StatusOr<Pool3DGeometry> MakeGeometry(const Pool3DAttrs& a, const TensorShape& in,
                                            bool planes_first) {
  Pool3DGeometry g;
  g.batch = in.dim_size(a.layout.batch);
  g.channels = in.dim_size(a.layout.channel);
  for (int k = 0; k < 3; ++k) {
    const int i = planes_first ? k : 2 - k;
    const int axis = a.layout.spatial[i];
    WindowDim& d = g.dim[i];
    d.input = in.dim_size(axis);
    d.size = a.ksize[axis];
    d.stride = a.strides[axis];
    if (d.stride <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("Stride must be > 0, but got ", d.stride));
    }
    DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &d));
  }
  return g;
}

absl::Status CheckRank5(const OpKernelContext& ctx, std::initializer_list<const char*> names) {
  int i = 0;
  for (const char* name : names) {
    if (ctx.input(i++).shape().dims() != 5) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be 5-dimensional"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const char* what, const TensorShape& want, const TensorShape& got) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Expected ", what, " shape to be ",
                                                 want.DebugString(), ", but got ",
                                                 got.DebugString()));
}

// Rough cycles for one plane of `points` positions, each visiting up to a window of
// elements in every channel (capped: a window may be far larger than the input).
int64_t PlaneCost(const Pool3DGeometry& g, int64_t points) {
  double cost = static_cast<double>(points) * static_cast<double>(g.channels);
  for (const WindowDim& d : g.dim) {
    cost *= static_cast<double>(std::min(d.size, std::max<int64_t>(d.input, 1)));
  }
  return static_cast<int64_t>(std::min(cost, 1e9)) + 1;
}

// Base of the five kernels: the attrs, and errors prefixed with the op's name.
class Pool3DKernel : public OpKernel {
 public:
  Pool3DKernel(OpKernelConstruction* c, Kind kind) : OpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseAttrs(c, kind));
  }
  void Compute(OpKernelContext* ctx) override {
    const absl::Status status = Run(ctx);
    if (!status.ok()) ctx->SetStatus(Annotate(status, absl::StrCat(type_string(), ": ")));
  }

 protected:
  virtual absl::Status Run(OpKernelContext* ctx) const = 0;
  Pool3DAttrs attrs_;
};

// ---------------------------------------------------------------- MaxPool3D, AvgPool3D

// Pools output plane `op` of one volume (`in` and `out` point at the volume).
// `acc` is scratch of g.channels floats.
template <typename T, bool kMax>
void PoolPlane(const Pool3DGeometry& g, const VolumeStrides& is, const VolumeStrides& os,
               int64_t op, const T* in, T* out, float* acc) {
  const int64_t channels = g.channels, ic = is.channel, oc = os.channel;
  const Range planes = WindowOf(g.dim[0], op);
  for (int64_t oh = 0; oh < g.dim[1].output; ++oh) {
    const Range rows = WindowOf(g.dim[1], oh);
    for (int64_t ow = 0; ow < g.dim[2].output; ++ow) {
      const Range cols = WindowOf(g.dim[2], ow);
      std::fill_n(acc, channels, kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
      for (int64_t p = planes.begin; p < planes.end; ++p) {
        for (int64_t r = rows.begin; r < rows.end; ++r) {
          for (int64_t c = cols.begin; c < cols.end; ++c) {
            const T* x = in + p * is.plane + r * is.row + c * is.col;
            for (int64_t ch = 0; ch < channels; ++ch) {
              const float v = Widen(x[ch * ic]);
              if constexpr (kMax) {
                acc[ch] = v > acc[ch] ? v : acc[ch];  // NaN: never greater
              } else {
                acc[ch] += v;
              }
            }
          }
        }
      }
      T* y = out + op * os.plane + oh * os.row + ow * os.col;
      const float count = static_cast<float>(planes.size() * rows.size() * cols.size());
      for (int64_t ch = 0; ch < channels; ++ch) {
        y[ch * oc] = Narrow<T>(kMax ? acc[ch] : acc[ch] / count);
      }
    }
  }
}

template <typename T, bool kMax>
class Pool3DOp : public Pool3DKernel {
 public:
  explicit Pool3DOp(OpKernelConstruction* c) : Pool3DKernel(c, Kind::kPool) {}

 private:
  absl::Status Run(OpKernelContext* ctx) const override {
    DFLOW_RETURN_IF_ERROR(CheckRank5(*ctx, {"tensor_in"}));
    const Tensor& input = ctx->input(0);
    DFLOW_ASSIGN_OR_RETURN(const Pool3DGeometry g, MakeGeometry(attrs_, input.shape(), false));
    const VolumeLayout& l = attrs_.layout;
    DFLOW_ASSIGN_OR_RETURN(Tensor * output,
                           ctx->allocate_output(0, TensorShape(g.Dims(l, /*output=*/true))));
    if (output->NumElements() == 0) return absl::OkStatus();
    const VolumeStrides is = g.Strides(l, false), os = g.Strides(l, true);
    const T* in = input.data<T>();
    T* out = output->data<T>();
    const int64_t planes = g.dim[0].output;
    const int64_t cost = PlaneCost(g, g.dim[1].output * g.dim[2].output);
    ParallelForElements(ctx, g.batch * planes, cost, [&](int64_t begin, int64_t end) {
      std::vector<float> acc(g.channels);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / planes;
        PoolPlane<T, kMax>(g, is, os, i % planes, in + b * is.image, out + b * os.image,
                           acc.data());
      }
    });
    return absl::OkStatus();
  }
};

// ------------------------------------------------------ MaxPool3DGrad, AvgPool3DGrad

// TF's GetBroadcastSize: the input range a gradient gives output `o`'s share to. It is
// the window inside the input, except for a window sticking out on both sides: TF then
// takes [0, min(input, size)), more elements (and a larger count) than the pool used.
Range GradRangeOf(const WindowDim& d, int64_t o) {
  int64_t begin = o * d.stride;
  int64_t size = d.size;
  if (begin < d.pad_before) {
    size = d.size + begin - d.pad_before;
    begin = 0;
  } else {
    begin -= d.pad_before;
  }
  if (begin + d.size > d.input) size = std::min(d.input - begin, d.size);
  return {begin, begin + size};
}

// One spatial dim of a gradient: each output's range size, and the outputs whose ranges
// hold each input position. Ranges begin and end in ascending order (when the window is
// larger than the input, all end at the input's end), so those outputs are contiguous.
struct GradDim {
  std::vector<int64_t> count;
  std::vector<Range> covers;
};

GradDim MakeGradDim(const WindowDim& d) {
  GradDim g;
  std::vector<Range> ranges;
  for (int64_t o = 0; o < d.output; ++o) {
    ranges.push_back(GradRangeOf(d, o));
    g.count.push_back(ranges.back().size());
  }
  // Output o holds i when begin(o) <= i < end(o): o in [first end past i, first begin past i).
  int64_t low = 0, high = 0;
  for (int64_t i = 0; i < d.input; ++i) {
    while (low < d.output && ranges[low].end <= i) ++low;
    while (high < d.output && ranges[high].begin <= i) ++high;
    g.covers.push_back({low, std::max(low, high)});
  }
  return g;
}

// Writes input plane `p` of one volume's gradient `dx`: each element is the sum of
// add(x, o, op, oh, ow, acc) over the outputs o = (op, oh, ow) whose ranges hold it, in
// TF's order; x and o are element offsets in the input and output volume, and `add` adds
// one output's share, for every channel, into `acc` (scratch of g.channels floats).
template <typename T, typename AddShare>
void GradPlane(const Pool3DGeometry& g, const GradDim (&gd)[3], const VolumeStrides& is,
               const VolumeStrides& os, int64_t p, T* dx, float* acc, const AddShare& add) {
  for (int64_t r = 0; r < g.dim[1].input; ++r) {
    for (int64_t c = 0; c < g.dim[2].input; ++c) {
      const int64_t x = p * is.plane + r * is.row + c * is.col;
      std::fill_n(acc, g.channels, 0.0f);
      const Range planes = gd[0].covers[p], rows = gd[1].covers[r], cols = gd[2].covers[c];
      for (int64_t ow = cols.begin; ow < cols.end; ++ow) {
        for (int64_t oh = rows.begin; oh < rows.end; ++oh) {
          for (int64_t op = planes.begin; op < planes.end; ++op) {
            add(x, op * os.plane + oh * os.row + ow * os.col, op, oh, ow, acc);
          }
        }
      }
      for (int64_t ch = 0; ch < g.channels; ++ch) dx[x + ch * is.channel] = Narrow<T>(acc[ch]);
    }
  }
}

// Runs `plane(b, p, acc)` for every input plane of the batch on the context's pool, with
// `acc` scratch of g.channels floats per worker.
template <typename PlaneFn>
void ForEachInputPlane(OpKernelContext* ctx, const Pool3DGeometry& g, const PlaneFn& plane) {
  const int64_t planes = g.dim[0].input;
  const int64_t cost = PlaneCost(g, g.dim[1].input * g.dim[2].input);
  ParallelForElements(ctx, g.batch * planes, cost, [&](int64_t begin, int64_t end) {
    std::vector<float> acc(g.channels);
    for (int64_t i = begin; i < end; ++i) plane(i / planes, i % planes, acc.data());
  });
}

template <typename T>
class MaxPool3DGradOp : public Pool3DKernel {
 public:
  explicit MaxPool3DGradOp(OpKernelConstruction* c) : Pool3DKernel(c, Kind::kMaxPoolGrad) {}

 private:
  absl::Status Run(OpKernelContext* ctx) const override {
    DFLOW_RETURN_IF_ERROR(CheckRank5(*ctx, {"tensor_in", "tensor_out", "out_backprop"}));
    const Tensor& input = ctx->input(0);
    DFLOW_ASSIGN_OR_RETURN(const Pool3DGeometry g, MakeGeometry(attrs_, input.shape(), false));
    const VolumeLayout& l = attrs_.layout;
    const TensorShape pooled(g.Dims(l, /*output=*/true));
    DFLOW_RETURN_IF_ERROR(CheckShape("orig_output", pooled, ctx->input(1).shape()));
    DFLOW_RETURN_IF_ERROR(CheckShape("grad", pooled, ctx->input(2).shape()));
    DFLOW_ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, input.shape()));
    if (output->NumElements() == 0) return absl::OkStatus();
    const GradDim gd[3] = {MakeGradDim(g.dim[0]), MakeGradDim(g.dim[1]), MakeGradDim(g.dim[2])};
    const VolumeStrides is = g.Strides(l, false), os = g.Strides(l, true);
    const T* in_data = input.data<T>();
    const T* out_data = ctx->input(1).data<T>();
    const T* grad_data = ctx->input(2).data<T>();
    T* dx_data = output->data<T>();
    const float threshold = Round<T>(1e-5f);  // TF's T(1e-5)
    const int64_t channels = g.channels, ic = is.channel, oc = os.channel;
    ForEachInputPlane(ctx, g, [&](int64_t b, int64_t p, float* acc) {
      const T* in = in_data + b * is.image;
      const T* out = out_data + b * os.image;
      const T* grad = grad_data + b * os.image;
      // TF: abs(in - out) < T(1e-5) ? grad : 0, rounded as T at each step.
      auto add = [&](int64_t x, int64_t o, int64_t, int64_t, int64_t, float* sum) {
        for (int64_t ch = 0; ch < channels; ++ch) {
          const float diff = Round<T>(Widen(in[x + ch * ic]) - Widen(out[o + ch * oc]));
          const float share = std::fabs(diff) < threshold ? Widen(grad[o + ch * oc]) : 0.0f;
          sum[ch] = Round<T>(sum[ch] + share);
        }
      };
      GradPlane(g, gd, is, os, p, dx_data + b * is.image, acc, add);
    });
    return absl::OkStatus();
  }
};

template <typename T>
class AvgPool3DGradOp : public Pool3DKernel {
 public:
  explicit AvgPool3DGradOp(OpKernelConstruction* c) : Pool3DKernel(c, Kind::kAvgPoolGrad) {}

 private:
  absl::Status Run(OpKernelContext* ctx) const override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    if (sizes.shape().dims() != 1 || sizes.NumElements() != 5) {
      return absl::InvalidArgumentError("tensor_in must be 1-dimensional and 5 elements");
    }
    if (grad.shape().dims() != 5) {
      return absl::InvalidArgumentError("out_backprop must be 5-dimensional");
    }
    const int32_t* size_data = sizes.data<int32_t>();
    const std::vector<int64_t> dims(size_data, size_data + 5);
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat("Expected a non-negative size, got ", d));
      }
    }
    DFLOW_ASSIGN_OR_RETURN(const TensorShape in_shape, TensorShape::Make(dims));
    DFLOW_ASSIGN_OR_RETURN(const Pool3DGeometry g, MakeGeometry(attrs_, in_shape, false));
    DFLOW_RETURN_IF_ERROR(CheckGradShape(g, grad.shape()));
    DFLOW_ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, in_shape));
    if (output->NumElements() == 0) return absl::OkStatus();
    const GradDim gd[3] = {MakeGradDim(g.dim[0]), MakeGradDim(g.dim[1]), MakeGradDim(g.dim[2])};
    const VolumeStrides is = g.Strides(attrs_.layout, false);
    const VolumeStrides os = g.Strides(attrs_.layout, true);
    const T* grad_data = grad.data<T>();
    T* dx_data = output->data<T>();
    const int64_t channels = g.channels, oc = os.channel;
    ForEachInputPlane(ctx, g, [&](int64_t b, int64_t p, float* acc) {
      const T* dy = grad_data + b * os.image;
      // TF: grad * T(1.0f / float(count)), the product rounded to T, then added.
      auto add = [&](int64_t, int64_t o, int64_t op, int64_t oh, int64_t ow, float* sum) {
        const int64_t count = gd[0].count[op] * gd[1].count[oh] * gd[2].count[ow];
        const float scale = Round<T>(1.0f / static_cast<float>(count));
        for (int64_t ch = 0; ch < channels; ++ch) {
          sum[ch] = Round<T>(sum[ch] + Round<T>(Widen(dy[o + ch * oc]) * scale));
        }
      };
      GradPlane(g, gd, is, os, p, dx_data + b * is.image, acc, add);
    });
    return absl::OkStatus();
  }

  // TF's checks of grad against orig_input_shape (batch, then channels), then the whole
  // shape (TF reads past a grad of another spatial shape; this kernel refuses it).
  absl::Status CheckGradShape(const Pool3DGeometry& g, const TensorShape& grad) const {
    const VolumeLayout& l = attrs_.layout;
    if (g.batch != grad.dim_size(l.batch)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected first dimension of tensor_in_shape and out_backprop to match, got ", g.batch,
          " and ", grad.dim_size(l.batch)));
    }
    if (g.channels != grad.dim_size(l.channel)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected ", l.ncdhw ? "channel" : "last",
          " dimension of tensor_in_shape and out_backprop to match, got ", g.channels, " and ",
          grad.dim_size(l.channel)));
    }
    return CheckShape("grad", TensorShape(g.Dims(l, /*output=*/true)), grad);
  }
};

// ---------------------------------------------------------------- MaxPool3DGradGrad

// Output plane `op` of one volume's MaxPool3DGradGrad. `best` is scratch of g.channels.
template <typename T>
void GradGradPlane(const Pool3DGeometry& g, const VolumeStrides& is, const VolumeStrides& os,
                   int64_t op, const T* in, const T* out, const T* grad, T* y, T* best) {
  const int64_t channels = g.channels, ic = is.channel, oc = os.channel;
  const Range planes = WindowOf(g.dim[0], op);
  for (int64_t oh = 0; oh < g.dim[1].output; ++oh) {
    const Range rows = WindowOf(g.dim[1], oh);
    for (int64_t ow = 0; ow < g.dim[2].output; ++ow) {
      const Range cols = WindowOf(g.dim[2], ow);
      const int64_t o = op * os.plane + oh * os.row + ow * os.col;
      std::fill_n(best, channels, T{});
      // Scanned backwards: the last match written is the first in TF's scan order.
      for (int64_t p = planes.end - 1; p >= planes.begin; --p) {
        for (int64_t r = rows.end - 1; r >= rows.begin; --r) {
          for (int64_t c = cols.end - 1; c >= cols.begin; --c) {
            const int64_t x = p * is.plane + r * is.row + c * is.col;
            for (int64_t ch = 0; ch < channels; ++ch) {
              const bool match = Widen(in[x + ch * ic]) == Widen(out[o + ch * oc]);
              best[ch] = match ? grad[x + ch * ic] : best[ch];
            }
          }
        }
      }
      for (int64_t ch = 0; ch < channels; ++ch) y[o + ch * oc] = best[ch];
    }
  }
}

template <typename T>
class MaxPool3DGradGradOp : public Pool3DKernel {
 public:
  explicit MaxPool3DGradGradOp(OpKernelConstruction* c)
      : Pool3DKernel(c, Kind::kMaxPoolGradGrad) {}

 private:
  absl::Status Run(OpKernelContext* ctx) const override {
    static constexpr const char* kNames[] = {"tensor_in", "tensor_out", "out_grad_backprop"};
    DFLOW_RETURN_IF_ERROR(CheckRank5(*ctx, {kNames[0], kNames[1], kNames[2]}));
    const Tensor& input = ctx->input(0);
    const Tensor& pooled = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    DFLOW_ASSIGN_OR_RETURN(const Pool3DGeometry g, MakeGeometry(attrs_, input.shape(), true));
    const VolumeLayout& l = attrs_.layout;
    DFLOW_RETURN_IF_ERROR(
        CheckShape("orig_output", TensorShape(g.Dims(l, /*output=*/true)), pooled.shape()));
    DFLOW_RETURN_IF_ERROR(CheckShape("grad", input.shape(), grad.shape()));
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      if (t.NumElements() == 0) {  // TF's words, with its DebugString of an empty tensor
        return absl::InvalidArgumentError(absl::StrCat(
            "received empty tensor ", kNames[i], ": Tensor<type: ", DataTypeString(t.dtype()),
            " shape: ", t.shape().DebugString(), " values: >"));
      }
    }
    DFLOW_ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, pooled.shape()));
    const VolumeStrides is = g.Strides(l, false), os = g.Strides(l, true);
    const int64_t planes = g.dim[0].output;
    const int64_t cost = PlaneCost(g, g.dim[1].output * g.dim[2].output);
    ParallelForElements(ctx, g.batch * planes, cost, [&](int64_t begin, int64_t end) {
      std::vector<T> best(g.channels);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / planes;
        GradGradPlane(g, is, os, i % planes, input.data<T>() + b * is.image,
                      pooled.data<T>() + b * os.image, grad.data<T>() + b * is.image,
                      output->data<T>() + b * os.image, best.data());
      }
    });
    return absl::OkStatus();
  }
};

// A CPU kernel def for `op` with "T" (and `also`, when given) constrained to `dtype`.
KernelDefBuilder PoolKernelDef(const char* op, DataType dtype, const char* also = nullptr) {
  KernelDefBuilder builder(op);
  builder.Device("CPU").TypeConstraint("T", {dtype});
  if (also != nullptr) builder.TypeConstraint(also, {dtype});
  return builder;
}

template <typename T>
absl::Status RegisterForType(KernelRegistry* registry) {
  using MaxPool = Pool3DOp<T, true>;
  using AvgPool = Pool3DOp<T, false>;
  const DataType dtype = DataTypeOf<T>();
  DFLOW_RETURN_IF_ERROR(registry->Register<MaxPool>(PoolKernelDef("MaxPool3D", dtype)));
  DFLOW_RETURN_IF_ERROR(registry->Register<AvgPool>(PoolKernelDef("AvgPool3D", dtype)));
  DFLOW_RETURN_IF_ERROR(registry->Register<MaxPool3DGradOp<T>>(
      PoolKernelDef("MaxPool3DGrad", dtype, "TInput")));
  DFLOW_RETURN_IF_ERROR(registry->Register<AvgPool3DGradOp<T>>(
      PoolKernelDef("AvgPool3DGrad", dtype).HostMemory("orig_input_shape")));
  return registry->Register<MaxPool3DGradGradOp<T>>(PoolKernelDef("MaxPool3DGradGrad", dtype));
}

}  // namespace

absl::Status RegisterPool3DKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterForType<float>(registry));
  return RegisterForType<Bfloat16>(registry);
}

}  // namespace dflow
