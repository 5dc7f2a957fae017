#include "kernels/io/variable_update.h"

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {
namespace {

// Sharded over the pool: a large layer's update is memory-bound, and both cores help.
template <typename T>
void Apply(OpKernelContext* ctx, const Tensor& var, const Tensor& delta, double scale,
           Tensor* out) {
  const T* a = var.data<T>();
  const T* d = delta.data<T>();
  T* o = out->data<T>();
  const T s = static_cast<T>(scale);
  ParallelForElements(ctx, var.NumElements(), 2, [=](int64_t begin, int64_t end) {
    if (scale == 1) {
      for (int64_t i = begin; i < end; ++i) o[i] = a[i] + d[i];
    } else if (scale == -1) {
      for (int64_t i = begin; i < end; ++i) o[i] = a[i] - d[i];
    } else {
      for (int64_t i = begin; i < end; ++i) o[i] = a[i] + s * d[i];
    }
  });
}

}  // namespace

absl::Status AddScaled(OpKernelContext* ctx, double scale, const Tensor& delta, Tensor* value) {
  if (value->dtype() == DT_BOOL) {
    return absl::UnimplementedError(absl::StrCat("variable updates of ", DataTypeString(DT_BOOL)));
  }
  // In place only when the variable holds the sole reference (checked before `target`
  // takes one) and delta is another buffer.
  const bool in_place = value->IsSoleOwner() && !value->SharesBufferWith(delta);
  Tensor target = *value;
  if (!in_place) {
    DFLOW_ASSIGN_OR_RETURN(target, Tensor::Allocate(ctx->allocator(), value->dtype(),
                                                    value->shape()));
  }
  const bool supported = DispatchNumeric(value->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) Apply<T>(ctx, *value, delta, scale, &target);
  });
  if (!supported) {
    return absl::UnimplementedError(
        absl::StrCat("variable updates of ", DataTypeString(value->dtype())));
  }
  Tensor old = std::move(*value);
  *value = std::move(target);
  return absl::OkStatus();
}

absl::StatusOr<double> ScalarAsDouble(const Tensor& t, absl::string_view what) {
  if (t.shape().dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not a scalar: ", t.shape().DebugString()));
  }
  double value = 0;
  const bool numeric = DispatchNumeric(t.dtype(), [&](auto zero) {
    value = static_cast<double>(t.scalar<decltype(zero)>());
  });
  if (!numeric) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be numeric, not ", DataTypeString(t.dtype())));
  }
  return value;
}

}  // namespace dflow
