// im2col for Conv2D (the GEMM runs in cuBLAS) and NHWC max/average pooling, float.
#include <cmath>

#include "kernels/cuda/launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;

unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

__global__ void Im2ColKernel(const float* in, float* cols, WindowGeometry g, int64_t total) {
  const int64_t row_len = g.window_h * g.window_w * g.channels;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t row = i / row_len, col = i % row_len;
    const int64_t c = col % g.channels, kw = (col / g.channels) % g.window_w,
                  kh = col / (g.channels * g.window_w);
    const int64_t ow = row % g.out_w, oh = (row / g.out_w) % g.out_h,
                  b = row / (g.out_w * g.out_h);
    const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
    const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
    const bool inside = ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w;
    cols[i] = inside ? in[((b * g.in_h + ih) * g.in_w + iw) * g.channels + c] : 0.f;
  }
}

__global__ void PoolKernel(bool max_pool, const float* in, float* out, WindowGeometry g,
                           int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t c = i % g.channels, ow = (i / g.channels) % g.out_w,
                  oh = (i / (g.channels * g.out_w)) % g.out_h,
                  b = i / (g.channels * g.out_w * g.out_h);
    float acc = max_pool ? -INFINITY : 0.f;
    int64_t count = 0;
    for (int64_t kh = 0; kh < g.window_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int64_t kw = 0; kw < g.window_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_left + kw;
        if (iw < 0 || iw >= g.in_w) continue;
        const float v = in[((b * g.in_h + ih) * g.in_w + iw) * g.channels + c];
        acc = max_pool ? fmaxf(acc, v) : acc + v;
        ++count;
      }
    }
    out[i] = max_pool ? acc : (count > 0 ? acc / static_cast<float>(count) : 0.f);
  }
}

}  // namespace

cudaError_t LaunchIm2Col(const float* in, float* cols, const WindowGeometry& g,
                         cudaStream_t stream) {
  const int64_t total = g.batch * g.out_h * g.out_w * g.window_h * g.window_w * g.channels;
  if (total == 0) return cudaSuccess;
  Im2ColKernel<<<Blocks(total), kThreads, 0, stream>>>(in, cols, g, total);
  return cudaGetLastError();
}

cudaError_t LaunchPool(bool max_pool, const float* in, float* out, const WindowGeometry& g,
                       cudaStream_t stream) {
  const int64_t total = g.batch * g.out_h * g.out_w * g.channels;
  if (total == 0) return cudaSuccess;
  PoolKernel<<<Blocks(total), kThreads, 0, stream>>>(max_pool, in, out, g, total);
  return cudaGetLastError();
}

}  // namespace dflow::cuda
