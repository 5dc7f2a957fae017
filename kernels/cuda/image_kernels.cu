// Vision kernels, float: DepthwiseConv2dNative (NHWC, NCHW), FusedBatchNorm's affine map
// and training statistics, and the NHWC resizes (bilinear, nearest, bicubic) with
// kernels/cpu's arithmetic (resize_ops.cc, resize_bicubic_op.cc). Source coordinates and
// interpolation sums use the _rn intrinsics so that nvcc does not contract them into
// fused multiply-adds: the CPU kernels are built without FMA, and a contracted
// coordinate could land on the other side of a floor().
#include <cfloat>
#include <cmath>

#include "kernels/cuda/launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;

unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

#define DFLOW_GRID_LOOP(i, n)                                                         \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// ---- DepthwiseConv2dNative ----

__global__ void DepthwiseConvKernel(const float* in, const float* filter, float* out,
                                    WindowGeometry g, int64_t multiplier, bool nchw,
                                    int64_t total) {
  const int64_t out_depth = g.channels * multiplier;
  DFLOW_GRID_LOOP(i, total) {
    int64_t b, oh, ow, oc;
    if (nchw) {
      ow = i % g.out_w;
      oh = (i / g.out_w) % g.out_h;
      oc = (i / (g.out_w * g.out_h)) % out_depth;
      b = i / (g.out_w * g.out_h * out_depth);
    } else {
      oc = i % out_depth;
      ow = (i / out_depth) % g.out_w;
      oh = (i / (out_depth * g.out_w)) % g.out_h;
      b = i / (out_depth * g.out_w * g.out_h);
    }
    const int64_t c = oc / multiplier, m = oc % multiplier;
    float sum = 0.f;
    for (int64_t kh = 0; kh < g.window_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int64_t kw = 0; kw < g.window_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
        if (iw < 0 || iw >= g.in_w) continue;
        const int64_t src = nchw ? ((b * g.channels + c) * g.in_h + ih) * g.in_w + iw
                                 : ((b * g.in_h + ih) * g.in_w + iw) * g.channels + c;
        sum += in[src] * filter[((kh * g.window_w + kw) * g.channels + c) * multiplier + m];
      }
    }
    out[i] = sum;
  }
}

// ---- FusedBatchNorm ----

__global__ void BatchNormAffineKernel(const float* x, const float* scale, const float* offset,
                                      const float* mean, const float* variance, float epsilon,
                                      float* y, int64_t channels, int64_t inner, int64_t n) {
  DFLOW_GRID_LOOP(i, n) {
    const int64_t c = (i / inner) % channels;
    const float factor = 1.0f / sqrtf(variance[c] + epsilon) * scale[c];
    y[i] = (x[i] - mean[c]) * factor + offset[c];
  }
}

// Sum of every thread's `value` (pairwise up the block; blockDim.x a power of two).
__device__ double BlockSum(double value, double* part) {
  part[threadIdx.x] = value;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  const double sum = part[0];
  __syncthreads();
  return sum;
}

__global__ void BatchNormMomentsKernel(const float* x, ChannelView v, float factor,
                                       const float* old_mean, const float* old_variance,
                                       float* batch_mean, float* batch_variance,
                                       float* running_mean, float* running_variance) {
  __shared__ double part[kThreads];
  const int64_t n = v.outer * v.inner;
  for (int64_t c = blockIdx.x; c < v.channels; c += gridDim.x) {
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      sum += x[(j / v.inner) * v.channels * v.inner + c * v.inner + j % v.inner];
    }
    const double mean = BlockSum(sum, part) / static_cast<double>(n);
    double squares = 0.0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const double d = x[(j / v.inner) * v.channels * v.inner + c * v.inner + j % v.inner] - mean;
      squares += d * d;
    }
    const double variance = BlockSum(squares, part) / static_cast<double>(n);
    if (threadIdx.x == 0) {
      const float m = static_cast<float>(mean), var = static_cast<float>(variance);
      const float bessel =
          n > 1 ? static_cast<float>(n) / static_cast<float>(n - 1) : 1.0f;
      batch_mean[c] = m;
      batch_variance[c] = var;
      if (factor == 1.0f) {
        running_mean[c] = m;
        running_variance[c] = __fmul_rn(var, bessel);
      } else {
        running_mean[c] = __fadd_rn(__fmul_rn(1.0f - factor, old_mean[c]), __fmul_rn(factor, m));
        running_variance[c] = __fadd_rn(__fmul_rn(1.0f - factor, old_variance[c]),
                                        __fmul_rn(__fmul_rn(factor, var), bessel));
      }
    }
  }
}

