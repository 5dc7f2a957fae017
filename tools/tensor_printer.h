// Printing fetched tensors for `dflow run`: one JSON document for programs, numpy-style
// text for people.
//
// JSON (`--output=json`), exactly:
//   {"outputs": [{"name": "c:0", "dtype": "float32", "shape": [2, 2], "values": [22, 28, 49, 64]}]}
//  - values are flattened in row-major order;
//  - float32 and float64 use the shortest text that reads back to the same value
//    (std::to_chars), so integral values print as integers ("22") and 0.1f as "0.1";
//    NaN and infinities print as the strings "NaN", "Infinity" and "-Infinity"
//    (protobuf's JSON mapping), so the document parses with any strict RFC 8259 parser;
//  - integers print exactly (int64 and uint64 included), bools as true/false, strings as
//    JSON strings (bytes that are not UTF-8 become \u00XX escapes);
//  - half and bfloat16 print as their float values, complex numbers as [re, im] pairs;
//    dtypes without printable values (resource, variant, ...) give "values": null.
//
// Text (`--output=text`, the default): per fetch a header line `c:0: float32 [2,2]` and
// the values nested like numpy (non-finite values as nan, inf, -inf) (`[[22 28]\n [49 64]]`, columns right-aligned); tensors
// over 1000 elements show only the first and last 3 entries of each dimension, with
// "...".
//
// Thread-safe: no state.
#ifndef DFLOW_TOOLS_TENSOR_PRINTER_H_
#define DFLOW_TOOLS_TENSOR_PRINTER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace dflow {

// Shortest round-tripping JSON text of one value, as described above.
std::string FormatFloat(float value);
std::string FormatDouble(double value);
// `text` as a quoted JSON string.
std::string JsonString(absl::string_view text);

// "[22, 28, 49, 64]": the flattened values as a JSON array ("null" when unprintable).
std::string TensorValuesJson(const Tensor& tensor);
// {"name": ..., "dtype": ..., "shape": [...], "values": [...]}
std::string TensorJson(absl::string_view name, const Tensor& tensor);
// The whole document for `dflow run --output=json`, ending in a newline.
// REQUIRES: names.size() == tensors.size().
std::string OutputsJson(const std::vector<std::string>& names,
                        const std::vector<Tensor>& tensors);

// The numpy-style nested text of the values (no header, no trailing newline).
// `threshold`: element count above which the text is summarised.
std::string TensorValuesText(const Tensor& tensor, int64_t threshold = 1000);
// Header and values per fetch, separated by blank lines, ending in a newline.
std::string OutputsText(const std::vector<std::string>& names,
                        const std::vector<Tensor>& tensors);

}  // namespace dflow

#endif  // DFLOW_TOOLS_TENSOR_PRINTER_H_
