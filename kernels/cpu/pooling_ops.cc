// MaxPool, MaxPoolV2 and AvgPool for float on oneDNN's pooling primitive.
//
// Activations stay in the graph's layout (NHWC or NCHW), primitives are cached per
// sub-batch shape, and the batch is split over the session's pool as in conv_ops.cc.
// TF semantics: ksize/strides are 4-vectors in data_format order (V2 takes them as int32
// inputs); SAME pads as Conv2D does, MaxPool's EXPLICIT pads (each smaller than the
// window, TF's check) as given; AvgPool divides by the number of window elements inside
// the input (oneDNN's avg_exclude_padding), MaxPool ignores padding.
// Pooling over the batch or depth dimension is not supported.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/pool_primitive.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// ksize and strides: {h, w} each, after TF's checks.
struct PoolWindow {
  std::vector<int64_t> ksize;
  std::vector<int64_t> strides;
};

absl::StatusOr<PoolWindow> ParsePoolWindow(const std::vector<int64_t>& ksize,
                                           const std::vector<int64_t>& strides,
                                           const ImageLayout& layout) {
  if (ksize.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("Sliding window ksize field must specify 4 dimensions, got ", ksize.size()));
  }
  if (strides.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window stride field must specify 4 dimensions, got ", strides.size()));
  }
  for (int i = 0; i < 4; ++i) {
    if (ksize[i] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sliding window ksize for dimension ", i, " was zero or negative"));
    }
  }
  if (ksize[layout.batch] != 1 || strides[layout.batch] != 1) {
    return absl::UnimplementedError("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[layout.channel] != 1 || strides[layout.channel] != 1) {
    return absl::UnimplementedError(
        "Pooling across the depth dimension (ksize or strides != 1 there) is not supported");
  }
  PoolWindow w;
  w.ksize = {ksize[layout.height], ksize[layout.width]};
  DFLOW_ASSIGN_OR_RETURN(w.strides, SpatialPairFromFour(strides, layout, "strides"));
  return w;
}

// The int32 vector input `index` (MaxPoolV2's ksize, strides).
absl::StatusOr<std::vector<int64_t>> IntVectorInput(const OpKernelContext& ctx, int index,
                                                    const char* name) {
  const Tensor& t = ctx.input(index);
  if (t.shape().dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be a vector, got shape ", t.shape().DebugString()));
  }
  const int32_t* data = t.data<int32_t>();
  return std::vector<int64_t>(data, data + t.NumElements());
}

