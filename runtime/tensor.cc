#include "runtime/tensor.h"

#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "graph/tensor_proto_util.h"

namespace dflow {
namespace {

// Copies `values` into `out` (n elements), repeating the last value (TF's rule).
template <typename Dst, typename Src>
void FillFromTyped(const Src& values, int64_t n, Dst* out) {
  const int64_t have = std::min<int64_t>(values.size(), n);
  for (int64_t i = 0; i < have; ++i) out[i] = static_cast<Dst>(values.Get(i));
  const Dst fill = have > 0 ? out[have - 1] : Dst{};
  for (int64_t i = have; i < n; ++i) out[i] = fill;
}

// Complex values come as (re, im) pairs in one repeated field.
template <typename Part, typename Src>
void FillPairsFromTyped(const Src& values, int64_t n, Part* out) {
  const int64_t have = std::min<int64_t>(values.size() / 2, n);
  for (int64_t i = 0; i < 2 * have; ++i) out[i] = values.Get(i);
  for (int64_t i = have; i < n; ++i) {
    out[2 * i] = have > 0 ? out[2 * have - 2] : Part{};
    out[2 * i + 1] = have > 0 ? out[2 * have - 1] : Part{};
  }
}

// Sub-byte and 8-bit float dtypes: TF writes int4/uint4/int2/uint2 in int_val and the
// float8/float4 ones as raw bytes in float8_val, one element per byte.
void FillBytesFromString(const std::string& bytes, int64_t n, uint8_t* out) {
  const int64_t have = std::min<int64_t>(static_cast<int64_t>(bytes.size()), n);
  std::memcpy(out, bytes.data(), have);
  std::memset(out + have, have > 0 ? out[have - 1] : 0, n - have);
}

void DecodeTyped(const TensorProto& p, const Tensor& t) {
  const int64_t n = t.NumElements();
  switch (p.dtype()) {
    case DT_FLOAT: FillFromTyped(p.float_val(), n, t.data<float>()); break;
    case DT_DOUBLE: FillFromTyped(p.double_val(), n, t.data<double>()); break;
    case DT_INT32: FillFromTyped(p.int_val(), n, t.data<int32_t>()); break;
    case DT_INT16: FillFromTyped(p.int_val(), n, t.data<int16_t>()); break;
    case DT_INT8: FillFromTyped(p.int_val(), n, t.data<int8_t>()); break;
    case DT_UINT8: FillFromTyped(p.int_val(), n, t.data<uint8_t>()); break;
    case DT_UINT16: FillFromTyped(p.int_val(), n, t.data<uint16_t>()); break;
    case DT_HALF: case DT_BFLOAT16: FillFromTyped(p.half_val(), n, t.data<uint16_t>()); break;
    case DT_INT64: FillFromTyped(p.int64_val(), n, t.data<int64_t>()); break;
    case DT_UINT32: FillFromTyped(p.uint32_val(), n, t.data<uint32_t>()); break;
    case DT_UINT64: FillFromTyped(p.uint64_val(), n, t.data<uint64_t>()); break;
    case DT_BOOL: FillFromTyped(p.bool_val(), n, t.data<bool>()); break;
    case DT_STRING: FillFromTyped(p.string_val(), n, t.data<std::string>()); break;
    case DT_RESOURCE: FillFromTyped(p.resource_handle_val(), n, t.data<ResourceHandleProto>()); break;
    case DT_COMPLEX64: FillPairsFromTyped(p.scomplex_val(), n, t.data<float>()); break;
    case DT_COMPLEX128: FillPairsFromTyped(p.dcomplex_val(), n, t.data<double>()); break;
    case DT_QINT8: FillFromTyped(p.int_val(), n, t.data<int8_t>()); break;
    case DT_QUINT8: FillFromTyped(p.int_val(), n, t.data<uint8_t>()); break;
    case DT_QINT16: FillFromTyped(p.int_val(), n, t.data<int16_t>()); break;
    case DT_QUINT16: FillFromTyped(p.int_val(), n, t.data<uint16_t>()); break;
    case DT_QINT32: FillFromTyped(p.int_val(), n, t.data<int32_t>()); break;
    case DT_INT4: case DT_INT2: FillFromTyped(p.int_val(), n, t.data<int8_t>()); break;
    case DT_UINT4: case DT_UINT2: FillFromTyped(p.int_val(), n, t.data<uint8_t>()); break;
    case DT_FLOAT8_E5M2: case DT_FLOAT8_E4M3FN: case DT_FLOAT8_E4M3FNUZ:
    case DT_FLOAT8_E4M3B11FNUZ: case DT_FLOAT8_E5M2FNUZ: case DT_FLOAT4_E2M1FN:
      FillBytesFromString(p.float8_val(), n, t.data<uint8_t>());
      break;
    default: break;
  }
}

// DT_STRING tensor_content: all varint32 lengths first, then all the bytes.
absl::Status DecodeStringContent(const std::string& content, const Tensor& t) {
  const int64_t n = t.NumElements();
  std::vector<uint32_t> lengths(n);
  size_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t value = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= content.size() || shift > 28) {
        return absl::InvalidArgumentError("string tensor_content has malformed lengths");
      }
      const uint8_t byte = static_cast<uint8_t>(content[pos++]);
      value |= static_cast<uint32_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    lengths[i] = value;
  }
  std::string* out = t.data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    if (lengths[i] > content.size() - pos) {
      return absl::InvalidArgumentError("string tensor_content is shorter than its lengths");
    }
    out[i].assign(content, pos, lengths[i]);
    pos += lengths[i];
  }
  return absl::OkStatus();
}

