// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter (the
// gradients of MobileNet-style depthwise layers) on oneDNN's convolution backward-data
// and backward-weights primitives.
//
// As in conv_ops.cc, the depthwise filter [fh, fw, in, multiplier] is, unchanged in
// memory, the grouped HWIO filter of a convolution with one group per input channel
// (output channel c * multiplier + m is group c's m-th), described to oneDNN as weights
// {groups = in, multiplier, 1, fh, fw} with the filter's own strides. Activations stay in
// the graph's layout (NHWC or NCHW). Backward primitives need their forward primitive's
// descriptor as a hint, so one of each is built per shape and cached.
//
// Input gradient: the filter is reordered once per value into the layout the primitive
// wants (PackedWeightsCache), and the batch is split over the pool, each shard running
// the primitive single-threaded (dnnl_util.h).
// Filter gradient: the result is a sum over the batch, and a depthwise filter is small,
// so each batch shard computes its own partial filter and the partials are added in
// shard order (the same bits on every run with the same pool). The primitive writes the
// layout it prefers (oneDNN's direct depthwise kernels exist only for blocked weights;
// on the HWIO layout itself it falls back to a GEMM several times slower), which is then
// reordered into the HWIO result.
//
// TF semantics and words (depthwise_conv_grad_op.cc): input_sizes/filter_sizes are int32
// vectors of 4 non-negative sizes; strides, padding, explicit_paddings and data_format as
// for DepthwiseConv2dNative; out_backprop must be [batch, rows, cols, in * multiplier]
// with exactly the rows and columns the forward convolution gives. Unlike TF's CPU
// kernels these also take NCHW and unequal row and column strides (TF's refuse them as
// unimplemented), and they honour dilations: TF's CPU kernels ignore the attr and size
// the window as undilated, while the gradient of a dilated DepthwiseConv2dNative (which
// dflow's forward kernel runs) needs the dilated window. Half and bfloat16 are computed
// in float and rounded once (oneDNN has no 16-bit float convolutions on x86 without
// AVX-512); double has no kernel, as oneDNN has no f64 convolutions.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/conv_attrs.h"
#include "kernels/cpu/conv_backprop_dims.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/half.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// TF names the ops so in its dimension errors.
constexpr char kInputLabel[] = "DepthwiseConv2DBackpropInput";
constexpr char kFilterLabel[] = "DepthwiseConv2DBackpropFilter";

// The sizes of one call: `rows`/`cols` describe the forward convolution (input = the
// forward input's size, output = out_backprop's).
struct Geometry {
  int64_t batch = 0, depth = 0, multiplier = 0;
  WindowDim rows, cols;

  int64_t OutDepth() const { return depth * multiplier; }
  double FlopsPerImage() const {
    return 2.0 * static_cast<double>(rows.output * cols.output * OutDepth()) *
           static_cast<double>(rows.size * cols.size);
  }
  int64_t InImage() const { return depth * rows.input * cols.input; }
  int64_t OutImage() const { return OutDepth() * rows.output * cols.output; }
  std::vector<int64_t> Key(int64_t n) const {
    return {n,
            depth,
            multiplier,
            rows.input,
            cols.input,
            rows.size,
            cols.size,
            rows.output,
            cols.output,
            rows.pad_before,
            rows.pad_after,
            cols.pad_before,
            cols.pad_after};
  }
};

// A 1-D int32 tensor of sizes, each non-negative (TF's words, naming `what`).
absl::StatusOr<std::vector<int64_t>> ReadSizes(const Tensor& sizes, const char* what,
                                               const char* op) {
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadSizeVector(sizes, op, what));
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dimension ", i, " of ", what, " must be >= 0"));
    }
  }
  return v;
}

