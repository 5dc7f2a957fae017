#include "session/kernel_coverage.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/types.h"

namespace dflow {
namespace {

// At most this many node names per op in a report; the rest are counted.
constexpr int kMaxNodesListed = 8;

// The type-valued attrs of `node`, sorted by name: what selects a kernel.
std::string TypeAttrs(const NodeDef& node) {
  std::map<std::string, std::string> attrs;
  for (const auto& [name, value] : node.attr()) {
    if (!name.empty() && name[0] == '_') continue;
    if (value.value_case() == AttrValue::kType) attrs[name] = DataType_Name(value.type());
  }
  std::vector<std::string> parts;
  for (const auto& [name, type] : attrs) parts.push_back(absl::StrCat(name, "=", type));
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::vector<MissingKernel> FindMissingKernels(const Graph& graph, const KernelSupport& kernels) {
  std::vector<MissingKernel> missing;
  std::map<std::pair<std::string, std::string>, size_t> index;  // (op, attrs) -> entry
  for (const Node* node : graph.nodes()) {
    if (!kernels.SupportedDeviceTypes(node->def()).empty()) continue;
    std::pair<std::string, std::string> key(node->op(), TypeAttrs(node->def()));
    auto [it, inserted] = index.emplace(key, missing.size());
    if (inserted) missing.push_back({key.first, key.second, {}});
    missing[it->second].nodes.push_back(node->name());
  }
  return missing;
}

std::string FormatMissingKernels(const std::vector<MissingKernel>& missing) {
  std::string text;
  for (const MissingKernel& entry : missing) {
    absl::StrAppend(&text, "  ", entry.op);
    if (!entry.type_attrs.empty()) absl::StrAppend(&text, " [", entry.type_attrs, "]");
    const size_t n = entry.nodes.size();
    absl::StrAppend(&text, ": ", n, n == 1 ? " node: " : " nodes: ");
    const size_t shown = std::min<size_t>(n, kMaxNodesListed);
    absl::StrAppend(&text, absl::StrJoin(entry.nodes.begin(), entry.nodes.begin() + shown, ", "));
    if (shown < n) absl::StrAppend(&text, " and ", n - shown, " more");
    absl::StrAppend(&text, "\n");
  }
  return text;
}

absl::Status MissingKernelsError(const std::vector<MissingKernel>& missing) {
  if (missing.empty()) return absl::OkStatus();
  std::string text = FormatMissingKernels(missing);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return absl::InvalidArgumentError(absl::StrCat(
      "No OpKernel was registered to support ", missing.size(),
      missing.size() == 1 ? " op" : " ops", " this step needs (nothing was run):\n", text,
      "\n`dflow inspect --graph=...` lists every op of a graph that has no kernel here."));
}

std::vector<std::string> PermissiveKernelSupport::SupportedDeviceTypes(const NodeDef& node) const {
  std::vector<std::string> types = base_.SupportedDeviceTypes(node);
  if (types.empty()) types.push_back(fallback_type_);
  return types;
}

}  // namespace dflow
