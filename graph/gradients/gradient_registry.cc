#include "graph/gradients/gradient_registry.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

absl::Status Duplicate(absl::string_view op) {
  return absl::AlreadyExistsError(absl::StrCat("a gradient for op '", op,
                                               "' is already registered"));
}

}  // namespace

const GradientRegistry& GradientRegistry::Default() {
  static const GradientRegistry* const registry = [] {
    auto* r = new GradientRegistry();
    absl::Status status = RegisterStandardGradients(r);
    if (!status.ok()) {
      // A duplicate in our own tables is a programming error caught by every test.
      std::cerr << "RegisterStandardGradients: " << status << "\n";
      std::abort();
    }
    return r;
  }();
  return *registry;
}

absl::Status GradientRegistry::Register(absl::string_view op, GradFunc func) {
  if (funcs_.contains(op) || no_gradient_.contains(op)) return Duplicate(op);
  funcs_.emplace(std::string(op), std::move(func));
  return absl::OkStatus();
}

absl::Status GradientRegistry::RegisterNoGradient(absl::string_view op) {
  if (funcs_.contains(op) || no_gradient_.contains(op)) return Duplicate(op);
  no_gradient_.insert(std::string(op));
  return absl::OkStatus();
}

const GradFunc* GradientRegistry::Find(absl::string_view op) const {
  auto it = funcs_.find(op);
  return it == funcs_.end() ? nullptr : &it->second;
}

bool GradientRegistry::HasNoGradient(absl::string_view op) const {
  return no_gradient_.contains(op);
}

std::vector<std::string> GradientRegistry::OpsWithGradients() const {
  std::vector<std::string> ops;
  for (const auto& [op, func] : funcs_) ops.push_back(op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

absl::Status RegisterStandardGradients(GradientRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterMathGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterArrayGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterNnGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterControlFlowGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTensorArrayGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterEinsumGradient(registry));
  DFLOW_RETURN_IF_ERROR(RegisterVolumeGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterLinalgGradients(registry));
  DFLOW_RETURN_IF_ERROR(RegisterDecompositionGradients(registry));
  return RegisterResourceGradients(registry);
}

}  // namespace dflow