// TF's EXTRACT_AND_VERIFY_DIMENSIONS, in its order, with the window dilated.
absl::StatusOr<Geometry> MakeGeometry(const char* label, const ConvAttrs& a,
                                      const std::vector<int64_t>& input,
                                      const std::vector<int64_t>& filter, const TensorShape& out) {
  auto error = [label](auto... what) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", what...));
  };
  if (input.size() != 4) return error("input must be 4-dimensional");
  if (filter.size() != 4) return error("filter must be 4-dimensional");
  if (out.dims() != 4) return error("out_backprop must be 4-dimensional");
  const ImageLayout& l = a.layout;
  Geometry g;
  g.batch = input[l.batch];
  if (g.batch != out.dim_size(l.batch)) {
    return error("input and out_backprop must have the same batch size");
  }
  g.depth = input[l.channel];
  if (g.depth != filter[2]) return error("input and filter must have the same in_depth");
  g.multiplier = filter[3];
  if (g.multiplier * g.depth != out.dim_size(l.channel)) {
    return error("depth_multiplier * in_depth not equal to out_depth");
  }
  g.rows = {input[l.height], filter[0],          a.strides[0],
            a.dilations[0],  a.explicit_pads[0], a.explicit_pads[1]};
  g.cols = {input[l.width], filter[1],          a.strides[1],
            a.dilations[1], a.explicit_pads[2], a.explicit_pads[3]};
  DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &g.rows));
  DFLOW_RETURN_IF_ERROR(ComputeWindow(a.padding, &g.cols));
  if (out.dim_size(l.height) != g.rows.output) {
    return error("Number of rows of out_backprop doesn't match computed: actual = ",
                 out.dim_size(l.height), ", computed = ", g.rows.output);
  }
  if (out.dim_size(l.width) != g.cols.output) {
    return error("Number of cols of out_backprop doesn't match computed: actual = ",
                 out.dim_size(l.width), ", computed = ", g.cols.output);
  }
  return g;
}

// The depthwise filter [fh, fw, in, multiplier] as grouped oneDNN weights
// {in, multiplier, 1, fh, fw}: its own strides, or any layout for the primitive to pick.
absl::StatusOr<dnnl_memory_desc_t> WeightsDesc(const Geometry& g, bool any_layout) {
  const int64_t fh = g.rows.size, fw = g.cols.size, c = g.depth, m = g.multiplier;
  if (!any_layout) return onednn::StridedDesc({c, m, 1, fh, fw}, {m, 1, c * m, fw * c * m, c * m});
  return onednn::AnyLayoutDesc({c, m, 1, fh, fw});
}

// The forward primitive of a sub-batch of `n` images (the backward ones' hint) and the
// descriptors both share.
struct ConvDescs {
  dnnl_memory_desc_t src, dst, weights;
  dnnl_dims_t strides, dilates, pad_l, pad_r;
  std::shared_ptr<const onednn::Primitive> hint;
};

absl::StatusOr<ConvDescs> MakeConvDescs(const Geometry& g, bool nchw, int64_t n,
                                        dnnl_engine_t engine) {
  ConvDescs d;
  DFLOW_ASSIGN_OR_RETURN(d.src, onednn::ImageDesc(n, g.depth, g.rows.input, g.cols.input, nchw));
  DFLOW_ASSIGN_OR_RETURN(d.dst,
                         onednn::ImageDesc(n, g.OutDepth(), g.rows.output, g.cols.output, nchw));
  DFLOW_ASSIGN_OR_RETURN(d.weights, WeightsDesc(g, /*any_layout=*/true));
  d.strides[0] = g.rows.stride;
  d.strides[1] = g.cols.stride;
  // oneDNN counts dilation from 0 (TF's 1 is no dilation).
  d.dilates[0] = g.rows.dilation - 1;
  d.dilates[1] = g.cols.dilation - 1;
  d.pad_l[0] = g.rows.pad_before;
  d.pad_l[1] = g.cols.pad_before;
  d.pad_r[0] = g.rows.pad_after;
  d.pad_r[1] = g.cols.pad_after;
  dnnl_convolution_desc_t forward;
  DFLOW_RETURN_IF_ERROR(
      onednn::DnnlStatus(dnnl_dilated_convolution_forward_desc_init(
                             &forward, dnnl_forward_training, dnnl_convolution_direct, &d.src,
                             &d.weights, nullptr, &d.dst, d.strides, d.dilates, d.pad_l, d.pad_r),
                         "dnnl_dilated_convolution_forward_desc_init"));
  DFLOW_ASSIGN_OR_RETURN(d.hint, onednn::MakePrimitive(&forward, engine));
  return d;
}

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakeBackwardData(const Geometry& g,
                                                                          bool nchw, int64_t n,
                                                                          dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(ConvDescs d, MakeConvDescs(g, nchw, n, engine));
  dnnl_convolution_desc_t backward;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_backward_data_desc_init(&backward, dnnl_convolution_direct, &d.src,
                                                       &d.weights, &d.dst, d.strides, d.dilates,
                                                       d.pad_l, d.pad_r),
      "dnnl_dilated_convolution_backward_data_desc_init"));
  return onednn::MakePrimitive(&backward, engine, {}, d.hint->pd.get());
}

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakeBackwardWeights(const Geometry& g,
                                                                             bool nchw, int64_t n,
                                                                             dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(ConvDescs d, MakeConvDescs(g, nchw, n, engine));
  dnnl_convolution_desc_t backward;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_dilated_convolution_backward_weights_desc_init(&backward, dnnl_convolution_direct,
                                                          &d.src, &d.weights, nullptr, &d.dst,
                                                          d.strides, d.dilates, d.pad_l, d.pad_r),
      "dnnl_dilated_convolution_backward_weights_desc_init"));
  return onednn::MakePrimitive(&backward, engine, {}, d.hint->pd.get());
}

