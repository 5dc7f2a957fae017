// Validation and small decodes of TensorProto, without materialising big tensors.
//
// A hostile TensorProto (huge shape, mismatched content, bad dtype) is rejected here
// from its header fields alone, before anything is allocated.
#ifndef DFLOW_GRAPH_TENSOR_PROTO_UTIL_H_
#define DFLOW_GRAPH_TENSOR_PROTO_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/tensor.pb.h"

namespace dflow {

// Number of elements the proto's shape describes. INVALID_ARGUMENT for unknown rank,
// unknown (-1) or negative dims, and products that overflow int64.
absl::StatusOr<int64_t> TensorProtoNumElements(const TensorProto& proto);

// Checks dtype (known, not a ref type), shape, and content: a non-empty tensor_content
// must hold exactly num_elements * dtype size bytes (a bool's bytes 0 or 1, as TF
// requires); typed value fields must use the
// field TF decodes for the dtype and hold no more values than elements (fewer is legal:
// TF repeats the last value).
absl::Status CheckTensorProto(const TensorProto& proto);

// Decodes an integer tensor (int32/int64/int16/int8/uint8/...) into int64 values,
// applying TF's repeat-last-value rule. INVALID_ARGUMENT for other dtypes or more than
// `max_elements` elements (decodes are for small shape/axis tensors).
absl::StatusOr<std::vector<int64_t>> TensorProtoToInt64s(const TensorProto& proto,
                                                         int64_t max_elements = 1 << 20);

// Decodes a DT_FLOAT tensor (tensor_content or float_val, TF's repeat-last-value rule)
// into floats. INVALID_ARGUMENT for other dtypes or more than `max_elements` elements.
absl::StatusOr<std::vector<float>> TensorProtoToFloats(const TensorProto& proto,
                                                       int64_t max_elements);

// Number of values in the typed field that TF decodes for the proto's dtype.
int TypedValueCount(const TensorProto& proto);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TENSOR_PROTO_UTIL_H_
