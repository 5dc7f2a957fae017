#include "tools/feed_scalar.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dflow {
namespace {

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

// The JSON strings "NaN", "Infinity" and "-Infinity" as numbers: the JSON output
// (tools/tensor_printer.h) writes non-finite values that way, so it reads back.
bool NonFiniteFromString(const Scalar& s, Scalar* number) {
  if (s.kind != Scalar::kString) return false;
  number->kind = Scalar::kFloat;
  if (s.s == "NaN") {
    number->d = std::numeric_limits<double>::quiet_NaN();
  } else if (s.s == "Infinity" || s.s == "-Infinity") {
    number->d = s.s[0] == '-' ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

// Numbers and bools, packed as T (bool as one byte of 0/1, as Tensor stores it).
template <typename T>
class TypedSink : public ElementSink {
 public:
  TypedSink() : ElementSink(DataTypeOf<T>()) {}

 private:
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

  std::string Convert(Scalar& s) override {
    if (s.kind == Scalar::kString) {
      Scalar number;
      if (NonFiniteFromString(s, &number)) return Store(number);
    }
    return Store(s);
  }

  std::string Store(const Scalar& value) {
    T converted{};
    std::string why;
    if constexpr (std::is_same_v<T, bool>) {
      why = ToBool(value, &converted);
    } else if constexpr (kIsHalfOrBfloat16<T>) {
      why = ToHalf<T>(value, &converted);
    } else {
      why = ToNumber<T>(value, &converted);
    }
    if (why.empty()) values_.push_back(static_cast<Stored>(converted));
    return why;
  }

  void CopyTo(const Tensor& tensor) override {
    if (!values_.empty()) {
      std::memcpy(tensor.raw_data(), values_.data(), values_.size() * sizeof(Stored));
    }
    std::vector<Stored>().swap(values_);
  }

  std::vector<Stored> values_;
};

class StringSink : public ElementSink {
 public:
  StringSink() : ElementSink(DT_STRING) {}

 private:
  std::string Convert(Scalar& s) override {
    if (s.kind != Scalar::kString) return "expected a JSON string";
    values_.push_back(std::move(s.s));
    return "";
  }
  void CopyTo(const Tensor& tensor) override {
    std::string* out = tensor.data<std::string>();
    for (size_t i = 0; i < values_.size(); ++i) out[i] = std::move(values_[i]);
    std::vector<std::string>().swap(values_);
  }

  std::vector<std::string> values_;
};

}  // namespace

std::string ScalarText(const Scalar& s) {
  switch (s.kind) {
    case Scalar::kInt: return absl::StrCat(s.i);
    case Scalar::kUint: return absl::StrCat(s.u);
    case Scalar::kBool: return s.i ? "true" : "false";
    case Scalar::kString: return absl::StrCat("\"", s.s, "\"");
    case Scalar::kFloat: break;
  }
  if (std::isnan(s.d)) return "NaN";
  if (std::isinf(s.d)) return s.d > 0 ? "Infinity" : "-Infinity";
  return absl::StrFormat("%.17g", s.d);
}

bool IsConvertibleDtype(DataType dtype) {
  return dtype == DT_STRING || DispatchNumericOrHalf(dtype, [](auto) {});
}

void ElementSink::Append(Scalar& s) {
  if (bad_index_ >= 0) return;
  std::string why = Convert(s);
  if (why.empty()) {
    ++count_;
    return;
  }
  bad_index_ = count_;
  bad_text_ = ScalarText(s);
  why_ = std::move(why);
}

absl::StatusOr<Tensor> ElementSink::Finish(const TensorShape& shape, Allocator* allocator) {
  if (bad_index_ >= 0) {
    const std::string where =
        shape.dims() == 0 ? std::string() : absl::StrCat(" (element ", bad_index_, ")");
    return absl::InvalidArgumentError(absl::StrCat("value ", bad_text_, where, " cannot be ",
                                                   DataTypeNumpyName(dtype_), ": ", why_));
  }
  if (shape.num_elements() != count_) {
    return absl::InternalError(absl::StrCat("feed of shape ", shape.DebugString(), " but ",
                                            count_, " elements"));
  }
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(allocator, dtype_, shape);
  if (!tensor.ok()) return tensor.status();
  CopyTo(*tensor);
  return tensor;
}

std::unique_ptr<ElementSink> MakeElementSink(DataType dtype) {
  if (dtype == DT_STRING) return std::make_unique<StringSink>();
  std::unique_ptr<ElementSink> sink;
  DispatchNumericOrHalf(dtype, [&](auto zero) {
    sink = std::make_unique<TypedSink<decltype(zero)>>();
  });
  return sink;
}

}  // namespace dflow
