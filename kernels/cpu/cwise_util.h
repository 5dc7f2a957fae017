// Shared machinery of the element-wise CPU kernels (cwise_ops.cc, nn_ops.cc) and the
// reductions (reduction_ops.cc): typed registration over dtype lists and the one
// unary-apply kernel template.
//
// Functors are plain structs with a templated static `Apply` and a `kCost` (rough
// cycles per element, for ParallelForElements), so one kernel template serves every
// dtype and each op is a few lines:
//
//   struct SquareFn {
//     static constexpr int kCost = 1;
//     template <typename T> static T Apply(T x) { return x * x; }
//   };
//   RegisterForTypes<UnaryOp, SquareFn>(registry, "Square", NumericTypes{});
#ifndef DFLOW_KERNELS_CPU_CWISE_UTIL_H_
#define DFLOW_KERNELS_CPU_CWISE_UTIL_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "kernels/cpu/kernel_util.h"
#include "runtime/half.h"
#include "runtime/kernel_registry.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

// Tells the compiler that a loop writing out[i] from in[i] has no loop-carried
// dependence: kernels write in place (out == in is allowed, partial overlap is not).
#if defined(__GNUC__) && !defined(__clang__)
#define DFLOW_IVDEP _Pragma("GCC ivdep")
#else
#define DFLOW_IVDEP
#endif

namespace dflow {
namespace cwise {

template <typename... Ts>
struct TypeList {};
using RealTypes = TypeList<float, double>;
using NumericTypes = TypeList<float, double, int32_t, int64_t>;
using IntegerTypes = TypeList<int32_t, int64_t>;
using HalfTypes = TypeList<Half, Bfloat16>;

// Half and bfloat16 compute as TF's Eigen types do: each operation converts its operands
// to float, computes in float and rounds the result back to the 16-bit type (to nearest
// even). InFloat<Fn> runs a float functor that way, one rounding per call, so one functor
// serves float and the 16-bit types. Fn's other members (ChecksRhs, kEquality, ...) are
// inherited.
template <typename Fn>
struct InFloat : Fn {
  static constexpr int kCost = Fn::kCost + 4;  // two or three conversions
  template <typename T>
  static T Apply(T x) {
    return T::FromFloat(Fn::Apply(x.ToFloat()));
  }
  template <typename T>
  static T Apply(T a, T b) {
    return T::FromFloat(Fn::Apply(a.ToFloat(), b.ToFloat()));
  }
};

// Functors whose TF result rounds every intermediate to a 16-bit type (Eigen's half
// and bfloat16 round after each operation) compute in ComputeType<T> and pass each
// intermediate through RoundTo<T>; for float and double both are the identity.
template <typename T>
using ComputeType = std::conditional_t<kIsHalfOrBfloat16<T>, float, T>;

template <typename T>
ComputeType<T> Widen(T x) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return x.ToFloat();
  } else {
    return x;
  }
}

template <typename T>
T Narrow(ComputeType<T> v) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return T::FromFloat(v);
  } else {
    return v;
  }
}

template <typename T>
ComputeType<T> RoundTo(ComputeType<T> v) {
  return Widen<T>(Narrow<T>(v));
}

// Registers Kernel<T, Fn> for `op` on CPU once per T in `types`, constrained on the
// type attr `attr` (every op here names it "T").
template <template <typename, typename> class Kernel, typename Fn, typename... Ts>
absl::Status RegisterForTypes(KernelRegistry* registry, const std::string& op,
                              TypeList<Ts...> /*types*/, const std::string& attr = "T") {
  absl::Status status;
  auto register_one = [&](auto tag) {
    using T = decltype(tag);
    if (!status.ok()) return;
    status = registry->Register<Kernel<T, Fn>>(
        KernelDefBuilder(op).Device("CPU").TypeConstraint<T>(attr));
  };
  (register_one(Ts{}), ...);
  return status;
}

// Registers Kernel<bool, Fn> for an op whose dtypes are fixed by its OpDef (LogicalAnd,
// All, ...), so there is no type attr to constrain.
template <template <typename, typename> class Kernel, typename Fn>
absl::Status RegisterBoolOp(KernelRegistry* registry, const std::string& op) {
  return registry->Register<Kernel<bool, Fn>>(KernelDefBuilder(op).Device("CPU"));
}

// The output dtype of a unary functor on T (bool for predicates, T otherwise).
template <typename Fn, typename T>
using UnaryResult = decltype(Fn::Apply(T{}));

// y = Fn::Apply(x) element-wise; writes into x's buffer when the executor lets it.
template <typename T, typename Fn>
class UnaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using Out = UnaryResult<Fn, T>;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const T* in = input.data<T>();  // read before forwarding empties input(0)
    const int64_t n = input.NumElements();
    const TensorShape shape = input.shape();
    Tensor* output = ctx->ForwardInputToOutput(0, 0, shape);
    if (output == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, output, ctx->allocate_output(0, shape));
    }
    Out* out = output->data<Out>();
    ParallelForElements(ctx, n, Fn::kCost, [in, out](int64_t begin, int64_t end) {
      DFLOW_IVDEP
      for (int64_t i = begin; i < end; ++i) out[i] = Fn::Apply(in[i]);
    });
  }
};

// Registers the activations and Softmax/LogSoftmax/BiasAdd (nn_ops.cc); called by
// RegisterCwiseKernels.
absl::Status RegisterNnKernels(KernelRegistry* registry);
// LeakyRelu, Selu, Elu, Softsign, Softplus (activation_ops.cc).
absl::Status RegisterActivationKernels(KernelRegistry* registry);
// Erf, Erfc, Round, Rint, IsNan, IsInf, IsFinite (math_unary_ops.cc).
absl::Status RegisterMathUnaryKernels(KernelRegistry* registry);
// SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad, InvGrad (cwise_grad_ops.cc).
absl::Status RegisterCwiseGradKernels(KernelRegistry* registry);
// Relu6Grad, LeakyReluGrad, EluGrad, SeluGrad, SoftplusGrad, SoftsignGrad
// (activation_grad_ops.cc).
absl::Status RegisterActivationGradKernels(KernelRegistry* registry);

}  // namespace cwise
}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CWISE_UTIL_H_
