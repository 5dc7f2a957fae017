// LRN and LRNGrad: local response normalization across the channels of NHWC images, float
// and half, as TF 2.21's CPU kernels compute them (lrn_op.cc). Per pixel, with r the
// depth_radius and the window of channel j the channels [j - r, j + r] that exist:
//   sqr_sum[j] = sum of x[k]^2 over j's window
//   output[j]  = x[j] / (bias + alpha * sqr_sum[j]) ^ beta
// in TF's operations and order:
//  - half computes as Eigen::half does: every operation in float, rounded to half; bias,
//    alpha and beta are rounded to half first (TF stores them as T), and beta is compared
//    with 0.5 and 1 after that rounding. Half results match TF bit for bit.
//  - LRN, up to 384 channels or for other betas (TF's band-matrix product): the window's
//    squares summed in channel order, times alpha, plus bias. A square that is not finite
//    makes every channel outside its window NaN, as TF's inf * 0 in the band product does.
//    Past 384 channels with beta 0.5 or 1 (TF's SingleThreadedLRN): squares times alpha,
//    added to a running sum as the window reaches them and subtracted as it leaves.
//    Then x * (1 / d) for beta 1, x * (1 / sqrt(d)) for 0.5, else x * exp(log(d) * -beta).
//    TF's float 1 / d and 1 / sqrt(d) use Eigen's approximate reciprocal instructions, so
//    float outputs may differ from TF's in the last bit or two.
//  - LRNGrad: TF's loop (float matches bit for bit). For each channel j whose gradient g
//    is nonzero: N = alpha * sqr_sum[j] + bias, then for each k in j's window
//    out[k] += ((x[k] * (-2 * alpha * beta * y[j])) / N + (k == j ? N^-beta : 0)) * g.
// This target is built without -mfma on purpose: fused multiply-adds would round the sums
// differently from TF's binary.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// Rounds a float intermediate as one T operation would: identity for float, to half and
// back for Half (the only types TF registers LRN for on the CPU).
template <typename T>
inline float Round(float v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half::FromFloat(v).ToFloat();
  } else {
    return v;
  }
}

template <typename T>
inline float Load(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return v.ToFloat();
  } else {
    return v;
  }
}

template <typename T>
inline T Store(float v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half::FromFloat(v);
  } else {
    return v;
  }
}

// TF's SingleThreadedLRN serves depths past this when beta is 0.5 or 1.
constexpr int64_t kRunningSumDepthCutoff = 384;

// The attrs, with bias, alpha and beta already rounded to T as TF stores them.
struct LrnParams {
  int64_t depth_radius = 0;
  float bias = 0, alpha = 0, beta = 0;
};

template <typename T>
class LrnOpBase : public OpKernel {
 public:
  explicit LrnOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t depth_radius = 0;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("depth_radius", &depth_radius));
    // TF's FastBoundsCheck(depth_radius, int max): negative values fail it too.
    OP_REQUIRES(ctx, depth_radius >= 0 && depth_radius < std::numeric_limits<int>::max(),
                absl::InvalidArgumentError(
                    absl::StrCat("depth_radius = ", depth_radius, " larger than int max")));
    float bias = 0, alpha = 0, beta = 0;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("bias", &bias));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("alpha", &alpha));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("beta", &beta));
    params_ = {depth_radius, Round<T>(bias), Round<T>(alpha), Round<T>(beta)};
  }

 protected:
  LrnParams params_;
};

// ---------------------------------------------------------------------------------------
// LRN

// Scratch for one pixel's channels, reused across the pixels of one task.
struct LrnScratch {
  std::vector<float> squares, denominators;
  std::vector<double> prefix;  // wide windows: prefix sums of the finite squares
};

// Windows wider than this sum through prefix sums (O(depth) a pixel instead of
// O(depth x window): a huge depth_radius on many channels took minutes). TF's own wide
// windows are a band-matrix contraction with its own summation order, so no one order
// is TF's there; narrow windows keep the sequential sum that matches TF bit for bit.
constexpr int64_t kPrefixSumWindow = 64;

// The window [begin, end)'s sum of squares from prefix sums; `bad` counts the non-finite
// squares before each channel, `nan` the NaN ones.
float WindowSum(const std::vector<double>& prefix, const std::vector<double>& bad,
                const std::vector<double>& nan, int64_t begin, int64_t end) {
  if (nan[end] - nan[begin] > 0) return std::numeric_limits<float>::quiet_NaN();
  if (bad[end] - bad[begin] > 0) return std::numeric_limits<float>::infinity();
  return static_cast<float>(prefix[end] - prefix[begin]);
}

