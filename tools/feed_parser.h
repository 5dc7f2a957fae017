// Values for `dflow run --feed=NAME=VALUE`: a JSON number or nested list, or a file.
//
// Rules:
//  1. VALUE is JSON: a number, `true`/`false`, a string (for string tensors only), or a
//     nested list of them. The nesting gives the shape (`[[1,2,3],[4,5,6]]` is [2,3],
//     `7` a scalar, `[]` is [0], `[[],[]]` is [2,0]); every list at one depth must have
//     the same length and every leaf the same depth ("ragged" lists are an error).
//     `NaN`, `Infinity` and `-Infinity` (also `nan`, `inf`, `-inf`) are accepted, as
//     Python's json module does, and so are the strings "NaN", "Infinity" and
//     "-Infinity" for numeric dtypes, as `--output=json` writes them.
//  2. VALUE `@PATH` reads a file: a .npy file when it starts with NumPy's magic
//     (tools/npy.h), else JSON text as in rule 1.
//  3. Every element is converted to the fed tensor's dtype, exactly or not at all: any
//     number becomes a float (an error when a finite value overflows float32), an integer
//     dtype takes integral values in its range only (2.5 or 300 for uint8 are errors),
//     bool takes true/false/0/1, numbers take true/false as 1/0. Integer literals are
//     parsed exactly, so int64 and uint64 values survive beyond 2^53. float16 and
//     bfloat16 round through float32 to nearest even, as TF's conversions do (an error
//     when a finite value becomes infinity, e.g. 65520 for float16).
//  4. Nesting deeper than 254 levels (TensorShape's limit), malformed JSON, trailing
//     text, and dtypes without a conversion (complex, resource, ...) are
//     INVALID_ARGUMENT; the message says where (character position) and what.
//
// Thread-safe: the functions keep no state.
#ifndef DFLOW_TOOLS_FEED_PARSER_H_
#define DFLOW_TOOLS_FEED_PARSER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

// The nesting limit of rule 4.
inline constexpr int kMaxFeedNesting = 254;

// Rule 1 + 3: `json` as a tensor of `dtype`, allocated from `allocator`.
absl::StatusOr<Tensor> ParseJsonTensor(absl::string_view json, DataType dtype,
                                       Allocator* allocator);

// Rule 3 over a whole tensor (e.g. a float64 .npy fed to a float32 placeholder). Returns
// `tensor` itself when it already has `dtype`.
absl::StatusOr<Tensor> ConvertTensor(const Tensor& tensor, DataType dtype,
                                     Allocator* allocator);

// One `--feed` flag's "NAME=VALUE", split at the first '='. INVALID_ARGUMENT when there
// is no '=' or either side is empty.
struct FeedFlag {
  std::string name;
  std::string value;
};
absl::StatusOr<FeedFlag> SplitFeedFlag(absl::string_view flag);

// Rules 1-4 for the feed `name`: errors read "--feed NAME: ..." (a missing file keeps
// its NOT_FOUND code).
absl::StatusOr<Tensor> ParseFeedValue(absl::string_view name, absl::string_view value,
                                      DataType dtype, Allocator* allocator);

}  // namespace dflow

#endif  // DFLOW_TOOLS_FEED_PARSER_H_
