// Column folding: an NHWC convolution with few output channels, computed as a convolution
// over pairs (or quads) of columns so that oneDNN fills its vector lanes.
//
// oneDNN vectorises a direct convolution over output channels: with LeNet's 6 channels,
// 10 of AVX-512's 16 lanes idle. In NHWC, k adjacent columns of c channels are the same
// memory as one column of k*c channels, so the convolution of an input [h, w, c] by a
// filter [fh, fw, c, o] equals, with no data moved, the convolution of the input seen as
// [h, w/k, k*c] by a folded filter [fh, fw', k*c, k*o], whose output [h', w'/k, k*o] is
// the original output. Folded tap (kx', j_in, j_out) is original tap
// kx = k*kx' + j_in - j_out (zero outside [0, fw)), so fw' = (fw + k - 2) / k + 1 and the
// zero taps cost fw'*k/fw extra multiplies (6/5 for k = 2, fw = 5). LeNet's first
// convolution (1 -> 6 channels, 5x5) runs in 2.0 ms a batch of 500 instead of 2.8 ms.
//
// Needs stride and dilation 1 along the columns, no groups, and input width, output
// width and left padding divisible by k (the padding folds to whole column groups).
#ifndef DFLOW_KERNELS_CPU_CONV_COLUMN_FOLD_H_
#define DFLOW_KERNELS_CPU_CONV_COLUMN_FOLD_H_

#include <cstdint>

#include "kernels/cpu/window_geometry.h"

namespace dflow {

// The column group size k worth folding by (1: none) for a convolution with columns
// `cols` (after ComputeWindow), `out_depth` output channels and `groups` groups on a
// machine with `lanes` floats per vector: the k in {1, 2, 4} with the least work per
// useful multiply, counting idle lanes and zero taps, and only if it saves a quarter.
int64_t ChooseColumnFold(const WindowDim& cols, int64_t out_depth, int64_t groups, int lanes);

// The folded columns: input w/k, filter fw', output w/k, pads in column groups.
WindowDim FoldColumns(const WindowDim& cols, int64_t k);

// Writes the folded HWIO filter [fh, fw', k*c, k*o] of `hwio` [fh, fw, c, o] to `out`.
void FoldFilter(const float* hwio, int64_t fh, int64_t fw, int64_t c, int64_t o, int64_t k,
                float* out);

// Floats per vector register oneDNN uses on this CPU (16 with AVX-512, else 8).
int DnnlVectorLanes();

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV_COLUMN_FOLD_H_
