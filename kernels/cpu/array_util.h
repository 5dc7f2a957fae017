// Helpers private to the array kernels (array_ops.cc, cast_op.cc, concat_ops.cc,
// transpose_op.cc): dtype lists, element-size dispatch, axis and index-tensor readers,
// and a parallel element copy.
#ifndef DFLOW_KERNELS_CPU_ARRAY_UTIL_H_
#define DFLOW_KERNELS_CPU_ARRAY_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cpu/kernel_util.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// The dtypes DispatchNumeric handles (arithmetic kernels: OnesLike).
std::vector<DataType> NumericTypes();
// NumericTypes() plus half and bfloat16: the dtypes DispatchNumericOrHalf handles (Cast).
std::vector<DataType> NumericOrHalfTypes();
// Every dtype whose elements can be copied: fixed-size types and strings (data movement
// kernels: Transpose, Concat, Pack, Fill, ...).
std::vector<DataType> CopyableTypes();
// int32 and int64, the dtypes of shape, axis and perm inputs.
std::vector<DataType> IndexTypes();
// Every number type, bool and string: TF's TF_CALL_ALL_TYPES on CPU, less resource and
// variant (BroadcastTo, ReverseV2, Roll); unlike CopyableTypes(), no quantized types.
std::vector<DataType> PodAndStringTypes();

// A CPU KernelDefBuilder for `op`.
inline KernelDefBuilder CpuKernel(std::string op) {
  return KernelDefBuilder(std::move(op)).Device("CPU");
}

// Stands in for any 16-byte element (complex128) when only moving bytes.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls `fn(T{})` with T a type whose copies move one element of `dtype`: an unsigned
// integer (or Bytes16) of the element's size, std::string for DT_STRING. Returns false
// (without calling) for dtypes that cannot be copied (resource, variant).
template <typename Fn>
bool DispatchByElementSize(DataType dtype, Fn&& fn) {
  if (dtype == DT_STRING) {
    fn(std::string());
    return true;
  }
  switch (DataTypeSize(dtype)) {
    case 1: fn(uint8_t{}); return true;
    case 2: fn(uint16_t{}); return true;
    case 4: fn(uint32_t{}); return true;
    case 8: fn(uint64_t{}); return true;
    case 16: fn(Bytes16{}); return true;
    default: return false;
  }
}

// True when DispatchByElementSize handles `dtype` (its elements can be copied).
inline bool IsCopyableType(DataType dtype) {
  return DispatchByElementSize(dtype, [](auto) {});
}

// Calls `fn(T{})` with T int32_t or int64_t for an index dtype (output of Shape/Size).
template <typename Fn>
void DispatchIndexType(DataType dtype, Fn&& fn) {
  if (dtype == DT_INT64) {
    fn(int64_t{});
  } else {
    fn(int32_t{});
  }
}

// Maps `axis` in [-rank, rank) to [0, rank); nullopt when out of range.
inline std::optional<int> NormalizeAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The values of an int32 or int64 tensor, widened to int64.
std::vector<int64_t> ReadIndices(const Tensor& tensor);

// The characters a string tensor's elements hold in all (0 for other dtypes).
double StringBytes(const Tensor& tensor);

// Rule of the kernels that replicate strings (Tile, Fill, BroadcastTo): OK when an output
// of `shape` made of copies of `input`'s elements fits the session's limits, counting
// the characters (each input element copied out/in times, as a double: no overflow).
absl::Status CheckReplicatedStrings(const OpKernelContext& ctx, const Tensor& input,
                                    const TensorShape& shape);

// Writes `shape`'s dims into the int32/int64 vector `out` (Shape, VariableShape);
// INVALID_ARGUMENT when a dim does not fit an int32 output.
absl::Status WriteShape(const OpKernelContext& ctx, const TensorShape& shape, const Tensor& out);

// Product of `shape`'s dims [begin, end): the rows or columns of a view around an axis.
inline int64_t DimProduct(const TensorShape& shape, int begin, int end) {
  int64_t product = 1;
  for (int i = begin; i < end; ++i) product *= shape.dim_size(i);
  return product;
}

// "[2,-1,3]": requested dims as users wrote them (may hold -1).
std::string DimsString(absl::Span<const int64_t> dims);

// The output shape `dims`, or INVALID_ARGUMENT "<op>: output shape [..] is invalid: <why>"
// (a negative dim, or more elements than int64 holds).
absl::StatusOr<TensorShape> OutputShape(const OpKernelContext& ctx,
                                        const std::vector<int64_t>& dims);

// Rough cycles to copy one element of T (drives ParallelForElements' sharding).
template <typename T>
constexpr int64_t CopyCost() {
  // memcpy moves about 8 bytes a cycle; a string copy may allocate.
  if constexpr (std::is_same_v<T, std::string>) return 40;
  return std::max<int64_t>(1, sizeof(T) / 8);
}

// dst[i] = src[i] for i in [0, n), split across the pool when large.
template <typename T>
void ParallelCopy(OpKernelContext* ctx, const T* src, T* dst, int64_t n) {
  ParallelForElements(ctx, n, CopyCost<T>(), [src, dst](int64_t begin, int64_t end) {
    std::copy(src + begin, src + end, dst + begin);
  });
}

// Copies all of `from` into `to` (same dtype and element count).
// REQUIRES: the dtype is copyable (CopyableTypes()).
void CopyTensorContents(OpKernelContext* ctx, const Tensor& from, const Tensor& to);

// A new tensor of `shape` holding t's elements from row `begin` on (a row is t's shape
// without its first dim): rows [begin, begin + rows) of t, reshaped to `shape`.
// REQUIRES: t's dtype is copyable; the rows are within t.
absl::StatusOr<Tensor> CopyRows(OpKernelContext* ctx, const Tensor& t, int64_t begin,
                                const TensorShape& shape);

// Registration of the kernels that live outside array_ops.cc.
absl::Status RegisterCastKernel(KernelRegistry* registry);       // cast_op.cc
absl::Status RegisterConcatKernels(KernelRegistry* registry);    // concat_ops.cc
absl::Status RegisterTransposeKernel(KernelRegistry* registry);  // transpose_op.cc

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_ARRAY_UTIL_H_
