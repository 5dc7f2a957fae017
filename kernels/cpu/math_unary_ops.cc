// Erf, Erfc, Round, Rint, the trigonometric and hyperbolic functions (Sin, Cos, Tan,
// Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh) and the float predicates IsNan,
// IsInf, IsFinite, with TF 2.21's CPU dtypes. Half and bfloat16 compute in float and round once (InFloat): TF's
// results match that bit for bit for all five value ops.
#include <cmath>
#include <limits>
#include <type_traits>

#include "graph/status_macros.h"
#include "kernels/cpu/cwise_util.h"

namespace dflow {
namespace cwise {
namespace {

// std::erf in float: TF's float Erf is Eigen's own rational approximation, which
// differs from the correctly rounded value by up to 5 ulp (measured over 2000 values in
// [-6, 6]); std::erf is the closer of the two to the exact function.
// TF's double Erf returns NaN for +-inf (its Eigen series does); float gives +-1.
struct ErfFn {
  static constexpr int kCost = 20;
  template <typename T>
  static T Apply(T x) {
    if (std::is_same_v<T, double> && std::isinf(x)) return std::numeric_limits<T>::quiet_NaN();
    return std::erf(x);
  }
};
struct ErfcFn {
  static constexpr int kCost = 24;
  template <typename T>
  static T Apply(T x) {
    return std::erfc(x);
  }
};

// The <cmath> function of the same name, for float and double (16-bit types: InFloat).
#define DFLOW_CMATH_FN(Name, fn, cost) \
  struct Name {                          \
    static constexpr int kCost = cost;   \
    template <typename T>                \
    static T Apply(T x) {                \
      return std::fn(x);                 \
    }                                    \
  };
DFLOW_CMATH_FN(SinFn, sin, 20)
DFLOW_CMATH_FN(CosFn, cos, 20)
DFLOW_CMATH_FN(TanFn, tan, 24)
DFLOW_CMATH_FN(AsinFn, asin, 24)
DFLOW_CMATH_FN(AcosFn, acos, 24)
DFLOW_CMATH_FN(AtanFn, atan, 24)
DFLOW_CMATH_FN(SinhFn, sinh, 24)
DFLOW_CMATH_FN(CoshFn, cosh, 24)
DFLOW_CMATH_FN(AsinhFn, asinh, 28)
DFLOW_CMATH_FN(AcoshFn, acosh, 28)
DFLOW_CMATH_FN(AtanhFn, atanh, 28)
#undef DFLOW_CMATH_FN

// Round half to even (TF's Round and Rint alike): nearbyint in the default rounding
// mode, which dflow never changes. Integers round to themselves.
struct RoundHalfToEvenFn {
  static constexpr int kCost = 2;
  template <typename T>
  static T Apply(T x) {
    if constexpr (std::is_integral_v<T>) {
      return x;
    } else {
      return std::nearbyint(x);
    }
  }
};

// Predicates: bool outputs. The 16-bit types classify their exact float value.
struct IsNanFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T x) {
    return std::isnan(Widen(x));
  }
};
struct IsInfFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T x) {
    return std::isinf(Widen(x));
  }
};
struct IsFiniteFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T x) {
    return std::isfinite(Widen(x));
  }
};

}  // namespace

namespace {

// float and double directly, half and bfloat16 computed in float and rounded once.
template <typename Fn>
absl::Status RegisterRealAndHalf(KernelRegistry* r, const char* op) {
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, Fn>(r, op, RealTypes{})));
  return RegisterForTypes<UnaryOp, InFloat<Fn>>(r, op, HalfTypes{});
}

}  // namespace

absl::Status RegisterMathUnaryKernels(KernelRegistry* r) {
  const RealTypes real;
  const HalfTypes half;
  const TypeList<float, double, Half, Bfloat16> all_floats;
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, ErfFn>(r, "Erf", real)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, InFloat<ErfFn>>(r, "Erf", half)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, ErfcFn>(r, "Erfc", real)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, InFloat<ErfcFn>>(r, "Erfc", half)));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<SinFn>(r, "Sin")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<CosFn>(r, "Cos")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<TanFn>(r, "Tan")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<AsinFn>(r, "Asin")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<AcosFn>(r, "Acos")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<AtanFn>(r, "Atan")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<SinhFn>(r, "Sinh")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<CoshFn>(r, "Cosh")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<AsinhFn>(r, "Asinh")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<AcoshFn>(r, "Acosh")));
  DFLOW_RETURN_IF_ERROR((RegisterRealAndHalf<AtanhFn>(r, "Atanh")));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, RoundHalfToEvenFn>(r, "Round", NumericTypes{})));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, InFloat<RoundHalfToEvenFn>>(r, "Round", half)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, RoundHalfToEvenFn>(r, "Rint", real)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, IsNanFn>(r, "IsNan", all_floats)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, IsInfFn>(r, "IsInf", all_floats)));
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<UnaryOp, IsFiniteFn>(r, "IsFinite", all_floats)));
  return absl::OkStatus();
}

}  // namespace cwise
}  // namespace dflow
