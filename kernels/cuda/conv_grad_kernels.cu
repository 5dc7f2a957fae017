// Device code of conv_grad_launchers.h: col2im and the NHWC pooling gradients, float.
//
// Every kernel gathers: one thread per element of the input-shaped result, which loops
// over the columns or windows that touch it. Nothing is scattered, so there are no
// atomics and the summation order is fixed (the pooling gradients add in (oh, ow) order
// from 0, kernels/cpu's order, so they match the CPU bit for bit).
#include "kernels/cuda/conv_grad_launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;

unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

// The output positions [*first, *last] of the windows (size `window`, dilation 1) that
// contain input position `i`; empty when *first > *last.
__device__ void WindowsContaining(int64_t i, int64_t pad, int64_t window, int64_t stride,
                                  int64_t out, int64_t* first, int64_t* last) {
  const int64_t start = i + pad - window;  // window o contains i iff o * stride > start
  *first = start < 0 ? 0 : start / stride + 1;
  const int64_t hi = (i + pad) / stride;
  *last = hi < out - 1 ? hi : out - 1;
}

// The element indices b, ih, iw, c of NHWC element `i` of the input-shaped result.
struct Pixel {
  int64_t b, h, w, c;
};
__device__ Pixel InputPixel(int64_t i, const WindowGeometry& g) {
  return {i / (g.channels * g.in_w * g.in_h), (i / (g.channels * g.in_w)) % g.in_h,
          (i / g.channels) % g.in_w, i % g.channels};
}

__global__ void Col2ImKernel(const float* cols, float* in, WindowGeometry g, int64_t total) {
  const int64_t row_len = g.window_h * g.window_w * g.channels;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const Pixel p = InputPixel(i, g);
    float sum = 0.f;
    for (int64_t kh = 0; kh < g.window_h; ++kh) {
      // oh * stride_h = ih + pad_top - kh * dilation_h, for an integral oh in range.
      const int64_t th = p.h + g.pad_top - kh * g.dilation_h;
      if (th < 0) break;  // decreases with kh
      if (th % g.stride_h != 0 || th / g.stride_h >= g.out_h) continue;
      const int64_t row0 = (p.b * g.out_h + th / g.stride_h) * g.out_w;
      for (int64_t kw = 0; kw < g.window_w; ++kw) {
        const int64_t tw = p.w + g.pad_left - kw * g.dilation_w;
        if (tw < 0) break;
        if (tw % g.stride_w != 0 || tw / g.stride_w >= g.out_w) continue;
        sum += cols[(row0 + tw / g.stride_w) * row_len + (kh * g.window_w + kw) * g.channels +
                    p.c];
      }
    }
    in[i] = sum;
  }
}

__global__ void MaxPoolGradKernel(const float* in, const float* grad, float* out,
                                  WindowGeometry g, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const Pixel p = InputPixel(i, g);
    const float* image = in + p.b * g.in_h * g.in_w * g.channels + p.c;
    int64_t oh0, oh1, ow0, ow1;
    WindowsContaining(p.h, g.pad_top, g.window_h, g.stride_h, g.out_h, &oh0, &oh1);
    WindowsContaining(p.w, g.pad_left, g.window_w, g.stride_w, g.out_w, &ow0, &ow1);
    float sum = 0.f;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      const int64_t y0 = max(oh * g.stride_h - g.pad_top, int64_t{0});
      const int64_t y1 = min(oh * g.stride_h - g.pad_top + g.window_h, g.in_h);
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const int64_t x0 = max(ow * g.stride_w - g.pad_left, int64_t{0});
        const int64_t x1 = min(ow * g.stride_w - g.pad_left + g.window_w, g.in_w);
        // The window's argmax, found again exactly as the CPU kernel scans it.
        int64_t best = -1;
        float best_value = 0.f;
        for (int64_t y = y0; y < y1; ++y) {
          for (int64_t x = x0; x < x1; ++x) {
            const float v = image[(y * g.in_w + x) * g.channels];
            if (best < 0 || best_value < v) {
              best = y * g.in_w + x;
              best_value = v;
            }
          }
        }
        if (best == p.h * g.in_w + p.w) {
          sum += grad[((p.b * g.out_h + oh) * g.out_w + ow) * g.channels + p.c];
        }
      }
    }
    out[i] = sum;
  }
}

__global__ void AvgPoolGradKernel(const float* grad, float* out, WindowGeometry g,
                                  int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const Pixel p = InputPixel(i, g);
    int64_t oh0, oh1, ow0, ow1;
    WindowsContaining(p.h, g.pad_top, g.window_h, g.stride_h, g.out_h, &oh0, &oh1);
    WindowsContaining(p.w, g.pad_left, g.window_w, g.stride_w, g.out_w, &ow0, &ow1);
    float sum = 0.f;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      const int64_t y0 = max(oh * g.stride_h - g.pad_top, int64_t{0});
      const int64_t y1 = min(oh * g.stride_h - g.pad_top + g.window_h, g.in_h);
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const int64_t x0 = max(ow * g.stride_w - g.pad_left, int64_t{0});
        const int64_t x1 = min(ow * g.stride_w - g.pad_left + g.window_w, g.in_w);
        // The CPU divides each share by the in-image count, then adds it (same rounding).
        const float count = static_cast<float>((y1 - y0) * (x1 - x0));
        sum += grad[((p.b * g.out_h + oh) * g.out_w + ow) * g.channels + p.c] / count;
      }
    }
    out[i] = sum;
  }
}

int64_t InputElements(const WindowGeometry& g) {
  return g.batch * g.in_h * g.in_w * g.channels;
}

}  // namespace

cudaError_t LaunchCol2Im(const float* cols, float* in, const WindowGeometry& g,
                         cudaStream_t stream) {
  const int64_t total = InputElements(g);
  if (total == 0) return cudaSuccess;
  Col2ImKernel<<<Blocks(total), kThreads, 0, stream>>>(cols, in, g, total);
  return cudaGetLastError();
}

cudaError_t LaunchMaxPoolGrad(const float* in, const float* grad, float* out,
                              const WindowGeometry& g, cudaStream_t stream) {
  const int64_t total = InputElements(g);
  if (total == 0) return cudaSuccess;
  MaxPoolGradKernel<<<Blocks(total), kThreads, 0, stream>>>(in, grad, out, g, total);
  return cudaGetLastError();
}

cudaError_t LaunchAvgPoolGrad(const float* grad, float* out, const WindowGeometry& g,
                              cudaStream_t stream) {
  const int64_t total = InputElements(g);
  if (total == 0) return cudaSuccess;
  AvgPoolGradKernel<<<Blocks(total), kThreads, 0, stream>>>(grad, out, g, total);
  return cudaGetLastError();
}

}  // namespace dflow::cuda
