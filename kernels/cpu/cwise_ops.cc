// Element-wise math kernels: binary ops with broadcasting (broadcast.h), unary math
// (cwise_util.h's UnaryOp) and AddN. Each op is a functor struct; the kernel templates
// and RegisterForTypes stamp it out for every dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/vector_exp.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace cwise {
namespace {

// ---------------------------------------------------------------------------------
// Binary functors. Each has Apply(a, b) and kCost; the defaults below say "no divisor
// check" and "not an equality op" (Equal/NotEqual honour incompatible_shape_error).

struct BinaryFn {
  // True when some y values are errors for T (integer division by zero, ...), which
  // the kernel rejects with kInvalidRhs before computing anything.
  template <typename T>
  static constexpr bool ChecksRhs() {
    return false;
  }
  template <typename T>
  static bool InvalidRhs(T) {
    return false;
  }
  static constexpr const char* kInvalidRhs = "";
  static constexpr absl::StatusCode kInvalidRhsCode = absl::StatusCode::kInvalidArgument;
  static constexpr bool kEquality = false;
  static constexpr bool kEqualityResultWhenIncompatible = false;
};

// Integer division by zero traps on x86: reject it up front, as TF does.
struct IntegerDivisorFn : BinaryFn {
  template <typename T>
  static constexpr bool ChecksRhs() {
    return std::is_integral_v<T>;
  }
  template <typename T>
  static bool InvalidRhs(T b) {
    return b == T(0);
  }
  static constexpr const char* kInvalidRhs = "Integer division by zero";
};

// -a without the signed-overflow trap/UB of lowest() / -1 (which also traps on x86).
template <typename T>
T WrappingNegate(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U{0} - static_cast<U>(a));
}

struct AddFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return a + b;
  }
};
struct SubFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return a - b;
  }
};
struct MulFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return a * b;
  }
};
// Div, RealDiv: true division for floats, truncating for integers (TF's Div).
struct DivFn : IntegerDivisorFn {
  static constexpr int kCost = 4;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return b == T(-1) ? WrappingNegate(a) : static_cast<T>(a / b);
    } else {
      return a / b;
    }
  }
};
struct FloorDivFn : IntegerDivisorFn {
  static constexpr int kCost = 8;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == T(-1)) return WrappingNegate(a);
      const T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
      return std::floor(a / b);
    }
  }
};
// The remainder with the divisor's sign, so FloorDiv(a, b) * b + FloorMod(a, b) == a.
struct FloorModFn : IntegerDivisorFn {
  static constexpr int kCost = 8;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == T(-1)) return T(0);
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      const T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};
// Eigen's PropagateNaN max/min, as TF 2.21 computes float and double: a NaN operand
// wins, and of two equal operands (-0 and +0) the first. (TF's vectorised loop, used for
// whole packets of 8/16 lanes, returns the second of -0 and +0 instead; dflow does not
// copy that size dependence.)
struct MaximumFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(b) || a < b ? b : a;
    } else {
      return a > b ? a : b;
    }
  }
};
struct MinimumFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(b) || b < a ? b : a;
    } else {
      return a < b ? a : b;
    }
  }
};
// x / y, or 0 where y == 0 (whatever x is, NaN included).
struct DivNoNanFn : BinaryFn {
  static constexpr int kCost = 4;
  template <typename T>
  static T Apply(T a, T b) {
    return b == T(0) ? T(0) : a / b;
  }
};
// x * y, or 0 where y == 0 (x = NaN or inf included; y = NaN still gives NaN).
struct MulNoNanFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return b == T(0) ? T(0) : a * b;
  }
};
// Division rounded toward zero. TF's integer version has no divisor check of its own, so
// a zero divisor fails with TF's INTERNAL "Unexpected error in binary operator ..."
// text; lowest() / -1 wraps to lowest(). Floats: trunc(x / y), with x / y rounded to T
// first for half and bfloat16.
struct TruncateDivisorFn : IntegerDivisorFn {
  static constexpr const char* kInvalidRhs =
      "Unexpected error in binary operator (only integer div and mod should have errors)";
  static constexpr absl::StatusCode kInvalidRhsCode = absl::StatusCode::kInternal;
};
struct TruncateDivFn : TruncateDivisorFn {
  static constexpr int kCost = 4;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return WrappingNegate(a);
      }
      return static_cast<T>(a / b);
    } else {
      return Narrow<T>(std::trunc(RoundTo<T>(Widen(a) / Widen(b))));
    }
  }
};
// The remainder of TruncateDiv, with the dividend's sign (C's % and fmod).
struct TruncateModFn : TruncateDivisorFn {
  static constexpr int kCost = 8;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      // INT_MIN % -1 overflows; unsigned types have no -1 (their max would match).
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
      }
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct BitwiseAndFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct BitwiseOrFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct BitwiseXorFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};
struct SquaredDifferenceFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T a, T b) {
    return (a - b) * (a - b);
  }
};
struct PowFn : BinaryFn {
  static constexpr int kCost = 40;
  template <typename T>
  static constexpr bool ChecksRhs() {
    return std::is_integral_v<T>;
  }
  template <typename T>
  static bool InvalidRhs(T b) {
    return b < T(0);
  }
  static constexpr const char* kInvalidRhs = "Integers to negative integer powers are not allowed";
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // wraps on overflow instead of UB
      U result = 1, base = static_cast<U>(a);
      for (T e = b; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    } else {
      return std::pow(a, b);
    }
  }
};

