// Where(condition) with one input: the int64 coordinates [N, rank] of the true
// (non-zero) elements in row-major order, with TF 2.21's dtypes and texts
// (where_op.cc). NaN counts as non-zero and -0 as zero; a complex element is
// non-zero when either part is. The output size is known only after a counting
// pass, so the input is read twice.
#include <complex>
#include <cstdint>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return v.ToFloat() != 0.0f;
  } else {
    return v != T(0);  // also right for std::complex: either part non-zero
  }
}

template <typename T>
void WriteCoordinates(const Tensor& input, const Tensor& output) {
  const TensorShape& shape = input.shape();
  const int rank = shape.dims();
  const T* values = input.data<T>();
  int64_t* out = output.data<int64_t>();
  const int64_t n = input.NumElements();
  for (int64_t flat = 0; flat < n; ++flat) {
    if (!IsNonZero(values[flat])) continue;
    int64_t rest = flat;
    for (int d = rank - 1; d >= 0; --d) {
      out[d] = rest % shape.dim_size(d);
      rest /= shape.dim_size(d);
    }
    out += rank;
  }
}

template <typename T>
class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.shape().dims();
    OP_REQUIRES(ctx, rank >= 1, KernelError(*ctx, "WhereOp : Unhandled input dimensions: ", rank));
    const T* values = input.data<T>();
    int64_t count = 0;
    for (int64_t i = 0; i < input.NumElements(); ++i) count += IsNonZero(values[i]) ? 1 : 0;
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, {count, rank}));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    WriteCoordinates<T>(input, *output);
  }
};

// TF registers half on CPU only to refuse it (it would need a costly copy from
// a device).
class WhereHalfOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(absl::UnimplementedError(
        absl::StrCat(type_string(),
                     ": No WhereOp available for float16/half type on CPU; "
                     "dying in CPU WhereOp to avoid "
                     "silently creating costly copies from device.")));
  }
};

template <typename T>
absl::Status RegisterWhere(KernelRegistry* registry) {
  return registry->Register<WhereOp<T>>(CpuKernel("Where").TypeConstraint<T>("T"));
}

}  // namespace

absl::Status RegisterWhereKernels(KernelRegistry* registry) {
  // TF 2.21's CPU list: TF_CALL_NUMBER_TYPES and bool (no quantized types).
  DFLOW_RETURN_IF_ERROR(RegisterWhere<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<int64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<int16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<int8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<uint8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<uint16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<uint32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<uint64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<bool>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhere<Bfloat16>(registry));
  DFLOW_RETURN_IF_ERROR(registry->Register<WhereOp<std::complex<float>>>(
      CpuKernel("Where").TypeConstraint("T", {DT_COMPLEX64})));
  DFLOW_RETURN_IF_ERROR(registry->Register<WhereOp<std::complex<double>>>(
      CpuKernel("Where").TypeConstraint("T", {DT_COMPLEX128})));
  return registry->Register<WhereHalfOp>(CpuKernel("Where").TypeConstraint("T", {DT_HALF}));
}

}  // namespace dflow