// TF's band-matrix path: d[j] = (sum of the window's squares) * alpha + bias.
template <typename T>
void BandDenominators(const T* in, int64_t depth, const LrnParams& p, LrnScratch* s) {
  float* squares = s->squares.data();
  // The band product multiplies every square by 1 or 0: a non-finite square outside a
  // window turns that window's sum into NaN.
  int64_t first_bad = depth, last_bad = -1;
  for (int64_t c = 0; c < depth; ++c) {
    const float x = Load(in[c]);
    squares[c] = Round<T>(x * x);
    if (!std::isfinite(squares[c])) {
      first_bad = std::min(first_bad, c);
      last_bad = c;
    }
  }
  const bool wide = std::min<int64_t>(depth, 2 * p.depth_radius + 1) > kPrefixSumWindow;
  std::vector<double> bad, nan;
  if (wide) {
    s->prefix.assign(depth + 1, 0.0);
    bad.assign(depth + 1, 0.0);
    nan.assign(depth + 1, 0.0);
    for (int64_t c = 0; c < depth; ++c) {
      const bool finite = std::isfinite(squares[c]);
      s->prefix[c + 1] = s->prefix[c] + (finite ? squares[c] : 0.0);
      bad[c + 1] = bad[c] + (finite ? 0.0 : 1.0);
      nan[c + 1] = nan[c] + (std::isnan(squares[c]) ? 1.0 : 0.0);
    }
  }
  for (int64_t j = 0; j < depth; ++j) {
    const int64_t begin = std::max<int64_t>(0, j - p.depth_radius);
    const int64_t end = std::min<int64_t>(depth, j + p.depth_radius + 1);
    float sum = 0;
    if (wide) {
      sum = Round<T>(WindowSum(s->prefix, bad, nan, begin, end));
    } else {
      for (int64_t k = begin; k < end; ++k) sum = Round<T>(sum + squares[k]);
    }
    if (first_bad < begin || last_bad >= end) sum = std::numeric_limits<float>::quiet_NaN();
    s->denominators[j] = Round<T>(Round<T>(sum * p.alpha) + p.bias);
  }
}

// TF's SingleThreadedLRN: a running sum of squares times alpha. TF pads the squares with
// depth_radius zeros on each side; adding or subtracting those zeros changes nothing, so
// they are skipped here.
template <typename T>
void RunningDenominators(const T* in, int64_t depth, const LrnParams& p, LrnScratch* s) {
  float* scaled = s->squares.data();
  for (int64_t c = 0; c < depth; ++c) {
    const float x = Load(in[c]);
    scaled[c] = Round<T>(Round<T>(x * x) * p.alpha);
  }
  const int64_t r = p.depth_radius;
  float sum = 0;
  for (int64_t k = 0; k < std::min(r, depth); ++k) sum = Round<T>(sum + scaled[k]);
  for (int64_t j = 0; j < depth; ++j) {
    if (j + r < depth) sum = Round<T>(sum + scaled[j + r]);
    s->denominators[j] = Round<T>(p.bias + sum);
    if (j >= r) sum = Round<T>(sum - scaled[j - r]);
  }
}

// out[c] = in[c] * d[c] ^ -beta in TF's three forms.
template <typename T>
void Normalize(const T* in, const float* d, int64_t depth, float beta, T* out) {
  if (beta == 1.0f) {
    for (int64_t c = 0; c < depth; ++c) out[c] = Store<T>(Load(in[c]) * Round<T>(1.0f / d[c]));
  } else if (beta == 0.5f) {
    for (int64_t c = 0; c < depth; ++c) {
      out[c] = Store<T>(Load(in[c]) * Round<T>(1.0f / std::sqrt(d[c])));
    }
  } else {
    for (int64_t c = 0; c < depth; ++c) {
      const float power = Round<T>(std::exp(Round<T>(Round<T>(std::log(d[c])) * -beta)));
      out[c] = Store<T>(Load(in[c]) * power);
    }
  }
}

template <typename T>
class LrnOp : public LrnOpBase<T> {
 public:
  using LrnOpBase<T>::LrnOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.shape().dims() == 4, KernelError(*ctx, "in must be 4-dimensional"));
    // TF also checks depth + depth_radius against int max, in int arithmetic that
    // overflows first, so that check never fails; it is left out.
    OP_REQUIRES(ctx, input.NumElements() < std::numeric_limits<int>::max(),
                KernelError(*ctx, "argument to LRN too large"));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    if (output->NumElements() == 0) return;
    const int64_t depth = input.shape().dim_size(3);
    Run(ctx, input.data<T>(), depth, input.NumElements() / depth, output->data<T>());
  }

 private:
  void Run(OpKernelContext* ctx, const T* in, int64_t depth, int64_t pixels, T* out) const {
    const LrnParams& p = this->params_;
    const bool running =
        depth > kRunningSumDepthCutoff && (p.beta == 0.5f || p.beta == 1.0f);
    const int64_t window = std::min<int64_t>(depth, 2 * p.depth_radius + 1);
    ParallelForElements(ctx, pixels, depth * (window + 20), [&](int64_t first, int64_t end) {
      LrnScratch s{std::vector<float>(depth), std::vector<float>(depth)};
      for (int64_t i = first; i < end; ++i) {
        const T* x = in + i * depth;
        if (running) {
          RunningDenominators(x, depth, p, &s);
        } else {
          BandDenominators(x, depth, p, &s);
        }
        Normalize(x, s.denominators.data(), depth, p.beta, out + i * depth);
      }
    });
  }
};

