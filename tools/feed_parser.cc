#include "tools/feed_parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/proto_io.h"
#include "tools/feed_scalar.h"
#include "tools/npy.h"
#include "tools/text_cursor.h"

namespace dflow {
namespace {

absl::Status UnsupportedDtype(DataType dtype) {
  return absl::InvalidArgumentError(
      absl::StrCat("feeding ", DataTypeString(dtype), " tensors is not supported"));
}

// Recursive-descent parser for rule 1. Shape bookkeeping: dims_[d] is the length every
// list at depth d must have (-1 until the first one closes); leaf_depth_ is the depth
// of every leaf (-1 until the first leaf).
// Each leaf goes to `sink` as it is read.
class JsonTensorParser : private TextCursor {
 public:
  JsonTensorParser(absl::string_view text, ElementSink* sink) : TextCursor(text), sink_(sink) {}

  absl::Status Parse() {
    absl::Status status = ParseValue(0);
    if (!status.ok()) return status;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return absl::OkStatus();
  }

  // The shape (REQUIRES: Parse() succeeded).
  std::vector<int64_t> shape() const {
    if (leaf_depth_ < 0) return dims_;
    return std::vector<int64_t>(dims_.begin(), dims_.begin() + leaf_depth_);
  }

 private:
  // Syntax errors.
  absl::Status Error(absl::string_view what) const {
    return ErrorAt("malformed JSON", what);
  }
  // Well-formed JSON that is no tensor: ragged lists, too deep, too large.
  absl::Status ErrorAt(absl::string_view kind, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " at character ", pos_ + 1, ": ", what));
  }

  absl::Status ParseValue(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a number or '[' but the text ended");
    if (text_[pos_] == '[') return ParseList(depth);
    return ParseLeaf(depth);
  }

  absl::Status ParseList(int depth) {
    if (depth >= kMaxFeedNesting) {
      return ErrorAt("unsupported value",
                     absl::StrCat("lists nested deeper than ", kMaxFeedNesting, " levels"));
    }
    if (leaf_depth_ >= 0 && depth >= leaf_depth_) {
      return ErrorAt("ragged nested list",
                     "a list where earlier elements at this depth are numbers");
    }
    ++pos_;  // '['
    if (static_cast<int>(dims_.size()) == depth) dims_.push_back(-1);
    int64_t count = 0;
    SkipSpace();
    if (!Consume(']')) {
      while (true) {
        absl::Status element = ParseValue(depth + 1);
        if (!element.ok()) return element;
        ++count;
        SkipSpace();
        if (Consume(',')) continue;
        if (Consume(']')) break;
        return Error(pos_ >= text_.size() ? "the text ended inside a list"
                                          : "expected ',' or ']'");
      }
    }
    if (dims_[depth] < 0) {
      dims_[depth] = count;
    } else if (dims_[depth] != count) {
      return ErrorAt("ragged nested list",
                     absl::StrCat("a list at nesting depth ", depth + 1, " has ", count,
                                  " elements but an earlier one has ", dims_[depth]));
    }
    return absl::OkStatus();
  }

  absl::Status ParseLeaf(int depth) {
    // A leaf deeper than earlier leaves is caught in ParseList, one shallower here.
    if (static_cast<int>(dims_.size()) > depth) {
      return ErrorAt("ragged nested list",
                     "a number where earlier elements at this depth are lists");
    }
    if (leaf_depth_ < 0) leaf_depth_ = depth;
    absl::Status status = ParseScalar(&scalar_);
    if (!status.ok()) return status;
    sink_->Append(scalar_);
    return absl::OkStatus();
  }

  absl::Status ParseScalar(Scalar* out) {
    const char c = text_[pos_];
    if (c == '"') return ParseString(out);
    // Numbers first: they are nearly every leaf of a large feed.
    if ((c >= '0' && c <= '9') || (c == '-' && pos_ + 1 < text_.size() &&
                                   IsDigit(text_[pos_ + 1]))) {
      return ParseNumber(out);
    }
    for (const bool flag : {true, false}) {
      if (ConsumeWord(flag ? "true" : "false")) {
        out->kind = Scalar::kBool;
        out->i = flag ? 1 : 0;
        return absl::OkStatus();
      }
    }
    out->kind = Scalar::kFloat;
    for (absl::string_view word : {"NaN", "nan"}) {
      if (ConsumeWord(word)) {
        out->d = std::numeric_limits<double>::quiet_NaN();
        return absl::OkStatus();
      }
    }
    for (absl::string_view word : {"Infinity", "inf", "-Infinity", "-inf"}) {
      if (ConsumeWord(word)) {
        out->d = word[0] == '-' ? -std::numeric_limits<double>::infinity()
                                : std::numeric_limits<double>::infinity();
        return absl::OkStatus();
      }
    }
    return ParseNumber(out);
  }

  // JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  absl::Status ParseNumber(Scalar* out) {
    const size_t start = pos_;
    Consume('-');
    const size_t int_start = pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    const size_t int_digits = pos_ - int_start;
    if (int_digits == 0) {
      pos_ = start;
      return Error("expected a number, 'true', 'false', '\"' or '['");
    }
    if (int_digits > 1 && text_[int_start] == '0') {
      pos_ = int_start;
      return Error("numbers must not have leading zeros");
    }
    bool integral = true;
    if (Consume('.')) {
      integral = false;
      if (!ConsumeDigits()) return Error("expected digits after '.'");
    }
    if (Consume('e') || Consume('E')) {
      integral = false;
      if (!Consume('+')) Consume('-');
      if (!ConsumeDigits()) return Error("expected digits in the exponent");
    }
    const absl::string_view literal = text_.substr(start, pos_ - start);
    // "-0" stays a float, so that float dtypes keep its sign (the JSON output prints
    // -0.0 as -0); integer dtypes read it as 0 either way.
    if (integral && literal != "-0" && ParseInteger(literal, out)) return absl::OkStatus();
    out->kind = Scalar::kFloat;
    // from_chars rounds correctly like strtod, without strtod's copy and locale; out of
    // double's range it reports result_out_of_range (too large) or underflow to 0.
    const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), out->d);
    (void)end;
    if (ec == std::errc::result_out_of_range) out->d = SlowParseDouble(literal);
    if (std::isinf(out->d)) {
      pos_ = start;
      return ErrorAt("unsupported value",
                     absl::StrCat("number ", literal, " is too large for any dtype"));
    }
    return absl::OkStatus();
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  // Out of double's range: strtod gives +-inf for overflow and 0 or a denormal for
  // underflow, which the error and the float conversion rules expect.
  static double SlowParseDouble(absl::string_view literal) {
    const std::string copy(literal);
    return std::strtod(copy.c_str(), nullptr);
  }
  bool ConsumeDigits() {
    const size_t begin = pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    return pos_ > begin;
  }

  // Exact int64 (or uint64 above int64's range); false when even uint64 overflows.
  static bool ParseInteger(absl::string_view literal, Scalar* out) {
    const char* begin = literal.data();
    const char* end = begin + literal.size();
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc() && ptr == end) {
      out->kind = Scalar::kInt;
      out->i = value;
      return true;
    }
    if (literal[0] == '-') return false;
    uint64_t unsigned_value = 0;
    auto [uptr, uec] = std::from_chars(begin, end, unsigned_value);
    if (uec == std::errc() && uptr == end) {
      out->kind = Scalar::kUint;
      out->u = unsigned_value;
      return true;
    }
    return false;
  }

  absl::Status ParseString(Scalar* out) {
    ++pos_;  // '"'
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) return Error("the text ended inside a string");
      const char c = text_[pos_++];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        return Error("control character inside a string");
      }
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      absl::Status escape = ParseEscape(&value);
      if (!escape.ok()) return escape;
    }
    out->kind = Scalar::kString;
    out->s = std::move(value);
    return absl::OkStatus();
  }

  absl::Status ParseEscape(std::string* value) {
    if (pos_ >= text_.size()) return Error("the text ended inside a string");
    const char c = text_[pos_++];
    switch (c) {
      case '"': value->push_back('"'); return absl::OkStatus();
      case '\\': value->push_back('\\'); return absl::OkStatus();
      case '/': value->push_back('/'); return absl::OkStatus();
      case 'b': value->push_back('\b'); return absl::OkStatus();
      case 'f': value->push_back('\f'); return absl::OkStatus();
      case 'n': value->push_back('\n'); return absl::OkStatus();
      case 'r': value->push_back('\r'); return absl::OkStatus();
      case 't': value->push_back('\t'); return absl::OkStatus();
      case 'u': break;
      default: --pos_; return Error("unknown escape in a string");
    }
    uint32_t code = 0;
    if (!ParseHex4(&code)) return Error("expected 4 hex digits after \\u");
    if (code >= 0xD800 && code < 0xDC00 && ConsumeWord("\\u")) {
      uint32_t low = 0;
      if (!ParseHex4(&low) || low < 0xDC00 || low >= 0xE000) {
        return Error("invalid UTF-16 surrogate pair");
      }
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(code, value);
    return absl::OkStatus();
  }

  bool ParseHex4(uint32_t* code) {
    if (text_.size() - pos_ < 4) return false;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      const int digit = IsDigit(c) ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
      if (digit < 0) return false;
      *code = *code * 16 + digit;
    }
    return true;
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  std::vector<int64_t> dims_;
  int leaf_depth_ = -1;
  ElementSink* sink_;
  Scalar scalar_;  // the leaf being read, reused
};