class PoolOp : public OpKernel {
 public:
  // `window_from_inputs`: MaxPoolV2's ksize and strides are inputs 1 and 2.
  PoolOp(OpKernelConstruction* c, dnnl_alg_kind_t algorithm, bool window_from_inputs)
      : OpKernel(c), algorithm_(algorithm), window_from_inputs_(window_from_inputs) {
    std::string format, padding;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_REQUIRES_OK(c, c->GetAttr("padding", &padding));
    OP_ASSIGN_OR_RETURN(c, layout_, ParseDataFormat(format));
    // MaxPool takes EXPLICIT pads (TF's attr; graph/fusion.h folds a zero Pad of a Relu's
    // output into them); MaxPoolV2 and AvgPool do not.
    const bool explicit_allowed = algorithm == dnnl_pooling_max && !window_from_inputs;
    OP_ASSIGN_OR_RETURN(c, padding_, ParsePadding(padding, explicit_allowed));
    if (padding_ == Padding::kExplicit) {
      std::vector<int64_t> pads;
      OP_REQUIRES_OK(c, c->GetAttr("explicit_paddings", &pads));
      OP_ASSIGN_OR_RETURN(c, pads_, ParseExplicitPaddings(padding_, pads, layout_));
    }
    if (!window_from_inputs_) {
      std::vector<int64_t> ksize, strides;
      OP_REQUIRES_OK(c, c->GetAttr("ksize", &ksize));
      OP_REQUIRES_OK(c, c->GetAttr("strides", &strides));
      OP_ASSIGN_OR_RETURN(c, window_, ParsePoolWindow(ksize, strides, layout_));
    }
    OP_ASSIGN_OR_RETURN(c, engine_, onednn::MakeCpuEngine());
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<PoolGeometry> geometry = Geometry(*ctx);
    OP_REQUIRES(ctx, geometry.ok(), KernelError(*ctx, geometry.status().message()));
    const PoolGeometry& g = *geometry;
    const int64_t batch = ctx->input(0).shape().dim_size(layout_.batch);
    OP_ASSIGN_OR_RETURN(
        ctx, TensorShape out_shape,
        TensorShape::Make(ImageDims(layout_, batch, g.rows.output, g.cols.output, g.depth)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, RunPool(ctx, g, batch, layout_.nchw, engine_.get(),
                                [this](const PoolGeometry& sub, int64_t n) {
                                  return Primitive(sub, n);
                                },
                                ctx->input(0).data<float>(), out->data<float>()));
  }

 private:
  absl::StatusOr<PoolGeometry> Geometry(const OpKernelContext& ctx) const {
    const TensorShape& input = ctx.input(0).shape();
    if (input.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional: ", input.DebugString()));
    }
    PoolWindow window = window_;
    if (window_from_inputs_) {
      DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, IntVectorInput(ctx, 1, "ksize"));
      DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntVectorInput(ctx, 2, "strides"));
      DFLOW_ASSIGN_OR_RETURN(window, ParsePoolWindow(ksize, strides, layout_));
    }
    PoolGeometry g;
    g.depth = input.dim_size(layout_.channel);
    g.rows = {input.dim_size(layout_.height), window.ksize[0], window.strides[0], 1,
              pads_[0], pads_[1]};
    g.cols = {input.dim_size(layout_.width), window.ksize[1], window.strides[1], 1,
              pads_[2], pads_[3]};
    if (padding_ == Padding::kExplicit) {
      DFLOW_RETURN_IF_ERROR(CheckExplicitPoolPads(g.rows, g.cols));
    }
    DFLOW_RETURN_IF_ERROR(ComputeWindow(padding_, &g.rows));
    DFLOW_RETURN_IF_ERROR(ComputeWindow(padding_, &g.cols));
    return g;
  }

  absl::StatusOr<std::shared_ptr<const onednn::Primitive>> Primitive(const PoolGeometry& g,
                                                                     int64_t n) {
    return primitives_.GetOrCreate(g.Key(n), [&] {
      return MakePoolPrimitive(g, n, layout_.nchw, algorithm_, engine_.get());
    });
  }

  const dnnl_alg_kind_t algorithm_;
  const bool window_from_inputs_;
  ImageLayout layout_;
  Padding padding_ = Padding::kValid;
  std::vector<int64_t> pads_ = std::vector<int64_t>(4, 0);  // {top, bottom, left, right}
  PoolWindow window_;
  onednn::EnginePtr engine_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
};

template <dnnl_alg_kind_t kAlgorithm, bool kWindowFromInputs>
std::unique_ptr<OpKernel> MakePool(OpKernelConstruction* c) {
  return std::make_unique<PoolOp>(c, kAlgorithm, kWindowFromInputs);
}

}  // namespace

absl::Status RegisterPoolingKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register(KernelDefBuilder("MaxPool").Device("CPU").TypeConstraint<float>("T"),
                         MakePool<dnnl_pooling_max, false>));
  DFLOW_RETURN_IF_ERROR(registry->Register(KernelDefBuilder("MaxPoolV2")
                                               .Device("CPU")
                                               .TypeConstraint<float>("T")
                                               .HostMemory("ksize")
                                               .HostMemory("strides"),
                                           MakePool<dnnl_pooling_max, true>));
  DFLOW_RETURN_IF_ERROR(
      registry->Register(KernelDefBuilder("AvgPool").Device("CPU").TypeConstraint<float>("T"),
                         MakePool<dnnl_pooling_avg_exclude_padding, false>));
  return absl::OkStatus();
}

}  // namespace dflow