// Comparisons and logic produce bool.
struct LessFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T a, T b) {
    return a < b;
  }
};
struct LessEqualFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T a, T b) {
    return a <= b;
  }
};
struct GreaterFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T a, T b) {
    return a > b;
  }
};
struct GreaterEqualFn : BinaryFn {
  static constexpr int kCost = 1;
  template <typename T>
  static bool Apply(T a, T b) {
    return a >= b;
  }
};
struct EqualFn : BinaryFn {
  static constexpr int kCost = 1;
  static constexpr bool kEquality = true;
  static constexpr bool kEqualityResultWhenIncompatible = false;
  template <typename T>
  static bool Apply(T a, T b) {
    return a == b;
  }
};
struct NotEqualFn : BinaryFn {
  static constexpr int kCost = 1;
  static constexpr bool kEquality = true;
  static constexpr bool kEqualityResultWhenIncompatible = true;
  template <typename T>
  static bool Apply(T a, T b) {
    return a != b;
  }
};
struct LogicalAndFn : BinaryFn {
  static constexpr int kCost = 1;
  static bool Apply(bool a, bool b) { return a && b; }
};
struct LogicalOrFn : BinaryFn {
  static constexpr int kCost = 1;
  static bool Apply(bool a, bool b) { return a || b; }
};

// z = Fn(x, y) with broadcasting.
template <typename T, typename Fn>
class BinaryOp : public OpKernel {
 public:
  using Out = BinaryResult<Fn, T>;

  explicit BinaryOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if constexpr (Fn::kEquality) {
      if (ctx->HasAttr("incompatible_shape_error")) {
        OP_REQUIRES_OK(ctx, ctx->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
      }
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.shape() == y.shape()) {
      ComputeSameShape(ctx, x, y);
      return;
    }
    absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(x.shape(), y.shape());
    if (!plan.ok() && !incompatible_shape_error_) {
      // Equal/NotEqual with incompatible_shape_error=false: a scalar verdict.
      OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
      out->scalar<bool>() = Fn::kEqualityResultWhenIncompatible;
      return;
    }
    OP_REQUIRES_OK(ctx, plan.status());
    // An empty result divides nothing: TF checks each division it makes, so a scalar 0
    // divisor broadcast against an empty tensor is no error (FloorMod(axes, rank) of a
    // scalar's reduction gradient).
    if (plan->output_shape.num_elements() > 0) OP_REQUIRES_OK(ctx, CheckDivisors(y));
    const T* x_data = x.data<T>();  // read before forwarding empties an input
    const T* y_data = y.data<T>();
    Tensor* out = ForwardOrAllocateBinaryOutput(ctx, plan->output_shape);
    if (out == nullptr) return;
    RunBroadcast<Fn>(ctx, *plan, x_data, y_data, out->data<Out>());
  }

 private:
  static absl::Status CheckDivisors(const Tensor& y) {
    if constexpr (Fn::template ChecksRhs<T>()) {
      absl::Span<const T> divisors = y.flat<T>();
      if (std::any_of(divisors.begin(), divisors.end(), [](T b) { return Fn::InvalidRhs(b); })) {
        return absl::Status(Fn::kInvalidRhsCode, Fn::kInvalidRhs);
      }
    }
    return absl::OkStatus();
  }

  void ComputeSameShape(OpKernelContext* ctx, const Tensor& x, const Tensor& y) {
    OP_REQUIRES_OK(ctx, CheckDivisors(y));
    const T* x_data = x.data<T>();  // read before forwarding empties an input
    const T* y_data = y.data<T>();
    const TensorShape shape = x.shape();
    Tensor* out = ForwardOrAllocateBinaryOutput(ctx, shape);
    if (out == nullptr) return;
    RunSameShape<Fn>(ctx, shape.num_elements(), x_data, y_data, out->data<Out>());
  }