// ---- Resizes ----

// The source coordinate of output index i: legacy i * scale, half-pixel
// (i + 0.5) * scale - 0.5 (bilinear, bicubic) or (i + 0.5) * scale (nearest).
__device__ float SourceCoordinate(int64_t i, float scale, bool half_pixel, bool minus_half) {
  if (!half_pixel) return __fmul_rn(static_cast<float>(i), scale);
  const float in = __fmul_rn(__fadd_rn(static_cast<float>(i), 0.5f), scale);
  return minus_half ? __fsub_rn(in, 0.5f) : in;
}

struct Lerp {
  int64_t lower, upper;
  float weight;
};

__device__ Lerp BilinearSource(int64_t i, float scale, bool half_pixel, int64_t in_size) {
  const float in = SourceCoordinate(i, scale, half_pixel, true);
  const float in_floor = floorf(in);
  Lerp l;
  const int64_t low = static_cast<int64_t>(in_floor);
  l.lower = low < 0 ? 0 : (low > in_size - 1 ? in_size - 1 : low);
  const int64_t up = static_cast<int64_t>(ceilf(in));
  l.upper = up < in_size - 1 ? up : in_size - 1;
  l.weight = __fsub_rn(in, in_floor);
  return l;
}

__device__ float LerpRn(float a, float b, float t) {
  return __fadd_rn(a, __fmul_rn(__fsub_rn(b, a), t));
}

__global__ void ResizeBilinearKernel(const float* in, float* out, ResizeGeometry g,
                                     int64_t total) {
  DFLOW_GRID_LOOP(i, total) {
    const int64_t c = i % g.channels, x = (i / g.channels) % g.out_w,
                  y = (i / (g.channels * g.out_w)) % g.out_h,
                  b = i / (g.channels * g.out_w * g.out_h);
    const Lerp ly = BilinearSource(y, g.height_scale, g.half_pixel_centers, g.in_h);
    const Lerp lx = BilinearSource(x, g.width_scale, g.half_pixel_centers, g.in_w);
    const float* image = in + b * g.in_h * g.in_w * g.channels;
    auto at = [&](int64_t row, int64_t col) { return image[(row * g.in_w + col) * g.channels + c]; };
    const float top = LerpRn(at(ly.lower, lx.lower), at(ly.lower, lx.upper), lx.weight);
    const float bottom = LerpRn(at(ly.upper, lx.lower), at(ly.upper, lx.upper), lx.weight);
    out[i] = LerpRn(top, bottom, ly.weight);
  }
}

__device__ int64_t NearestSource(int64_t i, float scale, bool align_corners, bool half_pixel,
                                 int64_t in_size) {
  const float in = SourceCoordinate(i, scale, half_pixel, false);
  int64_t source = align_corners ? static_cast<int64_t>(roundf(in))  // half away from zero
                                 : static_cast<int64_t>(floorf(in));
  if (source > in_size - 1) source = in_size - 1;
  if (half_pixel && source < 0) source = 0;
  return source;
}