// ---------------------------------------------------------------------------------------
// LRNGrad

// One pixel's inputs as float (exact for half) and its output being accumulated.
struct LrnGradScratch {
  std::vector<float> grads, x, y, out;
};

// TF's LaunchLRNGrad<CPUDevice> body for one pixel, operation for operation.
template <typename T>
void LrnGradPixel(const LrnParams& p, float alpha_beta_2, int64_t depth, LrnGradScratch* s) {
  const float* x = s->x.data();
  float* out = s->out.data();
  std::fill_n(out, depth, 0.0f);
  for (int64_t j = 0; j < depth; ++j) {
    const float g = s->grads[j];
    if (g == 0.0f) continue;
    const int64_t begin = std::max<int64_t>(0, j - p.depth_radius);
    const int64_t end = std::min<int64_t>(depth, j + p.depth_radius + 1);
    float norm = 0;
    for (int64_t k = begin; k < end; ++k) norm = Round<T>(norm + Round<T>(x[k] * x[k]));
    norm = Round<T>(Round<T>(p.alpha * norm) + p.bias);
    const float power = Round<T>(std::pow(norm, -p.beta));
    const float activation_ab2 = Round<T>(alpha_beta_2 * s->y[j]);
    for (int64_t k = begin; k < end; ++k) {
      float dyi = Round<T>(Round<T>(x[k] * activation_ab2) / norm);
      if (k == j) dyi = Round<T>(dyi + power);
      dyi = Round<T>(dyi * g);
      out[k] = Round<T>(out[k] + dyi);
    }
  }
}

template <typename T>
void LoadPixel(const T* src, int64_t depth, std::vector<float>* dst) {
  for (int64_t c = 0; c < depth; ++c) (*dst)[c] = Load(src[c]);
}

template <typename T>
class LrnGradOp : public LrnOpBase<T> {
 public:
  using LrnOpBase<T>::LrnOpBase;

  void Compute(OpKernelContext* ctx) override {
    const TensorShape& grads = ctx->input(0).shape();
    const TensorShape& image = ctx->input(1).shape();
    const TensorShape& output_image = ctx->input(2).shape();
    OP_REQUIRES(ctx, grads.dims() == 4 && image.dims() == 4,
                KernelError(*ctx, "inputs must be 4-dimensional"));
    OP_REQUIRES(ctx, image == grads && output_image == grads,
                KernelError(*ctx, "input_grads, input_image, and out_image should have the "
                                  "same shape"));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, grads));
    if (output->NumElements() == 0) return;
    const int64_t depth = grads.dim_size(3);
    Run(ctx, depth, output->NumElements() / depth, output->data<T>());
  }

 private:
  void Run(OpKernelContext* ctx, int64_t depth, int64_t pixels, T* out) const {
    const LrnParams& p = this->params_;
    // TF's alpha_beta_2_ = T(-2) * alpha * beta, two T multiplications.
    const float alpha_beta_2 = Round<T>(Round<T>(-2.0f * p.alpha) * p.beta);
    const T* grads = ctx->input(0).data<T>();
    const T* x = ctx->input(1).data<T>();
    const T* y = ctx->input(2).data<T>();
    const int64_t window = std::min<int64_t>(depth, 2 * p.depth_radius + 1);
    ParallelForElements(ctx, pixels, depth * window * 4 + 40, [&](int64_t first, int64_t end) {
      LrnGradScratch s;
      for (std::vector<float>* v : {&s.grads, &s.x, &s.y, &s.out}) v->resize(depth);
      for (int64_t i = first; i < end; ++i) {
        const int64_t offset = i * depth;
        LoadPixel(grads + offset, depth, &s.grads);
        LoadPixel(x + offset, depth, &s.x);
        LoadPixel(y + offset, depth, &s.y);
        LrnGradPixel<T>(p, alpha_beta_2, depth, &s);
        for (int64_t c = 0; c < depth; ++c) out[offset + c] = Store<T>(s.out[c]);
      }
    });
  }
};

}  // namespace

// TF 2.21 registers both for float and half on the CPU (not bfloat16, which its OpDefs
// allow).
absl::Status RegisterLrnKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<LrnOp<float>>(CpuKernel("LRN").TypeConstraint<float>("T")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<LrnOp<Half>>(CpuKernel("LRN").TypeConstraint<Half>("T")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<LrnGradOp<float>>(CpuKernel("LRNGrad").TypeConstraint<float>("T")));
  return registry->Register<LrnGradOp<Half>>(CpuKernel("LRNGrad").TypeConstraint<Half>("T"));
}

}  // namespace dflow
