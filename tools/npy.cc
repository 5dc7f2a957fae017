#include "tools/npy.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/proto_io.h"
#include "tools/text_cursor.h"

namespace dflow {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// Headers longer than this are not arrays anyone writes by hand or with NumPy.
constexpr size_t kMaxHeaderSize = 1 << 20;

struct NpyType {
  char kind;  // 'f', 'i', 'u', 'b', 'V'; 'S' (bytes) and 'U' (UTF-32) for DT_STRING
  int size;   // bytes per element
  DataType dtype;
};

// 'V' 2 is bfloat16: NumPy has no bfloat16, and numpy.save writes ml_dtypes.bfloat16
// arrays (what TF's .numpy() returns) as 2-byte void, '<V2'.
constexpr NpyType kNpyTypes[] = {
    {'f', 4, DT_FLOAT},  {'f', 8, DT_DOUBLE}, {'f', 2, DT_HALF},   {'V', 2, DT_BFLOAT16},
    {'i', 1, DT_INT8},   {'i', 2, DT_INT16},  {'i', 4, DT_INT32},  {'i', 8, DT_INT64},
    {'u', 1, DT_UINT8},  {'u', 2, DT_UINT16}, {'u', 4, DT_UINT32}, {'u', 8, DT_UINT64},
    {'b', 1, DT_BOOL},
};

absl::Status HeaderError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed .npy header: ", what));
}

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Values are strings, True/False or tuples of non-negative integers.
struct HeaderValue {
  enum Kind { kString, kBool, kTuple } kind = kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> dims;
};

class HeaderParser : private TextCursor {
 public:
  explicit HeaderParser(absl::string_view text) : TextCursor(text) {}

  absl::StatusOr<std::map<std::string, HeaderValue>> Parse() {
    std::map<std::string, HeaderValue> dict;
    SkipSpace();
    if (!Consume('{')) return HeaderError("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      absl::StatusOr<std::string> key = ParseString();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Consume(':')) return HeaderError(absl::StrCat("expected ':' after '", *key, "'"));
      SkipSpace();
      absl::StatusOr<HeaderValue> value = ParseValue(*key);
      if (!value.ok()) return value.status();
      if (!dict.emplace(*key, std::move(*value)).second) {
        return HeaderError(absl::StrCat("key '", *key, "' appears twice"));
      }
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume('}')) break;
      return HeaderError("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return HeaderError("unexpected text after the dict");
    return dict;
  }

 private:

  absl::StatusOr<std::string> ParseString() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return HeaderError("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == absl::string_view::npos) return HeaderError("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  absl::StatusOr<HeaderValue> ParseValue(const std::string& key) {
    HeaderValue value;
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      absl::StatusOr<std::string> s = ParseString();
      if (!s.ok()) return s.status();
      value.kind = HeaderValue::kString;
      value.text = std::move(*s);
      return value;
    }
    if (ConsumeWord("True") || ConsumeWord("False")) {
      value.kind = HeaderValue::kBool;
      value.flag = text_.substr(pos_ - 4, 4) == "True";
      return value;
    }
    if (Consume('(')) return ParseTuple(key);
    if (pos_ < text_.size() && text_[pos_] == '[') {
      return HeaderError(absl::StrCat("'", key,
                                      "' is a list: structured arrays are not supported"));
    }
    return HeaderError(absl::StrCat("unsupported value for '", key, "'"));
  }

  absl::StatusOr<HeaderValue> ParseTuple(const std::string& key) {
    HeaderValue value;
    value.kind = HeaderValue::kTuple;
    while (true) {
      SkipSpace();
      if (Consume(')')) return value;
      absl::StatusOr<int64_t> dim = ParseDim(key);
      if (!dim.ok()) return dim.status();
      value.dims.push_back(*dim);
      if (value.dims.size() > 254) return HeaderError("shape has more than 254 dimensions");
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume(')')) return value;
      return HeaderError(absl::StrCat("expected ',' or ')' in '", key, "'"));
    }
  }

  absl::StatusOr<int64_t> ParseDim(const std::string& key) {
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      return HeaderError(absl::StrCat("'", key, "' must hold non-negative integers"));
    }
    int64_t dim = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return HeaderError(absl::StrCat("a dimension of '", key, "' is too large"));
      }
      dim = dim * 10 + digit;
    }
    Consume('L');  // Python 2 long literals
    return dim;
  }

};