  bool incompatible_shape_error_ = true;
};

// ---------------------------------------------------------------------------------
// Unary functors (the activations live in nn_ops.cc).

struct NegFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return -x;
  }
};
struct AbsFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    if constexpr (std::is_integral_v<T>) {
      return x < 0 ? WrappingNegate(x) : x;
    } else {
      return std::fabs(x);
    }
  }
};
struct SquareFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return x * x;
  }
};
struct SqrtFn {
  static constexpr int kCost = 4;
  template <typename T>
  static T Apply(T x) {
    return std::sqrt(x);
  }
};
struct RsqrtFn {
  static constexpr int kCost = 8;
  template <typename T>
  static T Apply(T x) {
    return T(1) / std::sqrt(x);
  }
};
struct ExpFn {
  static constexpr int kCost = 20;
  template <typename T>
  static T Apply(T x) {
    return std::exp(x);
  }
};
// exp(x) - 1 and log(1 + x) without the cancellation near 0 (Keras elu/selu/celu use
// Expm1), as TF's Eigen functors.
struct Expm1Fn {
  static constexpr int kCost = 20;
  template <typename T>
  static T Apply(T x) {
    return std::expm1(x);
  }
};
struct Log1pFn {
  static constexpr int kCost = 20;
  template <typename T>
  static T Apply(T x) {
    return std::log1p(x);
  }
};
struct LogFn {
  static constexpr int kCost = 20;
  template <typename T>
  static T Apply(T x) {
    return std::log(x);
  }
};
struct ReciprocalFn {
  static constexpr int kCost = 4;
  template <typename T>
  static T Apply(T x) {
    return T(1) / x;
  }
};
struct FloorFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return std::floor(x);
  }
};
struct CeilFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return std::ceil(x);
  }
};
// -1, 0 or 1; NaN stays NaN and -0.0 stays -0.0, as in TF.
struct SignFn {
  static constexpr int kCost = 1;
  template <typename T>
  static T Apply(T x) {
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
  }
};
// 1 / (1 + e^-x): exp overflows to inf for very negative x, giving exactly 0. Float
// computes in double with VectorExp (vectorizes; 1e-300 rounds to float 0 the same way).
struct SigmoidFn {
  static constexpr int kCost = 8;
  template <typename T>
  static T Apply(T x) {
    if constexpr (std::is_same_v<T, float>) {
      const float y = static_cast<float>(1.0 / (1.0 + VectorExp(-static_cast<double>(x))));
      return x != x ? x : y;  // NaN stays NaN (the clamp inside VectorExp would lose it)
    } else {
      return T(1) / (T(1) + std::exp(-x));
    }
  }
};
// glibc's tanhf is ~13 ns; for float, (e^2|x| - 1) / (e^2|x| + 1) in double is within
// 1 ulp of float (x itself below 1e-4, where tanh x = x to 3e-9 relative), and with
// VectorExp and selects instead of branches the loop vectorizes.
struct TanhFn {
  static constexpr int kCost = 8;
  template <typename T>
  static T Apply(T x) {
    if constexpr (std::is_same_v<T, float>) {
      const double a = std::fabs(static_cast<double>(x));
      const double e = VectorExp(2 * (a > 20 ? 20 : a));
      const float t = std::copysign(static_cast<float>((e - 1) / (e + 1)), x);
      const float saturated = a > 20 ? std::copysign(1.0f, x) : t;
      return a < 1e-4 || x != x ? x : saturated;
    } else {
      return std::tanh(x);
    }
  }
};
struct LogicalNotFn {
  static constexpr int kCost = 1;
  static bool Apply(bool x) { return !x; }
};

// ---------------------------------------------------------------------------------
// AddN: sum of N same-shape inputs, accumulated block by block so each output block
// stays in L1 while the inputs stream past it.

