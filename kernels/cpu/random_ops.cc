// RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt, bit-exact
// with TensorFlow's CPU kernels for the same (seed, seed2).
//
// What makes the numbers match TF (tensorflow/core/kernels/random_op.cc and
// lib/random/random_distributions.h):
//   1. Each kernel owns one Philox stream keyed by (seed, seed2); both 0 means "seed
//      from the OS", so such a kernel is nondeterministic (TF's GuardedPhiloxRandom).
//   2. Every Compute() reserves output_count * 256 Philox calls from that stream and
//      fills its output from the start of the reservation. The stream lives as long as
//      the kernel, so each Run of the same session gives new numbers and a new session
//      (new kernels) starts over, as TF 1.x does.
//   3. Outputs come in groups (4 floats or 2 doubles per Philox call). Fixed-cost
//      distributions use Philox call `g` for group `g`; rejection sampling
//      (TruncatedNormal) gives group g its own window of group_size * 256 / 4 calls.
//      Either way, a group's numbers do not depend on how the work is sharded.
//   4. The float conversions are TF's: 23 random mantissa bits in [1, 2) minus 1;
//      Box-Muller with u1 floored at 1e-7 and angle 2*pi*u computed in double.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/guarded_philox.h"
#include "kernels/cpu/philox_random.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// Philox calls reserved per output element (TF's multiplier; changing it changes the
// numbers of every later Run).
constexpr uint64_t kSamplesPerOutput = 256;

float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (uint32_t{127} << 23) | (x & 0x7fffffu);
  float result;
  std::memcpy(&result, &bits, sizeof(bits));
  return result - 1.0f;
}

constexpr double kPi = 3.14159265358979323846;

void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  const float epsilon = 1.0e-7f;  // keeps log() finite
  float u1 = Uint32ToFloat(x0);
  if (u1 < epsilon) u1 = epsilon;
  const float v1 = static_cast<float>(2.0f * kPi * Uint32ToFloat(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1) {
  const double epsilon = 1.0e-7;
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < epsilon) u1 = epsilon;
  const double v1 = 2 * kPi * Uint64ToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

// Distributions: kGroup outputs per call; kVariable when a call may use any number of
// Philox samples (then it reads them one at a time through a SingleSampleAdapter).
template <typename T>
struct Uniform {
  using Result = T;
  static constexpr int kGroup = sizeof(T) == 4 ? 4 : 2;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 3;
  std::array<T, kGroup> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::ResultType s = (*gen)();
    std::array<T, kGroup> out;
    if constexpr (sizeof(T) == 4) {
      for (int i = 0; i < 4; ++i) out[i] = Uint32ToFloat(s[i]);
    } else {
      for (int i = 0; i < 2; ++i) out[i] = Uint64ToDouble(s[2 * i], s[2 * i + 1]);
    }
    return out;
  }
};

template <typename T>
struct Normal {
  using Result = T;
  static constexpr int kGroup = sizeof(T) == 4 ? 4 : 2;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 70;
  std::array<T, kGroup> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::ResultType s = (*gen)();
    std::array<T, kGroup> out;
    if constexpr (sizeof(T) == 4) {
      BoxMullerFloat(s[0], s[1], &out[0], &out[1]);
      BoxMullerFloat(s[2], s[3], &out[2], &out[3]);
    } else {
      BoxMullerDouble(s[0], s[1], s[2], s[3], &out[0], &out[1]);
    }
    return out;
  }
};

// Normal samples with |x| < 2, by rejection.
template <typename T>
struct TruncatedNormal {
  using Result = T;
  static constexpr int kGroup = sizeof(T) == 4 ? 4 : 2;
  static constexpr bool kVariable = true;
  static constexpr int kCost = 90;
  std::array<T, kGroup> operator()(SingleSampleAdapter* gen) const {
    const T kTruncate = 2;
    std::array<T, kGroup> out;
    int index = 0;
    while (true) {
      T pair[2];
      if constexpr (sizeof(T) == 4) {
        const uint32_t x0 = (*gen)(), x1 = (*gen)();
        BoxMullerFloat(x0, x1, &pair[0], &pair[1]);
      } else {
        const uint32_t x0 = (*gen)(), x1 = (*gen)(), x2 = (*gen)(), x3 = (*gen)();
        BoxMullerDouble(x0, x1, x2, x3, &pair[0], &pair[1]);
      }
      for (T x : pair) {
        if (std::abs(x) < kTruncate) {
          out[index++] = x;
          if (index == kGroup) return out;
        }
      }
    }
  }
};

// lo + (bits mod range) over [lo, hi): 32 bits per int32, 64 per int64 (TF's, biased
// by the modulo exactly as TF's is).
template <typename T>
struct UniformInt {
  using Result = T;
  using Unsigned = std::make_unsigned_t<T>;
  static constexpr int kGroup = sizeof(T) == 4 ? 4 : 2;
  static constexpr bool kVariable = false;
  static constexpr int kCost = 4;
  T lo;
  Unsigned range;
  std::array<T, kGroup> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::ResultType s = (*gen)();
    std::array<T, kGroup> out;
    for (int i = 0; i < kGroup; ++i) {
      Unsigned bits = s[i];
      if constexpr (sizeof(T) == 8) bits = s[2 * i] | (static_cast<uint64_t>(s[2 * i + 1]) << 32);
      out[i] = static_cast<T>(static_cast<Unsigned>(lo) + bits % range);
    }
    return out;
  }
};

