// Shape functions for neural-network ops: Softmax/LogSoftmax, BiasAdd, Conv2D,
// DepthwiseConv2dNative, MaxPool, AvgPool and TopKV2. (Activations and their gradients
// are element-wise: shape_fns_math.cc.)
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace dflow {
namespace shape_fn_util {
namespace {

// ---------------------------------------------------------------- softmax, bias

absl::Status SoftmaxShape(Ctx& c) {
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(c.input(0), 1));
  return UnchangedShape(c);
}

absl::Status BiasAddShape(Ctx& c) {
  const PartialShape& value = c.input(0);
  DFLOW_ASSIGN_OR_RETURN(PartialShape bias, WithRank(c.input(1), 1));
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(value, 2));
  if (!value.rank_known()) return absl::OkStatus();
  const bool nchw = StringAttr(c, "data_format", "NHWC") == "NCHW" && value.rank() > 2;
  const int channel = nchw ? 1 : value.rank() - 1;
  DFLOW_ASSIGN_OR_RETURN(int64_t depth, MergeDims(value.dim(channel), bias.dim(0)));
  c.set_output(0, Replaced(value, channel, depth));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- convolution, pooling

// The list(int) attr `name`, which must hold four values (one per NHWC/NCHW dim).
absl::StatusOr<std::vector<int64_t>> FourIntsAttr(const Ctx& c, absl::string_view name) {
  std::vector<int64_t> values = IntListAttr(c, name);
  if (values.size() != 4) {
    return Invalid(absl::StrCat("attr '", name, "' must have 4 values, got ", values.size()));
  }
  return values;
}

enum class Padding { kSame, kValid, kExplicit };

absl::StatusOr<Padding> PaddingAttr(const Ctx& c) {
  const std::string padding = StringAttr(c, "padding", "");
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT") return Padding::kExplicit;
  return Invalid(absl::StrCat("Unsupported padding '", padding, "'"));
}

// explicit_paddings (before, after per dim in data_format order) or zeros.
absl::StatusOr<std::vector<int64_t>> ExplicitPaddings(const Ctx& c, Padding padding) {
  if (padding != Padding::kExplicit) return std::vector<int64_t>(8, 0);
  std::vector<int64_t> pads = IntListAttr(c, "explicit_paddings");
  if (pads.size() != 8) {
    return Invalid(absl::StrCat("explicit_paddings must have 8 values, got ", pads.size()));
  }
  for (int64_t p : pads) {
    if (p < 0) return Invalid(absl::StrCat("explicit_paddings must be non-negative, got ", p));
  }
  return pads;
}

// Dims of the channel and the two spatial dims of a 4-D tensor.
struct Layout {
  int channel;
  int spatial[2];
};

absl::StatusOr<Layout> DataFormatAttr(const Ctx& c) {
  const std::string format = StringAttr(c, "data_format", "NHWC");
  if (format == "NHWC") return Layout{3, {1, 2}};
  if (format == "NCHW") return Layout{1, {2, 3}};
  return Invalid(absl::StrCat("Unsupported data_format '", format, "'"));
}

struct Window {
  int64_t size, dilation, stride, pad_before, pad_after;
};

// TF's GetWindowedOutputSize: the number of window positions along a dim of size `in`.
absl::StatusOr<int64_t> WindowedOutputSize(int64_t in, const Window& w, Padding padding) {
  if (w.stride <= 0 || w.dilation <= 0) {
    return Invalid(absl::StrCat("Strides and dilations must be positive, got stride ", w.stride,
                                " and dilation ", w.dilation));
  }
  if (in == kUnknown) return kUnknown;
  if (padding == Padding::kSame) return in / w.stride + (in % w.stride != 0 ? 1 : 0);
  if (w.size == kUnknown) return kUnknown;
  int64_t effective, padded;
  if (w.size < 1 || __builtin_mul_overflow(w.size - 1, w.dilation, &effective) ||
      __builtin_add_overflow(effective, 1, &effective) ||
      __builtin_add_overflow(in, w.pad_before + w.pad_after, &padded)) {
    return Invalid(absl::StrCat("Invalid window size ", w.size, " with dilation ", w.dilation));
  }
  const int64_t excess = padded - effective;
  const int64_t out = excess < 0 ? (excess + w.stride) / w.stride : excess / w.stride + 1;
  if (out < 0) {
    return Invalid(absl::StrCat("Computed output size would be negative: ", out,
                                " [input_size: ", padded, ", effective_filter_size: ", effective,
                                ", stride: ", w.stride, "]"));
  }
  return out;
}

// Conv2D (filter [h, w, in/groups, out]) and DepthwiseConv2dNative ([h, w, in, mult]).
absl::Status Conv2DShape(Ctx& c, bool depthwise) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape in, WithRank(c.input(0), 4));
  DFLOW_ASSIGN_OR_RETURN(PartialShape filter, WithRank(c.input(1), 4));
  DFLOW_ASSIGN_OR_RETURN(Layout layout, DataFormatAttr(c));
  DFLOW_ASSIGN_OR_RETURN(Padding padding, PaddingAttr(c));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, FourIntsAttr(c, "strides"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, FourIntsAttr(c, "dilations"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ExplicitPaddings(c, padding));
  const int64_t depth = in.dim(layout.channel), filter_depth = filter.dim(2);
  int64_t out_depth = filter.dim(3);
  if (depthwise) {
    DFLOW_RETURN_IF_ERROR(MergeDims(depth, filter_depth).status());
    DFLOW_ASSIGN_OR_RETURN(out_depth, MultiplyDims(filter_depth, filter.dim(3)));
  } else if (depth != kUnknown && filter_depth != kUnknown &&
             (filter_depth == 0 || depth % filter_depth != 0)) {
    return Invalid(absl::StrCat("Depth of input (", depth,
                                ") is not a multiple of input depth of filter (", filter_depth,
                                ")"));
  }
  std::vector<int64_t> dims = in.dims();
  dims[layout.channel] = out_depth;
  for (int s = 0; s < 2; ++s) {
    const int d = layout.spatial[s];
    const Window w{filter.dim(s), dilations[d], strides[d], pads[2 * d], pads[2 * d + 1]};
    DFLOW_ASSIGN_OR_RETURN(dims[d], WindowedOutputSize(in.dim(d), w, padding));
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// MaxPool/AvgPool: every dim is windowed by ksize[d] and strides[d] (1 for batch and
// channels in practice), whatever the data_format.
absl::Status PoolShape(Ctx& c) {
  if (StringAttr(c, "data_format", "NHWC") == "NCHW_VECT_C") return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(PartialShape in, WithRank(c.input(0), 4));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, FourIntsAttr(c, "ksize"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> strides, FourIntsAttr(c, "strides"));
  DFLOW_ASSIGN_OR_RETURN(Padding padding, PaddingAttr(c));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ExplicitPaddings(c, padding));
  std::vector<int64_t> dims(4);
  for (int d = 0; d < 4; ++d) {
    const Window w{ksize[d], 1, strides[d], pads[2 * d], pads[2 * d + 1]};
    DFLOW_ASSIGN_OR_RETURN(dims[d], WindowedOutputSize(in.dim(d), w, padding));
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- top k

// TopKV2: values and indices are the input with its last dim replaced by k.
absl::Status TopKShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(in, 1));
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(1), 0).status());
  const std::optional<int64_t> k = ScalarValue(c, 1);
  if (k.has_value() && *k < 0) {
    return Invalid(absl::StrCat(
        "Dimension size, given by scalar input 1, must be non-negative but is ", *k));
  }
  if (!in.rank_known()) return absl::OkStatus();
  const int64_t last = in.dim(in.rank() - 1);
  if (k.has_value() && last != kUnknown && last < *k) {
    return Invalid(
        absl::StrCat("input must have last dimension >= k = ", *k, " but is ", last));
  }
  const PartialShape out = Replaced(in, in.rank() - 1, k.value_or(kUnknown));
  c.set_output(0, out);
  c.set_output(1, out);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- image resizing

// ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic: NHWC [batch, size[0], size[1],
// channels]; the height and width are unknown until size is (a non-positive one is the
// kernel's error).
absl::Status ResizeShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape in, WithRank(c.input(0), 4));
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(1), 1).status());
  const PartialShape& size = c.input(1);
  if (size.rank_known()) DFLOW_RETURN_IF_ERROR(MergeDims(size.dim(0), 2).status());
  int64_t height = kUnknown, width = kUnknown;
  const std::vector<int64_t>* value = c.input_value(1);
  if (value != nullptr && value->size() == 2) {
    if ((*value)[0] > 0) height = (*value)[0];
    if ((*value)[1] > 0) width = (*value)[1];
  }
  c.set_output(0, PartialShape(std::vector<int64_t>{in.dim(0), height, width, in.dim(3)}));
  return absl::OkStatus();
}