// --- half and bfloat16 through float ---

template <typename T>
absl::StatusOr<Tensor> ToFloat(OpKernelContext* ctx, const Tensor& t) {
  DFLOW_ASSIGN_OR_RETURN(Tensor out, ctx->allocate_temp(DT_FLOAT, t.shape()));
  const T* in = t.data<T>();
  float* o = out.data<float>();
  ParallelForElements(ctx, t.NumElements(), 2, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) o[i] = in[i].ToFloat();
  });
  return out;
}

template <typename T>
void FromFloat(OpKernelContext* ctx, const Tensor& t, Tensor* out) {
  const float* in = t.data<float>();
  T* o = out->data<T>();
  ParallelForElements(ctx, t.NumElements(), 4, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) o[i] = T::FromFloat(in[i]);
  });
}

// The float values of input `index`: the tensor itself, or a converted copy.
template <typename T>
absl::StatusOr<Tensor> FloatInput(OpKernelContext* ctx, int index) {
  if constexpr (std::is_same_v<T, float>) {
    return ctx->input(index);
  } else {
    return ToFloat<T>(ctx, ctx->input(index));
  }
}

// Allocates output 0 of `shape`, runs `fill(float_output)` and rounds into T if needed.
template <typename T, typename Fill>
absl::Status WithFloatOutput(OpKernelContext* ctx, const TensorShape& shape, Fill&& fill) {
  DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  if constexpr (std::is_same_v<T, float>) {
    return fill(*out);
  } else {
    DFLOW_ASSIGN_OR_RETURN(Tensor result, ctx->allocate_temp(DT_FLOAT, shape));
    DFLOW_RETURN_IF_ERROR(fill(result));
    FromFloat<T>(ctx, result, out);
    return absl::OkStatus();
  }
}

void FillZeros(const Tensor& t) { std::fill_n(t.data<float>(), t.NumElements(), 0.0f); }

// --- DepthwiseConv2dNativeBackpropInput(input_sizes, filter, out_backprop) ---

// A primitive for one shard size and the filter in the layout it wants.
struct DataPlan {
  std::shared_ptr<const onednn::Primitive> primitive;
  std::shared_ptr<const onednn::PackedWeights> packed;  // null: the filter as it is
  const void* weights = nullptr;
  const dnnl_memory_desc_t* WeightsMd() const { return primitive->Md(dnnl_query_weights_md); }
};