template <typename T>
void AppendValues(const Tensor& t, int max_entries, std::vector<std::string>* out) {
  const T* data = t.data<T>();
  const int64_t n = std::min<int64_t>(t.NumElements(), max_entries);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      out->push_back(absl::StrCat("\"", data[i], "\""));
    } else if constexpr (std::is_same_v<T, bool>) {
      out->push_back(data[i] ? "1" : "0");
    } else if constexpr (kIsHalfOrBfloat16<T>) {
      out->push_back(absl::StrCat(data[i].ToFloat()));
    } else {
      out->push_back(absl::StrCat(+data[i]));
    }
  }
}

}  // namespace

TensorBuffer::TensorBuffer(Allocator* allocator, DataType dtype, void* data, size_t bytes,
                           int64_t n)
    : allocator_(allocator), dtype_(dtype), data_(data), bytes_(bytes), num_elements_(n) {}

TensorBuffer::~TensorBuffer() {
  if (dtype_ == DT_STRING) {
    std::string* strings = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) strings[i].~basic_string();
  } else if (dtype_ == DT_RESOURCE) {
    auto* handles = static_cast<ResourceHandleProto*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) handles[i].~ResourceHandleProto();
  } else if (dtype_ == DT_VARIANT) {
    auto* variants = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) variants[i].~Variant();
  }
  allocator_->DeallocateRaw(data_, bytes_);
}

TensorBuffer* TensorBuffer::Allocate(Allocator* allocator, DataType dtype, int64_t n) {
  const size_t element = dtype == DT_STRING     ? sizeof(std::string)
                         : dtype == DT_RESOURCE ? sizeof(ResourceHandleProto)
                         : dtype == DT_VARIANT  ? sizeof(Variant)
                                                : DataTypeSize(dtype);
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<size_t>(n), element, &bytes)) return nullptr;
  bytes = std::max<size_t>(bytes, 1);  // zero-element tensors still get a unique buffer
  void* data = allocator->AllocateRaw(Allocator::kAlignment, bytes);
  if (data == nullptr) return nullptr;
  if (dtype == DT_STRING) {
    std::string* strings = static_cast<std::string*>(data);
    for (int64_t i = 0; i < n; ++i) new (&strings[i]) std::string();
  } else if (dtype == DT_RESOURCE) {
    auto* handles = static_cast<ResourceHandleProto*>(data);
    for (int64_t i = 0; i < n; ++i) new (&handles[i]) ResourceHandleProto();
  } else if (dtype == DT_VARIANT) {
    auto* variants = static_cast<Variant*>(data);
    for (int64_t i = 0; i < n; ++i) new (&variants[i]) Variant();
  }
  return new TensorBuffer(allocator, dtype, data, bytes, n);
}

void TensorBuffer::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_), shape_(other.shape_), buffer_(other.buffer_) {
  if (buffer_ != nullptr) buffer_->Ref();
}

Tensor::Tensor(Tensor&& other) noexcept
    : dtype_(other.dtype_), shape_(std::move(other.shape_)), buffer_(other.buffer_) {
  other.buffer_ = nullptr;
  other.dtype_ = DT_INVALID;
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    if (other.buffer_ != nullptr) other.buffer_->Ref();
    Release();
    dtype_ = other.dtype_;
    shape_ = other.shape_;
    buffer_ = other.buffer_;
  }
  return *this;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    Release();
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    buffer_ = other.buffer_;
    other.buffer_ = nullptr;
    other.dtype_ = DT_INVALID;
  }
  return *this;
}

