// Conv2D and DepthwiseConv2dNative for float on oneDNN's convolution primitive.
//
// Activations stay in the graph's own layout (NHWC or NCHW), so they are never
// reordered; the filter (HWIO, [fh, fw, in/groups, out]) is handed to oneDNN as a
// strided view and reordered once into the layout the primitive prefers, cached per
// filter value (PackedWeightsCache: a frozen graph's filter is a Const). Primitives are
// cached per sub-batch shape. The batch is split over the session's pool; each shard
// runs the primitive single-threaded (dnnl_util.h explains why). An NHWC batch smaller
// than the pool (a batch of 1) is split into bands of output rows instead
// (conv_row_bands.h), so that serving one image uses every thread; an image with too few
// output rows for bands splits its output channels (conv_channel_blocks.h).
//
// TF semantics: strides/dilations are 4-vectors in data_format order with batch and
// depth entries 1; SAME padding puts the odd pad after; EXPLICIT takes 8 pads in
// data_format order; an input depth that is a multiple of the filter's in-depth is a
// grouped convolution. Errors use TF's words.
//
// _FusedConv2D (graph/fusion.h) is the same kernel with the bias and activation applied
// by the primitive (a bias argument and an eltwise post-op) while the output is hot.
// NHWC convolutions that are one matrix product (1x1 filters at stride 1, or a filter
// covering the whole input, as LeNet's last convolution) run on DenseLayer instead:
// oneDNN's direct convolution is several times slower on a 1x1 output. Without
// AVX-512, 1x1 filters stay on the convolution primitive: oneDNN 2.6's matmul there is
// gemm:jit, which repacks the weights on every call, and its jit_1x1 convolution is
// 1.0-3.7x faster on ResNet50's pointwise layers (196x1024x256: 2.2 vs 1.0 ms). NHWC
// convolutions with few output channels fold column pairs into channels
// (conv_column_fold.h) so that oneDNN's vector lanes do not idle.
//
// DepthwiseConv2dNative (and _FusedDepthwiseConv2dNative, its bias and activation fused
// as _FusedConv2D's) is the same kernel too: its filter [fh, fw, in, multiplier] is,
// unchanged in memory, the grouped HWIO filter [fh, fw, 1, in * multiplier] of a
// convolution with one group per input channel (output channel c * multiplier + m is
// group c's m-th), so it runs as that grouped convolution, packed filter and all. Its
// shape checks and their words are TF's depthwise ones. Unlike TF's CPU kernel it also
// takes NCHW, dilations and unequal row and column strides (TF's CPU kernel refuses
// them as unimplemented; the oneDNN primitive has no such limit).
//
// _DflowFusedConv2DMaxPool (graph/fusion.h) is _FusedConv2D followed by a MaxPool of its
// output: each shard convolves slices of a few images into a scratch buffer small enough
// to stay in L2 and max-pools the slice straight into the output, so the convolution's
// output never goes out to memory and back (LeNet's first one is 9.4 MB at batch 500).
// Convolutions that run as a matrix product, and batches smaller than the pool (whose
// slices would leave threads idle: a batch of 1 ran VGG16's pooled layers on one
// thread), convolve the whole batch, then pool, each over every thread.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/fusion.h"
#include "graph/status_macros.h"
#include "kernels/cpu/conv_channel_blocks.h"
#include "kernels/cpu/conv_column_fold.h"
#include "kernels/cpu/conv_row_bands.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/layout_reorders.h"
#include "kernels/cpu/dense_layer.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/conv_attrs.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/pool_primitive.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// The sum of a fused Add with a broadcast addend (cwise::RunBroadcast's functor).
struct AddFloats {
  static constexpr int kCost = 1;
  static float Apply(float a, float b) { return a + b; }
};

// One Conv2D call's sizes.
struct ConvGeometry {
  int64_t batch = 0, in_depth = 0;
  int64_t filter_depth = 0, out_depth = 0, groups = 1;
  WindowDim rows, cols;  // input/output height and width, filter size, pads

  double FlopsPerImage() const {
    return 2.0 * static_cast<double>(rows.output * cols.output * out_depth) *
           static_cast<double>(rows.size * cols.size * filter_depth);
  }
  // The primitive cache key for a sub-batch of `n` images (attrs are per kernel).
  std::vector<int64_t> Key(int64_t n) const {
    return {n, in_depth, rows.input, cols.input, rows.size, cols.size, filter_depth, out_depth,
            rows.pad_before, rows.pad_after, cols.pad_before, cols.pad_after};
  }
};

absl::StatusOr<ConvGeometry> MakeGeometry(const ConvAttrs& a, const TensorShape& input,
                                          const TensorShape& filter) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional: ", input.DebugString()));
  }
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter must be 4-dimensional: ", filter.DebugString()));
  }
  ConvGeometry g;
  g.batch = input.dim_size(a.layout.batch);
  g.in_depth = input.dim_size(a.layout.channel);
  g.filter_depth = filter.dim_size(2);
  g.out_depth = filter.dim_size(3);
  if (g.filter_depth <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter depth must be strictly positive, got ", g.filter_depth));
  }
  if (g.in_depth % g.filter_depth != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input depth must be evenly divisible by filter depth: ", g.in_depth, " vs ",
                     g.filter_depth));
  }
  g.groups = g.in_depth / g.filter_depth;
  if (g.groups > 0 && g.out_depth % g.groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("output depth must be evenly divisible by number of groups: ", g.out_depth,
                     " vs ", g.groups));
  }
  g.rows = {input.dim_size(a.layout.height),
            filter.dim_size(0),
            a.strides[0],
            a.dilations[0],
            a.explicit_pads[0],
            a.explicit_pads[1]};
  g.cols = {input.dim_size(a.layout.width),
            filter.dim_size(1),
            a.strides[1],
            a.dilations[1],
            a.explicit_pads[2],
            a.explicit_pads[3]};
  DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &g.rows));
  DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &g.cols));
  return g;
}