template <typename T>
class DepthwiseBackpropInputOp : public OpKernel {
 public:
  explicit DepthwiseBackpropInputOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
    filter_constant_ = std::is_same_v<T, float> && IsConstantInput(*c, 1);
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> sizes,
                        ReadSizes(ctx->input(0), "input_sizes", "Conv2DBackpropInput"));
    const Tensor& filter = ctx->input(1);
    const std::vector<int64_t> filter_dims(filter.shape().dim_sizes().begin(),
                                           filter.shape().dim_sizes().end());
    OP_ASSIGN_OR_RETURN(
        ctx, Geometry g,
        MakeGeometry(kInputLabel, attrs_, sizes, filter_dims, ctx->input(2).shape()));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, sizes));
    OP_REQUIRES_OK(ctx, WithFloatOutput<T>(ctx, shape, [&](const Tensor& out) -> absl::Status {
                     if (out.NumElements() == 0) return absl::OkStatus();
                     // No output pixel or filter tap reaches the input: a zero gradient.
                     if (ctx->input(2).NumElements() == 0 || filter.NumElements() == 0) {
                       FillZeros(out);
                       return absl::OkStatus();
                     }
                     return Run(ctx, g, out);
                   }));
  }

 private:
  absl::Status Run(OpKernelContext* ctx, const Geometry& g, const Tensor& out) {
    DFLOW_ASSIGN_OR_RETURN(const Tensor filter, FloatInput<T>(ctx, 1));
    DFLOW_ASSIGN_OR_RETURN(const Tensor out_backprop, FloatInput<T>(ctx, 2));
    const onednn::BatchSplit split =
        onednn::SplitBatch(g.batch, g.FlopsPerImage(), NumThreads(ctx));
    const int64_t last = g.batch - (split.shards - 1) * split.block;
    DFLOW_ASSIGN_OR_RETURN(DataPlan full, MakePlan(g, split.block, filter));
    DataPlan rest = full;
    if (last != split.block) {
      DFLOW_ASSIGN_OR_RETURN(rest, MakePlan(g, last, filter));
    }
    const float* dy = out_backprop.data<float>();
    float* dx = out.data<float>();
    return onednn::RunShards(ctx, g.batch, split, g.FlopsPerImage(), [&](int64_t first, int64_t n) {
      const DataPlan& plan = n == split.block ? full : rest;
      const onednn::Primitive& p = *plan.primitive;
      return onednn::Execute(
          p, engine_.get(),
          {{DNNL_ARG_DIFF_DST, p.Md(dnnl_query_diff_dst_md), dy + first * g.OutImage()},
           {DNNL_ARG_WEIGHTS, plan.WeightsMd(), plan.weights},
           {DNNL_ARG_DIFF_SRC, p.Md(dnnl_query_diff_src_md), dx + first * g.InImage()}});
    });
  }

  absl::StatusOr<DataPlan> MakePlan(const Geometry& g, int64_t n, const Tensor& filter) {
    DataPlan plan;
    DFLOW_ASSIGN_OR_RETURN(plan.primitive, primitives_.GetOrCreate(g.Key(n), [&] {
      return MakeBackwardData(g, attrs_.layout.nchw, n, engine_.get());
    }));
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t plain, WeightsDesc(g, /*any_layout=*/false));
    DFLOW_ASSIGN_OR_RETURN(plan.packed, packed_filters_.Get(engine_.get(), filter, plain,
                                                            *plan.WeightsMd(), filter_constant_));
    plan.weights = plan.packed != nullptr ? plan.packed->buffer.get() : filter.raw_data();
    return plan;
  }

  ConvAttrs attrs_;
  bool filter_constant_ = false;  // only a float filter is used as it comes
  onednn::EnginePtr engine_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
  onednn::PackedWeightsCache packed_filters_;
};

// --- DepthwiseConv2dNativeBackpropFilter(input, filter_sizes, out_backprop) ---

