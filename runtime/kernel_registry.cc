#include "runtime/kernel_registry.h"

#include <algorithm>
#include <memory>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/node_def_util.h"

namespace dflow {
namespace {

bool Allowed(const std::vector<DataType>& allowed, int type) {
  return std::find(allowed.begin(), allowed.end(), static_cast<DataType>(type)) !=
         allowed.end();
}

std::string DescribeKernel(const KernelDef& def) {
  std::string line = absl::StrCat("  device='", def.device_type, "'");
  for (const auto& [attr, types] : def.type_constraints) {
    std::vector<std::string> names;
    for (DataType t : types) names.push_back(absl::StrCat("DT_", absl::AsciiStrToUpper(DataTypeString(t))));
    absl::StrAppend(&line, "; ", attr, " in [", absl::StrJoin(names, ", "), "]");
  }
  return line + "\n";
}

bool SameConstraints(const KernelDef& a, const KernelDef& b) {
  return a.device_type == b.device_type && a.type_constraints == b.type_constraints;
}

}  // namespace

bool KernelDefMatches(const KernelDef& def, const NodeDef& node) {
  for (const auto& [attr, allowed] : def.type_constraints) {
    const AttrValue* value = FindAttr(node, attr);
    if (value == nullptr) return false;
    if (value->value_case() == AttrValue::kType) {
      if (!Allowed(allowed, value->type())) return false;
    } else if (value->value_case() == AttrValue::kList) {
      for (int t : value->list().type()) {
        if (!Allowed(allowed, t)) return false;
      }
    } else {
      return false;
    }
  }
  return true;
}


absl::Status KernelRegistry::Register(KernelDef def, KernelFactory factory) {
  std::vector<Entry>& entries = kernels_[def.op];
  for (const Entry& entry : entries) {
    if (SameConstraints(entry.def, def)) {
      return absl::AlreadyExistsError(absl::StrCat("Kernel for op '", def.op, "' on ",
                                                   def.device_type,
                                                   " with the same constraints is already registered"));
    }
  }
  entries.push_back({std::move(def), std::move(factory)});
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.def.priority > b.def.priority;
  });
  return absl::OkStatus();
}

const KernelRegistry::Entry* KernelRegistry::FindEntry(const NodeDef& node,
                                                       absl::string_view device_type) const {
  auto it = kernels_.find(node.op());
  if (it == kernels_.end()) return nullptr;
  for (const Entry& entry : it->second) {
    if (entry.def.device_type == device_type && KernelDefMatches(entry.def, node)) {
      return &entry;
    }
  }
  return nullptr;
}

const KernelDef* KernelRegistry::Find(const NodeDef& node, absl::string_view device_type) const {
  const Entry* entry = FindEntry(node, device_type);
  return entry == nullptr ? nullptr : &entry->def;
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    const NodeDef& node, const OpDef& op_def, const DataTypeVector& inputs,
    const DataTypeVector& outputs, Device* device) const {
  // The kernel keeps its def; the copy is made here once.
  auto kept = std::make_shared<const NodeDef>(node);
  return CreateKernel(*kept, kept, op_def, inputs, outputs, device);
}

absl::StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(
    const NodeDef& node, std::shared_ptr<const NodeDef> kept, const OpDef& op_def,
    const DataTypeVector& inputs, const DataTypeVector& outputs, Device* device) const {
  const Entry* entry = FindEntry(node, device->device_type());
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "No registered '", node.op(), "' OpKernel for '", device->device_type(),
        "' devices compatible with node {{node ", node.name(), "}}\nRegistered kernels:\n",
        DescribeKernels(node.op())));
  }
  OpKernelConstruction construction(node, std::move(kept), op_def, inputs, outputs, device);
  std::unique_ptr<OpKernel> kernel = entry->factory(&construction);
  if (!construction.status().ok()) return construction.status();
  return kernel;
}

std::vector<std::string> KernelRegistry::SupportedDeviceTypes(const NodeDef& node) const {
  std::set<std::string> types;
  auto it = kernels_.find(node.op());
  if (it == kernels_.end()) return {};
  for (const Entry& entry : it->second) {
    if (KernelDefMatches(entry.def, node)) types.insert(entry.def.device_type);
  }
  return std::vector<std::string>(types.begin(), types.end());
}

std::vector<std::string> KernelRegistry::HostMemoryArgs(const NodeDef& node,
                                                        absl::string_view device_type) const {
  const KernelDef* def = Find(node, device_type);
  return def == nullptr ? std::vector<std::string>() : def->host_memory_args;
}

std::string KernelRegistry::DescribeKernels(absl::string_view op) const {
  auto it = kernels_.find(op);
  if (it == kernels_.end() || it->second.empty()) return "  <no registered kernels>\n";
  std::string out;
  for (const Entry& entry : it->second) out += DescribeKernel(entry.def);
  return out;
}

std::vector<std::pair<KernelDef, KernelFactory>> KernelRegistry::Entries(
    absl::string_view op, absl::string_view device_type) const {
  std::vector<std::pair<KernelDef, KernelFactory>> out;
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return out;
  for (const Entry& entry : it->second) {
    if (entry.def.device_type == device_type) out.emplace_back(entry.def, entry.factory);
  }
  return out;
}

std::vector<std::string> KernelRegistry::OpsWithKernels() const {
  std::vector<std::string> ops;
  for (const auto& [op, entries] : kernels_) {
    if (!entries.empty()) ops.push_back(op);
  }
  return ops;
}

size_t KernelRegistry::size() const {
  size_t n = 0;
  for (const auto& [op, entries] : kernels_) n += entries.size();
  return n;
}

}  // namespace dflow
