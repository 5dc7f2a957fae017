// DataType helpers: names, element sizes and reference types (TF's types.h, in brief).
#ifndef DFLOW_GRAPH_TYPES_H_
#define DFLOW_GRAPH_TYPES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/types.pb.h"

namespace dflow {

using DataTypeVector = std::vector<DataType>;

inline constexpr int kDataTypeRefOffset = 100;

inline bool IsRefType(DataType t) { return static_cast<int>(t) > kDataTypeRefOffset; }
inline DataType BaseType(DataType t) {
  return IsRefType(t) ? static_cast<DataType>(t - kDataTypeRefOffset) : t;
}
inline DataType MakeRefType(DataType t) {
  return IsRefType(t) ? t : static_cast<DataType>(t + kDataTypeRefOffset);
}

// TF's printed name: "float", "int32", "float_ref", "bfloat16", ...
std::string DataTypeString(DataType t);

// NumPy's name for the element type ("float32", "int64", "bool"); DataTypeString()
// for types NumPy has no name for.
std::string DataTypeNumpyName(DataType t);

// Parses either spelling ("float" / "float32" / "DT_FLOAT"). REQUIRES: not a ref name.
absl::StatusOr<DataType> ParseDataType(absl::string_view name);

// Bytes per element for fixed-size types; 0 for string, resource, variant, invalid.
// Sub-byte types (int4, uint4, int2, uint2, float4_e2m1fn) take one byte, as in TF.
int DataTypeSize(DataType t);

// True when the type's elements are plain bytes that may be memcpy'd between devices.
bool DataTypeIsMemcpyable(DataType t);

// Floating-point and complex types (half, bfloat16, float, double, complex64/128): what
// gradients flow through and what prints with a decimal point.
bool IsFloatOrComplex(DataType t);

// True when `t` is a valid, known enum value (ref values included).
bool IsKnownDataType(int t);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TYPES_H_
