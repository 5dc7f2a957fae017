#include "graph/types.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

struct TypeInfo {
  DataType type;
  const char* tf_name;
  const char* numpy_name;
  int size;
};

constexpr TypeInfo kTypes[] = {
    {DT_FLOAT, "float", "float32", 4},
    {DT_DOUBLE, "double", "float64", 8},
    {DT_INT32, "int32", "int32", 4},
    {DT_UINT8, "uint8", "uint8", 1},
    {DT_INT16, "int16", "int16", 2},
    {DT_INT8, "int8", "int8", 1},
    {DT_STRING, "string", "string", 0},
    {DT_COMPLEX64, "complex64", "complex64", 8},
    {DT_INT64, "int64", "int64", 8},
    {DT_BOOL, "bool", "bool", 1},
    {DT_QINT8, "qint8", "qint8", 1},
    {DT_QUINT8, "quint8", "quint8", 1},
    {DT_QINT32, "qint32", "qint32", 4},
    {DT_BFLOAT16, "bfloat16", "bfloat16", 2},
    {DT_QINT16, "qint16", "qint16", 2},
    {DT_QUINT16, "quint16", "quint16", 2},
    {DT_UINT16, "uint16", "uint16", 2},
    {DT_COMPLEX128, "complex128", "complex128", 16},
    {DT_HALF, "half", "float16", 2},
    {DT_RESOURCE, "resource", "resource", 0},
    {DT_VARIANT, "variant", "variant", 0},
    {DT_UINT32, "uint32", "uint32", 4},
    {DT_UINT64, "uint64", "uint64", 8},
    // TF 2.x's narrow types: NumPy's names are ml_dtypes' (the same as TF's). TF keeps
    // one element per byte, sub-byte ones included (TF's DataTypeSize is 1 for all).
    {DT_FLOAT8_E5M2, "float8_e5m2", "float8_e5m2", 1},
    {DT_FLOAT8_E4M3FN, "float8_e4m3fn", "float8_e4m3fn", 1},
    {DT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", "float8_e4m3fnuz", 1},
    {DT_FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz", "float8_e4m3b11fnuz", 1},
    {DT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", "float8_e5m2fnuz", 1},
    {DT_INT4, "int4", "int4", 1},
    {DT_UINT4, "uint4", "uint4", 1},
    {DT_INT2, "int2", "int2", 1},
    {DT_UINT2, "uint2", "uint2", 1},
    {DT_FLOAT4_E2M1FN, "float4_e2m1fn", "float4_e2m1fn", 1},
};

const TypeInfo* Find(DataType t) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == t) return &info;
  }
  return nullptr;
}

}  // namespace

std::string DataTypeString(DataType t) {
  const TypeInfo* info = Find(BaseType(t));
  if (info == nullptr) return absl::StrCat("unknown dtype ", static_cast<int>(t));
  return IsRefType(t) ? absl::StrCat(info->tf_name, "_ref") : info->tf_name;
}

std::string DataTypeNumpyName(DataType t) {
  const TypeInfo* info = Find(BaseType(t));
  return info == nullptr ? DataTypeString(t) : info->numpy_name;
}

absl::StatusOr<DataType> ParseDataType(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (absl::StartsWith(lower, "dt_")) lower = lower.substr(3);
  for (const TypeInfo& info : kTypes) {
    if (lower == info.tf_name || lower == info.numpy_name) return info.type;
  }
  return absl::InvalidArgumentError(absl::StrCat("Unknown data type '", name, "'"));
}

int DataTypeSize(DataType t) {
  const TypeInfo* info = Find(BaseType(t));
  return info == nullptr ? 0 : info->size;
}

bool DataTypeIsMemcpyable(DataType t) { return DataTypeSize(t) > 0; }

bool IsFloatOrComplex(DataType t) {
  switch (BaseType(t)) {
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_COMPLEX64:
    case DT_COMPLEX128:
      return true;
    default:
      return false;
  }
}

bool IsKnownDataType(int t) {
  if (t <= 0) return false;
  const int base = t > kDataTypeRefOffset ? t - kDataTypeRefOffset : t;
  return Find(static_cast<DataType>(base)) != nullptr;
}

}  // namespace dflow
