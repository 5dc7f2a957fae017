#include "graph/tensor_proto_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/partial_shape.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace dflow {
namespace {

// Values per element in the typed field (complex types store (re, im) pairs).
int ValuesPerElement(DataType t) {
  return (t == DT_COMPLEX64 || t == DT_COMPLEX128) ? 2 : 1;
}

template <typename T, typename Out>
void AppendLittleEndian(const std::string& bytes, int64_t n, std::vector<Out>* out) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out->push_back(static_cast<Out>(v));
  }
}

}  // namespace

int TypedValueCount(const TensorProto& p) {
  switch (p.dtype()) {
    case DT_FLOAT: return p.float_val_size();
    case DT_DOUBLE: return p.double_val_size();
    case DT_INT32: case DT_INT16: case DT_INT8: case DT_UINT8: case DT_UINT16:
    case DT_QINT8: case DT_QUINT8: case DT_QINT16: case DT_QUINT16: case DT_QINT32:
      return p.int_val_size();
    case DT_INT64: return p.int64_val_size();
    case DT_UINT32: return p.uint32_val_size();
    case DT_UINT64: return p.uint64_val_size();
    case DT_BOOL: return p.bool_val_size();
    case DT_STRING: return p.string_val_size();
    case DT_COMPLEX64: return p.scomplex_val_size();
    case DT_COMPLEX128: return p.dcomplex_val_size();
    case DT_INT4: case DT_UINT4: case DT_INT2: case DT_UINT2: return p.int_val_size();
    case DT_FLOAT8_E5M2: case DT_FLOAT8_E4M3FN: case DT_FLOAT8_E4M3FNUZ:
    case DT_FLOAT8_E4M3B11FNUZ: case DT_FLOAT8_E5M2FNUZ: case DT_FLOAT4_E2M1FN:
      return static_cast<int>(p.float8_val().size());
    case DT_HALF: case DT_BFLOAT16: return p.half_val_size();
    case DT_RESOURCE: return p.resource_handle_val_size();
    case DT_VARIANT: return p.variant_val_size();
    default: return 0;
  }
}

absl::StatusOr<int64_t> TensorProtoNumElements(const TensorProto& proto) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape shape, PartialShape::FromProto(proto.tensor_shape()));
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor shape ", shape.ToString(), " is not fully defined"));
  }
  std::optional<int64_t> n = shape.NumElements();
  if (!n.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor shape ", shape.ToString(), " has more elements than fit in int64"));
  }
  return *n;
}

absl::Status CheckTensorProto(const TensorProto& proto) {
  const int dtype = proto.dtype();
  if (!IsKnownDataType(dtype) || IsRefType(proto.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat("tensor has invalid dtype ", dtype));
  }
  DFLOW_ASSIGN_OR_RETURN(int64_t n, TensorProtoNumElements(proto));
  const int64_t size = DataTypeSize(proto.dtype());
  if (!proto.tensor_content().empty()) {
    if (size == 0) {
      if (proto.dtype() == DT_STRING) return absl::OkStatus();  // varint-framed list
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor_content is not supported for dtype ", DataTypeString(proto.dtype())));
    }
    int64_t want;
    if (__builtin_mul_overflow(n, size, &want) ||
        want != static_cast<int64_t>(proto.tensor_content().size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor_content holds ", proto.tensor_content().size(), " bytes but shape ",
          PartialShape::FromProto(proto.tensor_shape())->ToString(), " of ",
          DataTypeString(proto.dtype()), " needs ", n, " x ", size, " bytes"));
    }
    if (proto.dtype() == DT_BOOL) {  // a bool byte is 0 or 1: anything else is UB to load
      const std::string& bytes = proto.tensor_content();
      for (size_t i = 0; i < bytes.size(); ++i) {
        const unsigned char byte = static_cast<unsigned char>(bytes[i]);
        if (byte > 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "bool tensor_content holds byte value ", byte, " at element ", i,
              " (a bool is 0 or 1)"));
        }
      }
    }
    return absl::OkStatus();
  }
  const int64_t values = TypedValueCount(proto);
  int64_t max_values;
  if (__builtin_mul_overflow(n, ValuesPerElement(proto.dtype()), &max_values) ||
      values > max_values) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor has ", values, " values but its shape ",
        PartialShape::FromProto(proto.tensor_shape())->ToString(), " holds only ", n,
        " elements"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> TensorProtoToInt64s(const TensorProto& proto,
                                                         int64_t max_elements) {
  DFLOW_RETURN_IF_ERROR(CheckTensorProto(proto));
  DFLOW_ASSIGN_OR_RETURN(int64_t n, TensorProtoNumElements(proto));
  if (n > max_elements) {
    return absl::InvalidArgumentError(
        absl::StrCat("integer tensor of ", n, " elements is too large to decode here"));
  }
  std::vector<int64_t> out;
  out.reserve(n);
  const std::string& content = proto.tensor_content();
  const bool raw = !content.empty();
  switch (proto.dtype()) {
    case DT_INT32:
      if (raw) AppendLittleEndian<int32_t>(content, n, &out);
      else for (int v : proto.int_val()) out.push_back(v);
      break;
    case DT_INT64:
      if (raw) AppendLittleEndian<int64_t>(content, n, &out);
      else for (int64_t v : proto.int64_val()) out.push_back(v);
      break;
    case DT_INT16:
      if (raw) AppendLittleEndian<int16_t>(content, n, &out);
      else for (int v : proto.int_val()) out.push_back(v);
      break;
    case DT_INT8:
      if (raw) AppendLittleEndian<int8_t>(content, n, &out);
      else for (int v : proto.int_val()) out.push_back(v);
      break;
    case DT_UINT8:
      if (raw) AppendLittleEndian<uint8_t>(content, n, &out);
      else for (int v : proto.int_val()) out.push_back(v);
      break;
    case DT_UINT16:
      if (raw) AppendLittleEndian<uint16_t>(content, n, &out);
      else for (int v : proto.int_val()) out.push_back(v);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "expected an integer tensor, got ", DataTypeString(proto.dtype())));
  }
  // TF's rule: missing trailing values repeat the last one; none at all means zeros.
  const int64_t fill = out.empty() ? 0 : out.back();
  out.resize(n, fill);
  return out;
}

absl::StatusOr<std::vector<float>> TensorProtoToFloats(const TensorProto& proto,
                                                       int64_t max_elements) {
  DFLOW_RETURN_IF_ERROR(CheckTensorProto(proto));
  if (proto.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a float tensor, got ", DataTypeString(proto.dtype())));
  }
  DFLOW_ASSIGN_OR_RETURN(int64_t n, TensorProtoNumElements(proto));
  if (n > max_elements) {
    return absl::InvalidArgumentError(
        absl::StrCat("float tensor of ", n, " elements is too large to decode here"));
  }
  std::vector<float> out;
  out.reserve(n);
  if (!proto.tensor_content().empty()) {
    AppendLittleEndian<float>(proto.tensor_content(), n, &out);
  } else {
    out.assign(proto.float_val().begin(), proto.float_val().end());
  }
  const float fill = out.empty() ? 0.0f : out.back();
  out.resize(n, fill);
  return out;
}

}  // namespace dflow
