#include "kernels/cpu/array_util.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {

std::vector<DataType> NumericTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_INT32,  DT_INT64,  DT_INT16, DT_INT8,
          DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL};
}

std::vector<DataType> NumericOrHalfTypes() {
  std::vector<DataType> types = NumericTypes();
  types.insert(types.end(), {DT_HALF, DT_BFLOAT16});
  return types;
}

std::vector<DataType> CopyableTypes() {
  std::vector<DataType> types = NumericTypes();
  types.insert(types.end(), {DT_HALF, DT_BFLOAT16, DT_COMPLEX64, DT_COMPLEX128, DT_STRING, DT_QINT8,
                             DT_QUINT8, DT_QINT16, DT_QUINT16, DT_QINT32});
  return types;
}

std::vector<DataType> IndexTypes() { return {DT_INT32, DT_INT64}; }

std::vector<DataType> PodAndStringTypes() {
  std::vector<DataType> types = NumericOrHalfTypes();
  types.insert(types.end(), {DT_COMPLEX64, DT_COMPLEX128, DT_STRING});
  return types;
}

double StringBytes(const Tensor& tensor) {
  if (tensor.dtype() != DT_STRING) return 0;
  double bytes = 0;
  const std::string* strings = tensor.data<std::string>();
  for (int64_t i = 0; i < tensor.NumElements(); ++i) bytes += strings[i].size();
  return bytes;
}

absl::Status CheckReplicatedStrings(const OpKernelContext& ctx, const Tensor& input,
                                    const TensorShape& shape) {
  if (input.dtype() != DT_STRING || input.NumElements() == 0) return absl::OkStatus();
  const double copies = static_cast<double>(shape.num_elements()) /
                        static_cast<double>(input.NumElements());
  return ctx.CheckStringLimits(shape, StringBytes(input) * copies);
}

std::vector<int64_t> ReadIndices(const Tensor& tensor) {
  if (tensor.dtype() == DT_INT64) {
    absl::Span<const int64_t> values = tensor.flat<int64_t>();
    return std::vector<int64_t>(values.begin(), values.end());
  }
  absl::Span<const int32_t> values = tensor.flat<int32_t>();
  return std::vector<int64_t>(values.begin(), values.end());
}

absl::Status WriteShape(const OpKernelContext& ctx, const TensorShape& shape, const Tensor& out) {
  absl::Status status;
  DispatchIndexType(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* data = out.data<T>();
    for (int i = 0; i < shape.dims(); ++i) {
      const int64_t dim = shape.dim_size(i);
      if (dim > std::numeric_limits<T>::max()) {
        status = KernelError(ctx, "Shape output type is 32-bit but dim ", i, " of ",
                             shape.DebugString(), " is ", dim);
        return;
      }
      data[i] = static_cast<T>(dim);
    }
  });
  return status;
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

absl::StatusOr<TensorShape> OutputShape(const OpKernelContext& ctx,
                                        const std::vector<int64_t>& dims) {
  absl::StatusOr<TensorShape> shape = TensorShape::Make(dims);
  if (!shape.ok()) {
    return KernelError(ctx, "output shape ", DimsString(dims), " is invalid: ",
                       shape.status().message());
  }
  return shape;
}

void CopyTensorContents(OpKernelContext* ctx, const Tensor& from, const Tensor& to) {
  DispatchByElementSize(from.dtype(), [&](auto zero) {
    using T = decltype(zero);
    ParallelCopy<T>(ctx, from.data<T>(), to.data<T>(), from.NumElements());
  });
}

absl::StatusOr<Tensor> CopyRows(OpKernelContext* ctx, const Tensor& t, int64_t begin,
                                const TensorShape& shape) {
  DFLOW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(ctx->allocator(), t.dtype(), shape));
  const int64_t row = DimProduct(t.shape(), 1, t.shape().dims());
  DispatchByElementSize(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    ParallelCopy<T>(ctx, t.data<T>() + begin * row, out.data<T>(), out.NumElements());
  });
  return out;
}

}  // namespace dflow
