// Row bands: a convolution of few images split into bands of output rows, so that a
// batch of 1 still runs on every thread of the session's pool.
//
// The convolution kernels split the batch over the pool (dnnl_util.h SplitBatch); a
// batch smaller than the pool leaves threads idle, and a batch of 1 (the common serving
// case) runs on one. A band of output rows [first, first + count) of an NHWC image
// reads a contiguous band of input rows and writes a contiguous band of output rows, so
// it is itself a convolution over dense NHWC memory: the same oneDNN primitive kinds
// (jit, not a strided fallback), with the padding of the image edges it touches. Bands
// in the middle of the image have no padding; the first has the top padding, the last
// the bottom padding, so a split needs at most three distinct primitives.
#ifndef DFLOW_KERNELS_CPU_CONV_ROW_BANDS_H_
#define DFLOW_KERNELS_CPU_CONV_ROW_BANDS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/cpu/window_geometry.h"

namespace dflow {

// One band of output rows and the input rows it reads.
struct RowBand {
  int64_t first_output_row = 0;
  int64_t first_input_row = 0;
  // The band's own window along the rows: `input` rows read from first_input_row,
  // `output` rows written from first_output_row, and the padding of the image edges
  // the band touches (consistent with oneDNN's output-size rule, so exact).
  WindowDim rows;
};

// The band of output rows [first, first + count) of a convolution whose rows are
// `rows` (after ComputeWindow); nullopt when the band reads no input row at all (it
// lies wholly in padding) or the range is not inside the output.
std::optional<RowBand> OutputRowBand(const WindowDim& rows, int64_t first, int64_t count);

// The output rows split into about `bands` bands of equal height (the last may be
// shorter; fewer bands when the rows do not divide evenly); nullopt when a band would
// read only padding.
std::optional<std::vector<RowBand>> SplitOutputRows(const WindowDim& rows, int64_t bands);

// How many bands each of `batch` images is split into so that `threads` workers each
// get work: 1 when the batch alone fills them, else at most ceil(threads / batch) and
// never so many that a band falls below `min_flops` or holds no output row.
int64_t RowBandsPerImage(int64_t batch, int64_t output_rows, double flops_per_image,
                         int threads, double min_flops);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV_ROW_BANDS_H_
