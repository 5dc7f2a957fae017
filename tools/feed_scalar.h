// One feed element before and after conversion to the fed tensor's dtype
// (tools/feed_parser.h rule 3), and the sink that converts elements as they are parsed.
//
// The JSON parser and the .npy conversion hand each element to an ElementSink made for
// the target dtype, which converts it at once into a packed buffer of that dtype: a feed
// of n float32 values costs 4n bytes while it is parsed, not a 32-byte Scalar each
// (issue 15: a 10-million-element JSON feed took 1 GB and 13 s).
#ifndef DFLOW_TOOLS_FEED_SCALAR_H_
#define DFLOW_TOOLS_FEED_SCALAR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

// One element as written: an exact integer (int64, or uint64 above int64's range), a
// double, a bool or a string.
struct Scalar {
  enum Kind : uint8_t { kInt, kUint, kFloat, kBool, kString } kind = kInt;
  union {
    int64_t i = 0;  // kInt, kBool (0/1)
    uint64_t u;     // kUint
    double d;       // kFloat
  };
  std::string s;    // kString
};

// `s` as JSON would spell it ("NaN", "Infinity", "-Infinity" for the non-finite).
std::string ScalarText(const Scalar& s);

// Whether feeds of `dtype` can be converted to (numeric, bool, half, bfloat16, string).
bool IsConvertibleDtype(DataType dtype);

// Converts elements to one dtype as they come, in order. The first element that does
// not convert is remembered (its index, text and reason) and later ones are skipped, so
// that a parser can go on to report a syntax error further on first.
class ElementSink {
 public:
  virtual ~ElementSink() = default;

  // Converts and appends `s` (its string is moved from).
  void Append(Scalar& s);
  int64_t count() const { return count_; }

  // The converted elements as a tensor of `shape` (REQUIRES: shape has count()
  // elements), or INVALID_ARGUMENT naming the first element that did not convert.
  absl::StatusOr<Tensor> Finish(const TensorShape& shape, Allocator* allocator);

 protected:
  explicit ElementSink(DataType dtype) : dtype_(dtype) {}
  // Stores `s` at the end, or returns why it cannot be one of dtype_.
  virtual std::string Convert(Scalar& s) = 0;
  // Copies the stored elements into `tensor` (of dtype_ and count() elements).
  virtual void CopyTo(const Tensor& tensor) = 0;

 private:
  DataType dtype_;
  int64_t count_ = 0;
  int64_t bad_index_ = -1;  // the first element that did not convert, or -1
  std::string bad_text_;
  std::string why_;
};

// The sink for `dtype` (REQUIRES: IsConvertibleDtype(dtype)).
std::unique_ptr<ElementSink> MakeElementSink(DataType dtype);

}  // namespace dflow

#endif  // DFLOW_TOOLS_FEED_SCALAR_H_
