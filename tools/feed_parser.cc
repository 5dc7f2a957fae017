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
#include "tools/npy.h"
#include "tools/text_cursor.h"

namespace dflow {
namespace {

// One element before conversion to the target dtype.
struct Scalar {
  enum Kind { kInt, kUint, kFloat, kBool, kString } kind = kInt;
  int64_t i = 0;   // kInt, kBool (0/1), kString (index into the string table)
  uint64_t u = 0;  // kUint: integers above int64's range
  double d = 0;    // kFloat
};

std::string ScalarText(const Scalar& s, const std::vector<std::string>& strings) {
  switch (s.kind) {
    case Scalar::kInt: return absl::StrCat(s.i);
    case Scalar::kUint: return absl::StrCat(s.u);
    case Scalar::kBool: return s.i ? "true" : "false";
    case Scalar::kString: return absl::StrCat("\"", strings[s.i], "\"");
    case Scalar::kFloat: break;
  }
  if (std::isnan(s.d)) return "NaN";
  if (std::isinf(s.d)) return s.d > 0 ? "Infinity" : "-Infinity";
  return absl::StrFormat("%.17g", s.d);
}

// Stores `s` as a T, or returns why it cannot be one (rule 3). T is a numeric type.
template <typename T>
std::string ToNumber(const Scalar& s, T* out) {
  using Limits = std::numeric_limits<T>;
  if (s.kind == Scalar::kString) return "a string is not a number";
  if (s.kind == Scalar::kBool) {
    *out = static_cast<T>(s.i);
    return "";
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (s.kind == Scalar::kInt) {
      *out = static_cast<T>(s.i);
    } else if (s.kind == Scalar::kUint) {
      *out = static_cast<T>(s.u);
    } else {
      // Above FLT_MAX + half an ulp (2^103) a double no longer rounds to a finite float.
      if (std::is_same_v<T, float> && std::isfinite(s.d) &&
          std::fabs(s.d) >= 3.4028235677973366e38) {
        return "out of range";
      }
      *out = static_cast<T>(s.d);
    }
    return "";
  } else {
    if (s.kind == Scalar::kInt) {
      const bool fits = std::is_signed_v<T>
                            ? s.i >= static_cast<int64_t>(Limits::min()) &&
                                  s.i <= static_cast<int64_t>(Limits::max())
                            : s.i >= 0 && static_cast<uint64_t>(s.i) <=
                                              static_cast<uint64_t>(Limits::max());
      if (!fits) return "out of range";
      *out = static_cast<T>(s.i);
      return "";
    }
    if (s.kind == Scalar::kUint) {
      if (s.u > static_cast<uint64_t>(Limits::max())) return "out of range";
      *out = static_cast<T>(s.u);
      return "";
    }
    if (!std::isfinite(s.d) || std::trunc(s.d) != s.d) return "not an integer";
    // (double)max + 1 is exact for every integer type (2^63 and 2^64 included).
    if (s.d < static_cast<double>(Limits::min()) ||
        s.d >= static_cast<double>(Limits::max()) + 1.0) {
      return "out of range";
    }
    *out = static_cast<T>(s.d);
    return "";
  }
}

// Half and bfloat16 as TF converts numbers to them: to float first (so rule 3's float
// range applies), then to nearest even; a finite value that becomes infinity is out of
// range. (TF's tf.constant and Cast also round through float.)
template <typename T>
std::string ToHalf(const Scalar& s, T* out) {
  float value = 0;
  const std::string why = ToNumber<float>(s, &value);
  if (!why.empty()) return why;
  *out = T::FromFloat(value);
  if (std::isinf(out->ToFloat()) && !std::isinf(value)) return "out of range";
  return "";
}

std::string ToBool(const Scalar& s, bool* out) {
  if (s.kind == Scalar::kBool) {
    *out = s.i != 0;
    return "";
  }
  const bool zero = (s.kind == Scalar::kInt && s.i == 0) || (s.kind == Scalar::kFloat && s.d == 0);
  const bool one = (s.kind == Scalar::kInt && s.i == 1) || (s.kind == Scalar::kFloat && s.d == 1);
  if (!zero && !one) return "a bool must be true, false, 0 or 1";
  *out = one;
  return "";
}

bool IsConvertibleDtype(DataType dtype) {
  return dtype == DT_STRING || DispatchNumericOrHalf(dtype, [](auto) {});
}

// The JSON strings "NaN", "Infinity" and "-Infinity" as numbers: the JSON output
// (tools/tensor_printer.h) writes non-finite values that way, so it reads back.
Scalar NonFiniteFromString(const Scalar& s, const std::vector<std::string>& strings) {
  if (s.kind != Scalar::kString) return s;
  const std::string& text = strings[s.i];
  Scalar number;
  number.kind = Scalar::kFloat;
  if (text == "NaN") {
    number.d = std::numeric_limits<double>::quiet_NaN();
  } else if (text == "Infinity" || text == "-Infinity") {
    number.d = text[0] == '-' ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity();
  } else {
    return s;
  }
  return number;
}

absl::Status UnsupportedDtype(DataType dtype) {
  return absl::InvalidArgumentError(
      absl::StrCat("feeding ", DataTypeString(dtype), " tensors is not supported"));
}

// Writes every scalar into `tensor` (of a convertible dtype), naming the first element
// that does not convert.
absl::Status StoreAll(const std::vector<Scalar>& scalars, const std::vector<std::string>& strings,
                      const Tensor& tensor) {
  const DataType dtype = tensor.dtype();
  std::string why;
  int64_t bad = -1;
  if (dtype == DT_STRING) {
    std::string* out = tensor.data<std::string>();
    for (size_t i = 0; i < scalars.size() && bad < 0; ++i) {
      if (scalars[i].kind != Scalar::kString) {
        why = "expected a JSON string";
        bad = static_cast<int64_t>(i);
      } else {
        out[i] = strings[scalars[i].i];
      }
    }
  } else {
    DispatchNumericOrHalf(dtype, [&](auto zero) {
      using T = decltype(zero);
      T* out = tensor.data<T>();
      for (size_t i = 0; i < scalars.size() && bad < 0; ++i) {
        const Scalar scalar = NonFiniteFromString(scalars[i], strings);
        if constexpr (std::is_same_v<T, bool>) {
          why = ToBool(scalar, &out[i]);
        } else if constexpr (kIsHalfOrBfloat16<T>) {
          why = ToHalf<T>(scalar, &out[i]);
        } else {
          why = ToNumber<T>(scalar, &out[i]);
        }
        if (!why.empty()) bad = static_cast<int64_t>(i);
      }
    });
  }
  if (bad < 0) return absl::OkStatus();
  const std::string where =
      tensor.shape().dims() == 0 ? std::string() : absl::StrCat(" (element ", bad, ")");
  return absl::InvalidArgumentError(absl::StrCat("value ", ScalarText(scalars[bad], strings),
                                                 where, " cannot be ",
                                                 DataTypeNumpyName(dtype), ": ", why));
}

// Recursive-descent parser for rule 1. Shape bookkeeping: dims_[d] is the length every
// list at depth d must have (-1 until the first one closes); leaf_depth_ is the depth
// of every leaf (-1 until the first leaf).
class JsonTensorParser : private TextCursor {
 public:
  explicit JsonTensorParser(absl::string_view text) : TextCursor(text) {}

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
  const std::vector<Scalar>& scalars() const { return scalars_; }
  const std::vector<std::string>& strings() const { return strings_; }

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
    Scalar scalar;
    absl::Status status = ParseScalar(&scalar);
    if (!status.ok()) return status;
    scalars_.push_back(scalar);
    return absl::OkStatus();
  }