// Conv2DBackpropInput: the gradient has the shape input_sizes holds (4 values); for
// the 2-value form only the rank is known here.
absl::Status Conv2DBackpropInputShape(Ctx& c) {
  const PartialShape& sizes = c.input(0);
  if (sizes.rank_known() && sizes.rank() == 1 && sizes.dim(0) == 4) {
    DFLOW_ASSIGN_OR_RETURN(PartialShape out, c.InputAsShape(0));
    c.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  c.set_output(0, PartialShape::UnknownOfRank(4));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- NMS, CropAndResize

// NonMaxSuppressionV3/V4 (TF's NMSShapeFn) and V5 (SoftNMSShapeFn): boxes [n, 4],
// scores [n], scalar arguments; selected_indices (and V5's selected_scores) are [?], or
// [max_output_size] when padded to a known max_output_size; valid_outputs is a scalar.
absl::Status NonMaxSuppressionShape(Ctx& c, int scalars, bool padded_form) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape boxes, WithRank(c.input(0), 2));
  DFLOW_ASSIGN_OR_RETURN(PartialShape scores, WithRank(c.input(1), 1));
  for (int i = 2; i < 2 + scalars; ++i) DFLOW_RETURN_IF_ERROR(WithRank(c.input(i), 0).status());
  DFLOW_RETURN_IF_ERROR(MergeDims(boxes.dim(0), scores.dim(0)).status());
  DFLOW_RETURN_IF_ERROR(MergeDims(boxes.dim(1), 4).status());
  int64_t selected = kUnknown;
  if (padded_form && BoolAttr(c, "pad_to_max_output_size", false)) {
    const std::optional<int64_t> max = ScalarValue(c, 2);
    if (max.has_value() && *max < 0) {
      return Invalid(absl::StrCat(
          "Dimension size, given by scalar input 2, must be non-negative but is ", *max));
    }
    selected = max.value_or(kUnknown);
  }
  const int vectors = c.num_outputs() - (padded_form ? 1 : 0);
  for (int i = 0; i < vectors; ++i) c.set_output(i, PartialShape(std::vector<int64_t>{selected}));
  if (padded_form) c.set_output(c.num_outputs() - 1, PartialShape(std::vector<int64_t>{}));
  return absl::OkStatus();
}