template <typename T>
__global__ void ResizeNearestKernel(const T* in, T* out, ResizeGeometry g, int64_t total) {
  DFLOW_GRID_LOOP(i, total) {
    const int64_t c = i % g.channels, x = (i / g.channels) % g.out_w,
                  y = (i / (g.channels * g.out_w)) % g.out_h,
                  b = i / (g.channels * g.out_w * g.out_h);
    const int64_t sy = NearestSource(y, g.height_scale, g.align_corners, g.half_pixel_centers, g.in_h);
    const int64_t sx = NearestSource(x, g.width_scale, g.align_corners, g.half_pixel_centers, g.in_w);
    out[i] = in[((b * g.in_h + sy) * g.in_w + sx) * g.channels + c];
  }
}

constexpr int64_t kTableSize = 1 << 10;

// TF's InitCoeffsTable entries, computed in place: the cubic kernel (parameter a) at
// i / 1024 (`far` false) or at 1 + i / 1024 (`far` true), evaluated in double, stored as
// float.
__device__ float CubicCoefficient(double a, int64_t i, bool far) {
  float x = static_cast<float>(i * 1.0 / kTableSize);
  if (!far) return static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
  x = static_cast<float>(x + 1.0);
  return static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
}

struct Taps {
  int64_t index[4];
  float weight[4];
};

// kernels/cpu/resize_bicubic_op.cc ComputeTaps: Keys (a = -0.5) with half-pixel centers,
// out-of-image taps dropped and the rest renormalized; else a = -0.75, taps clamped.
__device__ Taps BicubicTaps(int64_t out, float scale, bool half_pixel, int64_t limit) {
  const float in_f = SourceCoordinate(out, scale, half_pixel, true);
  const int64_t in = static_cast<int64_t>(floorf(in_f));
  const int64_t offset =
      llrintf(__fmul_rn(__fsub_rn(in_f, static_cast<float>(in)), static_cast<float>(kTableSize)));
  const double a = half_pixel ? -0.5 : -0.75;
  const float raw[4] = {CubicCoefficient(a, offset, true), CubicCoefficient(a, offset, false),
                        CubicCoefficient(a, kTableSize - offset, false),
                        CubicCoefficient(a, kTableSize - offset, true)};
  Taps t;
  float sum = 0;
  for (int k = 0; k < 4; ++k) {
    const int64_t want = in - 1 + k;
    const int64_t bounded = want < 0 ? 0 : (want > limit - 1 ? limit - 1 : want);
    t.index[k] = bounded;
    t.weight[k] = (!half_pixel || bounded == want) ? raw[k] : 0.0f;
    sum = __fadd_rn(sum, t.weight[k]);
  }
  if (half_pixel && fabsf(sum) >= 1000.0f * FLT_MIN) {
    const float inverse = 1.0f / sum;
    for (int k = 0; k < 4; ++k) t.weight[k] = __fmul_rn(t.weight[k], inverse);
  }
  return t;
}

// v0 * w0 + v1 * w1 + v2 * w2 + v3 * w3, left to right, unfused.
__device__ float Dot4(const float* w, float v0, float v1, float v2, float v3) {
  float s = __fmul_rn(v0, w[0]);
  s = __fadd_rn(s, __fmul_rn(v1, w[1]));
  s = __fadd_rn(s, __fmul_rn(v2, w[2]));
  return __fadd_rn(s, __fmul_rn(v3, w[3]));
}

__global__ void ResizeBicubicKernel(const float* in, float* out, ResizeGeometry g,
                                    int64_t total) {
  DFLOW_GRID_LOOP(i, total) {
    const int64_t c = i % g.channels, x = (i / g.channels) % g.out_w,
                  y = (i / (g.channels * g.out_w)) % g.out_h,
                  b = i / (g.channels * g.out_w * g.out_h);
    const Taps ty = BicubicTaps(y, g.height_scale, g.half_pixel_centers, g.in_h);
    const Taps tx = BicubicTaps(x, g.width_scale, g.half_pixel_centers, g.in_w);
    const float* image = in + b * g.in_h * g.in_w * g.channels + c;
    float column[4];
    for (int j = 0; j < 4; ++j) {
      const float* col = image + tx.index[j] * g.channels;
      const int64_t row = g.in_w * g.channels;
      column[j] = Dot4(ty.weight, col[ty.index[0] * row], col[ty.index[1] * row],
                       col[ty.index[2] * row], col[ty.index[3] * row]);
    }
    out[i] = Dot4(tx.weight, column[0], column[1], column[2], column[3]);
  }
}