template <typename T, typename Fn /*unused: AddN has one functor*/>
class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const int num = ctx->num_inputs();
    const TensorShape shape = ctx->input(0).shape();
    std::vector<const T*> inputs(num);
    for (int i = 0; i < num; ++i) {
      OP_REQUIRES(
          ctx, ctx->input(i).shape() == shape,
          absl::InvalidArgumentError(absl::StrCat("Inputs to operation ", name(),
                                                  " of type AddN must have the same size "
                                                  "and shape.  Input 0: ",
                                                  shape.DebugString(), " != input ", i, ": ",
                                                  ctx->input(i).shape().DebugString())));
      inputs[i] = ctx->input(i).data<T>();
    }
    Tensor* output = nullptr;
    int forwarded = -1;  // the input whose buffer became the output, if any
    for (int i = 0; i < num && output == nullptr; ++i) {
      if ((output = ctx->ForwardInputToOutput(i, 0, shape)) != nullptr) forwarded = i;
    }
    if (output == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, output, ctx->allocate_output(0, shape));
    }
    // The output starts as the forwarded input, else as input 0; the rest add onto it.
    const int first = forwarded >= 0 ? forwarded : 0;
    T* out = output->data<T>();
    ParallelForElements(ctx, shape.num_elements(), num, [&](int64_t begin, int64_t end) {
      constexpr int64_t kBlock = 2048;
      for (int64_t b = begin; b < end; b += kBlock) {
        const int64_t n = std::min(kBlock, end - b);
        if (first != forwarded) std::copy_n(inputs[first] + b, n, out + b);
        for (int i = 0; i < num; ++i) {
          if (i == first) continue;
          const T* in = inputs[i] + b;
          T* o = out + b;
          DFLOW_IVDEP
          for (int64_t j = 0; j < n; ++j) o[j] += in[j];
        }
      }
    });
  }
};

// ---------------------------------------------------------------------------------
// Half and bfloat16 functors where TF's result is not one float operation rounded once
// (InFloat): checked bit for bit against TF 2.21.

// Maximum and Minimum are Eigen's PropagateNaN versions: a NaN operand wins, and of two
// equal operands (-0 and +0) the first.
struct NanMaximumFn : BinaryFn {
  static constexpr int kCost = 1;
  static float Apply(float a, float b) { return std::isnan(b) || a < b ? b : a; }
};
struct NanMinimumFn : BinaryFn {
  static constexpr int kCost = 1;
  static float Apply(float a, float b) { return std::isnan(b) || b < a ? b : a; }
};
// Sigmoid is Eigen's generic logistic, e / (1 + e) with e = exp(x), each of the three
// operations rounded to the 16-bit type (e rounding to infinity gives 1).
struct RoundedSigmoidFn {
  static constexpr int kCost = 32;
  template <typename T>
  static T Apply(T x) {
    const float e = T::FromFloat(std::exp(x.ToFloat())).ToFloat();
    if (std::isinf(e)) return T::FromFloat(1.0f);
    return T::FromFloat(e / T::FromFloat(1.0f + e).ToFloat());
  }
};

// ---------------------------------------------------------------------------------
// Registration.

template <typename Fn, typename Types>
absl::Status RegisterBinary(KernelRegistry* registry, const std::string& op, Types types) {
  return RegisterForTypes<BinaryOp, Fn>(registry, op, types);
}

template <typename Fn, typename Types>
absl::Status RegisterUnary(KernelRegistry* registry, const std::string& op, Types types) {
  return RegisterForTypes<UnaryOp, Fn>(registry, op, types);
}

// DivNoNan, MulNoNan, TruncateDiv, TruncateMod and the bitwise ops, on TF 2.21's CPU
// dtype lists (complex DivNoNan/MulNoNan aside: dflow has no complex dtypes).
absl::Status RegisterNoNanAndIntegerKernels(KernelRegistry* r) {
  const TypeList<float, double, Half, Bfloat16> floats;
  const TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t> ints;
  DFLOW_RETURN_IF_ERROR(RegisterBinary<DivNoNanFn>(r, "DivNoNan", RealTypes{}));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<DivNoNanFn>>(r, "DivNoNan", HalfTypes{}));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<MulNoNanFn>(r, "MulNoNan", RealTypes{}));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<MulNoNanFn>>(r, "MulNoNan", HalfTypes{}));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<TruncateDivFn>(r, "TruncateDiv", ints));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<TruncateDivFn>(r, "TruncateDiv", floats));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<TruncateModFn>(r, "TruncateMod", NumericTypes{}));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<BitwiseAndFn>(r, "BitwiseAnd", ints));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<BitwiseOrFn>(r, "BitwiseOr", ints));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<BitwiseXorFn>(r, "BitwiseXor", ints));
  return absl::OkStatus();
}