absl::StatusOr<NpyType> ParseDescr(const std::string& descr, bool* swap) {
  *swap = false;
  if (descr.size() < 3) return HeaderError(absl::StrCat("unsupported descr '", descr, "'"));
  const char order = descr[0];
  const char kind = descr[1];
  int size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])) || size > 100) {
      return HeaderError(absl::StrCat("unsupported descr '", descr, "'"));
    }
    size = size * 10 + (descr[i] - '0');
  }
  // NumPy's fixed-width strings ('|S5': bytes, '<U5': UTF-32 characters) feed DT_STRING
  // tensors, e.g. serialized tf.Example protos for a SavedModel's ParseExample input.
  if ((kind == 'S' && order == '|') || (kind == 'U' && (order == '<' || order == '='))) {
    if (size < 1) return HeaderError(absl::StrCat("unsupported descr '", descr, "'"));
    return NpyType{kind, kind == 'U' ? 4 * size : size, DT_STRING};
  }
  for (const NpyType& type : kNpyTypes) {
    if (type.kind != kind || type.size != size) continue;
    if (order == '>') {
      *swap = size > 1;
    } else if (order != '<' && order != '=' && order != '|') {
      break;
    } else if (order == '|' && size > 1 && kind != 'V') {  // '|V2' is void's usual descr
      break;
    }
    return type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      ".npy descr '", descr,
      "' is not supported (expected one of <f2 <f4 <f8 <i2 <i4 <i8 |i1 |u1 <u2 <u4 <u8 |b1 "
      "<V2 (bfloat16) |S<n> <U<n>)"));
}

uint32_t ReadLittleEndian(absl::string_view bytes, size_t offset, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[offset + i]);
  }
  return value;
}

// Splits `bytes` into the header text and the data that follows it.
absl::Status SplitHeader(absl::string_view bytes, absl::string_view* header,
                         absl::string_view* data) {
  if (bytes.size() < kMagicSize + 2 || bytes.substr(0, kMagicSize) != kMagic) {
    return absl::InvalidArgumentError("not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<uint8_t>(bytes[kMagicSize]);
  const int minor = static_cast<uint8_t>(bytes[kMagicSize + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(".npy version ", major, ".", minor, " is not supported (1.0-3.0 are)"));
  }
  const int width = major == 1 ? 2 : 4;
  const size_t start = kMagicSize + 2 + width;
  if (bytes.size() < start) return HeaderError("file ends inside the header length");
  const size_t length = ReadLittleEndian(bytes, kMagicSize + 2, width);
  if (length > kMaxHeaderSize || length > bytes.size() - start) {
    return HeaderError(absl::StrCat("header length ", length, " runs past the end of the file"));
  }
  *header = bytes.substr(start, length);
  *data = bytes.substr(start + length);
  return absl::OkStatus();
}

struct ParsedHeader {
  NpyType type;
  bool swap = false;
  std::vector<int64_t> dims;
};

absl::StatusOr<ParsedHeader> InterpretHeader(absl::string_view header) {
  absl::StatusOr<std::map<std::string, HeaderValue>> dict = HeaderParser(header).Parse();
  if (!dict.ok()) return dict.status();
  for (const auto& [key, value] : *dict) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      return HeaderError(absl::StrCat("unexpected key '", key, "'"));
    }
  }
  auto descr = dict->find("descr");
  auto fortran = dict->find("fortran_order");
  auto shape = dict->find("shape");
  if (descr == dict->end() || fortran == dict->end() || shape == dict->end()) {
    return HeaderError("expected the keys 'descr', 'fortran_order' and 'shape'");
  }
  if (descr->second.kind != HeaderValue::kString) return HeaderError("'descr' is not a string");
  if (fortran->second.kind != HeaderValue::kBool) {
    return HeaderError("'fortran_order' is not True or False");
  }
  if (shape->second.kind != HeaderValue::kTuple) return HeaderError("'shape' is not a tuple");
  if (fortran->second.flag) {
    return absl::InvalidArgumentError(
        ".npy arrays in Fortran order are not supported; save a C-order array "
        "(numpy.ascontiguousarray) instead");
  }
  ParsedHeader parsed;
  absl::StatusOr<NpyType> type = ParseDescr(descr->second.text, &parsed.swap);
  if (!type.ok()) return type.status();
  parsed.type = *type;
  parsed.dims = shape->second.dims;
  return parsed;
}

