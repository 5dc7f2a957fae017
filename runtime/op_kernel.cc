#include "runtime/op_kernel.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/node_def_util.h"
#include "graph/status_macros.h"
#include "runtime/resource_limits.h"

namespace dflow {
namespace {

absl::Status AttrTypeError(const NodeDef& def, absl::string_view name, absl::string_view want,
                           const AttrValue& value) {
  return absl::InvalidArgumentError(absl::StrCat("Node '", def.name(), "' (", def.op(),
                                                 "): attr '", name, "' has type ",
                                                 AttrValueTypeName(value), ", expected ", want));
}

// Reads one attr case into T; `want` names the expected type for errors.
template <typename T, typename Get>
absl::Status ReadAttr(const NodeDef& def, absl::string_view name, AttrValue::ValueCase want_case,
                      absl::string_view want, Get get, T* out) {
  const AttrValue* value = FindAttr(def, name);
  if (value == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("Node '", def.name(), "' (", def.op(),
                                                   "): missing attr '", name, "'"));
  }
  const bool empty_list = value->value_case() == AttrValue::kList && want_case == AttrValue::kList;
  if (value->value_case() != want_case && !empty_list) {
    return AttrTypeError(def, name, want, *value);
  }
  *out = get(*value);
  return absl::OkStatus();
}

template <typename T, typename Field>
std::vector<T> ToVector(const Field& field) {
  return std::vector<T>(field.begin(), field.end());
}

}  // namespace

OpKernelConstruction::OpKernelConstruction(const NodeDef& def, const OpDef& op_def,
                                           const DataTypeVector& inputs,
                                           const DataTypeVector& outputs, Device* device)
    : def_(def), op_def_(op_def), inputs_(inputs), outputs_(outputs), device_(device) {}

OpKernelConstruction::OpKernelConstruction(const NodeDef& def,
                                           std::shared_ptr<const NodeDef> kept_def,
                                           const OpDef& op_def, const DataTypeVector& inputs,
                                           const DataTypeVector& outputs, Device* device)
    : shared_def_(std::move(kept_def)),
      def_(def),
      op_def_(op_def),
      inputs_(inputs),
      outputs_(outputs),
      device_(device) {}

std::shared_ptr<const NodeDef> OpKernelConstruction::shared_def() const {
  if (shared_def_ == nullptr) shared_def_ = std::make_shared<const NodeDef>(def_);
  return shared_def_;
}

bool OpKernelConstruction::HasAttr(absl::string_view name) const {
  return FindAttr(def_, name) != nullptr;
}

#define DFLOW_DEFINE_GET_ATTR(TYPE, CASE, WANT, EXPR)                                    \
  template <>                                                                            \
  absl::Status OpKernelConstruction::GetAttr(absl::string_view name, TYPE* value) const { \
    return ReadAttr<TYPE>(def_, name, AttrValue::CASE, WANT,                            \
                          [](const AttrValue& v) -> TYPE { return EXPR; }, value);       \
  }

DFLOW_DEFINE_GET_ATTR(bool, kB, "bool", v.b())
DFLOW_DEFINE_GET_ATTR(int64_t, kI, "int", v.i())
DFLOW_DEFINE_GET_ATTR(int32_t, kI, "int", static_cast<int32_t>(v.i()))
DFLOW_DEFINE_GET_ATTR(float, kF, "float", v.f())
DFLOW_DEFINE_GET_ATTR(std::string, kS, "string", v.s())
DFLOW_DEFINE_GET_ATTR(DataType, kType, "type", v.type())
DFLOW_DEFINE_GET_ATTR(TensorProto, kTensor, "tensor", v.tensor())
DFLOW_DEFINE_GET_ATTR(std::vector<bool>, kList, "list(bool)", ToVector<bool>(v.list().b()))
DFLOW_DEFINE_GET_ATTR(std::vector<int64_t>, kList, "list(int)", ToVector<int64_t>(v.list().i()))
DFLOW_DEFINE_GET_ATTR(std::vector<int32_t>, kList, "list(int)", ToVector<int32_t>(v.list().i()))
DFLOW_DEFINE_GET_ATTR(std::vector<float>, kList, "list(float)", ToVector<float>(v.list().f()))
DFLOW_DEFINE_GET_ATTR(std::vector<std::string>, kList, "list(string)",
                      ToVector<std::string>(v.list().s()))
#undef DFLOW_DEFINE_GET_ATTR

template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view name,
                                           std::vector<DataType>* value) const {
  return ReadAttr<std::vector<DataType>>(
      def_, name, AttrValue::kList, "list(type)",
      [](const AttrValue& v) {
        std::vector<DataType> types;
        for (int t : v.list().type()) types.push_back(static_cast<DataType>(t));
        return types;
      },
      value);
}

template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view name, PartialShape* value) const {
  const AttrValue* attr = FindAttr(def_, name);
  if (attr == nullptr || !attr->has_shape()) {
    return absl::InvalidArgumentError(absl::StrCat("Node '", def_.name(), "' (", def_.op(),
                                                   "): missing shape attr '", name, "'"));
  }
  DFLOW_ASSIGN_OR_RETURN(*value, PartialShape::FromProto(attr->shape()));
  return absl::OkStatus();
}

