#include "graph/op_registry.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "graph/op_list_data.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

const OpDef::AttrDef* FindAttrDef(const OpDef& def, absl::string_view name) {
  for (const OpDef::AttrDef& attr : def.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

absl::Status CheckArgAttr(const OpDef& def, const OpDef::ArgDef& arg,
                          const std::string& attr_name, absl::string_view want) {
  if (attr_name.empty()) return absl::OkStatus();
  const OpDef::AttrDef* attr = FindAttrDef(def, attr_name);
  if (attr == nullptr || attr->type() != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("Op '", def.name(), "': arg '", arg.name(), "' refers to attr '",
                     attr_name, "' which is not declared with type ", want));
  }
  return absl::OkStatus();
}

absl::Status ValidateArg(const OpDef& def, const OpDef::ArgDef& arg) {
  DFLOW_RETURN_IF_ERROR(CheckArgAttr(def, arg, arg.type_attr(), "type"));
  DFLOW_RETURN_IF_ERROR(CheckArgAttr(def, arg, arg.number_attr(), "int"));
  DFLOW_RETURN_IF_ERROR(CheckArgAttr(def, arg, arg.type_list_attr(), "list(type)"));
  const bool has_type = arg.type() != DT_INVALID || !arg.type_attr().empty() ||
                        !arg.type_list_attr().empty();
  if (!has_type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Op '", def.name(), "': arg '", arg.name(), "' has no type"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateOpDef(const OpDef& def) {
  if (def.name().empty()) return absl::InvalidArgumentError("OpDef without a name");
  for (const auto& arg : def.input_arg()) DFLOW_RETURN_IF_ERROR(ValidateArg(def, arg));
  for (const auto& arg : def.output_arg()) DFLOW_RETURN_IF_ERROR(ValidateArg(def, arg));
  return absl::OkStatus();
}

absl::Span<const absl::string_view> TensorFlowTestOnlyOps() {
  // Registered by TF's python/framework/test_ops.cc into the wheel's runtime, so they are
  // in TF 2.21's dumped OpList; no model uses them.
  static constexpr absl::string_view kTestOps[] = {
      "A",
      "B",
      "GraphDefVersion",
      "IsResourceHandleRefCounting",
      "KernelLabel",
      "KernelLabelRequired",
      "Namespace>TestStringOutput",
      "Old",
      "ResourceCreateOp",
      "ResourceInitializedOp",
      "ResourceUsingOp",
      "StubResourceHandleOp",
      "TestAttr",
      "TestStringOutput",
  };
  return kTestOps;
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    absl::Status status =
        r->RegisterSerializedOpList(kEmbeddedOpList, TensorFlowTestOnlyOps());
    // The embedded list is build-time data checked by tests; failing here is a bug.
    if (!status.ok()) std::abort();
    return r;
  }();
  return *registry;
}

absl::Status OpRegistry::Register(OpDef def) {
  DFLOW_RETURN_IF_ERROR(ValidateOpDef(def));
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = ops_.try_emplace(def.name(), nullptr);
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("Op '", def.name(), "' is already registered"));
  }
  it->second = std::make_unique<const OpDef>(std::move(def));
  return absl::OkStatus();
}

absl::Status OpRegistry::RegisterSerializedOpList(absl::string_view bytes,
                                                  absl::Span<const absl::string_view> skip) {
  OpList list;
  if (!list.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("OpList bytes do not parse");
  }
  for (OpDef& def : *list.mutable_op()) {
    if (std::find(skip.begin(), skip.end(), def.name()) != skip.end()) continue;
    DFLOW_RETURN_IF_ERROR(Register(std::move(def)));
  }
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view op) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::OpNames() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> names;
  names.reserve(ops_.size());
  for (const auto& [name, def] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

size_t OpRegistry::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return ops_.size();
}

}  // namespace dflow