  absl::Status ParseScalar(Scalar* out) {
    const char c = text_[pos_];
    if (c == '"') return ParseString(out);
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
    const std::string copy(literal);
    out->kind = Scalar::kFloat;
    out->d = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(out->d)) {
      pos_ = start;
      return ErrorAt("unsupported value",
                     absl::StrCat("number ", literal, " is too large for any dtype"));
    }
    return absl::OkStatus();
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
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
    out->i = static_cast<int64_t>(strings_.size());
    strings_.push_back(std::move(value));
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
  std::vector<Scalar> scalars_;
  std::vector<std::string> strings_;
};

// Reads element `i` of a numeric or bool tensor as a Scalar.
Scalar ReadScalar(const Tensor& tensor, int64_t i) {
  Scalar s;
  DispatchNumericOrHalf(tensor.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = tensor.data<T>()[i];
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
  });
  return s;
}

absl::Status WithFeedName(absl::string_view name, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("--feed ", name, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Tensor> ParseJsonTensor(absl::string_view json, DataType dtype,
                                       Allocator* allocator) {
  if (!IsConvertibleDtype(dtype)) return UnsupportedDtype(dtype);
  JsonTensorParser parser(json);
  absl::Status parsed = parser.Parse();
  if (!parsed.ok()) return parsed;
  absl::StatusOr<TensorShape> shape = TensorShape::Make(parser.shape());
  if (!shape.ok()) return shape.status();
  if (shape->num_elements() != static_cast<int64_t>(parser.scalars().size())) {
    return absl::InvalidArgumentError("ragged nested list");  // unreachable by construction
  }
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(allocator, dtype, *shape);
  if (!tensor.ok()) return tensor.status();
  absl::Status stored = StoreAll(parser.scalars(), parser.strings(), *tensor);
  if (!stored.ok()) return stored;
  return tensor;
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
  std::vector<Scalar> scalars(static_cast<size_t>(tensor.NumElements()));
  for (int64_t i = 0; i < tensor.NumElements(); ++i) scalars[i] = ReadScalar(tensor, i);
  absl::StatusOr<Tensor> converted = Tensor::Allocate(allocator, dtype, tensor.shape());
  if (!converted.ok()) return converted.status();
  absl::Status stored = StoreAll(scalars, {}, *converted);
  if (!stored.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("converting ",
                                                   DataTypeNumpyName(tensor.dtype()), " to ",
                                                   DataTypeNumpyName(dtype), ": ",
                                                   stored.message()));
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
