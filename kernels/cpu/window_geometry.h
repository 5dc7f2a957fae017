// TensorFlow's sliding-window rules shared by the convolution and pooling kernels (and
// MaxPoolGrad): the data_format, padding and explicit_paddings attrs, and how an input
// dim, a window and a padding mode give the output size and the padding on each side
// (TF's GetWindowedOutputSizeVerbose).
#ifndef DFLOW_KERNELS_CPU_WINDOW_GEOMETRY_H_
#define DFLOW_KERNELS_CPU_WINDOW_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dflow {

enum class Padding { kSame, kValid, kExplicit };

// "SAME", "VALID" or "EXPLICIT" (the last only where `allow_explicit`).
absl::StatusOr<Padding> ParsePadding(const std::string& padding, bool allow_explicit);

// Positions of the four dims of an image batch in a 4-D tensor.
struct ImageLayout {
  bool nchw = false;
  int batch = 0;
  int height = 1;
  int width = 2;
  int channel = 3;
};

// "NHWC" or "NCHW".
absl::StatusOr<ImageLayout> ParseDataFormat(const std::string& format);

// The dims of a 4-D image batch tensor in `layout`'s order.
std::vector<int64_t> ImageDims(const ImageLayout& layout, int64_t batch, int64_t height,
                               int64_t width, int64_t channels);

// TF's CheckValidPadding for 4-D images: the explicit_paddings attr `pads` (8 values,
// a before/after pair per dim in `layout`'s order) must be empty unless `padding` is
// EXPLICIT, and then nonnegative and zero on the batch and depth dims. Returns the
// spatial pads {top, bottom, left, right} (zeros unless EXPLICIT).
absl::StatusOr<std::vector<int64_t>> ParseExplicitPaddings(Padding padding,
                                                           const std::vector<int64_t>& pads,
                                                           const ImageLayout& layout);

// One spatial dim of a sliding window. The caller sets the inputs; ComputeWindow sets
// `output` and, for SAME, the pads (TF puts the odd pad after).
struct WindowDim {
  int64_t input = 0;
  int64_t size = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_before = 0;  // input for EXPLICIT, output for SAME, 0 for VALID
  int64_t pad_after = 0;
  int64_t output = 0;
};

// TF's output-size rule. INVALID_ARGUMENT (TF's text) when the output would be negative
// or the window is degenerate. An output of 0 is valid (an empty result).
absl::Status ComputeWindow(Padding padding, WindowDim* dim);

// TF's PoolParameters check on a pool's explicit pads: each smaller than the window
// ("Top padding 3 needs to be smaller than the window size 3").
absl::Status CheckExplicitPoolPads(const WindowDim& rows, const WindowDim& cols);

// Checks a list(int) attr of 4 values (strides, dilations, ksize) whose batch and depth
// entries must be 1 and spatial entries positive; returns {height value, width value}.
// `what` names the attr in errors ("strides").
absl::StatusOr<std::vector<int64_t>> SpatialPairFromFour(const std::vector<int64_t>& values,
                                                         const ImageLayout& layout,
                                                         const std::string& what);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_WINDOW_GEOMETRY_H_