// DepthwiseConv2dNative's geometry: TF's depthwise checks, then the grouped convolution
// its filter [fh, fw, in, multiplier] is when seen as [fh, fw, 1, in * multiplier].
absl::StatusOr<ConvGeometry> MakeDepthwiseGeometry(const ConvAttrs& a, const TensorShape& input,
                                                   const TensorShape& filter) {
  if (input.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be 4-dimensional", input.DebugString()));
  }
  if (filter.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter must be 4-dimensional: ", filter.DebugString()));
  }
  const int64_t in_depth = input.dim_size(a.layout.channel);
  if (in_depth != filter.dim_size(2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input and filter must have the same depth: ", in_depth, " vs ", filter.dim_size(2)));
  }
  int64_t out_depth = 0;
  if (__builtin_mul_overflow(in_depth, filter.dim_size(3), &out_depth)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "in_depth * depth_multiplier overflows int64: ", in_depth, " * ", filter.dim_size(3)));
  }
  DFLOW_ASSIGN_OR_RETURN(TensorShape grouped,
                         TensorShape::Make({filter.dim_size(0), filter.dim_size(1), 1,
                                            out_depth}));
  return MakeGeometry(a, input, grouped);
}

// True for a convolution that is the matrix product input[M, K] x filter[K, out_depth]
// over NHWC data, M = batch * output pixels, and runs as one (DenseLayer): a filter as
// large as the input (a 1x1 output), or, where oneDNN's matmul packs its weights
// (`lanes` 16: AVX-512), a 1x1 filter at stride 1; no groups, dilation or padding.
bool IsMatrixProduct(const ConvAttrs& a, const ConvGeometry& g, int lanes) {
  if (a.layout.nchw || g.groups != 1 || g.rows.dilation != 1 || g.cols.dilation != 1) return false;
  if (g.rows.pad_before != 0 || g.rows.pad_after != 0 || g.cols.pad_before != 0 ||
      g.cols.pad_after != 0) {
    return false;
  }
  const bool pointwise =
      g.rows.size == 1 && g.cols.size == 1 && g.rows.stride == 1 && g.cols.stride == 1;
  const bool whole = g.rows.size == g.rows.input && g.cols.size == g.cols.input;
  return (pointwise && lanes >= 16) || whole;
}

// The HWIO filter as oneDNN weights: {O, I, H, W}, or {G, O/G, I/G, H, W} when grouped,
// with the strides of the HWIO buffer (output channel o of group g is g*(O/G) + o).
absl::StatusOr<dnnl_memory_desc_t> FilterDesc(const ConvGeometry& g, bool any_layout) {
  const int64_t fh = g.rows.size, fw = g.cols.size, ic = g.filter_depth, oc = g.out_depth;
  std::vector<int64_t> dims = {oc, ic, fh, fw};
  std::vector<int64_t> strides = {1, oc, fw * ic * oc, ic * oc};
  if (g.groups > 1) {
    dims = {g.groups, oc / g.groups, ic, fh, fw};
    strides = {oc / g.groups, 1, oc, fw * ic * oc, ic * oc};
  }
  if (!any_layout) return onednn::StridedDesc(dims, strides);
  return onednn::AnyLayoutDesc(dims);
}

absl::StatusOr<dnnl_memory_desc_t> BiasDesc(const ConvGeometry& g) {
  return onednn::StridedDesc({g.out_depth}, {1});
}

// The bias, addend and activation a _FusedConv2D applies (none for Conv2D).
struct ConvFusion {
  bool bias = false;
  // A fused "Add" (a residual connection): input 3, of the output's shape, summed into
  // the result before the activation by oneDNN's sum post-op, which adds what the
  // destination holds.
  bool add = false;
  onednn::Activation activation;

  // The primitive cache key's part for this fusion (a kernel runs at most two).
  int64_t Key() const { return (add ? 1 : 0) + 2 * static_cast<int64_t>(activation.alg); }
};

// A fused convolution's bias alone: how a fused Add with a broadcast addend computes the
// convolution before adding (the sum post-op reads an addend of the output's shape only).
constexpr ConvFusion kBiasOnly = {/*bias=*/true, /*add=*/false, onednn::Activation{}};

// The convolution primitive for `n` images: direct on the graph's layout, or, with
// `winograd`, oneDNN's Winograd algorithm on activations in the layout it picks.
absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakeConvPrimitive(
    const ConvAttrs& a, const ConvFusion& f, const ConvGeometry& g, int64_t n, bool winograd,
    dnnl_engine_t engine) {
  const bool nchw = a.layout.nchw;
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src,
                         onednn::ImageDesc(n, g.in_depth, g.rows.input, g.cols.input, nchw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst,
                         onednn::ImageDesc(n, g.out_depth, g.rows.output, g.cols.output, nchw));
  if (winograd) {
    DFLOW_ASSIGN_OR_RETURN(src, onednn::AnyLayoutDesc({n, g.in_depth, g.rows.input, g.cols.input}));
    DFLOW_ASSIGN_OR_RETURN(
        dst, onednn::AnyLayoutDesc({n, g.out_depth, g.rows.output, g.cols.output}));
  }
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t weights, FilterDesc(g, /*any_layout=*/true));
  const dnnl_dims_t strides = {g.rows.stride, g.cols.stride};
  // oneDNN counts dilation from 0 (TF's 1 is no dilation).
  const dnnl_dims_t dilates = {g.rows.dilation - 1, g.cols.dilation - 1};
  const dnnl_dims_t pad_l = {g.rows.pad_before, g.cols.pad_before};
  const dnnl_dims_t pad_r = {g.rows.pad_after, g.cols.pad_after};
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t bias, BiasDesc(g));
  dnnl_convolution_desc_t desc;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_forward_desc_init(
          &desc, dnnl_forward_inference,
          winograd ? dnnl_convolution_winograd : dnnl_convolution_direct, &src, &weights,
          f.bias ? &bias : nullptr, &dst, strides, dilates, pad_l, pad_r),
      "dnnl_dilated_convolution_forward_desc_init"));
  return onednn::MakePrimitive(&desc, engine, onednn::PostOps(f.add, f.activation));
}

