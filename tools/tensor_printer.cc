#include "tools/tensor_printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {
namespace {

constexpr int kEdgeItems = 3;

// Which text a value is written for: a strict JSON document, or a person (numpy's words).
enum class Syntax { kJson, kText };

template <typename T>
std::string FormatFloating(T value, Syntax syntax) {
  if (std::isnan(value)) return syntax == Syntax::kJson ? "\"NaN\"" : "nan";
  if (std::isinf(value)) {
    if (syntax == Syntax::kText) return value > 0 ? "inf" : "-inf";
    return value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  }
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

template <typename T>
const T* Data(const Tensor& tensor) {
  return static_cast<const T*>(tensor.raw_data());
}

// Whether ElementText can print `dtype`.
bool IsPrintable(DataType dtype) {
  switch (dtype) {
    case DT_STRING: case DT_HALF: case DT_BFLOAT16: case DT_COMPLEX64: case DT_COMPLEX128:
    case DT_QINT8: case DT_QUINT8: case DT_QINT16: case DT_QUINT16: case DT_QINT32:
      return true;
    default:
      return DispatchNumeric(dtype, [](auto) {});
  }
}

// The text of element `i`. REQUIRES: IsPrintable(tensor.dtype()).
std::string ElementText(const Tensor& tensor, int64_t i, Syntax syntax) {
  switch (tensor.dtype()) {
    case DT_STRING: return JsonString(Data<std::string>(tensor)[i]);
    // As their exact float values: the shortest text that reads back to the same float
    // also reads back to the same half or bfloat16.
    case DT_HALF: return FormatFloating(Data<Half>(tensor)[i].ToFloat(), syntax);
    case DT_BFLOAT16: return FormatFloating(Data<Bfloat16>(tensor)[i].ToFloat(), syntax);
    case DT_COMPLEX64: {
      const float* pair = Data<float>(tensor) + 2 * i;
      return absl::StrCat("[", FormatFloating(pair[0], syntax), ", ",
                          FormatFloating(pair[1], syntax), "]");
    }
    case DT_COMPLEX128: {
      const double* pair = Data<double>(tensor) + 2 * i;
      return absl::StrCat("[", FormatFloating(pair[0], syntax), ", ",
                          FormatFloating(pair[1], syntax), "]");
    }
    case DT_QINT8: return absl::StrCat(Data<int8_t>(tensor)[i]);
    case DT_QUINT8: return absl::StrCat(Data<uint8_t>(tensor)[i]);
    case DT_QINT16: return absl::StrCat(Data<int16_t>(tensor)[i]);
    case DT_QUINT16: return absl::StrCat(Data<uint16_t>(tensor)[i]);
    case DT_QINT32: return absl::StrCat(Data<int32_t>(tensor)[i]);
    default: break;
  }
  std::string text;
  DispatchNumeric(tensor.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T value = Data<T>(tensor)[i];
    if constexpr (std::is_same_v<T, bool>) {
      text = value ? "true" : "false";
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      text = FormatFloating(value, syntax);
    } else {
      text = absl::StrCat(+value);  // '+' prints int8/uint8 as numbers
    }
  });
  return text;
}

void AppendUtf8Checked(absl::string_view text, size_t* pos, std::string* out) {
  const unsigned char lead = static_cast<unsigned char>(text[*pos]);
  const int length = lead >= 0xF0 && lead <= 0xF4 ? 4
                     : lead >= 0xE0 && lead < 0xF0 ? 3
                     : lead >= 0xC2 && lead < 0xE0 ? 2
                                                   : 0;
  bool valid = length > 0 && *pos + length <= text.size();
  for (int k = 1; valid && k < length; ++k) {
    valid = (static_cast<unsigned char>(text[*pos + k]) & 0xC0) == 0x80;
  }
  if (!valid) {  // a stray byte: keep it visible as its Latin-1 code point
    static const char kHex[] = "0123456789abcdef";
    out->append("\\u00");
    out->push_back(kHex[lead >> 4]);
    out->push_back(kHex[lead & 0xF]);
    *pos += 1;
    return;
  }
  out->append(text.data() + *pos, length);
  *pos += length;
}

// Element indices shown along one dimension of size `n`.
std::vector<int64_t> ShownIndices(int64_t n, bool summarize) {
  std::vector<int64_t> shown;
  if (summarize && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) shown.push_back(i);
    shown.push_back(-1);  // "..."
    for (int64_t i = n - kEdgeItems; i < n; ++i) shown.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) shown.push_back(i);
  }
  return shown;
}

