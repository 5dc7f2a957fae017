// Winograd convolution: when a 3x3 convolution runs as oneDNN's Winograd algorithm
// (F(2x2, 3x3) or F(4x4, 3x3) on AVX-512), which reads and writes blocked activations
// (nChw16c) through the reorders of layout_reorders.h.
//
// A 3x3 convolution at stride 1 does 2.25x (F(2x2)) to 4x (F(4x4)) fewer multiplies as a
// Winograd transform. On this repository's AVX-512 Xeon, where oneDNN's direct kernels
// already run near the core's peak (189 GFLOP/s on VGG16's 64-channel layer), Winograd
// is 1.3-2.0x faster on VGG16's and ResNet50's large-image layers, reorders included,
// but slower on small images with many channels (256 channels at 14x14: 1.5 vs 1.0 ms)
// and on narrow outputs (DenseNet's 32 channels): PreferWinograd encodes where it won.
// The results differ from the direct algorithm's by rounding (about 1e-6 of the values
// on VGG16's layers); TensorFlow's oneDNN build may pick Winograd too.
#ifndef DFLOW_KERNELS_CPU_CONV_WINOGRAD_H_
#define DFLOW_KERNELS_CPU_CONV_WINOGRAD_H_

#include <cstdint>

#include "kernels/cpu/window_geometry.h"

namespace dflow {

// Whether a convolution (or one band of its output rows) of this geometry is worth
// trying as Winograd: a 3x3 window at stride 1 without dilation or groups, at least 16
// input and 48 output channels, and at least 392 output pixels (a 14x28 band). oneDNN
// may still refuse it (no AVX-512, a post-op its Winograd kernels lack); the caller then
// uses the direct algorithm.
bool PreferWinograd(const WindowDim& rows, const WindowDim& cols, int64_t groups,
                    int64_t in_depth, int64_t out_depth);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV_WINOGRAD_H_
