// What Conv3D (conv3d_ops.cc) and its gradients (conv3d_backprop_ops.cc) share: the attrs
// in TF's words, the sizes of one call, and oneDNN's 5-D descriptors of the volumes and
// of TF's DHWIO filter.
//
// oneDNN describes a 3-D convolution with 5-D tensors: activations {N, C, D, H, W} and
// weights {O, I, KD, KH, KW}. The graph's layouts (NDHWC or NCDHW volumes, the DHWIO
// filter [kd, kh, kw, in, out]) are handed over as strides, so nothing is copied to
// describe them, as conv_ops.cc does for the 2-D HWIO filter.
#ifndef DFLOW_KERNELS_CPU_CONV3D_UTIL_H_
#define DFLOW_KERNELS_CPU_CONV3D_UTIL_H_

#include <dnnl.h>

#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/kernel_registry.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {

// Conv3DBackpropInput(V2) and Conv3DBackpropFilter(V2); conv3d_backprop_ops.cc.
// RegisterConv3DKernels (conv3d_ops.cc) calls it.
absl::Status RegisterConv3DBackpropKernels(KernelRegistry* registry);

// Spatial values, ordered {planes, rows, columns}.
using Spatial3 = std::array<int64_t, 3>;

// A 3-D convolution's attrs, validated when the kernel is constructed.
struct Conv3DAttrs {
  bool ncdhw = false;  // data_format NCDHW (NDHWC otherwise; the V1 gradients have no attr)
  Padding padding = Padding::kValid;
  Spatial3 strides = {1, 1, 1};
  Spatial3 dilations = {1, 1, 1};

  int ChannelDim() const { return ncdhw ? 1 : 4; }
  // The tensor dim of spatial dim i (0: planes, 1: rows, 2: columns); batch is dim 0.
  int SpatialDim(int i) const { return ncdhw ? 2 + i : 1 + i; }
};

// TF words the checks of Conv3D's constructor and of its gradients' a little apart.
enum class Conv3DKernelKind { kForward, kBackprop };

namespace conv3d_internal {

// The spatial entries of a 5-value attr whose batch and channel entries must be 1.
inline absl::StatusOr<Spatial3> SpatialOfFive(const std::vector<int64_t>& v,
                                              const Conv3DAttrs& a, const char* size_error,
                                              const char* batch_error) {
  if (v.size() != 5) return absl::InvalidArgumentError(size_error);
  if (v[0] != 1 || v[a.ChannelDim()] != 1) return absl::InvalidArgumentError(batch_error);
  return Spatial3{v[a.SpatialDim(0)], v[a.SpatialDim(1)], v[a.SpatialDim(2)]};
}

}  // namespace conv3d_internal

// The attrs of the kernel being constructed, with TF's texts (conv_ops_3d.cc,
// conv_grad_ops_3d.cc). TF's CPU kernels refuse NCDHW and dilations above 1; oneDNN has
// no such limit, so they are accepted (as Conv2D does here). A stride below 1 is refused
// here for both kinds; TF's gradients refuse it only when they run, in the same words.
inline absl::StatusOr<Conv3DAttrs> ParseConv3DAttrs(const OpKernelConstruction& c,
                                                    Conv3DKernelKind kind) {
  Conv3DAttrs a;
  if (c.HasAttr("data_format")) {
    std::string format;
    DFLOW_RETURN_IF_ERROR(c.GetAttr("data_format", &format));
    if (format != "NDHWC" && format != "NCDHW") {
      return absl::InvalidArgumentError("Invalid data format");
    }
    a.ncdhw = format == "NCDHW";
  }
  std::vector<int64_t> strides, dilations = {1, 1, 1, 1, 1};
  std::string padding;
  DFLOW_RETURN_IF_ERROR(c.GetAttr("strides", &strides));
  if (c.HasAttr("dilations")) DFLOW_RETURN_IF_ERROR(c.GetAttr("dilations", &dilations));
  DFLOW_RETURN_IF_ERROR(c.GetAttr("padding", &padding));
  const auto parse_strides = [&]() -> absl::Status {
    DFLOW_ASSIGN_OR_RETURN(
        a.strides, conv3d_internal::SpatialOfFive(
                       strides, a, "Sliding window strides field must specify 5 dimensions",
                       "Current implementation does not yet support strides in the batch and "
                       "depth dimensions."));
    for (int64_t s : a.strides) {
      if (s > 0) continue;
      if (kind == Conv3DKernelKind::kForward) {
        return absl::InvalidArgumentError("Spatial strides should be larger than 0.");
      }
      return absl::InvalidArgumentError(absl::StrCat("Stride must be > 0, but got ", s));
    }
    return absl::OkStatus();
  };
  const auto parse_dilations = [&]() -> absl::Status {
    DFLOW_ASSIGN_OR_RETURN(
        a.dilations, conv3d_internal::SpatialOfFive(
                         dilations, a, "Dilation rates field must specify 5 dimensions",
                         "Current implementation does not yet support dilation rates in the "
                         "batch and depth dimensions."));
    for (int64_t d : a.dilations) {
      if (d <= 0) return absl::InvalidArgumentError("Dilated rates should be larger than 0.");
    }
    return absl::OkStatus();
  };
  // TF's order: the forward kernel checks strides first, the gradients dilations.
  if (kind == Conv3DKernelKind::kForward) {
    DFLOW_RETURN_IF_ERROR(parse_strides());
    DFLOW_RETURN_IF_ERROR(parse_dilations());
  } else {
    DFLOW_RETURN_IF_ERROR(parse_dilations());
    DFLOW_RETURN_IF_ERROR(parse_strides());
  }
  DFLOW_ASSIGN_OR_RETURN(a.padding, ParsePadding(padding, /*allow_explicit=*/false));
  return a;
}