// UTF-8 bytes of one code point (invalid ones become U+FFFD).
void AppendUtf8(uint32_t c, std::string* out) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Fixed-width NumPy strings are padded with NULs, which NumPy strips when reading.
void CopyStrings(absl::string_view data, const ParsedHeader& header, const Tensor& tensor) {
  const int size = header.type.size;
  std::string* out = tensor.data<std::string>();
  for (int64_t i = 0; i < tensor.NumElements(); ++i) {
    absl::string_view element = data.substr(static_cast<size_t>(i) * size, size);
    std::string& text = out[i];
    if (header.type.kind == 'S') {
      text.assign(element.data(), element.size());
    } else {
      for (size_t c = 0; c + 4 <= element.size(); c += 4) AppendUtf8(ReadLittleEndian(element, c, 4), &text);
    }
    while (!text.empty() && text.back() == '\0') text.pop_back();
  }
}

void CopyElements(absl::string_view data, const ParsedHeader& header, const Tensor& tensor) {
  const int size = header.type.size;
  const int64_t n = tensor.NumElements();
  if (header.type.dtype == DT_STRING) {
    CopyStrings(data, header, tensor);
    return;
  }
  if (header.type.dtype == DT_BOOL) {
    bool* out = tensor.data<bool>();
    for (int64_t i = 0; i < n; ++i) out[i] = data[i] != 0;
    return;
  }
  char* out = static_cast<char*>(tensor.raw_data());
  if (!header.swap) {
    if (n > 0) std::memcpy(out, data.data(), static_cast<size_t>(n) * size);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int b = 0; b < size; ++b) out[i * size + b] = data[i * size + (size - 1 - b)];
  }
}

std::string ShapeTuple(const TensorShape& shape) {
  if (shape.dims() == 0) return "()";
  if (shape.dims() == 1) return absl::StrCat("(", shape.dim_size(0), ",)");
  return absl::StrCat("(", absl::StrJoin(shape.dim_sizes(), ", "), ")");
}

}  // namespace

absl::StatusOr<std::string> NpyDescr(DataType dtype) {
  for (const NpyType& type : kNpyTypes) {
    if (type.dtype != dtype) continue;
    const char order = type.size == 1 ? '|' : '<';
    return absl::StrCat(std::string(1, order), std::string(1, type.kind), type.size);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("dtype ", DataTypeString(dtype), " cannot be stored in a .npy file"));
}

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, Allocator* allocator) {
  absl::string_view header_text, data;
  absl::Status split = SplitHeader(bytes, &header_text, &data);
  if (!split.ok()) return split;
  absl::StatusOr<ParsedHeader> header = InterpretHeader(header_text);
  if (!header.ok()) return header.status();
  absl::StatusOr<TensorShape> shape = TensorShape::Make(header->dims);
  if (!shape.ok()) return HeaderError(shape.status().message());
  uint64_t expected = 0;
  const bool overflow = __builtin_mul_overflow(static_cast<uint64_t>(shape->num_elements()),
                                               static_cast<uint64_t>(header->type.size),
                                               &expected);
  if (overflow || expected != data.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        ".npy data is ", data.size(), " bytes but shape ", shape->DebugString(), " of ",
        DataTypeNumpyName(header->type.dtype), " needs ",
        overflow ? std::string("more than 2^64") : absl::StrCat(expected)));
  }
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(allocator, header->type.dtype, *shape);
  if (!tensor.ok()) return tensor.status();
  CopyElements(data, *header, *tensor);
  return tensor;
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path, Allocator* allocator) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Tensor> tensor = ParseNpy(*bytes, allocator);
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrCat(path, ": ", tensor.status().message()));
  }
  return tensor;
}

absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  absl::StatusOr<std::string> descr = NpyDescr(tensor.dtype());
  if (!descr.ok()) return descr.status();
  std::string dict = absl::StrCat("{'descr': '", *descr, "', 'fortran_order': False, 'shape': ",
                                  ShapeTuple(tensor.shape()), ", }");
  // Pad with spaces so that magic + version + length + dict + '\n' is a multiple of 64.
  const bool v2 = dict.size() + 1 + kMagicSize + 2 + 2 > 65535;
  const size_t prefix = kMagicSize + 2 + (v2 ? 4 : 2);
  const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  const uint32_t length = static_cast<uint32_t>(dict.size());
  for (int i = 0; i < (v2 ? 4 : 2); ++i) out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  out += dict;
  const int64_t n = tensor.NumElements();
  if (tensor.dtype() == DT_BOOL) {
    const bool* values = tensor.data<bool>();
    for (int64_t i = 0; i < n; ++i) out.push_back(values[i] ? 1 : 0);
  } else if (n > 0) {
    out.append(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  }
  return out;
}

absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  absl::StatusOr<std::string> bytes = SerializeNpy(tensor);
  if (!bytes.ok()) return bytes.status();
  return WriteStringToFile(path, *bytes);
}

}  // namespace dflow
