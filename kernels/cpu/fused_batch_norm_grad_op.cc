// FusedBatchNormGrad, FusedBatchNormGradV2 and FusedBatchNormGradV3 (T = U = float), as
// TF's CPU kernel computes them from y_backprop, x, scale and the forward op's reserve
// spaces (reserve_space_1 = the mean, reserve_space_2 = the variance it normalized with:
// the batch's, uncorrected, in training; the population's in inference). Per channel,
// with inv = rsqrt(variance + epsilon), n elements and sums in double:
//
//   offset_backprop = sum(dy)
//   scale_backprop  = sum(dy * (x - mean)) * inv
//   training:  x_backprop = scale * inv * (dy - sum(dy) / n
//                                          - (x - mean) * inv^2 * sum(dy * (x - mean)) / n)
//   inference: x_backprop = dy * scale * inv
//
// reserve_space_3/4 (outputs 3 and 4) are empty, as on TF's CPU.
#include <algorithm>
#include <cmath>
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

// Per-channel sums of dy and of dy * (x - mean), in double (ShardedChannelSums: the same
// bits every run).
void ChannelSums(OpKernelContext* ctx, const ChannelView& v, const float* dy, const float* x,
                 const float* mean, std::vector<double>* sum_dy, std::vector<double>* sum_dy_xc) {
  const std::vector<double> sums =
      ShardedChannelSums(ctx, v, 2, 3 * v.channels * v.inner, [&](int64_t o, double* part) {
        for (int64_t c = 0; c < v.channels; ++c) {
          for (int64_t i = 0; i < v.inner; ++i) {
            const int64_t k = v.At(o, c, i);
            const double centered = static_cast<double>(x[k]) - mean[c];
            part[c] += dy[k];
            part[v.channels + c] += static_cast<double>(dy[k]) * centered;
          }
        }
      });
  sum_dy->assign(sums.begin(), sums.begin() + v.channels);
  sum_dy_xc->assign(sums.begin() + v.channels, sums.end());
}

class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format;
    OP_REQUIRES_OK(c, c->GetAttr("epsilon", &epsilon_));
    OP_REQUIRES_OK(c, c->GetAttr("is_training", &is_training_));
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_REQUIRES(c, format == "NHWC" || format == "NCHW" || format == "NDHWC" || format == "NCDHW",
                absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    channels_last_ = format == "NHWC" || format == "NDHWC";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy_t = ctx->input(0);
    const Tensor& x_t = ctx->input(1);
    OP_REQUIRES(ctx, dy_t.shape() == x_t.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "x and y_backprop must have same shape, but x has shape ",
                    x_t.shape().DebugString(), " and y_backprop has shape ",
                    dy_t.shape().DebugString())));
    OP_REQUIRES(ctx, x_t.shape().dims() == 4 || x_t.shape().dims() == 5,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4 or 5-dimensional", x_t.shape().DebugString())));
    const ChannelView v = ViewOf(x_t.shape(), channels_last_);
    const char* names[] = {"scale", "reserve_space_1", "reserve_space_2"};
    for (int i = 2; i <= 4; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).shape() == TensorShape({v.channels}),
                  absl::InvalidArgumentError(absl::StrCat(
                      names[i - 2], " must be 1-dimensional of size ", v.channels, ", got ",
                      ctx->input(i).shape().DebugString())));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * dx_t, ctx->allocate_output(0, x_t.shape()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * dscale_t, ctx->allocate_output(1, TensorShape({v.channels})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * doffset_t, ctx->allocate_output(2, TensorShape({v.channels})));
    for (int i = 3; i < num_outputs(); ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape({0})).status());
    }
    const float* dy = dy_t.data<float>();
    const float* x = x_t.data<float>();
    const float* scale = ctx->input(2).data<float>();
    const float* mean = ctx->input(3).data<float>();
    const float* variance = ctx->input(4).data<float>();
    std::vector<double> sum_dy, sum_dy_xc;
    ChannelSums(ctx, v, dy, x, mean, &sum_dy, &sum_dy_xc);
    std::vector<double> inv(v.channels), a(v.channels), b(v.channels), shift(v.channels);
    const double n = std::max<int64_t>(v.PerChannel(), 1);
    for (int64_t c = 0; c < v.channels; ++c) {
      inv[c] = 1.0 / std::sqrt(static_cast<double>(variance[c]) + epsilon_);
      dscale_t->data<float>()[c] = static_cast<float>(sum_dy_xc[c] * inv[c]);
      doffset_t->data<float>()[c] = static_cast<float>(sum_dy[c]);
      // dx = a * dy + b * (x - mean) + shift
      a[c] = scale[c] * inv[c];
      b[c] = is_training_ ? -a[c] * inv[c] * inv[c] * sum_dy_xc[c] / n : 0.0;
      shift[c] = is_training_ ? -a[c] * sum_dy[c] / n : 0.0;
    }
    float* dx = dx_t->data<float>();
    ParallelForElements(ctx, v.outer, 4 * v.channels * v.inner, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        for (int64_t c = 0; c < v.channels; ++c) {
          for (int64_t i = 0; i < v.inner; ++i) {
            const int64_t k = v.At(o, c, i);
            dx[k] = static_cast<float>(a[c] * dy[k] + b[c] * (static_cast<double>(x[k]) - mean[c]) +
                                       shift[c]);
          }
        }
      }
    });
  }

 private:
  float epsilon_ = 1e-4f;
  bool is_training_ = true;
  bool channels_last_ = true;
};

}  // namespace

absl::Status RegisterFusedBatchNormGradKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<FusedBatchNormGradOp>(
      KernelDefBuilder("FusedBatchNormGrad").Device("CPU").TypeConstraint<float>("T")));
  for (const char* op : {"FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<FusedBatchNormGradOp>(
        KernelDefBuilder(op).Device("CPU").TypeConstraint<float>("T").TypeConstraint<float>("U")));
  }
  return absl::OkStatus();
}

}  // namespace dflow