// The sizes of one call, those of the forward convolution: `dims` are its planes, rows
// and columns (input = the volume's size, output = the convolution output's).
struct Conv3DGeometry {
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  std::array<WindowDim, 3> dims;

  int64_t InputVolume() const { return dims[0].input * dims[1].input * dims[2].input; }
  int64_t OutputVolume() const { return dims[0].output * dims[1].output * dims[2].output; }
  int64_t FilterVolume() const { return dims[0].size * dims[1].size * dims[2].size; }
  double FlopsPerImage() const {
    return 2.0 * static_cast<double>(OutputVolume()) * static_cast<double>(out_depth) *
           static_cast<double>(FilterVolume()) * static_cast<double>(in_depth);
  }
  // A primitive cache key for `n` images.
  std::vector<int64_t> Key(int64_t n) const {
    std::vector<int64_t> key = {n, in_depth, out_depth};
    for (const WindowDim& d : dims) {
      key.insert(key.end(),
                 {d.input, d.size, d.stride, d.dilation, d.pad_before, d.pad_after, d.output});
    }
    return key;
  }
};

// A 5-D f32 descriptor of `n` volumes of `c` channels, dims {N, C, D, H, W}, laid out
// NDHWC or NCDHW.
inline absl::StatusOr<dnnl_memory_desc_t> VolumeDesc(int64_t n, int64_t c, const Spatial3& s,
                                                     bool ncdhw) {
  const dnnl_dims_t dims = {n, c, s[0], s[1], s[2]};
  dnnl_memory_desc_t md;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_memory_desc_init_by_tag(&md, 5, dims, dnnl_f32, ncdhw ? dnnl_ncdhw : dnnl_ndhwc),
      "dnnl_memory_desc_init_by_tag"));
  return md;
}
// The convolution's input and output volumes for `n` images.
inline absl::StatusOr<dnnl_memory_desc_t> InputVolumeDesc(const Conv3DGeometry& g, int64_t n,
                                                          bool ncdhw) {
  return VolumeDesc(n, g.in_depth, {g.dims[0].input, g.dims[1].input, g.dims[2].input}, ncdhw);
}
inline absl::StatusOr<dnnl_memory_desc_t> OutputVolumeDesc(const Conv3DGeometry& g, int64_t n,
                                                           bool ncdhw) {
  return VolumeDesc(n, g.out_depth, {g.dims[0].output, g.dims[1].output, g.dims[2].output},
                    ncdhw);
}

// The DHWIO filter [kd, kh, kw, in, out] as convolution weights {out, in, kd, kh, kw}:
// a strided view of its buffer, or, with `any_layout`, the layout the primitive picks.
inline absl::StatusOr<dnnl_memory_desc_t> ConvWeightsDesc(const Conv3DGeometry& g,
                                                          bool any_layout) {
  const int64_t kd = g.dims[0].size, kh = g.dims[1].size, kw = g.dims[2].size;
  const int64_t ic = g.in_depth, oc = g.out_depth;
  if (any_layout) return onednn::AnyLayoutDesc({oc, ic, kd, kh, kw});
  return onednn::StridedDesc({oc, ic, kd, kh, kw},
                             {1, oc, kh * kw * ic * oc, kw * ic * oc, ic * oc});
}

