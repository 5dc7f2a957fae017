// Activations with TF 2.21's formulas: LeakyRelu, Selu, Elu, Softsign and Softplus for
// float, double, half and bfloat16 (TF's CPU list for each). Each functor follows TF's
// Eigen expression step by step, because for half and bfloat16 Eigen rounds after every
// operation (checked bit for bit against TF 2.21); constants are rounded to T first, as
// TF's static_cast<T> does.
#include <cmath>
#include <limits>

#include "graph/status_macros.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {
namespace cwise {
namespace {

// TF's constant c as a T, in the type T computes in.
template <typename T>
ComputeType<T> Constant(double c) {
  return RoundTo<T>(static_cast<ComputeType<T>>(c));
}

// x < 0 ? e^x - 1 : x, with e^x - 1 as two steps (not expm1), as TF writes it.
struct EluFn {
  static constexpr int kCost = 20;
  template <typename T>
  static T Apply(T in) {
    const ComputeType<T> x = Widen(in);
    if (!(x < 0)) return in;
    return Narrow<T>(RoundTo<T>(std::exp(x)) - 1);
  }
};

// scale * x for x >= 0, scale * alpha * (e^x - 1) below (Klambauer et al.; TF's
// constants, scale * alpha folded into one).
struct SeluFn {
  static constexpr int kCost = 24;
  template <typename T>
  static T Apply(T in) {
    const ComputeType<T> x = Widen(in);
    if (x < 0) {
      const ComputeType<T> e = RoundTo<T>(RoundTo<T>(std::exp(x)) - 1);
      return Narrow<T>(Constant<T>(1.7580993408473768599402175208123) * e);
    }
    return Narrow<T>(Constant<T>(1.0507009873554804934193349852946) * x);
  }
};

// x / (|x| + 1); +-inf give NaN (inf / inf), as in TF.
struct SoftsignFn {
  static constexpr int kCost = 6;
  template <typename T>
  static T Apply(T in) {
    const ComputeType<T> x = Widen(in);
    return Narrow<T>(x / RoundTo<T>(std::fabs(x) + 1));
  }
};

// TF's three-way softplus: x above -t, e^x below t, else log1p(e^x), where
// t = log(epsilon of T) + 2 (about -13.9 for float, -34.0 for double): outside
// (t, -t) the result equals x or e^x to T's precision, and log never sees overflow.
struct SoftplusFn {
  static constexpr int kCost = 40;
  template <typename T>
  static T Apply(T in) {
    using C = ComputeType<T>;
    const C x = Widen(in);
    const C threshold = Threshold<T>();
    if (x > -threshold) return in;
    const C e = RoundTo<T>(std::exp(x));
    if (x < threshold) return Narrow<T>(e);
    return Narrow<T>(std::log1p(e));
  }

 private:
  template <typename T>
  static ComputeType<T> Threshold() {
    ComputeType<T> epsilon;
    if constexpr (std::is_same_v<T, Half>) {
      epsilon = 0x1p-13f;  // Eigen's NumTraits<half>::epsilon() (t = -7.0), not 2^-10
    } else if constexpr (std::is_same_v<T, Bfloat16>) {
      epsilon = 0x1p-7f;
    } else {
      epsilon = std::numeric_limits<T>::epsilon();
    }
    return RoundTo<T>(RoundTo<T>(std::log(epsilon)) + 2);
  }
};

// x > 0 ? x : x * alpha (so 0 gives 0 * alpha: -0 for a negative alpha, as TF).
// alpha is the "alpha" attr, rounded to T.
template <typename T, typename /*unused*/>
class LeakyReluOp : public OpKernel {
 public:
  explicit LeakyReluOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    float alpha = 0.2f;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("alpha", &alpha));
    alpha_ = Constant<T>(alpha);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const T* in = input.data<T>();  // read before forwarding empties input(0)
    const TensorShape shape = input.shape();
    Tensor* output = ctx->ForwardInputToOutput(0, 0, shape);
    if (output == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, output, ctx->allocate_output(0, shape));
    }
    T* out = output->data<T>();
    const ComputeType<T> alpha = alpha_;
    ParallelForElements(ctx, shape.num_elements(), 2, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const ComputeType<T> x = Widen(in[i]);
        out[i] = x > 0 ? in[i] : Narrow<T>(x * alpha);
      }
    });
  }

 private:
  ComputeType<T> alpha_{};
};

}  // namespace

absl::Status RegisterActivationKernels(KernelRegistry* r) {
  const TypeList<float, double, Half, Bfloat16> types;
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<LeakyReluOp, void>(r, "LeakyRelu", types)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, EluFn>(r, "Elu", types)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, SeluFn>(r, "Selu", types)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, SoftsignFn>(r, "Softsign", types)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, SoftplusFn>(r, "Softplus", types)));
  return absl::OkStatus();
}

}  // namespace cwise
}  // namespace dflow
