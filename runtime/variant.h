// Variant: one element of a DT_VARIANT tensor, TF's type-erased value (a TensorList, ...).
//
// The value is immutable and shared: copying a Variant (or a tensor of them) shares it,
// so a kernel that "modifies" a value builds a new one, unless it holds the only
// reference (SoleOwner), when it may take the old one apart (TF's in-place TensorList
// updates inside loops). Kinds subclass VariantValue next to their kernels.
#ifndef DFLOW_RUNTIME_VARIANT_H_
#define DFLOW_RUNTIME_VARIANT_H_

#include <memory>
#include <string>
#include <utility>

namespace dflow {

class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // TF's type name ("tensorflow::TensorList"), for errors and DebugString.
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const = 0;
};

class Variant {
 public:
  Variant() = default;
  explicit Variant(std::shared_ptr<const VariantValue> value) : value_(std::move(value)) {}

  bool empty() const { return value_ == nullptr; }
  // The value as a T, or nullptr when it is empty or another kind.
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value_.get());
  }
  // True when this Variant holds the value's only reference.
  bool SoleOwner() const { return value_ != nullptr && value_.use_count() == 1; }
  std::string TypeName() const { return value_ == nullptr ? "<empty>" : value_->TypeName(); }
  std::string DebugString() const {
    return value_ == nullptr ? "Variant<empty>" : value_->DebugString();
  }

 private:
  std::shared_ptr<const VariantValue> value_;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_VARIANT_H_