template <typename T>
class DepthwiseBackpropFilterOp : public OpKernel {
 public:
  explicit DepthwiseBackpropFilterOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_ASSIGN_OR_RETURN(c, attrs_, ParseConvAttrs(c));
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> sizes,
                        ReadSizes(ctx->input(1), "filter_sizes", "Conv2DBackpropFilter"));
    const Tensor& input = ctx->input(0);
    const std::vector<int64_t> input_dims(input.shape().dim_sizes().begin(),
                                          input.shape().dim_sizes().end());
    OP_ASSIGN_OR_RETURN(
        ctx, Geometry g,
        MakeGeometry(kFilterLabel, attrs_, input_dims, sizes, ctx->input(2).shape()));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, sizes));
    OP_REQUIRES_OK(ctx, WithFloatOutput<T>(ctx, shape, [&](const Tensor& out) -> absl::Status {
                     if (out.NumElements() == 0) return absl::OkStatus();
                     // An empty batch or no output pixel: an empty sum.
                     if (input.NumElements() == 0 || ctx->input(2).NumElements() == 0) {
                       FillZeros(out);
                       return absl::OkStatus();
                     }
                     return Run(ctx, g, out);
                   }));
  }

 private:
  absl::StatusOr<std::shared_ptr<const onednn::Primitive>> BackwardWeights(const Geometry& g,
                                                                           int64_t n) {
    return primitives_.GetOrCreate(
        g.Key(n), [&] { return MakeBackwardWeights(g, attrs_.layout.nchw, n, engine_.get()); });
  }

  // The reorder from the weights layout of the primitive for `block` images into the
  // HWIO result. Keyed by the block, as that primitive is: oneDNN may pick another
  // weights layout for another batch size.
  absl::StatusOr<std::shared_ptr<const onednn::Primitive>> ToHwio(const Geometry& g,
                                                                  int64_t block,
                                                                  const dnnl_memory_desc_t& from,
                                                                  const dnnl_memory_desc_t& to) {
    return reorders_.GetOrCreate(
        g.Key(block), [&] { return onednn::MakeReorderPrimitive(engine_.get(), from, to); });
  }

  absl::Status Run(OpKernelContext* ctx, const Geometry& g, const Tensor& out) {
    DFLOW_ASSIGN_OR_RETURN(const Tensor input, FloatInput<T>(ctx, 0));
    DFLOW_ASSIGN_OR_RETURN(const Tensor out_backprop, FloatInput<T>(ctx, 2));
    const onednn::BatchSplit split =
        onednn::SplitBatch(g.batch, g.FlopsPerImage(), NumThreads(ctx));
    const int64_t last = g.batch - (split.shards - 1) * split.block;
    DFLOW_ASSIGN_OR_RETURN(auto full, BackwardWeights(g, split.block));
    std::shared_ptr<const onednn::Primitive> rest = full;
    if (last != split.block) {
      DFLOW_ASSIGN_OR_RETURN(rest, BackwardWeights(g, last));
    }
    const dnnl_memory_desc_t* weights_md = full->Md(dnnl_query_diff_weights_md);
    if (!dnnl_memory_desc_equal(weights_md, rest->Md(dnnl_query_diff_weights_md))) {
      return absl::InternalError("depthwise filter gradient: shard weight layouts differ");
    }
    DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t hwio, WeightsDesc(g, /*any_layout=*/false));
    const bool direct = split.shards == 1 && dnnl_memory_desc_equal(weights_md, &hwio);
    // One partial filter per shard, in the primitive's layout (padded to its blocks).
    const int64_t partial =
        static_cast<int64_t>(dnnl_memory_desc_get_size(weights_md) / sizeof(float));
    Tensor partials;
    if (!direct) {
      DFLOW_ASSIGN_OR_RETURN(partials,
                             ctx->allocate_temp(DT_FLOAT, TensorShape({split.shards, partial})));
    }
    const float* x = input.data<float>();
    const float* dy = out_backprop.data<float>();
    float* sums = direct ? out.data<float>() : partials.data<float>();
    DFLOW_RETURN_IF_ERROR(
        onednn::RunShards(ctx, g.batch, split, g.FlopsPerImage(), [&](int64_t first, int64_t n) {
          const onednn::Primitive& p = n == split.block ? *full : *rest;
          return onednn::Execute(
              p, engine_.get(),
              {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), x + first * g.InImage()},
               {DNNL_ARG_DIFF_DST, p.Md(dnnl_query_diff_dst_md), dy + first * g.OutImage()},
               {DNNL_ARG_DIFF_WEIGHTS, weights_md, sums + first / split.block * partial}});
        }));
    if (direct) return absl::OkStatus();
    for (int64_t s = 1; s < split.shards; ++s) {  // shard order: the same bits every run
      const float* add = sums + s * partial;
      for (int64_t i = 0; i < partial; ++i) sums[i] += add[i];
    }
    DFLOW_ASSIGN_OR_RETURN(auto reorder, ToHwio(g, split.block, *weights_md, hwio));
    return onednn::Execute(
        *reorder, engine_.get(),
        {{DNNL_ARG_FROM, weights_md, sums}, {DNNL_ARG_TO, &hwio, out.data<float>()}});
  }

  ConvAttrs attrs_;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
  onednn::ShapeCache<onednn::Primitive> reorders_;
};

template <template <typename> class Op>
absl::Status RegisterForFloatTypes(KernelRegistry* registry, const char* op) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<Op<float>>(KernelDefBuilder(op).Device("CPU").TypeConstraint<float>("T")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<Op<Half>>(KernelDefBuilder(op).Device("CPU").TypeConstraint<Half>("T")));
  return registry->Register<Op<Bfloat16>>(
      KernelDefBuilder(op).Device("CPU").TypeConstraint<Bfloat16>("T"));
}

}  // namespace

absl::Status RegisterDepthwiseConvGradKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterForFloatTypes<DepthwiseBackpropInputOp>(
      registry, "DepthwiseConv2dNativeBackpropInput"));
  return RegisterForFloatTypes<DepthwiseBackpropFilterOp>(registry,
                                                          "DepthwiseConv2dNativeBackpropFilter");
}

}  // namespace dflow