// A convolution's primitives for one shape: the convolution, and the reorders around it
// when it reads and writes its own activation layout (Winograd, conv_winograd.h).
struct ConvPrimitives {
  std::shared_ptr<const onednn::Primitive> conv;
  LayoutReorders reorders;
};

absl::StatusOr<std::shared_ptr<const ConvPrimitives>> MakeConvPrimitives(
    const ConvAttrs& a, const ConvFusion& f, const ConvGeometry& g, int64_t n,
    dnnl_engine_t engine) {
  auto made = std::make_shared<ConvPrimitives>();
  // Not with a fused Add: Winograd writes a blocked copy, not the output the sum reads.
  if (!f.add && PreferWinograd(g.rows, g.cols, g.groups, g.in_depth, g.out_depth)) {
    // oneDNN refuses what its Winograd kernels lack (the ISA, a post-op): direct then.
    absl::StatusOr<std::shared_ptr<const onednn::Primitive>> winograd =
        MakeConvPrimitive(a, f, g, n, /*winograd=*/true, engine);
    if (winograd.ok()) {
      const bool nchw = a.layout.nchw;
      DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src,
                             onednn::ImageDesc(n, g.in_depth, g.rows.input, g.cols.input, nchw));
      DFLOW_ASSIGN_OR_RETURN(
          dnnl_memory_desc_t dst,
          onednn::ImageDesc(n, g.out_depth, g.rows.output, g.cols.output, nchw));
      DFLOW_ASSIGN_OR_RETURN(made->reorders, MakeLayoutReorders(**winograd, src, dst, engine));
      made->conv = *std::move(winograd);
      return made;
    }
  }
  DFLOW_ASSIGN_OR_RETURN(made->conv, MakeConvPrimitive(a, f, g, n, /*winograd=*/false, engine));
  return made;
}

// The MaxPool of a _DflowFusedConv2DMaxPool, over the convolution's output.
struct PoolAttrs {
  std::vector<int64_t> ksize;    // {h, w}
  std::vector<int64_t> strides;  // {h, w}
  Padding padding = Padding::kValid;
};

absl::StatusOr<PoolAttrs> ParsePoolAttrs(OpKernelConstruction* c, const ImageLayout& layout) {
  std::vector<int64_t> ksize, strides;
  std::string padding;
  DFLOW_RETURN_IF_ERROR(c->GetAttr("pool_ksize", &ksize));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("pool_strides", &strides));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("pool_padding", &padding));
  PoolAttrs attrs;
  DFLOW_ASSIGN_OR_RETURN(attrs.ksize, SpatialPairFromFour(ksize, layout, "pool_ksize"));
  DFLOW_ASSIGN_OR_RETURN(attrs.strides, SpatialPairFromFour(strides, layout, "pool_strides"));
  DFLOW_ASSIGN_OR_RETURN(attrs.padding, ParsePadding(padding, /*allow_explicit=*/false));
  return attrs;
}

absl::StatusOr<PoolGeometry> MakePoolGeometry(const PoolAttrs& a, const ConvGeometry& conv) {
  PoolGeometry g;
  g.depth = conv.out_depth;
  g.rows = {conv.rows.output, a.ksize[0], a.strides[0]};
  g.cols = {conv.cols.output, a.ksize[1], a.strides[1]};
  DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &g.rows));
  DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &g.cols));
  return g;
}

// Where a pooled convolution puts its result: the pool's geometry and the op's output.
struct PoolStage {
  PoolGeometry geometry;
  float* out = nullptr;
};

// Images per slice of a pooled convolution: a slice's convolution output (its scratch)
// of about half a megabyte stays in a core's L2 between the convolution and the pool.
constexpr int64_t kPooledSliceBytes = 512 * 1024;

// What one shard size needs: the primitives and the filter in their layout.
struct ConvPlan {
  std::shared_ptr<const ConvPrimitives> primitives;
  std::shared_ptr<const onednn::PackedWeights> packed;  // null: the filter as it is
  const void* weights = nullptr;                        // packed or the filter's data

  const onednn::Primitive& Conv() const { return *primitives->conv; }
  const dnnl_memory_desc_t* WeightsMd() const { return Conv().Md(dnnl_query_weights_md); }
  // Floats of scratch one execution needs for its activations' layout copies.
  int64_t ScratchFloats() const { return primitives->reorders.ScratchFloats(); }
};

// Scratch for the layout copies of `slots` concurrent executions of `plans`: slot i's
// part of one buffer (none when no plan copies).
class PlanScratch {
 public:
  absl::Status Allocate(OpKernelContext* ctx, absl::Span<const ConvPlan> plans, int64_t slots) {
    for (const ConvPlan& plan : plans) per_slot_ = std::max(per_slot_, plan.ScratchFloats());
    if (per_slot_ == 0) return absl::OkStatus();
    DFLOW_ASSIGN_OR_RETURN(buffer_, ctx->allocate_temp(DT_FLOAT, TensorShape({slots, per_slot_})));
    return absl::OkStatus();
  }
  float* Slot(int64_t i) {
    return per_slot_ == 0 ? nullptr : buffer_.data<float>() + i * per_slot_;
  }

 private:
  int64_t per_slot_ = 0;
  Tensor buffer_;
};