void Tensor::Release() {
  if (buffer_ != nullptr) buffer_->Unref();
  buffer_ = nullptr;
}

absl::StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DataType dtype,
                                        const TensorShape& shape) {
  if (dtype != DT_STRING && dtype != DT_RESOURCE && dtype != DT_VARIANT &&
      DataTypeSize(dtype) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot allocate a tensor of dtype ", DataTypeString(dtype)));
  }
  TensorBuffer* buffer = TensorBuffer::Allocate(allocator, dtype, shape.num_elements());
  if (buffer == nullptr) {
    // TF's text (no space before the shape), then what the allocator knows; the device
    // and the node are added by the caller and the executor.
    std::string message = absl::StrCat("OOM when allocating tensor with shape",
                                       shape.DebugString(), " and type ", DataTypeString(dtype),
                                       " by allocator ", allocator->Name());
    const std::string state = allocator->DescribeState();
    if (!state.empty()) absl::StrAppend(&message, "\n", state);
    return absl::ResourceExhaustedError(message);
  }
  return Tensor(dtype, shape, buffer);
}

absl::StatusOr<Tensor> Tensor::FromProto(Allocator* allocator, const TensorProto& proto) {
  DFLOW_RETURN_IF_ERROR(CheckTensorProto(proto));
  if ((proto.dtype() == DT_VARIANT || proto.dtype() == DT_RESOURCE) &&
      (!proto.tensor_content().empty() || proto.variant_val_size() > 0)) {
    return absl::UnimplementedError(absl::StrCat(
        "A ", DataTypeString(proto.dtype()), " tensor cannot be built from serialized bytes "
        "(variant constants are not supported)"));
  }
  DFLOW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  DFLOW_ASSIGN_OR_RETURN(Tensor tensor, Allocate(allocator, proto.dtype(), shape));
  const std::string& content = proto.tensor_content();
  if (content.empty()) {
    DecodeTyped(proto, tensor);
  } else if (proto.dtype() == DT_STRING) {
    DFLOW_RETURN_IF_ERROR(DecodeStringContent(content, tensor));
  } else {
    std::memcpy(tensor.raw_data(), content.data(), content.size());
  }
  return tensor;
}

TensorProto Tensor::ToProto() const {
  TensorProto proto;
  proto.set_dtype(dtype_);
  *proto.mutable_tensor_shape() = shape_.ToProto();
  if (dtype_ == DT_STRING) {
    for (const std::string& s : flat<std::string>()) proto.add_string_val(s);
  } else if (dtype_ == DT_RESOURCE) {
    for (const ResourceHandleProto& h : flat<ResourceHandleProto>()) *proto.add_resource_handle_val() = h;
  } else if (IsInitialized()) {
    proto.set_tensor_content(std::string(static_cast<const char*>(raw_data()), TotalBytes()));
  }
  return proto;
}

Tensor Tensor::Reshaped(const TensorShape& shape) const {
  if (buffer_ != nullptr) buffer_->Ref();
  return Tensor(dtype_, shape, buffer_);
}

std::string Tensor::DebugString(int max_entries) const {
  if (!IsInitialized()) return "Tensor<uninitialized>";
  std::vector<std::string> values;
  if (dtype_ == DT_STRING) {
    AppendValues<std::string>(*this, max_entries, &values);
  } else if (dtype_ == DT_VARIANT) {
    const Variant* v = data<Variant>();
    for (int64_t i = 0; i < std::min<int64_t>(NumElements(), max_entries); ++i) {
      values.push_back(v[i].DebugString());
    }
  } else if (dtype_ == DT_RESOURCE) {
    const ResourceHandleProto* h = data<ResourceHandleProto>();
    for (int64_t i = 0; i < std::min<int64_t>(NumElements(), max_entries); ++i) {
      values.push_back(absl::StrCat("<ResourceHandle(name=\"", h[i].name(), "\", device=\"",
                                    h[i].device(), "\", container=\"", h[i].container(), "\")>"));
    }
  } else {
    DispatchNumericOrHalf(dtype_, [&](auto zero) {
      AppendValues<decltype(zero)>(*this, max_entries, &values);
    });
  }
  return absl::StrCat("Tensor<type: ", DataTypeString(dtype_), " shape: ", shape_.DebugString(),
                      " values: [", absl::StrJoin(values, " "),
                      NumElements() > max_entries ? " ..." : "", "]>");
}

}  // namespace dflow