// numpy-style nested rendering of a printable tensor of rank >= 1.
class TextRenderer {
 public:
  TextRenderer(const Tensor& tensor, bool summarize) : tensor_(tensor), summarize_(summarize) {
    const int rank = tensor.shape().dims();
    strides_.assign(rank, 1);
    for (int d = rank - 2; d >= 0; --d) strides_[d] = strides_[d + 1] * tensor.shape().dim_size(d + 1);
  }

  std::string Render() {
    Visit(0, 0, [this](int64_t flat) {
      width_ = std::max(width_, ElementText(tensor_, flat, Syntax::kText).size());
    });
    std::string out;
    RenderDim(0, 0, &out);
    return out;
  }

 private:
  template <typename Fn>
  void Visit(int dim, int64_t offset, const Fn& fn) {
    for (int64_t i : ShownIndices(tensor_.shape().dim_size(dim), summarize_)) {
      if (i < 0) continue;
      const int64_t flat = offset + i * strides_[dim];
      if (dim + 1 == tensor_.shape().dims()) {
        fn(flat);
      } else {
        Visit(dim + 1, flat, fn);
      }
    }
  }

  void RenderDim(int dim, int64_t offset, std::string* out) {
    const int rank = tensor_.shape().dims();
    const bool innermost = dim + 1 == rank;
    // Rows break with a newline per remaining dimension, indented past the brackets.
    const std::string separator =
        innermost ? " " : std::string(rank - dim - 1, '\n') + std::string(dim + 1, ' ');
    out->push_back('[');
    bool first = true;
    for (int64_t i : ShownIndices(tensor_.shape().dim_size(dim), summarize_)) {
      if (!first) out->append(separator);
      first = false;
      if (i < 0) {
        out->append("...");
      } else if (innermost) {
        const std::string text = ElementText(tensor_, offset + i * strides_[dim], Syntax::kText);
        out->append(width_ - std::min(width_, text.size()), ' ');
        out->append(text);
      } else {
        RenderDim(dim + 1, offset + i * strides_[dim], out);
      }
    }
    out->push_back(']');
  }

  const Tensor& tensor_;
  const bool summarize_;
  std::vector<int64_t> strides_;
  size_t width_ = 0;
};

std::string ShapeJson(const TensorShape& shape) {
  return absl::StrCat("[", absl::StrJoin(shape.dim_sizes(), ", "), "]");
}

}  // namespace

std::string FormatFloat(float value) { return FormatFloating(value, Syntax::kJson); }
std::string FormatDouble(double value) { return FormatFloating(value, Syntax::kJson); }

std::string JsonString(absl::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t pos = 0;
  while (pos < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x80) {
      AppendUtf8Checked(text, &pos, &out);
      continue;
    }
    ++pos;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        if (c < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string TensorValuesJson(const Tensor& tensor) {
  if (!tensor.IsInitialized() || !IsPrintable(tensor.dtype())) return "null";
  std::string out = "[";
  for (int64_t i = 0; i < tensor.NumElements(); ++i) {
    if (i > 0) out.append(", ");
    out.append(ElementText(tensor, i, Syntax::kJson));
  }
  out.push_back(']');
  return out;
}

std::string TensorJson(absl::string_view name, const Tensor& tensor) {
  return absl::StrCat("{\"name\": ", JsonString(name),
                      ", \"dtype\": ", JsonString(DataTypeNumpyName(tensor.dtype())),
                      ", \"shape\": ", ShapeJson(tensor.shape()),
                      ", \"values\": ", TensorValuesJson(tensor), "}");
}

std::string OutputsJson(const std::vector<std::string>& names,
                        const std::vector<Tensor>& tensors) {
  std::string out = "{\"outputs\": [";
  for (size_t i = 0; i < names.size() && i < tensors.size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(TensorJson(names[i], tensors[i]));
  }
  out.append("]}\n");
  return out;
}

std::string TensorValuesText(const Tensor& tensor, int64_t threshold) {
  if (!tensor.IsInitialized()) return "<uninitialized>";
  if (!IsPrintable(tensor.dtype())) {
    return absl::StrCat("<", DataTypeString(tensor.dtype()), " values are not printable>");
  }
  if (tensor.shape().dims() == 0) return ElementText(tensor, 0, Syntax::kText);
  return TextRenderer(tensor, tensor.NumElements() > threshold).Render();
}

std::string OutputsText(const std::vector<std::string>& names,
                        const std::vector<Tensor>& tensors) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < tensors.size(); ++i) {
    if (i > 0) out.push_back('\n');
    absl::StrAppend(&out, names[i], ": ", DataTypeNumpyName(tensors[i].dtype()), " ",
                    tensors[i].shape().DebugString(), "\n", TensorValuesText(tensors[i]),
                    "\n");
  }
  return out;
}

}  // namespace dflow