class Conv2DOp : public OpKernel {
 public:
  // `depthwise`: DepthwiseConv2dNative (its filter read as a grouped one).
  explicit Conv2DOp(OpKernelConstruction* c, bool depthwise = false)
      : OpKernel(c), depthwise_(depthwise) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
    if (c->HasAttr("pool_ksize")) {  // first: ParseFusion refuses an Add with a pool
      OP_ASSIGN_OR_RETURN(c, PoolAttrs pool, ParsePoolAttrs(c, attrs_.layout));
      pool_ = std::move(pool);
    }
    if (c->HasAttr("fused_ops")) OP_REQUIRES_OK(c, ParseFusion(c));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
    OP_ASSIGN_OR_RETURN(c, dense_, DenseLayer::Create(fusion_.activation));
    if (fusion_.add) {
      OP_ASSIGN_OR_RETURN(c, dense_bias_only_, DenseLayer::Create({}));
    }
    filter_constant_ = IsConstantInput(*c, 1);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    absl::StatusOr<ConvGeometry> geometry =
        depthwise_ ? MakeDepthwiseGeometry(attrs_, input.shape(), filter.shape())
                   : MakeGeometry(attrs_, input.shape(), filter.shape());
    OP_REQUIRES(ctx, geometry.ok(), KernelError(*ctx, geometry.status().message()));
    const ConvGeometry& g = *geometry;
    OP_ASSIGN_OR_RETURN(ctx, TensorShape out_shape,
                        TensorShape::Make(ImageDims(attrs_.layout, g.batch, g.rows.output,
                                                    g.cols.output, g.out_depth)));
    const float* bias = nullptr;
    if (fusion_.bias) {
      const Tensor& b = ctx->input(2);
      OP_REQUIRES(ctx, b.shape().dims() == 1 && b.shape().dim_size(0) == g.out_depth,
                  KernelError(*ctx, "bias must be a vector of the ", g.out_depth,
                              " output channels, got ", b.shape().DebugString()));
      bias = b.data<float>();
    }
    if (pool_.has_value()) {
      OP_REQUIRES_OK(ctx, ComputePooled(ctx, g, out_shape, bias));
      return;
    }
    if (fusion_.add) {
      OP_REQUIRES_OK(ctx, ComputeWithAddend(ctx, g, out_shape, bias));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, out_shape));
    OP_REQUIRES_OK(ctx, Convolve(ctx, g, bias, out, nullptr, fusion_));
  }

 private:
  // A fused Add (a residual connection). An addend of the output's shape is moved into
  // the output when this node holds its only reference (the executor has released every
  // other reader: a residual block's shortcut), else copied there; the sum post-op then
  // adds the convolution to it. An addend of another shape (broadcasting, as TF's Add
  // does) is added after a convolution with its bias alone.
  absl::Status ComputeWithAddend(OpKernelContext* ctx, const ConvGeometry& g,
                                 const TensorShape& out_shape, const float* bias) {
    const Tensor& addend = ctx->input(3);
    if (addend.shape() != out_shape) return AddBroadcastAddend(ctx, g, out_shape, bias);
    Tensor* out = ctx->ForwardInputToOutput(3, 0, out_shape);
    if (out == nullptr) {
      DFLOW_ASSIGN_OR_RETURN(out, ctx->allocate_output(0, out_shape));
      ParallelCopy<float>(ctx, addend.data<float>(), out->data<float>(), out->NumElements());
    }
    return Convolve(ctx, g, bias, out, nullptr, fusion_);
  }

  absl::Status AddBroadcastAddend(OpKernelContext* ctx, const ConvGeometry& g,
                                  const TensorShape& conv_shape, const float* bias) {
    const Tensor& addend = ctx->input(3);
    absl::StatusOr<cwise::BroadcastPlan> plan =
        cwise::MakeBroadcastPlan(conv_shape, addend.shape());
    if (!plan.ok()) return KernelError(*ctx, plan.status().message());
    DFLOW_ASSIGN_OR_RETURN(Tensor conv, ctx->allocate_temp(DT_FLOAT, conv_shape));
    DFLOW_RETURN_IF_ERROR(Convolve(ctx, g, bias, &conv, nullptr, kBiasOnly));
    DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan->output_shape));
    float* sum = out->data<float>();
    cwise::RunBroadcast<AddFloats>(ctx, *plan, conv.data<float>(), addend.data<float>(), sum);
    const onednn::Activation activation = fusion_.activation;
    if (activation.alg == dnnl_alg_kind_undef) return absl::OkStatus();
    ParallelForElements(ctx, out->NumElements(), 4, [sum, activation](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum[i] = onednn::Activate(activation, sum[i]);
    });
    return absl::OkStatus();
  }

  // The convolution into `out` with fusion `f`, or, with a `pool` stage, sliced and
  // pooled into pool->out (`out` is then unused and may be null).
  absl::Status Convolve(OpKernelContext* ctx, const ConvGeometry& g, const float* bias,
                        Tensor* out, const PoolStage* pool, const ConvFusion& f) {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    if (g.batch * g.rows.output * g.cols.output * g.out_depth == 0) return absl::OkStatus();
    if (input.NumElements() == 0) return EmptySum(g, bias, f, out);  // in_depth 0: empty sum
    if (IsMatrixProduct(attrs_, g, lanes_)) {
      DenseArgs args;
      args.m = g.batch * g.rows.output * g.cols.output;
      args.k = g.rows.size * g.cols.size * g.filter_depth;
      args.n = g.out_depth;
      args.a = input.data<float>();
      args.weights = &filter;
      args.weights_constant = filter_constant_;
      args.bias = bias;
      args.c = out->data<float>();
      args.accumulate = f.add;
      DenseLayer* dense =
          f.activation.alg == fusion_.activation.alg ? dense_.get() : dense_bias_only_.get();
      return dense->Run(ctx, args);
    }
    const int64_t fold =
        attrs_.layout.nchw ? 1 : ChooseColumnFold(g.cols, g.out_depth, g.groups, lanes_);
    if (fold > 1) return RunFolded(ctx, g, fold, filter, bias, out, pool, f);
    return RunDirect(ctx, g, filter, filter_constant_, bias, out, pool, f);
  }

  // _DflowFusedConv2DMaxPool: slices pooled from an L2 scratch where the convolution is
  // oneDNN's; otherwise (a matrix product, an empty sum) the whole convolution, then the
  // pool.
  absl::Status ComputePooled(OpKernelContext* ctx, const ConvGeometry& g,
                             const TensorShape& conv_shape, const float* bias) {
    PoolStage stage;
    absl::StatusOr<PoolGeometry> pool = MakePoolGeometry(*pool_, g);
    if (!pool.ok()) return KernelError(*ctx, pool.status().message());
    stage.geometry = *pool;
    const PoolGeometry& pg = stage.geometry;
    DFLOW_ASSIGN_OR_RETURN(TensorShape out_shape,
                           TensorShape::Make(ImageDims(attrs_.layout, g.batch, pg.rows.output,
                                                       pg.cols.output, pg.depth)));
    DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    stage.out = out->data<float>();
    if (ctx->input(0).NumElements() != 0 && !IsMatrixProduct(attrs_, g, lanes_) &&
        RowBandCount(g, NumThreads(ctx)) == 1) {
      return Convolve(ctx, g, bias, nullptr, &stage, fusion_);
    }
    // A matrix product, an empty sum, or a batch too small for the pool (whose slices
    // would leave threads idle): the whole convolution, then the pool, both on every
    // thread.
    DFLOW_ASSIGN_OR_RETURN(Tensor conv, ctx->allocate_temp(DT_FLOAT, conv_shape));
    DFLOW_RETURN_IF_ERROR(Convolve(ctx, g, bias, &conv, nullptr, fusion_));
    return RunPool(
        ctx, pg, g.batch, attrs_.layout.nchw, engine_.get(),
        [this](const PoolGeometry& sub, int64_t n) { return PoolPrimitive(sub, n); },
        conv.data<float>(), stage.out);
  }

  // The least work a row band must carry. A depthwise (grouped) convolution does 9
  // multiply-adds per value it loads where a dense one does hundreds: bound by memory,
  // it pays a hand-off at an eighth of a dense shard's flops (EfficientNetB0's 28x28x240
  // depthwise layer, 3.4 MFLOP, ran on one of two threads).
  static double MinFlopsPerBand(const ConvGeometry& g) {
    return g.groups > 1 ? onednn::kMinFlopsPerShard / 8 : onednn::kMinFlopsPerShard;
  }

  // Bands of output rows per image (conv_row_bands.h) for an NHWC batch too small to
  // fill the pool; 1 (no bands) otherwise.
  int64_t RowBandCount(const ConvGeometry& g, int threads) const {
    if (attrs_.layout.nchw) return 1;
    if (onednn::SplitBatch(g.batch, g.FlopsPerImage(), threads).shards >= threads) return 1;
    return RowBandsPerImage(g.batch, g.rows.output, g.FlopsPerImage(), threads,
                            MinFlopsPerBand(g));
  }

  absl::StatusOr<std::shared_ptr<const onednn::Primitive>> PoolPrimitive(const PoolGeometry& g,
                                                                         int64_t n) {
    return pool_primitives_.GetOrCreate(
        g.Key(n), [&] {
          return MakePoolPrimitive(g, n, attrs_.layout.nchw, dnnl_pooling_max, engine_.get());
        });
  }

  absl::Status Pool(const onednn::Primitive& p, const float* src, float* dst) {
    return onednn::Execute(p, engine_.get(),
                           {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), src},
                            {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), dst}});
  }

  // The convolution with columns folded by `fold` (conv_column_fold.h): the same input
  // and output buffers, a folded filter, and the bias repeated for each column of a group.
  absl::Status RunFolded(OpKernelContext* ctx, const ConvGeometry& g, int64_t fold,
                         const Tensor& filter, const float* bias, Tensor* out,
                         const PoolStage* pool, const ConvFusion& f) {
    ConvGeometry folded = g;
    folded.in_depth = g.in_depth * fold;
    folded.filter_depth = g.filter_depth * fold;
    folded.out_depth = g.out_depth * fold;
    folded.cols = FoldColumns(g.cols, fold);
    DFLOW_ASSIGN_OR_RETURN(
        Tensor folded_filter,
        ctx->allocate_temp(DT_FLOAT, TensorShape({g.rows.size, folded.cols.size,
                                                  folded.filter_depth, folded.out_depth})));
    FoldFilter(filter.data<float>(), g.rows.size, g.cols.size, g.filter_depth, g.out_depth, fold,
               folded_filter.data<float>());
    std::vector<float> folded_bias;
    for (int64_t j = 0; bias != nullptr && j < fold; ++j) {
      folded_bias.insert(folded_bias.end(), bias, bias + g.out_depth);
    }
    // The folded filter is a new buffer each step: its packed form is found by value.
    return RunDirect(ctx, folded, folded_filter, /*filter_constant=*/false,
                     bias != nullptr ? folded_bias.data() : nullptr, out, pool, f);
  }

  // oneDNN's convolution primitive over batch shards.
  absl::Status RunDirect(OpKernelContext* ctx, const ConvGeometry& g, const Tensor& filter,
                         bool filter_constant, const float* bias, Tensor* out,
                         const PoolStage* pool, const ConvFusion& f) {
    if (pool != nullptr) return RunPooled(ctx, g, filter, filter_constant, bias, *pool);
    const int threads = NumThreads(ctx);
    const onednn::BatchSplit split = onednn::SplitBatch(g.batch, g.FlopsPerImage(), threads);
    const int64_t bands = RowBandCount(g, threads);
    if (bands > 1) {
      // Few rows to band: blocks of output channels instead (conv_channel_blocks.h), for
      // a constant filter (its slices are packed once) and no fused Add (whose addend
      // the sum post-op reads from the destination).
      const ChannelBlocks blocks = SplitOutputChannels(g.out_depth, g.rows.output, threads);
      if (blocks.count > 1 && filter_constant && !f.add && g.groups == 1) {
        return RunChannelBlocks(ctx, g, blocks, filter, bias, out, f);
      }
      DFLOW_ASSIGN_OR_RETURN(bool done,
                             RunRowBands(ctx, g, bands, filter, filter_constant, bias, out, f));
      if (done) return absl::OkStatus();
    }
    // Plans for the (at most two) shard sizes, made here so that shards only execute.
    const int64_t last = g.batch - (split.shards - 1) * split.block;
    DFLOW_ASSIGN_OR_RETURN(ConvPlan full,
                           Plan(g, split.block, filter, filter_constant, nullptr, f));
    ConvPlan rest = full;
    if (last != split.block) {
      DFLOW_ASSIGN_OR_RETURN(rest, Plan(g, last, filter, filter_constant, &full, f));
    }
    const int64_t in_image = g.in_depth * g.rows.input * g.cols.input;
    const int64_t out_image = g.out_depth * g.rows.output * g.cols.output;
    const float* in_data = ctx->input(0).data<float>();
    float* out_data = out->data<float>();
    DFLOW_ASSIGN_OR_RETURN(const dnnl_memory_desc_t bias_md, BiasDesc(g));
    PlanScratch scratch;
    DFLOW_RETURN_IF_ERROR(scratch.Allocate(ctx, {full, rest}, split.shards));
    return onednn::RunShards(ctx, g.batch, split, g.FlopsPerImage(), [&](int64_t first, int64_t n) {
      return ExecutePlan(n == split.block ? full : rest, in_data + first * in_image, bias,
                         bias_md, out_data + first * out_image, scratch.Slot(first / split.block));
    });
  }

  // One execution of `plan` from `src` to `dst`, with the bias (laid out as `bias_md`)
  // when there is one; `scratch` holds plan.ScratchFloats() floats of layout copies.
  absl::Status ExecutePlan(const ConvPlan& plan, const float* src, const float* bias,
                           const dnnl_memory_desc_t& bias_md, float* dst, float* scratch) {
    const onednn::ExecArg args[] = {{DNNL_ARG_WEIGHTS, plan.WeightsMd(), plan.weights},
                                    {DNNL_ARG_BIAS, &bias_md, bias}};
    return ExecuteWithReorders(plan.Conv(), plan.primitives->reorders, engine_.get(), src, dst,
                               scratch, absl::MakeConstSpan(args, bias != nullptr ? 2 : 1));
  }

  // The convolution as `bands` bands of output rows per image (conv_row_bands.h), one
  // pool task each; false (nothing run) when some band would read only padding.
  absl::StatusOr<bool> RunRowBands(OpKernelContext* ctx, const ConvGeometry& g, int64_t bands,
                                   const Tensor& filter, bool filter_constant,
                                   const float* bias, Tensor* out, const ConvFusion& f) {
    std::optional<std::vector<RowBand>> split = SplitOutputRows(g.rows, bands);
    if (!split.has_value()) return false;
    const std::vector<RowBand>& row_bands = *split;
    bands = static_cast<int64_t>(row_bands.size());
    std::vector<ConvPlan> plans;  // plans[j] runs row_bands[j]
    for (const RowBand& band : row_bands) {
      ConvGeometry sub = g;
      sub.rows = band.rows;
      DFLOW_ASSIGN_OR_RETURN(ConvPlan plan, Plan(sub, 1, filter, filter_constant,
                                                 plans.empty() ? nullptr : &plans[0], f));
      plans.push_back(std::move(plan));
    }
    const int64_t in_image = g.in_depth * g.rows.input * g.cols.input;
    const int64_t out_image = g.out_depth * g.rows.output * g.cols.output;
    const int64_t in_row = g.in_depth * g.cols.input;  // NHWC: a row is contiguous
    const int64_t out_row = g.out_depth * g.cols.output;
    const float* in_data = ctx->input(0).data<float>();
    float* out_data = out->data<float>();
    DFLOW_ASSIGN_OR_RETURN(const dnnl_memory_desc_t bias_md, BiasDesc(g));
    const int64_t units = g.batch * bands;
    PlanScratch scratch;
    DFLOW_RETURN_IF_ERROR(scratch.Allocate(ctx, plans, units));
    const double flops_per_band = g.FlopsPerImage() / static_cast<double>(bands);
    DFLOW_RETURN_IF_ERROR(onednn::RunShards(
        ctx, units, onednn::BatchSplit{units, 1}, flops_per_band,
        [&](int64_t first, int64_t count) -> absl::Status {
          for (int64_t u = first; u < first + count; ++u) {
            const int64_t image = u / bands;
            const RowBand& band = row_bands[u % bands];
            const float* src = in_data + image * in_image + band.first_input_row * in_row;
            float* dst = out_data + image * out_image + band.first_output_row * out_row;
            DFLOW_RETURN_IF_ERROR(
                ExecutePlan(plans[u % bands], src, bias, bias_md, dst, scratch.Slot(u)));
          }
          return absl::OkStatus();
        }));
    return true;
  }

  // The plan for output channels [first, first + sub.out_depth) of `g`'s convolution:
  // its primitive, and the filter's slice packed once (per block: slices of equal size
  // share a layout, so each block has its own cache).
  absl::StatusOr<ConvPlan> BlockPlan(const ConvGeometry& g, const ConvGeometry& sub,
                                     int64_t index, int64_t first, const Tensor& filter,
                                     const ConvFusion& f) {
    ConvPlan plan;
    std::vector<int64_t> key = sub.Key(sub.batch);
    key.push_back(f.Key());
    DFLOW_ASSIGN_OR_RETURN(plan.primitives, primitives_.GetOrCreate(key, [&] {
      return MakeConvPrimitives(attrs_, f, sub, sub.batch, engine_.get());
    }));
    const int64_t fh = g.rows.size, fw = g.cols.size, ic = g.filter_depth, oc = g.out_depth;
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t slice,
                           onednn::StridedDesc({sub.out_depth, ic, fh, fw},
                                               {1, oc, fw * ic * oc, ic * oc}));
    DFLOW_ASSIGN_OR_RETURN(
        plan.packed, block_filters_[index].Get(engine_.get(), filter, slice, *plan.WeightsMd(),
                                               /*constant=*/true, first * sizeof(float)));
    plan.weights = plan.packed != nullptr ? plan.packed->buffer.get()
                                          : static_cast<const void*>(filter.data<float>() + first);
    return plan;
  }

  // The convolution as `blocks` blocks of output channels, one pool task each: each
  // convolves the whole input with its slice of the filter into a dense scratch, then
  // copies its channels into the output.
  absl::Status RunChannelBlocks(OpKernelContext* ctx, const ConvGeometry& g,
                                const ChannelBlocks& blocks, const Tensor& filter,
                                const float* bias, Tensor* out, const ConvFusion& f) {
    std::vector<ConvGeometry> subs;
    std::vector<ConvPlan> plans;
    for (int64_t j = 0; j < blocks.count; ++j) {
      ConvGeometry sub = g;
      sub.out_depth = std::min(blocks.block, g.out_depth - j * blocks.block);
      DFLOW_ASSIGN_OR_RETURN(ConvPlan plan, BlockPlan(g, sub, j, j * blocks.block, filter, f));
      subs.push_back(sub);
      plans.push_back(std::move(plan));
    }
    const int64_t pixels = g.batch * g.rows.output * g.cols.output;
    const int64_t block_floats = (pixels * blocks.block + 15) / 16 * 16;  // 64-byte aligned
    DFLOW_ASSIGN_OR_RETURN(Tensor staged, ctx->allocate_temp(
                                              DT_FLOAT, TensorShape({blocks.count, block_floats})));
    PlanScratch scratch;
    DFLOW_RETURN_IF_ERROR(scratch.Allocate(ctx, plans, blocks.count));
    const float* in_data = ctx->input(0).data<float>();
    float* out_data = out->data<float>();
    const double flops_per_block = g.FlopsPerImage() * static_cast<double>(g.batch) /
                                   static_cast<double>(blocks.count);
    return onednn::RunShards(
        ctx, blocks.count, onednn::BatchSplit{blocks.count, 1}, flops_per_block,
        [&](int64_t first, int64_t count) -> absl::Status {
          for (int64_t j = first; j < first + count; ++j) {
            const ConvGeometry& sub = subs[j];
            const int64_t channel = j * blocks.block;
            DFLOW_ASSIGN_OR_RETURN(const dnnl_memory_desc_t bias_md, BiasDesc(sub));
            float* block = staged.data<float>() + j * block_floats;
            DFLOW_RETURN_IF_ERROR(ExecutePlan(plans[j], in_data,
                                              bias != nullptr ? bias + channel : nullptr,
                                              bias_md, block, scratch.Slot(j)));
            for (int64_t p = 0; p < pixels; ++p) {
              std::memcpy(out_data + p * g.out_depth + channel, block + p * sub.out_depth,
                          sizeof(float) * sub.out_depth);
            }
          }
          return absl::OkStatus();
        });
  }

  // Each shard convolves slices of `slice` images into its own scratch and pools them
  // into pool.out. `g` may be folded: the scratch holds the same floats either way, and
  // the pool reads them as pool.geometry's unfolded images.
  absl::Status RunPooled(OpKernelContext* ctx, const ConvGeometry& g, const Tensor& filter,
                         bool filter_constant, const float* bias, const PoolStage& pool) {
    const PoolGeometry& pg = pool.geometry;
    const double flops = g.FlopsPerImage() + pg.FlopsPerImage();
    const onednn::BatchSplit split = onednn::SplitBatch(g.batch, flops, NumThreads(ctx));
    const int64_t conv_image = g.out_depth * g.rows.output * g.cols.output;
    const int64_t slice = std::clamp<int64_t>(
        kPooledSliceBytes / static_cast<int64_t>(sizeof(float) * conv_image), 1, split.block);
    // Plans for every slice size, made here so that shards only execute: full slices and
    // the remainders of the full and the last shard.
    const int64_t last = g.batch - (split.shards - 1) * split.block;
    std::vector<int64_t> sizes = {slice};
    for (int64_t n : {split.block % slice, last % slice, std::min(last, slice)}) {
      if (n != 0 && std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
    }
    std::vector<ConvPlan> plans;
    std::vector<std::shared_ptr<const onednn::Primitive>> pools;
    for (int64_t n : sizes) {
      DFLOW_ASSIGN_OR_RETURN(ConvPlan plan, Plan(g, n, filter, filter_constant,
                                                 plans.empty() ? nullptr : &plans[0], fusion_));
      plans.push_back(std::move(plan));
      DFLOW_ASSIGN_OR_RETURN(auto p, PoolPrimitive(pg, n));
      pools.push_back(std::move(p));
    }
    const int64_t stride = (slice * conv_image + 15) / 16 * 16;  // 64-byte aligned slices
    DFLOW_ASSIGN_OR_RETURN(Tensor scratch,
                           ctx->allocate_temp(DT_FLOAT, TensorShape({split.shards, stride})));
    PlanScratch copies;
    DFLOW_RETURN_IF_ERROR(copies.Allocate(ctx, plans, split.shards));
    const int64_t in_image = g.in_depth * g.rows.input * g.cols.input;
    const float* in_data = ctx->input(0).data<float>();
    DFLOW_ASSIGN_OR_RETURN(const dnnl_memory_desc_t bias_md, BiasDesc(g));
    return onednn::RunShards(ctx, g.batch, split, flops, [&](int64_t first, int64_t count) {
      float* buffer = scratch.data<float>() + (first / split.block) * stride;
      float* copy = copies.Slot(first / split.block);
      for (int64_t done = 0; done < count;) {
        const int64_t n = std::min(slice, count - done);
        const size_t k = std::find(sizes.begin(), sizes.end(), n) - sizes.begin();
        const float* src = in_data + (first + done) * in_image;
        DFLOW_RETURN_IF_ERROR(ExecutePlan(plans[k], src, bias, bias_md, buffer, copy));
        DFLOW_RETURN_IF_ERROR(Pool(*pools[k], buffer, pool.out + (first + done) * pg.OutImage()));
        done += n;
      }
      return absl::OkStatus();
    });
  }

  absl::Status ParseFusion(OpKernelConstruction* c) {
    std::vector<std::string> fused_ops;
    int64_t num_args = 0, num_host_args = 0;
    std::string filter_format;
    DFLOW_RETURN_IF_ERROR(c->GetAttr("fused_ops", &fused_ops));
    DFLOW_RETURN_IF_ERROR(c->GetAttr("num_args", &num_args));
    // _FusedDepthwiseConv2dNative declares neither (its filter is always HWIO-like).
    if (c->HasAttr("num_host_args")) {
      DFLOW_RETURN_IF_ERROR(c->GetAttr("num_host_args", &num_host_args));
    }
    filter_format = "HWIO";
    if (c->HasAttr("filter_format")) {
      DFLOW_RETURN_IF_ERROR(c->GetAttr("filter_format", &filter_format));
    }
    if (filter_format != "HWIO" || num_host_args != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "_FusedConv2D on CPU takes HWIO filters and no host args, got filter_format ",
          filter_format, " and num_host_args ", num_host_args));
    }
    DFLOW_ASSIGN_OR_RETURN(onednn::PostOps post_ops, onednn::FusedPostOps(fused_ops, num_args));
    fusion_.activation = post_ops.activation;
    fusion_.add = post_ops.accumulate;
    if (fusion_.add && (pool_.has_value() || depthwise_)) {
      return onednn::FusionNotImplemented(fused_ops);
    }
    if (fusion_.activation.alg == dnnl_eltwise_swish && c->HasAttr(kSwishBetaAttr)) {
      DFLOW_RETURN_IF_ERROR(c->GetAttr(kSwishBetaAttr, &fusion_.activation.alpha));
    }
    fusion_.bias = true;
    return absl::OkStatus();
  }

  // The output of an empty sum (in_depth 0): act(bias [+ the addend out holds]), or 0
  // without a bias.
  absl::Status EmptySum(const ConvGeometry& g, const float* bias, const ConvFusion& f,
                        Tensor* out) const {
    const int64_t pixels = g.rows.output * g.cols.output;
    float* data = out->data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      const int64_t channel = attrs_.layout.nchw ? (i / pixels) % g.out_depth : i % g.out_depth;
      const float v = (bias != nullptr ? bias[channel] : 0.0f) + (f.add ? data[i] : 0.0f);
      data[i] = onednn::Activate(f.activation, v);
    }
    return absl::OkStatus();
  }

  // The plan for `n` images; `other` (a plan of this Compute for another shard size)
  // lends its packed filter when the primitives want the same layout.
  absl::StatusOr<ConvPlan> Plan(const ConvGeometry& g, int64_t n, const Tensor& filter,
                                bool filter_constant, const ConvPlan* other, const ConvFusion& f) {
    ConvPlan plan;
    std::vector<int64_t> key = g.Key(n);
    key.push_back(f.Key());
    DFLOW_ASSIGN_OR_RETURN(plan.primitives, primitives_.GetOrCreate(key, [&] {
      return MakeConvPrimitives(attrs_, f, g, n, engine_.get());
    }));
    if (other != nullptr && dnnl_memory_desc_equal(other->WeightsMd(), plan.WeightsMd())) {
      plan.packed = other->packed;
      plan.weights = other->weights;
      return plan;
    }
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t plain, FilterDesc(g, /*any_layout=*/false));
    DFLOW_ASSIGN_OR_RETURN(plan.packed, packed_filters_.Get(engine_.get(), filter, plain,
                                                            *plan.WeightsMd(), filter_constant));
    plan.weights = plan.packed != nullptr ? plan.packed->buffer.get() : filter.raw_data();
    return plan;
  }

  const bool depthwise_;
  ConvAttrs attrs_;
  ConvFusion fusion_;
  std::optional<PoolAttrs> pool_;  // _DflowFusedConv2DMaxPool's MaxPool
  bool filter_constant_ = false;
  int lanes_ = DnnlVectorLanes();      // for ChooseColumnFold
  std::unique_ptr<DenseLayer> dense_;  // for convolutions that are a matrix product
  std::unique_ptr<DenseLayer> dense_bias_only_;  // the same for kBiasOnly (fused Adds)
  onednn::EnginePtr engine_;
  onednn::ShapeCache<ConvPrimitives> primitives_;
  onednn::ShapeCache<onednn::Primitive> pool_primitives_;
  onednn::PackedWeightsCache packed_filters_;
  // The filter slices of RunChannelBlocks, one cache per block.
  std::array<onednn::PackedWeightsCache, kMaxChannelBlocks> block_filters_;
};

}  // namespace

absl::Status RegisterConvKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<Conv2DOp>(
      KernelDefBuilder("Conv2D").Device("CPU").TypeConstraint<float>("T")));
  DFLOW_RETURN_IF_ERROR(registry->Register<Conv2DOp>(
      KernelDefBuilder("_FusedConv2D").Device("CPU").TypeConstraint<float>("T")));
  DFLOW_RETURN_IF_ERROR(registry->Register<Conv2DOp>(
      KernelDefBuilder("_DflowFusedConv2DMaxPool").Device("CPU").TypeConstraint<float>("T")));
  for (const char* op : {"DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative",
                         "_DflowFusedDepthwiseConv2dNative"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register(
        KernelDefBuilder(op).Device("CPU").TypeConstraint<float>("T"),
        [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
          return std::make_unique<Conv2DOp>(c, /*depthwise=*/true);
        }));
  }
  return absl::OkStatus();
}

}  // namespace dflow