// Hands every element of a numeric or bool tensor to `sink`.
void AppendAll(const Tensor& tensor, ElementSink* sink) {
  DispatchNumericOrHalf(tensor.dtype(), [&](auto zero) {
    using T = decltype(zero);
    Scalar s;
    for (const T v : absl::MakeConstSpan(tensor.data<T>(), tensor.NumElements())) {
      if constexpr (std::is_same_v<T, bool>) {
        s.kind = Scalar::kBool;
        s.i = v ? 1 : 0;
      } else if constexpr (kIsHalfOrBfloat16<T>) {
        s.kind = Scalar::kFloat;
        s.d = v.ToFloat();
      } else if constexpr (std::is_floating_point_v<T>) {
        s.kind = Scalar::kFloat;
        s.d = static_cast<double>(v);
      } else if constexpr (std::is_same_v<T, uint64_t>) {
        s.kind = Scalar::kUint;
        s.u = v;
      } else {
        s.kind = Scalar::kInt;
        s.i = static_cast<int64_t>(v);
      }
      sink->Append(s);
    }
  });
}

absl::Status WithFeedName(absl::string_view name, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("--feed ", name, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Tensor> ParseJsonTensor(absl::string_view json, DataType dtype,
                                       Allocator* allocator) {
  if (!IsConvertibleDtype(dtype)) return UnsupportedDtype(dtype);
  std::unique_ptr<ElementSink> sink = MakeElementSink(dtype);
  JsonTensorParser parser(json, sink.get());
  absl::Status parsed = parser.Parse();
  if (!parsed.ok()) return parsed;
  absl::StatusOr<TensorShape> shape = TensorShape::Make(parser.shape());
  if (!shape.ok()) return shape.status();
  return sink->Finish(*shape, allocator);
}

absl::StatusOr<Tensor> ConvertTensor(const Tensor& tensor, DataType dtype,
                                     Allocator* allocator) {
  if (tensor.dtype() == dtype) return tensor;
  if (!IsConvertibleDtype(dtype)) return UnsupportedDtype(dtype);
  if (!DispatchNumericOrHalf(tensor.dtype(), [](auto) {})) {
    return absl::InvalidArgumentError(absl::StrCat("cannot convert ",
                                                   DataTypeString(tensor.dtype()), " to ",
                                                   DataTypeString(dtype)));
  }
  std::unique_ptr<ElementSink> sink = MakeElementSink(dtype);
  AppendAll(tensor, sink.get());
  absl::StatusOr<Tensor> converted = sink->Finish(tensor.shape(), allocator);
  if (!converted.ok() && converted.status().code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat("converting ",
                                                   DataTypeNumpyName(tensor.dtype()), " to ",
                                                   DataTypeNumpyName(dtype), ": ",
                                                   converted.status().message()));
  }
  return converted;
}

absl::StatusOr<FeedFlag> SplitFeedFlag(absl::string_view flag) {
  const size_t eq = flag.find('=');
  if (eq == absl::string_view::npos || eq == 0 || eq + 1 == flag.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--feed=", flag, ": expected NAME=VALUE, e.g. --feed=x=[[1,2],[3,4]] or "
        "--feed=x=@x.npy"));
  }
  return FeedFlag{std::string(flag.substr(0, eq)), std::string(flag.substr(eq + 1))};
}

absl::StatusOr<Tensor> ParseFeedValue(absl::string_view name, absl::string_view value,
                                      DataType dtype, Allocator* allocator) {
  if (!absl::StartsWith(value, "@")) {
    absl::StatusOr<Tensor> tensor = ParseJsonTensor(value, dtype, allocator);
    if (!tensor.ok()) return WithFeedName(name, tensor.status());
    return tensor;
  }
  const std::string path(value.substr(1));
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return WithFeedName(name, bytes.status());
  absl::StatusOr<Tensor> tensor;
  if (absl::StartsWith(*bytes, "\x93NUMPY")) {
    tensor = ParseNpy(*bytes, allocator);
    if (tensor.ok()) tensor = ConvertTensor(*tensor, dtype, allocator);
  } else {
    tensor = ParseJsonTensor(*bytes, dtype, allocator);
  }
  if (!tensor.ok()) {
    return WithFeedName(name, absl::Status(tensor.status().code(),
                                           absl::StrCat(path, ": ", tensor.status().message())));
  }
  return tensor;
}

}  // namespace dflow