int64_t ResizedElements(const ResizeGeometry& g) {
  return g.batch * g.out_h * g.out_w * g.channels;
}

}  // namespace

cudaError_t LaunchDepthwiseConv(const float* in, const float* filter, float* out,
                                const WindowGeometry& g, int64_t multiplier, bool nchw,
                                cudaStream_t stream) {
  const int64_t total = g.batch * g.out_h * g.out_w * g.channels * multiplier;
  if (total == 0) return cudaSuccess;
  DepthwiseConvKernel<<<Blocks(total), kThreads, 0, stream>>>(in, filter, out, g, multiplier,
                                                              nchw, total);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormAffine(const float* x, const float* scale, const float* offset,
                                  const float* mean, const float* variance, float epsilon,
                                  float* y, const ChannelView& v, cudaStream_t stream) {
  const int64_t n = v.outer * v.channels * v.inner;
  if (n == 0) return cudaSuccess;
  BatchNormAffineKernel<<<Blocks(n), kThreads, 0, stream>>>(x, scale, offset, mean, variance,
                                                            epsilon, y, v.channels, v.inner, n);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormMoments(const float* x, const ChannelView& v, float factor,
                                   const float* old_mean, const float* old_variance,
                                   float* batch_mean, float* batch_variance, float* running_mean,
                                   float* running_variance, cudaStream_t stream) {
  if (v.channels == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(v.channels < 65535 ? v.channels : 65535);
  BatchNormMomentsKernel<<<blocks, kThreads, 0, stream>>>(x, v, factor, old_mean, old_variance,
                                                          batch_mean, batch_variance,
                                                          running_mean, running_variance);
  return cudaGetLastError();
}

cudaError_t LaunchResizeBilinear(const float* in, float* out, const ResizeGeometry& g,
                                 cudaStream_t stream) {
  const int64_t total = ResizedElements(g);
  if (total == 0) return cudaSuccess;
  ResizeBilinearKernel<<<Blocks(total), kThreads, 0, stream>>>(in, out, g, total);
  return cudaGetLastError();
}

cudaError_t LaunchResizeBicubic(const float* in, float* out, const ResizeGeometry& g,
                                cudaStream_t stream) {
  const int64_t total = ResizedElements(g);
  if (total == 0) return cudaSuccess;
  ResizeBicubicKernel<<<Blocks(total), kThreads, 0, stream>>>(in, out, g, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchResizeNearest(const T* in, T* out, const ResizeGeometry& g, cudaStream_t stream) {
  const int64_t total = ResizedElements(g);
  if (total == 0) return cudaSuccess;
  ResizeNearestKernel<T><<<Blocks(total), kThreads, 0, stream>>>(in, out, g, total);
  return cudaGetLastError();
}

template cudaError_t LaunchResizeNearest<float>(const float*, float*, const ResizeGeometry&,
                                                cudaStream_t);
template cudaError_t LaunchResizeNearest<double>(const double*, double*, const ResizeGeometry&,
                                                 cudaStream_t);
template cudaError_t LaunchResizeNearest<int32_t>(const int32_t*, int32_t*, const ResizeGeometry&,
                                                  cudaStream_t);
template cudaError_t LaunchResizeNearest<int64_t>(const int64_t*, int64_t*, const ResizeGeometry&,
                                                  cudaStream_t);

}  // namespace dflow::cuda