// CropAndResize: image [batch, h, w, depth], boxes [n, 4], box_ind [n], crop_size [2];
// the crops are [n, crop_h, crop_w, depth], the sizes known when crop_size is.
absl::Status CropAndResizeShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape image, WithRank(c.input(0), 4));
  DFLOW_ASSIGN_OR_RETURN(PartialShape boxes, WithRank(c.input(1), 2));
  DFLOW_ASSIGN_OR_RETURN(PartialShape box_ind, WithRank(c.input(2), 1));
  DFLOW_ASSIGN_OR_RETURN(int64_t num_boxes, MergeDims(boxes.dim(0), box_ind.dim(0)));
  DFLOW_RETURN_IF_ERROR(MergeDims(boxes.dim(1), 4).status());
  DFLOW_ASSIGN_OR_RETURN(PartialShape size, WithRank(c.input(3), 1));
  DFLOW_RETURN_IF_ERROR(MergeDims(size.dim(0), 2).status());
  int64_t height = kUnknown, width = kUnknown;
  const std::vector<int64_t>* value = c.input_value(3);
  if (value != nullptr && value->size() == 2) {
    if ((*value)[0] >= 0) height = (*value)[0];
    if ((*value)[1] >= 0) width = (*value)[1];
  }
  c.set_output(0, PartialShape(std::vector<int64_t>{num_boxes, height, width, image.dim(3)}));
  return absl::OkStatus();
}

}  // namespace

void RegisterNNShapeFns(ShapeRegistry& r) {
  RegisterAll(r, {"Softmax", "LogSoftmax"}, SoftmaxShape);
  RegisterAll(r, {"BiasAdd", "BiasAddV1"}, BiasAddShape);
  r.Register("Conv2D", [](Ctx& c) { return Conv2DShape(c, false); });
  r.Register("DepthwiseConv2dNative", [](Ctx& c) { return Conv2DShape(c, true); });
  RegisterAll(r, {"MaxPool", "AvgPool"}, PoolShape);
  r.Register("TopKV2", TopKShape);
  RegisterAll(r, {"ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic"}, ResizeShape);
  r.Register("Conv2DBackpropInput", Conv2DBackpropInputShape);
  r.Register("NonMaxSuppressionV3", [](Ctx& c) { return NonMaxSuppressionShape(c, 3, false); });
  r.Register("NonMaxSuppressionV4", [](Ctx& c) { return NonMaxSuppressionShape(c, 3, true); });
  r.Register("NonMaxSuppressionV5", [](Ctx& c) { return NonMaxSuppressionShape(c, 4, true); });
  r.Register("CropAndResize", CropAndResizeShape);
}

}  // namespace shape_fn_util
}  // namespace dflow
