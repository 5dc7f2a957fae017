// Gradients of the activations in nn_ops.cc and activation_ops.cc, with TF 2.21's
// formulas (relu_op_functor.h): each reads the incoming gradients g and the forward op's
// input x ("features") or output y ("outputs"), both the same shape, as TF's
// ValidateInputsAreSameShape demands.
//   Relu6Grad      g * (0 < x < 6)          (a product, not a select: inf * 0 is NaN)
//   LeakyReluGrad  x > 0 ? g : g * alpha
//   EluGrad        y < 0 ? (y + 1) * g : g
//   SeluGrad       y < 0 ? g * (y + scale * alpha) : g * scale
//   SoftplusGrad   g / (e^-x + 1)
//   SoftsignGrad   g / (|x| + 1)^2
// Half and bfloat16 follow Eigen's expression step by step, rounding after each
// operation as Eigen's 16-bit types do (activation_ops.cc does the same for the forward
// ops), so they match TF's bits. Relu6Grad also takes TF's integer types.
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {
namespace cwise {
namespace {

// TF's constant c as a T (static_cast<T>(c)), in the type T computes in.
template <typename T>
ComputeType<T> Constant(double c) {
  return RoundTo<T>(static_cast<ComputeType<T>>(c));
}

// Functors without attrs; LeakyReluGradFn overrides Init to read its alpha.
struct NoAttrs {
  absl::Status Init(OpKernelConstruction* /*c*/) { return absl::OkStatus(); }
};

struct Relu6GradFn : NoAttrs {
  static constexpr int kCost = 2;
  template <typename T>
  T Apply(T g, T x) const {
    const ComputeType<T> f = Widen(x);
    const bool inside = f > ComputeType<T>(0) && f < ComputeType<T>(6);
    return Narrow<T>(Widen(g) * ComputeType<T>(inside ? 1 : 0));
  }
};

struct LeakyReluGradFn {
  static constexpr int kCost = 2;
  float alpha = 0.2f;
  absl::Status Init(OpKernelConstruction* c) { return c->GetAttr("alpha", &alpha); }
  template <typename T>
  T Apply(T g, T x) const {
    if (Widen(x) > 0) return g;
    return Narrow<T>(Widen(g) * Constant<T>(alpha));
  }
};

struct EluGradFn : NoAttrs {
  static constexpr int kCost = 3;
  template <typename T>
  T Apply(T g, T y) const {
    const ComputeType<T> out = Widen(y);
    if (!(out < 0)) return g;
    return Narrow<T>(RoundTo<T>(out + 1) * Widen(g));
  }
};

// scale and scale * alpha of Klambauer et al., as TF writes them.
struct SeluGradFn : NoAttrs {
  static constexpr int kCost = 3;
  template <typename T>
  T Apply(T g, T y) const {
    const ComputeType<T> out = Widen(y);
    if (out < 0) {
      return Narrow<T>(Widen(g) * RoundTo<T>(out + Constant<T>(1.7580993408473768599402175208123)));
    }
    return Narrow<T>(Widen(g) * Constant<T>(1.0507009873554804934193349852946));
  }
};

struct SoftplusGradFn : NoAttrs {
  static constexpr int kCost = 30;
  template <typename T>
  T Apply(T g, T x) const {
    const ComputeType<T> e = RoundTo<T>(std::exp(-Widen(x)));
    return Narrow<T>(Widen(g) / RoundTo<T>(e + 1));
  }
};

struct SoftsignGradFn : NoAttrs {
  static constexpr int kCost = 8;
  template <typename T>
  T Apply(T g, T x) const {
    const ComputeType<T> d = RoundTo<T>(std::fabs(Widen(x)) + 1);
    return Narrow<T>(Widen(g) / RoundTo<T>(d * d));
  }
};

// backprops = fn_.Apply(gradients, features) element-wise over two same-shape inputs;
// writes into the gradients' buffer when the executor lets it.
template <typename T, typename Fn>
class ActivationGradOp : public OpKernel {
 public:
  explicit ActivationGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, fn_.Init(c));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& gradients = ctx->input(0);
    const Tensor& features = ctx->input(1);
    OP_REQUIRES(
        ctx, gradients.shape() == features.shape(),
        absl::InvalidArgumentError(absl::StrCat(
            "Inputs to operation ", name(), " of type ", type_string(),
            " must have the same size and shape.  Input 0: ", gradients.shape().DebugString(),
            " != input 1: ", features.shape().DebugString())));
    const T* g = gradients.data<T>();  // read before forwarding empties input(0)
    const T* x = features.data<T>();
    const TensorShape shape = gradients.shape();
    Tensor* out = ctx->ForwardInputToOutput(0, 0, shape);
    if (out == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, out, ctx->allocate_output(0, shape));
    }
    T* z = out->data<T>();
    const Fn fn = fn_;
    ParallelForElements(ctx, shape.num_elements(), Fn::kCost, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = fn.Apply(g[i], x[i]);
    });
  }

 private:
  Fn fn_;
};

template <typename Fn, typename Types>
absl::Status RegisterGrad(KernelRegistry* r, const std::string& op, Types types) {
  return RegisterForTypes<ActivationGradOp, Fn>(r, op, types);
}

}  // namespace

absl::Status RegisterActivationGradKernels(KernelRegistry* r) {
  const TypeList<float, double, Half, Bfloat16> floats;
  // TF registers Relu6Grad for every real number type (TF_CALL_REAL_NUMBER_TYPES).
  const TypeList<float, double, Half, Bfloat16, int32_t, int64_t, int16_t, int8_t, uint8_t,
                 uint16_t, uint32_t, uint64_t>
      reals;
  DFLOW_RETURN_IF_ERROR(RegisterGrad<Relu6GradFn>(r, "Relu6Grad", reals));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<LeakyReluGradFn>(r, "LeakyReluGrad", floats));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<EluGradFn>(r, "EluGrad", floats));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<SeluGradFn>(r, "SeluGrad", floats));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<SoftplusGradFn>(r, "SoftplusGrad", floats));
  return RegisterGrad<SoftsignGradFn>(r, "SoftsignGrad", floats);
}

}  // namespace cwise
}  // namespace dflow
