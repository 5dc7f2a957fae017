// Host-side entry points of conv_grad_kernels.cu: col2im for Conv2DBackpropInput and the
// NHWC max/average pooling gradients, float. Each enqueues on `stream` and returns
// cudaGetLastError(). All three run one thread per element of the input-shaped result and
// sum what reaches it in a fixed order: deterministic, no atomics.
// Shared by nvcc and the host compiler: CUDA runtime types only.
#ifndef DFLOW_KERNELS_CUDA_CONV_GRAD_LAUNCHERS_H_
#define DFLOW_KERNELS_CUDA_CONV_GRAD_LAUNCHERS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/launchers.h"  // WindowGeometry

namespace dflow::cuda {

// The inverse of LaunchIm2Col: in[b, ih, iw, c] = the sum of every cols entry im2col would
// have copied from it (cols laid out as LaunchIm2Col writes them, for `g.batch` images),
// over (kh, kw) in row-major order. Overwrites `in`.
cudaError_t LaunchCol2Im(const float* cols, float* in, const WindowGeometry& g,
                         cudaStream_t stream);

// MaxPoolGrad: out[b, ih, iw, c] = the sum of grad[b, oh, ow, c] over the windows whose
// first maximum of `in` (row-major scan, kernels/cpu/max_pool_grad_op.cc's rule: a later
// element wins only when it compares greater) is this element, in (oh, ow) order.
// `in` and `out` have the input's geometry, `grad` the output's. Padding is ignored.
cudaError_t LaunchMaxPoolGrad(const float* in, const float* grad, float* out,
                              const WindowGeometry& g, cudaStream_t stream);

// AvgPoolGrad: out[b, ih, iw, c] = the sum over the windows containing it, in (oh, ow)
// order, of grad[b, oh, ow, c] / (the window's number of in-image elements).
cudaError_t LaunchAvgPoolGrad(const float* grad, float* out, const WindowGeometry& g,
                              cudaStream_t stream);

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_CONV_GRAD_LAUNCHERS_H_