absl::Status RegisterBinaryKernels(KernelRegistry* r) {
  const NumericTypes numeric;
  DFLOW_RETURN_IF_ERROR(RegisterBinary<AddFn>(r, "Add", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<AddFn>(r, "AddV2", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<SubFn>(r, "Sub", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<MulFn>(r, "Mul", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<DivFn>(r, "Div", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<DivFn>(r, "RealDiv", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<FloorDivFn>(r, "FloorDiv", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<FloorModFn>(r, "FloorMod", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<MaximumFn>(r, "Maximum", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<MinimumFn>(r, "Minimum", numeric));
  // TF also registers Maximum and Minimum for the narrow and unsigned integers.
  const TypeList<int8_t, uint8_t, int16_t, uint16_t, uint32_t, uint64_t> other_integers;
  DFLOW_RETURN_IF_ERROR(RegisterBinary<MaximumFn>(r, "Maximum", other_integers));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<MinimumFn>(r, "Minimum", other_integers));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<SquaredDifferenceFn>(r, "SquaredDifference", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<PowFn>(r, "Pow", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<LessFn>(r, "Less", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<LessEqualFn>(r, "LessEqual", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<GreaterFn>(r, "Greater", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<GreaterEqualFn>(r, "GreaterEqual", numeric));
  const TypeList<float, double, int32_t, int64_t, bool> equality;
  DFLOW_RETURN_IF_ERROR(RegisterBinary<EqualFn>(r, "Equal", equality));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<NotEqualFn>(r, "NotEqual", equality));
  DFLOW_RETURN_IF_ERROR((RegisterBoolOp<BinaryOp, LogicalAndFn>(r, "LogicalAnd")));
  DFLOW_RETURN_IF_ERROR((RegisterBoolOp<BinaryOp, LogicalOrFn>(r, "LogicalOr")));
  return RegisterNoNanAndIntegerKernels(r);
}

absl::Status RegisterUnaryKernels(KernelRegistry* r) {
  const NumericTypes numeric;
  const RealTypes real;
  DFLOW_RETURN_IF_ERROR(RegisterUnary<NegFn>(r, "Neg", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<AbsFn>(r, "Abs", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<SquareFn>(r, "Square", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<SignFn>(r, "Sign", numeric));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<SqrtFn>(r, "Sqrt", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<RsqrtFn>(r, "Rsqrt", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<ExpFn>(r, "Exp", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<LogFn>(r, "Log", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<Expm1Fn>(r, "Expm1", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<Log1pFn>(r, "Log1p", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<ReciprocalFn>(r, "Reciprocal", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<FloorFn>(r, "Floor", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<CeilFn>(r, "Ceil", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<SigmoidFn>(r, "Sigmoid", real));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<TanhFn>(r, "Tanh", real));
  DFLOW_RETURN_IF_ERROR((RegisterBoolOp<UnaryOp, LogicalNotFn>(r, "LogicalNot")));
  return absl::OkStatus();
}

// The element-wise ops of mixed-precision models in half and bfloat16 (TF registers
// more); nn_ops.cc adds the activations, BiasAdd and Softmax.
absl::Status RegisterHalfKernels(KernelRegistry* r) {
  const HalfTypes half;
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<AddFn>>(r, "Add", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<AddFn>>(r, "AddV2", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<SubFn>>(r, "Sub", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<MulFn>>(r, "Mul", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<DivFn>>(r, "Div", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<DivFn>>(r, "RealDiv", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<NanMaximumFn>>(r, "Maximum", half));
  DFLOW_RETURN_IF_ERROR(RegisterBinary<InFloat<NanMinimumFn>>(r, "Minimum", half));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<InFloat<NegFn>>(r, "Neg", half));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<RoundedSigmoidFn>(r, "Sigmoid", half));
  DFLOW_RETURN_IF_ERROR(RegisterUnary<InFloat<TanhFn>>(r, "Tanh", half));
  return absl::OkStatus();
}

}  // namespace
}  // namespace cwise

absl::Status RegisterCwiseKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(cwise::RegisterBinaryKernels(registry));
  DFLOW_RETURN_IF_ERROR(cwise::RegisterUnaryKernels(registry));
  DFLOW_RETURN_IF_ERROR(cwise::RegisterHalfKernels(registry));
  DFLOW_RETURN_IF_ERROR(cwise::RegisterActivationKernels(registry));
  DFLOW_RETURN_IF_ERROR(cwise::RegisterCwiseGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(cwise::RegisterActivationGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(cwise::RegisterMathUnaryKernels(registry));
  DFLOW_RETURN_IF_ERROR(
      (cwise::RegisterForTypes<cwise::AddNOp, void>(registry, "AddN", cwise::NumericTypes{})));
  return cwise::RegisterNnKernels(registry);
}

}  // namespace dflow
