#include "kernels/cpu/tensor_array.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/half.h"

namespace dflow {
namespace {

template <typename T>
void AddInto(const Tensor& a, const Tensor& b, Tensor* out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out->data<T>();
  for (int64_t i = 0; i < out->NumElements(); ++i) z[i] = x[i] + y[i];
}

template <typename T>
void AddIntoAsFloat(const Tensor& a, const Tensor& b, Tensor* out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out->data<T>();
  for (int64_t i = 0; i < out->NumElements(); ++i) {
    z[i] = T::FromFloat(x[i].ToFloat() + y[i].ToFloat());
  }
}

// a + b in a new tensor (the stored value may be shared with other readers).
absl::StatusOr<Tensor> Sum(const Tensor& a, const Tensor& b, Allocator* allocator) {
  DFLOW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(allocator, a.dtype(), a.shape()));
  switch (a.dtype()) {
    case DT_FLOAT: AddInto<float>(a, b, &out); break;
    case DT_DOUBLE: AddInto<double>(a, b, &out); break;
    case DT_INT32: AddInto<int32_t>(a, b, &out); break;
    case DT_INT64: AddInto<int64_t>(a, b, &out); break;
    case DT_HALF: AddIntoAsFloat<Half>(a, b, &out); break;
    case DT_BFLOAT16: AddIntoAsFloat<Bfloat16>(a, b, &out); break;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "TensorArray cannot aggregate writes of dtype ", DataTypeString(a.dtype())));
  }
  return out;
}

}  // namespace

absl::Status TensorArray::CheckSize(int64_t size) {
  if (size <= kMaxSize) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "TensorArray of ", size, " elements is over dflow's limit of ", kMaxSize));
}

TensorArray::TensorArray(std::string name, const Options& options)
    : name_(std::move(name)),
      options_(options),
      element_shape_(options.element_shape),
      slots_(options.size) {}

int64_t TensorArray::Size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(slots_.size());
}

PartialShape TensorArray::ElementShape() const {
  absl::MutexLock lock(&mu_);
  return element_shape_;
}

absl::Status TensorArray::CheckOpen() const {
  absl::MutexLock lock(&mu_);
  return CheckOpenLocked();
}

absl::Status TensorArray::CheckOpenLocked() const {
  if (!closed_) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("TensorArray ", name_, " has already been closed."));
}

void TensorArray::Close() {
  absl::MutexLock lock(&mu_);
  slots_.clear();
  closed_ = true;
}

absl::Status TensorArray::Write(int64_t index, const Tensor& value, Allocator* allocator) {
  absl::MutexLock lock(&mu_);
  return WriteLocked(index, value, allocator);
}

absl::Status TensorArray::WriteLocked(int64_t index, const Tensor& value, Allocator* allocator) {
  DFLOW_RETURN_IF_ERROR(CheckOpenLocked());
  if (value.dtype() != options_.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray dtype is ", DataTypeString(options_.dtype),
        " but Op is trying to write dtype ", DataTypeString(value.dtype()), "."));
  }
  const int64_t size = static_cast<int64_t>(slots_.size());
  if (index < 0 || (!options_.dynamic_size && index >= size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name_, ": Tried to write to index ", index,
        " but array is not resizeable and size is: ", size));
  }
  const PartialShape value_shape = value.shape().ToPartialShape();
  if (!element_shape_.IsCompatibleWith(value_shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name_, ": Could not write to TensorArray index ", index,
        " because the value shape is ", value.shape().DebugString(),
        " which is incompatible with the TensorArray's inferred element shape: ",
        element_shape_.ToString(), " (consider setting infer_shape=False)."));
  }
  if (options_.identical_element_shapes && !element_shape_.IsFullyDefined()) {
    element_shape_ = value_shape;
  }
  if (index >= size) {
    DFLOW_RETURN_IF_ERROR(CheckSize(index + 1));
    slots_.resize(index + 1);
  }
  Slot& slot = slots_[index];
  if (slot.cleared) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name_, ": Could not write to TensorArray index ", index,
        " because it has already been read and cleared."));
  }
  if (!slot.written) {
    slot.value = value;
    slot.written = true;
    return absl::OkStatus();
  }
  if (!options_.multiple_writes_aggregate) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name_, ": Could not write to TensorArray index ", index,
        " because it has already been written to."));
  }
  if (slot.value.shape() != value.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name_, ": Could not aggregate to TensorArray index ", index,
        " because the existing shape is ", slot.value.shape().DebugString(),
        " but the new input shape is ", value.shape().DebugString(), "."));
  }
  DFLOW_ASSIGN_OR_RETURN(slot.value, Sum(slot.value, value, allocator));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorArray::Read(int64_t index, Allocator* allocator) {
  absl::MutexLock lock(&mu_);
  DFLOW_RETURN_IF_ERROR(CheckOpenLocked());
  const int64_t size = static_cast<int64_t>(slots_.size());
  if (index < 0 || index >= size) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tried to read from index ", index, " but array size is: ", size));
  }
  Slot& slot = slots_[index];
  if (slot.cleared) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TensorArray ", name_, ": Could not read index ", index,
        " twice because it was cleared after a previous read (perhaps try setting "
        "clear_after_read = false?)."));
  }
  if (!slot.written) {
    if (!element_shape_.IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArray ", name_, ": Could not read from TensorArray index ", index,
          ".  Furthermore, the element shape is not fully defined: ", element_shape_.ToString(),
          ".  It is possible you are working with a resizeable TensorArray and stop_gradients "
          "is not allowing the gradients to be written.  If you set the full element_shape "
          "property on the forward TensorArray, the proper all-zeros tensor will be returned "
          "instead of incurring this error."));
    }
    DFLOW_ASSIGN_OR_RETURN(const TensorShape shape, TensorShape::Make(element_shape_.dims()));
    DFLOW_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Allocate(allocator, options_.dtype, shape));
    // Strings start empty; only plain numbers need clearing.
    if (DataTypeSize(options_.dtype) > 0 && zeros.TotalBytes() > 0) std::memset(zeros.raw_data(), 0, zeros.TotalBytes());
    return zeros;
  }
  Tensor value = slot.value;
  if (options_.clear_after_read) {
    slot.value = Tensor();
    slot.cleared = true;
  }
  return value;
}

}  // namespace dflow
