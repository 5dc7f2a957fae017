#include "kernels/cpu/window_geometry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace dflow {

absl::StatusOr<Padding> ParsePadding(const std::string& padding, bool allow_explicit) {
  if (padding == "SAME") return Padding::kSame;
  if (padding == "VALID") return Padding::kValid;
  if (padding == "EXPLICIT" && allow_explicit) return Padding::kExplicit;
  return absl::InvalidArgumentError(absl::StrCat("Unsupported padding '", padding, "'"));
}

absl::StatusOr<ImageLayout> ParseDataFormat(const std::string& format) {
  if (format == "NHWC") return ImageLayout{false, 0, 1, 2, 3};
  if (format == "NCHW") return ImageLayout{true, 0, 2, 3, 1};
  return absl::InvalidArgumentError(absl::StrCat("Unsupported data_format '", format, "'"));
}

std::vector<int64_t> ImageDims(const ImageLayout& layout, int64_t batch, int64_t height,
                               int64_t width, int64_t channels) {
  std::vector<int64_t> dims(4);
  dims[layout.batch] = batch;
  dims[layout.height] = height;
  dims[layout.width] = width;
  dims[layout.channel] = channels;
  return dims;
}

absl::StatusOr<std::vector<int64_t>> ParseExplicitPaddings(Padding padding,
                                                           const std::vector<int64_t>& pads,
                                                           const ImageLayout& layout) {
  if (padding != Padding::kExplicit) {
    if (!pads.empty()) {
      return absl::InvalidArgumentError(
          "explicit_paddings attribute must be empty if the padding attribute is not "
          "EXPLICIT");
    }
    return std::vector<int64_t>(4, 0);
  }
  if (pads.size() != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("explicit_paddings attribute must contain 8 values, but got: ", pads.size()));
  }
  for (int64_t p : pads) {
    if (p < 0) {
      return absl::InvalidArgumentError("All elements of explicit_paddings must be nonnegative");
    }
  }
  if (pads[2 * layout.batch] != 0 || pads[2 * layout.batch + 1] != 0 ||
      pads[2 * layout.channel] != 0 || pads[2 * layout.channel + 1] != 0) {
    return absl::InvalidArgumentError(
        "Nonzero explicit padding in the batch or depth dimensions is not supported");
  }
  return std::vector<int64_t>{pads[2 * layout.height], pads[2 * layout.height + 1],
                              pads[2 * layout.width], pads[2 * layout.width + 1]};
}

absl::Status ComputeWindow(Padding padding, WindowDim* dim) {
  if (dim->stride <= 0 || dim->dilation <= 0 || dim->size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Window size, stride and dilation must be positive, got size ", dim->size,
                     ", stride ", dim->stride, ", dilation ", dim->dilation));
  }
  // Past 2^31 the padding arithmetic below (and oneDNN, which reported an internal
  // error) overflows; no real window is that large (issue 15: dilations of 2^62).
  constexpr int64_t kMaxWindow = (int64_t{1} << 31) - 1;
  int64_t effective = 0;
  if (__builtin_mul_overflow(dim->size - 1, dim->dilation, &effective) ||
      effective >= kMaxWindow || dim->pad_before > kMaxWindow || dim->pad_after > kMaxWindow) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Window too large: size ", dim->size, " dilated by ", dim->dilation, " with pads ",
        dim->pad_before, " and ", dim->pad_after, " exceeds ", kMaxWindow, " elements"));
  }
  effective += 1;
  switch (padding) {
    case Padding::kValid:
      dim->pad_before = dim->pad_after = 0;
      dim->output = (dim->input - effective + dim->stride) / dim->stride;
      break;
    case Padding::kExplicit:
      dim->output =
          (dim->input + dim->pad_before + dim->pad_after - effective + dim->stride) / dim->stride;
      break;
    case Padding::kSame: {
      dim->output = (dim->input + dim->stride - 1) / dim->stride;
      const int64_t needed =
          std::max<int64_t>(0, (dim->output - 1) * dim->stride + effective - dim->input);
      dim->pad_before = needed / 2;
      dim->pad_after = needed - dim->pad_before;
      break;
    }
  }
  if (dim->output < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Computed output size would be negative: ", dim->output, " [input_size: ", dim->input,
        ", effective_filter_size: ", effective, ", stride: ", dim->stride, "]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SpatialPairFromFour(const std::vector<int64_t>& values,
                                                         const ImageLayout& layout,
                                                         const std::string& what) {
  if (values.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Sliding window ", what, " field must specify 4 dimensions, got ", values.size()));
  }
  if (values[layout.batch] != 1 || values[layout.channel] != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Current implementation does not yet support ", what,
                     " in the batch and depth dimensions (got [", values[0], ",", values[1], ",",
                     values[2], ",", values[3], "])"));
  }
  const int64_t h = values[layout.height];
  const int64_t w = values[layout.width];
  if (h <= 0 || w <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("Sliding window ", what,
                                                   " must be positive, got [", values[0], ",",
                                                   values[1], ",", values[2], ",", values[3], "]"));
  }
  return std::vector<int64_t>{h, w};
}

absl::Status CheckExplicitPoolPads(const WindowDim& rows, const WindowDim& cols) {
  const struct {
    const char* side;
    int64_t pad, window;
  } sides[] = {{"Top", rows.pad_before, rows.size},
               {"Bottom", rows.pad_after, rows.size},
               {"Left", cols.pad_before, cols.size},
               {"Right", cols.pad_after, cols.size}};
  for (const auto& s : sides) {
    if (s.pad >= s.window) {
      return absl::InvalidArgumentError(absl::StrCat(
          s.side, " padding ", s.pad, " needs to be smaller than the window size ", s.window));
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