// The same filter as deconvolution weights {in, out, kd, kh, kw}: the deconvolution that
// computes the input gradient outputs the convolution's input channels (no copy, no flip).
inline absl::StatusOr<dnnl_memory_desc_t> DeconvWeightsDesc(const Conv3DGeometry& g,
                                                            bool any_layout) {
  const int64_t kd = g.dims[0].size, kh = g.dims[1].size, kw = g.dims[2].size;
  const int64_t ic = g.in_depth, oc = g.out_depth;
  if (any_layout) return onednn::AnyLayoutDesc({ic, oc, kd, kh, kw});
  return onednn::StridedDesc({ic, oc, kd, kh, kw},
                             {oc, 1, kh * kw * ic * oc, kw * ic * oc, ic * oc});
}

// The window arguments of oneDNN's convolution and deconvolution descriptors.
struct Conv3DWindow {
  dnnl_dims_t strides, dilates, pad_l, pad_r;
};
inline Conv3DWindow WindowOf(const Conv3DGeometry& g) {
  Conv3DWindow w = {};
  for (int i = 0; i < 3; ++i) {
    w.strides[i] = g.dims[i].stride;
    w.dilates[i] = g.dims[i].dilation - 1;  // oneDNN counts dilation from 0
    w.pad_l[i] = g.dims[i].pad_before;
    w.pad_r[i] = g.dims[i].pad_after;
  }
  return w;
}

// A primitive for one shard size and the filter in the layout it wants.
struct Conv3DPlan {
  std::shared_ptr<const onednn::Primitive> primitive;
  std::shared_ptr<const onednn::PackedWeights> packed;  // null: the filter as it is
  const void* weights = nullptr;
  const dnnl_memory_desc_t* WeightsMd() const { return primitive->Md(dnnl_query_weights_md); }
};

// `primitive` with `filter` (laid out as `plain`) packed into its weights layout through
// `cache`, or used as it is when the layouts agree. `constant`: see PackedWeightsCache.
inline absl::StatusOr<Conv3DPlan> PlanWithWeights(
    std::shared_ptr<const onednn::Primitive> primitive, onednn::PackedWeightsCache* cache,
    dnnl_engine_t engine, const Tensor& filter, const dnnl_memory_desc_t& plain, bool constant) {
  Conv3DPlan plan;
  plan.primitive = std::move(primitive);
  DFLOW_ASSIGN_OR_RETURN(plan.packed,
                         cache->Get(engine, filter, plain, *plan.WeightsMd(), constant));
  plan.weights = plan.packed != nullptr ? plan.packed->buffer.get() : filter.raw_data();
  return plan;
}

// The plan for `n` images (its primitive cached per size by the caller).
using Conv3DPlanFor = std::function<absl::StatusOr<Conv3DPlan>(int64_t n)>;

// Runs a source -> destination primitive (Conv3D's convolution, its input gradient's
// deconvolution) over the batch in shards on the pool: `src` and `dst` hold `src_image`
// and `dst_image` floats an image; a shard of the usual size and the smaller last one
// each get their plan once.
inline absl::Status RunConv3DShards(OpKernelContext* ctx, dnnl_engine_t engine,
                                    const Conv3DGeometry& g, const float* src,
                                    int64_t src_image, float* dst, int64_t dst_image,
                                    const Conv3DPlanFor& plan_for) {
  const onednn::BatchSplit split = onednn::SplitBatch(g.batch, g.FlopsPerImage(), NumThreads(ctx));
  const int64_t last = g.batch - (split.shards - 1) * split.block;
  DFLOW_ASSIGN_OR_RETURN(const Conv3DPlan full, plan_for(split.block));
  Conv3DPlan rest = full;
  if (last != split.block) {
    DFLOW_ASSIGN_OR_RETURN(rest, plan_for(last));
  }
  return onednn::RunShards(ctx, g.batch, split, g.FlopsPerImage(), [&](int64_t first, int64_t n) {
    const Conv3DPlan& plan = n == split.block ? full : rest;
    const onednn::Primitive& p = *plan.primitive;
    return onednn::Execute(p, engine,
                           {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), src + first * src_image},
                            {DNNL_ARG_WEIGHTS, plan.WeightsMd(), plan.weights},
                            {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), dst + first * dst_image}});
  });
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV3D_UTIL_H_
