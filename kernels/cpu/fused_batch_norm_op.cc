// FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3 for T = U = float, as TF's CPU
// kernel computes them:
//
//   y = (x - mean[c]) * (rsqrt(variance[c] + epsilon) * scale[c]) + offset[c]
//
// Inference (is_training=false) uses the mean and variance inputs, and returns them as
// batch_mean and batch_variance. Training uses the batch's statistics over every axis but
// the channels (the variance divided by n), and returns as batch_mean/batch_variance the
// running averages (1 - f) * old + f * batch (f = exponential_avg_factor; with f = 1 the
// old values are not read and may be empty), the variance corrected by n / (n - 1)
// (Bessel; none for n = 1); reserve_space_1/2 then hold the batch mean and the
// uncorrected variance. In inference TF leaves the reserve spaces uninitialised (its
// graph mode hands back zeros); here they are zeros. V3's reserve_space_3 is a scalar 0.
// An empty x gives NaN batch_mean and batch_variance, as TF's kernel does.
//
// x is 4-D (NHWC, NCHW) or 5-D (NDHWC, NCDHW): channels last or second. The statistics
// are accumulated in double; per element it is one multiply-add, so it runs as loops
// sharded over the pool rather than as a oneDNN primitive.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/channel_view.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// The per-channel affine map the op applies: y = (x - mean) * factor + offset.
struct ChannelAffine {
  std::vector<float> mean, factor, offset;
};

ChannelAffine MakeAffine(const float* mean, const float* variance, const float* scale,
                         const float* offset, int64_t channels, float epsilon) {
  ChannelAffine a;
  a.mean.assign(mean, mean + channels);
  a.offset.assign(offset, offset + channels);
  a.factor.resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a.factor[c] = 1.0f / std::sqrt(variance[c] + epsilon) * scale[c];
  }
  return a;
}

// y = affine(x) over outer blocks [begin, end).
void ApplyAffine(const ChannelView& v, const ChannelAffine& a, const float* x, float* y,
                 int64_t begin, int64_t end) {
  const float* mean = a.mean.data();
  const float* factor = a.factor.data();
  const float* offset = a.offset.data();
  for (int64_t o = begin; o < end; ++o) {
    const float* xo = x + o * v.channels * v.inner;
    float* yo = y + o * v.channels * v.inner;
    if (v.inner == 1) {  // channels last: one contiguous row of channels
      for (int64_t c = 0; c < v.channels; ++c) yo[c] = (xo[c] - mean[c]) * factor[c] + offset[c];
      continue;
    }
    for (int64_t c = 0; c < v.channels; ++c) {
      const float m = mean[c], f = factor[c], b = offset[c];
      const float* xc = xo + c * v.inner;
      float* yc = yo + c * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) yc[i] = (xc[i] - m) * f + b;
    }
  }
}

// Per-channel sums of (x - center[c])^power (power 1 or 2) over the whole view, in
// double (ShardedChannelSums: the same bits every run).
std::vector<double> ChannelSums(OpKernelContext* ctx, const ChannelView& v, const float* x,
                                const std::vector<double>& center, int power) {
  return ShardedChannelSums(ctx, v, 1, 2 * v.channels * v.inner, [&](int64_t o, double* sums) {
    const float* xo = x + o * v.channels * v.inner;
    for (int64_t c = 0; c < v.channels; ++c) {
      double sum = 0.0;
      for (int64_t i = 0; i < v.inner; ++i) {
        const double d = xo[c * v.inner + i] - center[c];
        sum += power == 1 ? d : d * d;
      }
      sums[c] += sum;
    }
  });
}

// The batch's mean and (biased) variance per channel. REQUIRES: v.PerChannel() > 0.
void BatchMoments(OpKernelContext* ctx, const ChannelView& v, const float* x,
                  std::vector<float>* mean, std::vector<float>* variance) {
  const double n = static_cast<double>(v.PerChannel());
  std::vector<double> m = ChannelSums(ctx, v, x, std::vector<double>(v.channels, 0.0), 1);
  for (double& s : m) s /= n;
  const std::vector<double> squares = ChannelSums(ctx, v, x, m, 2);
  mean->resize(v.channels);
  variance->resize(v.channels);
  for (int64_t c = 0; c < v.channels; ++c) {
    (*mean)[c] = static_cast<float>(m[c]);
    (*variance)[c] = static_cast<float>(squares[c] / n);
  }
}