namespace {

// "OOM when allocating tensor with shape[..] and type float by allocator X" becomes
// "... on <device> by allocator X" (TF's order), keeping any allocator state after it.
absl::Status WithDevice(const absl::Status& status, const std::string& device) {
  std::string message(status.message());
  const size_t at = message.find(" by allocator ");
  if (at == std::string::npos) {
    absl::StrAppend(&message, " on ", device);
  } else {
    message.insert(at, absl::StrCat(" on ", device));
  }
  return absl::Status(status.code(), message);
}

}  // namespace

OpKernelContext::OpKernelContext(const Params& params, int num_outputs)
    : params_(params), outputs_(num_outputs) {}

const std::string& OpKernelContext::node_name() const { return params_.kernel->name(); }

Tensor* OpKernelContext::ForwardInputToOutput(int in, int out, const TensorShape& shape) {
  Tensor& input = params_.inputs[in];
  if (!input.IsSoleOwner() || input.dtype() != params_.kernel->output_type(out) ||
      input.NumElements() != shape.num_elements() || input_is_dead(in)) {
    return nullptr;
  }
  if (input.shape() == shape) {
    outputs_[out] = std::move(input);
  } else {
    outputs_[out] = input.Reshaped(shape);
    input.Clear();
  }
  return &outputs_[out];
}

absl::Status OpKernelContext::CheckLimits(DataType dtype, const TensorShape& shape,
                                          double string_bytes) const {
  if (params_.limits == nullptr) return absl::OkStatus();
  return CheckAllocation(*params_.limits, node_name(), params_.kernel->type_string(), dtype,
                         shape, *allocator(), device()->device_type() == "CPU", string_bytes);
}

absl::Status OpKernelContext::CheckStringLimits(const TensorShape& shape,
                                                double string_bytes) const {
  return CheckLimits(DT_STRING, shape, string_bytes);
}

absl::StatusOr<Tensor*> OpKernelContext::allocate_output(int index, const TensorShape& shape) {
  DFLOW_RETURN_IF_ERROR(CheckLimits(params_.kernel->output_type(index), shape));
  absl::StatusOr<Tensor> tensor =
      Tensor::Allocate(allocator(), params_.kernel->output_type(index), shape);
  if (!tensor.ok()) return WithDevice(tensor.status(), device()->name());
  outputs_[index] = *std::move(tensor);
  return &outputs_[index];
}

absl::StatusOr<Tensor> OpKernelContext::allocate_temp(DataType dtype, const TensorShape& shape) {
  DFLOW_RETURN_IF_ERROR(CheckLimits(dtype, shape));
  absl::StatusOr<Tensor> tensor = Tensor::Allocate(allocator(), dtype, shape);
  if (!tensor.ok()) {
    std::string message(tensor.status().message());
    const std::string tf_prefix = "OOM when allocating tensor";
    if (message.rfind(tf_prefix, 0) == 0) {
      message.replace(0, tf_prefix.size(), "OOM when allocating temporary tensor");
    }
    return WithDevice(absl::Status(tensor.status().code(), message), device()->name());
  }
  return tensor;
}

void OpKernelContext::set_output_dead(int index) {
  if (dead_outputs_.empty()) dead_outputs_.resize(outputs_.size(), false);
  dead_outputs_[index] = true;
}

bool OpKernelContext::output_is_dead(int index) const {
  return !dead_outputs_.empty() && dead_outputs_[index];
}

void OpKernelContext::set_output_ref(int index, RefSlot* slot) {
  if (output_refs_.empty()) output_refs_.resize(outputs_.size(), nullptr);
  output_refs_[index] = slot;
}

OpKernel::OpKernel(OpKernelConstruction* context)
    : def_(context->shared_def()), output_types_(context->output_types()) {}

void AsyncOpKernel::Compute(OpKernelContext* context) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  ComputeAsync(context, [&] {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
}

namespace {

absl::Status OomStatus(const char* what, const char* cause) {
  return absl::ResourceExhaustedError(
      absl::StrCat("OOM inside the kernel (", what, "): an input asked for ", cause));
}

// Runs `body`; an exception it throws comes back as a status (never rethrown).
template <typename Body>
absl::Status Contained(Body&& body) {
  try {
    body();
    return absl::OkStatus();
  } catch (const std::bad_alloc& e) {
    return OomStatus(e.what(), "more memory than could be allocated");
  } catch (const std::length_error& e) {
    return OomStatus(e.what(), "a size that does not fit");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("The kernel threw an exception: ", e.what()));
  } catch (...) {
    return absl::InternalError("The kernel threw an exception of unknown type");
  }
}

}  // namespace

void ComputeNoThrow(OpKernel* kernel, OpKernelContext* context) {
  absl::Status status = Contained([&] { kernel->Compute(context); });
  if (!status.ok()) context->SetStatus(status);
}

void ComputeAsyncNoThrow(AsyncOpKernel* kernel, OpKernelContext* context,
                         AsyncOpKernel::DoneCallback done) {
  auto called = std::make_shared<std::atomic<bool>>(false);
  auto once = [called, done] {
    if (!called->exchange(true)) done();
  };
  absl::Status status = Contained([&] { kernel->ComputeAsync(context, once); });
  // Only when `done` has not run: running it may have freed `context`.
  if (!status.ok() && !called->exchange(true)) {
    context->SetStatus(status);
    done();
  }
}

}  // namespace dflow
