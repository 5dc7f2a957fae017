// _DflowScaleShift (graph/scale_shift_fusion.h): y = activation(x * scale + shift), the
// inference batch norm a convolution could not absorb (DenseNet's and ResNetV2's
// pre-activation: batch norm -> Relu -> convolution), in one pass over x instead of the
// three passes of Mul, Add and Relu.
//
// scale and shift are per-channel vectors of C values shaped [C] or [1, ..., 1, C] (or
// scalars, C = 1). The result is exactly Mul's then Add's then the activation's: the
// same broadcast shape, the same float roundings (a product then a sum; no contraction
// into a fused multiply-add under -std=c++17), and Mul's error for shapes that do not
// broadcast.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

enum class Activation { kNone, kRelu, kRelu6 };

// Where each output element's x value and channel come from.
struct ScaleShiftShape {
  TensorShape output;
  int64_t channels = 1;  // C, scale's and shift's length
  int64_t width = 1;     // the output's innermost dim
  bool x_per_row = false;  // x's innermost dim is 1, broadcast across the width
};

absl::StatusOr<ScaleShiftShape> BroadcastShape(const TensorShape& x, const TensorShape& scale) {
  ScaleShiftShape s;
  s.channels = scale.num_elements();
  const int64_t x_last = x.dims() == 0 ? 1 : x.dim_size(x.dims() - 1);
  const int rank = std::max(x.dims(), scale.dims());
  std::vector<int64_t> dims(rank, 1);
  for (int i = 0; i < x.dims(); ++i) dims[rank - x.dims() + i] = x.dim_size(i);
  if (rank == 0) return s;  // scalars
  if (x_last == s.channels || s.channels == 1) {
    dims[rank - 1] = x_last;
  } else if (x_last == 1) {
    dims[rank - 1] = s.channels;
    s.x_per_row = true;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("Incompatible shapes: ", x.DebugString(), " vs. ", scale.DebugString()));
  }
  s.width = dims[rank - 1];
  DFLOW_ASSIGN_OR_RETURN(s.output, TensorShape::Make(dims));
  return s;
}

template <Activation kActivation>
inline float Activate(float v) {
  if (kActivation == Activation::kRelu) return v > 0.0f ? v : 0.0f;
  if (kActivation == Activation::kRelu6) return std::min(std::max(v, 0.0f), 6.0f);
  return v;
}

// Rows [begin, end) of the output, `width` values each.
template <Activation kActivation>
void ScaleShiftRows(const ScaleShiftShape& s, const float* x, const float* scale,
                    const float* shift, int64_t begin, int64_t end, float* y) {
  for (int64_t r = begin; r < end; ++r) {
    float* out = y + r * s.width;
    if (s.x_per_row) {
      const float v = x[r];
      for (int64_t c = 0; c < s.width; ++c) out[c] = Activate<kActivation>(v * scale[c] + shift[c]);
    } else if (s.channels == 1) {
      const float* in = x + r * s.width;
      for (int64_t c = 0; c < s.width; ++c) out[c] = Activate<kActivation>(in[c] * *scale + *shift);
    } else {
      const float* in = x + r * s.width;
      for (int64_t c = 0; c < s.width; ++c) out[c] = Activate<kActivation>(in[c] * scale[c] + shift[c]);
    }
  }
}

class ScaleShiftOp : public OpKernel {
 public:
  explicit ScaleShiftOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string activation;
    OP_REQUIRES_OK(c, c->GetAttr("activation", &activation));
    if (activation == "Relu") {
      activation_ = Activation::kRelu;
    } else if (activation == "Relu6") {
      activation_ = Activation::kRelu6;
    } else {
      OP_REQUIRES(c, activation.empty(),
                  absl::InvalidArgumentError(absl::StrCat("unknown activation ", activation)));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& shift = ctx->input(2);
    OP_REQUIRES(ctx, scale.shape() == shift.shape(),
                KernelError(*ctx, "scale and shift must have one shape: ",
                            scale.shape().DebugString(), " vs. ", shift.shape().DebugString()));
    for (int i = 0; i + 1 < scale.shape().dims(); ++i) {
      OP_REQUIRES(ctx, scale.shape().dim_size(i) == 1,
                  KernelError(*ctx, "scale must be a vector of channels, got ",
                              scale.shape().DebugString()));
    }
    absl::StatusOr<ScaleShiftShape> shape = BroadcastShape(x.shape(), scale.shape());
    OP_REQUIRES(ctx, shape.ok(), KernelError(*ctx, shape.status().message()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * y, ctx->allocate_output(0, shape->output));
    if (y->NumElements() == 0) return;
    const int64_t rows = y->NumElements() / shape->width;
    auto run = [&](auto rows_fn) {
      ParallelForElements(ctx, rows, shape->width, [&](int64_t begin, int64_t end) {
        rows_fn(*shape, x.data<float>(), scale.data<float>(), shift.data<float>(), begin, end,
                y->data<float>());
      });
    };
    switch (activation_) {
      case Activation::kNone: run(ScaleShiftRows<Activation::kNone>); break;
      case Activation::kRelu: run(ScaleShiftRows<Activation::kRelu>); break;
      case Activation::kRelu6: run(ScaleShiftRows<Activation::kRelu6>); break;
    }
  }

 private:
  Activation activation_ = Activation::kNone;
};

}  // namespace

absl::Status RegisterScaleShiftKernels(KernelRegistry* registry) {
  return registry->Register<ScaleShiftOp>(
      KernelDefBuilder("_DflowScaleShift").Device("CPU").TypeConstraint<float>("T"));
}

}  // namespace dflow
