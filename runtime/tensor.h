// Tensor: a dtype, a shape and a refcounted buffer from an Allocator.
//
// Copying a Tensor shares its buffer (a refcount increment); the buffer returns to its
// allocator when the last Tensor referring to it goes away. That is the one shared-
// ownership mechanism for tensor memory (docs/STYLE.md #8): a buffer in use by an
// asynchronous consumer stays alive as long as that consumer holds a Tensor.
//
// DT_STRING tensors hold std::string elements, DT_RESOURCE tensors ResourceHandleProto
// elements (TF's handle: device, container, name, dtypes_and_shapes) and DT_VARIANT
// tensors Variant elements (runtime/variant.h), constructed and destroyed with the
// buffer; every other supported dtype is plain bytes.
//
// Thread-safety: distinct Tensor objects may be used from different threads even when
// they share a buffer; the contents are not synchronised.
#ifndef DFLOW_RUNTIME_TENSOR_H_
#define DFLOW_RUNTIME_TENSOR_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/types.h"
#include "proto/resource_handle.pb.h"
#include "proto/tensor.pb.h"
#include "runtime/allocator.h"
#include "runtime/half.h"
#include "runtime/tensor_shape.h"
#include "runtime/variant.h"

namespace dflow {

// The memory behind one or more Tensors. Created with refcount 1.
class TensorBuffer {
 public:
  // nullptr when the allocator cannot provide the memory.
  static TensorBuffer* Allocate(Allocator* allocator, DataType dtype, int64_t num_elements);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Allocator* allocator() const { return allocator_; }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref();
  bool RefCountIsOne() const { return refs_.load(std::memory_order_acquire) == 1; }

 private:
  TensorBuffer(Allocator* allocator, DataType dtype, void* data, size_t bytes, int64_t n);
  ~TensorBuffer();

  std::atomic<int32_t> refs_{1};
  Allocator* allocator_;  // not owned; outlives every buffer it made
  DataType dtype_;
  void* data_;
  size_t bytes_;
  int64_t num_elements_;
};

class Tensor {
 public:
  // An uninitialised tensor (dtype DT_INVALID).
  Tensor() = default;
  ~Tensor() { Release(); }
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other);
  Tensor& operator=(Tensor&& other) noexcept;

  // RESOURCE_EXHAUSTED (naming dtype, shape and allocator) when memory is short;
  // INVALID_ARGUMENT for dtypes without a fixed element size other than string.
  static absl::StatusOr<Tensor> Allocate(Allocator* allocator, DataType dtype,
                                         const TensorShape& shape);
  // Decodes TF's TensorProto rules (tensor_content wins; typed fields repeat their last
  // value; empty means zeros). INVALID_ARGUMENT for malformed protos.
  static absl::StatusOr<Tensor> FromProto(Allocator* allocator, const TensorProto& proto);
  // Writes dtype, shape and contents (tensor_content for fixed-size dtypes).
  TensorProto ToProto() const;

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int64_t NumElements() const { return shape_.num_elements(); }
  size_t TotalBytes() const { return static_cast<size_t>(NumElements()) * DataTypeSize(dtype_); }
  bool IsInitialized() const { return dtype_ != DT_INVALID; }
  const TensorBuffer* buffer() const { return buffer_; }
  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  // True when this Tensor is the buffer's only owner (so a kernel may write in place).
  bool IsSoleOwner() const { return buffer_ != nullptr && buffer_->RefCountIsOne(); }

  // Element access. REQUIRES: T matches dtype() (checked in debug builds only).
  template <typename T>
  T* data() const {
    return static_cast<T*>(buffer_ == nullptr ? nullptr : buffer_->data());
  }
  template <typename T>
  absl::Span<T> flat() const {
    return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  template <typename T>
  T& scalar() const {
    return *data<T>();
  }
  void* raw_data() const { return buffer_ == nullptr ? nullptr : buffer_->data(); }

  // Drops the buffer reference, leaving an uninitialised tensor (cheaper than = Tensor()).
  void Clear() {
    Release();
    dtype_ = DT_INVALID;
  }

  // The same buffer viewed with another shape. REQUIRES: same element count.
  Tensor Reshaped(const TensorShape& shape) const;

  // "Tensor<type: float shape: [2,2] values: [1 2 3 4]>" with at most `max_entries` values.
  std::string DebugString(int max_entries = 16) const;

 private:
  Tensor(DataType dtype, TensorShape shape, TensorBuffer* buffer)
      : dtype_(dtype), shape_(std::move(shape)), buffer_(buffer) {}
  void Release();

  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  TensorBuffer* buffer_ = nullptr;  // owns one reference
};

// Calls `fn(T{})` with T the C++ type of `dtype` for the numeric and bool dtypes;
// returns false (without calling) for other dtypes.
template <typename Fn>
bool DispatchNumeric(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT: fn(float{}); return true;
    case DT_DOUBLE: fn(double{}); return true;
    case DT_INT32: fn(int32_t{}); return true;
    case DT_INT64: fn(int64_t{}); return true;
    case DT_INT16: fn(int16_t{}); return true;
    case DT_INT8: fn(int8_t{}); return true;
    case DT_UINT8: fn(uint8_t{}); return true;
    case DT_UINT16: fn(uint16_t{}); return true;
    case DT_UINT32: fn(uint32_t{}); return true;
    case DT_UINT64: fn(uint64_t{}); return true;
    case DT_BOOL: fn(bool{}); return true;
    default: return false;
  }
}

// DispatchNumeric plus DT_HALF (Half) and DT_BFLOAT16 (Bfloat16), for the code that
// handles the 16-bit floats (Cast, feeds, printing). A separate dispatcher because
// DispatchNumeric's callers do C++ arithmetic on T, which Half and Bfloat16 do not have.
template <typename Fn>
bool DispatchNumericOrHalf(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_HALF: fn(Half{}); return true;
    case DT_BFLOAT16: fn(Bfloat16{}); return true;
    default: return DispatchNumeric(dtype, std::forward<Fn>(fn));
  }
}

// The DataType of a C++ element type.
template <typename T> constexpr DataType DataTypeOf();
template <> constexpr DataType DataTypeOf<float>() { return DT_FLOAT; }
template <> constexpr DataType DataTypeOf<double>() { return DT_DOUBLE; }
template <> constexpr DataType DataTypeOf<int32_t>() { return DT_INT32; }
template <> constexpr DataType DataTypeOf<int64_t>() { return DT_INT64; }
template <> constexpr DataType DataTypeOf<int16_t>() { return DT_INT16; }
template <> constexpr DataType DataTypeOf<int8_t>() { return DT_INT8; }
template <> constexpr DataType DataTypeOf<uint8_t>() { return DT_UINT8; }
template <> constexpr DataType DataTypeOf<uint16_t>() { return DT_UINT16; }
template <> constexpr DataType DataTypeOf<uint32_t>() { return DT_UINT32; }
template <> constexpr DataType DataTypeOf<uint64_t>() { return DT_UINT64; }
template <> constexpr DataType DataTypeOf<bool>() { return DT_BOOL; }
template <> constexpr DataType DataTypeOf<Half>() { return DT_HALF; }
template <> constexpr DataType DataTypeOf<Bfloat16>() { return DT_BFLOAT16; }
template <> constexpr DataType DataTypeOf<std::string>() { return DT_STRING; }
template <> constexpr DataType DataTypeOf<ResourceHandleProto>() { return DT_RESOURCE; }
template <> constexpr DataType DataTypeOf<Variant>() { return DT_VARIANT; }

}  // namespace dflow

#endif  // DFLOW_RUNTIME_TENSOR_H_