class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format;
    OP_REQUIRES_OK(c, c->GetAttr("epsilon", &epsilon_));
    OP_REQUIRES_OK(c, c->GetAttr("is_training", &is_training_));
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    // Graphs written before TF 2.2 have no exponential_avg_factor: 1 is its default.
    if (c->HasAttr("exponential_avg_factor")) {
      OP_REQUIRES_OK(c, c->GetAttr("exponential_avg_factor", &avg_factor_));
    }
    OP_REQUIRES(c, format == "NHWC" || format == "NCHW" || format == "NDHWC" || format == "NCDHW",
                absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    channels_last_ = format == "NHWC" || format == "NDHWC";
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckShapes(*ctx));
    const Tensor& x = ctx->input(0);
    const ChannelView v = ViewOf(x.shape(), channels_last_);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * y, ctx->allocate_output(0, x.shape()));
    std::vector<Tensor*> stats(4);  // batch_mean, batch_variance, reserve_space_1, _2
    for (int i = 0; i < 4; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, stats[i], ctx->allocate_output(i + 1, TensorShape({v.channels})));
      std::fill_n(stats[i]->data<float>(), v.channels, 0.0f);
    }
    if (num_outputs() == 6) {  // V3's reserve_space_3: a scalar TF sets to 0
      OP_ASSIGN_OR_RETURN(ctx, Tensor * reserve, ctx->allocate_output(5, TensorShape({})));
      *reserve->data<float>() = 0.0f;
    }
    // TF's test; outer * inner of an empty [2^40, 1, 1, 0] would loop 2^40 times (and
    // can overflow int64 for huge zero-sized shapes).
    if (x.NumElements() == 0) {
      for (int i = 0; i < 2; ++i) {
        std::fill_n(stats[i]->data<float>(), v.channels, std::numeric_limits<float>::quiet_NaN());
      }
      return;
    }
    if (is_training_) {
      Train(ctx, v, y, stats);
    } else {
      Infer(ctx, v, y, stats);
    }
  }

 private:
  // TF's checks, in its order and words.
  absl::Status CheckShapes(const OpKernelContext& ctx) const {
    const TensorShape& x = ctx.input(0).shape();
    if (x.dims() != 4 && x.dims() != 5) {
      return KernelError(ctx, "input must be 4 or 5-dimensional", x.DebugString());
    }
    const char* names[] = {"scale", "offset", "estimated_mean", "estimated_variance"};
    for (int i = 1; i <= 4; ++i) {
      const TensorShape& s = ctx.input(i).shape();
      if (s.dims() != 1) {
        return KernelError(ctx, names[i - 1], " must be 1-dimensional", s.DebugString());
      }
    }
    const int64_t channels = ViewOf(x, channels_last_).channels;
    for (int i = 1; i <= 2; ++i) {
      const int64_t n = ctx.input(i).NumElements();
      if (n != channels) {
        return KernelError(ctx, names[i - 1],
                           " must have the same number of elements as the channels of x, got ", n,
                           " and ", channels);
      }
    }
    if (is_training_ && avg_factor_ == 1.0f) return absl::OkStatus();  // old stats unread
    const char* prefix =
        is_training_ ? "When exponential_avg_factor != 1" : "When is_training=false";
    const char* stat_names[] = {"mean", "variance"};
    for (int i = 3; i <= 4; ++i) {
      const int64_t n = ctx.input(i).NumElements();
      if (n != channels) {
        return KernelError(ctx, prefix, ", ", stat_names[i - 3],
                           " must have the same number of elements as the channels of x, got ", n,
                           " and ", channels);
      }
    }
    return absl::OkStatus();
  }

  // y from the mean and variance inputs, which come back as batch_mean/batch_variance.
  void Infer(OpKernelContext* ctx, const ChannelView& v, Tensor* y,
             const std::vector<Tensor*>& stats) const {
    const float* mean = ctx->input(3).data<float>();
    const float* variance = ctx->input(4).data<float>();
    const ChannelAffine a = MakeAffine(mean, variance, ctx->input(1).data<float>(),
                                       ctx->input(2).data<float>(), v.channels, epsilon_);
    Normalize(ctx, v, a, y);
    std::copy_n(mean, v.channels, stats[0]->data<float>());
    std::copy_n(variance, v.channels, stats[1]->data<float>());
  }

  // y from the batch's statistics; the running averages and reserve spaces as TF's.
  void Train(OpKernelContext* ctx, const ChannelView& v, Tensor* y,
             const std::vector<Tensor*>& stats) const {
    const float* x = ctx->input(0).data<float>();
    std::vector<float> mean, variance;
    BatchMoments(ctx, v, x, &mean, &variance);
    const ChannelAffine a = MakeAffine(mean.data(), variance.data(), ctx->input(1).data<float>(),
                                       ctx->input(2).data<float>(), v.channels, epsilon_);
    Normalize(ctx, v, a, y);
    const int64_t n = v.PerChannel();
    const float bessel = n > 1 ? static_cast<float>(n) / static_cast<float>(n - 1) : 1.0f;
    const float f = avg_factor_;
    float* running_mean = stats[0]->data<float>();
    float* running_variance = stats[1]->data<float>();
    for (int64_t c = 0; c < v.channels; ++c) {
      running_mean[c] = mean[c];
      running_variance[c] = variance[c] * bessel;
      if (f != 1.0f) {
        running_mean[c] = (1.0f - f) * ctx->input(3).data<float>()[c] + f * mean[c];
        running_variance[c] =
            (1.0f - f) * ctx->input(4).data<float>()[c] + f * variance[c] * bessel;
      }
    }
    std::copy(mean.begin(), mean.end(), stats[2]->data<float>());
    std::copy(variance.begin(), variance.end(), stats[3]->data<float>());
  }

  void Normalize(OpKernelContext* ctx, const ChannelView& v, const ChannelAffine& a,
                 Tensor* y) const {
    const float* x = ctx->input(0).data<float>();
    float* out = y->data<float>();
    ParallelForElements(ctx, v.outer, 2 * v.channels * v.inner,
                        [&](int64_t begin, int64_t end) { ApplyAffine(v, a, x, out, begin, end); });
  }

  float epsilon_ = 0.0f;
  float avg_factor_ = 1.0f;
  bool is_training_ = true;
  bool channels_last_ = true;
};

}  // namespace

absl::Status RegisterFusedBatchNormKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<FusedBatchNormOp>(
      KernelDefBuilder("FusedBatchNorm").Device("CPU").TypeConstraint<float>("T")));
  for (const char* op : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<FusedBatchNormOp>(
        KernelDefBuilder(op).Device("CPU").TypeConstraint<float>("T").TypeConstraint<float>("U")));
  }
  return absl::OkStatus();
}

}  // namespace dflow