// Fills groups [first, limit) of `data` (size elements) from the stream starting at `gen`.
template <typename Dist>
void FillGroups(PhiloxRandom gen, typename Dist::Result* data, int64_t size, int64_t first,
                int64_t limit, const Dist& dist) {
  constexpr int kGroup = Dist::kGroup;
  if constexpr (!Dist::kVariable) gen.Skip(first);
  for (int64_t g = first; g < limit; ++g) {
    std::array<typename Dist::Result, kGroup> samples;
    if constexpr (Dist::kVariable) {
      PhiloxRandom local = gen;
      local.Skip(static_cast<uint64_t>(g) * kGroup * kSamplesPerOutput /
                 PhiloxRandom::kResultElementCount);
      SingleSampleAdapter single(&local);
      samples = dist(&single);
    } else {
      samples = dist(&gen);
    }
    const int64_t n = std::min<int64_t>(kGroup, size - g * kGroup);
    std::copy(samples.begin(), samples.begin() + n, data + g * kGroup);
  }
}

template <typename Dist>
void FillPhilox(OpKernelContext* ctx, PhiloxRandom gen, const Tensor& output, const Dist& dist) {
  using T = typename Dist::Result;
  T* data = output.data<T>();
  const int64_t size = output.NumElements();
  const int64_t groups = (size + Dist::kGroup - 1) / Dist::kGroup;
  ParallelForElements(ctx, groups, Dist::kGroup * (Dist::kCost + 10),
                      [&](int64_t first, int64_t limit) {
                        FillGroups(gen, data, size, first, limit, dist);
                      });
}

// The stream's position for filling `output`, moved past kSamplesPerOutput calls per
// element.
PhiloxRandom ReserveFor(GuardedPhilox& generator, const Tensor& output) {
  return generator.ReserveSamples128(static_cast<uint64_t>(output.NumElements()) *
                                     kSamplesPerOutput);
}

// The output shape from a 1-D int32/int64 `shape` input.
absl::StatusOr<TensorShape> ReadShape(const OpKernelContext& ctx, const Tensor& shape) {
  if (shape.shape().dims() != 1) {
    return KernelError(ctx, "shape must be a vector of {int32,int64}, got shape ",
                       shape.shape().DebugString());
  }
  const std::vector<int64_t> dims = ReadIndices(shape);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return KernelError(ctx, "Dimension ", dims[i], " must be >= 0");
  }
  absl::StatusOr<TensorShape> result = TensorShape::Make(dims);
  if (!result.ok()) {
    return KernelError(ctx, "shape ", DimsString(dims), " is invalid: ", result.status().message());
  }
  return result;
}

// RandomUniform, RandomStandardNormal, TruncatedNormal.
template <typename Dist>
class PhiloxRandomOp : public OpKernel {
 public:
  explicit PhiloxRandomOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, generator_.Init(ctx));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, ReadShape(*ctx, ctx->input(0)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    FillPhilox(ctx, ReserveFor(generator_, *output), *output, Dist());
  }

 private:
  GuardedPhilox generator_;
};

template <typename T>
class RandomUniformIntOp : public OpKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, generator_.Init(ctx));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& minval = ctx->input(1);
    const Tensor& maxval = ctx->input(2);
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, ReadShape(*ctx, ctx->input(0)));
    OP_REQUIRES(ctx, minval.shape().dims() == 0,
                KernelError(*ctx, "minval must be 0-D, got shape ", minval.shape().DebugString()));
    OP_REQUIRES(ctx, maxval.shape().dims() == 0,
                KernelError(*ctx, "maxval must be 0-D, got shape ", maxval.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    // TF checks the range only when there is something to draw (and reserves nothing).
    if (output->NumElements() == 0) return;
    const T lo = minval.scalar<T>(), hi = maxval.scalar<T>();
    OP_REQUIRES(ctx, lo < hi, KernelError(*ctx, "Need minval < maxval: ", lo, " >= ", hi));
    using Unsigned = std::make_unsigned_t<T>;
    const UniformInt<T> dist{lo, static_cast<Unsigned>(static_cast<Unsigned>(hi) - static_cast<Unsigned>(lo))};
    FillPhilox(ctx, ReserveFor(generator_, *output), *output, dist);
  }

 private:
  GuardedPhilox generator_;
};

template <template <typename> class Dist, typename T>
absl::Status RegisterFloatOp(KernelRegistry* registry, const char* op) {
  return registry->Register<PhiloxRandomOp<Dist<T>>>(
      CpuKernel(op).TypeConstraint<T>("dtype").TypeConstraint("T", IndexTypes()));
}

}  // namespace

absl::Status RegisterRandomKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR((RegisterFloatOp<Uniform, float>(registry, "RandomUniform")));
  DFLOW_RETURN_IF_ERROR((RegisterFloatOp<Uniform, double>(registry, "RandomUniform")));
  DFLOW_RETURN_IF_ERROR((RegisterFloatOp<Normal, float>(registry, "RandomStandardNormal")));
  DFLOW_RETURN_IF_ERROR((RegisterFloatOp<Normal, double>(registry, "RandomStandardNormal")));
  DFLOW_RETURN_IF_ERROR((RegisterFloatOp<TruncatedNormal, float>(registry, "TruncatedNormal")));
  DFLOW_RETURN_IF_ERROR((RegisterFloatOp<TruncatedNormal, double>(registry, "TruncatedNormal")));
  DFLOW_RETURN_IF_ERROR(registry->Register<RandomUniformIntOp<int32_t>>(
      CpuKernel("RandomUniformInt").TypeConstraint<int32_t>("Tout").TypeConstraint("T", IndexTypes())));
  return registry->Register<RandomUniformIntOp<int64_t>>(
      CpuKernel("RandomUniformInt").TypeConstraint<int64_t>("Tout").TypeConstraint("T", IndexTypes()));
}

}  // namespace dflow
