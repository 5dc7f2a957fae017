#include "graph/memory_types.h"

#include <algorithm>
#include <string>

#include "graph/device_name.h"
#include "graph/node_def_util.h"

namespace dflow {
namespace {

// How many tensors one OpDef arg stands for in `node` (list args count their elements).
int ArgSize(const NodeDef& node, const OpDef::ArgDef& arg) {
  if (!arg.number_attr().empty()) {
    const AttrValue* n = FindAttr(node, arg.number_attr());
    return n == nullptr ? 0 : static_cast<int>(n->i());
  }
  if (!arg.type_list_attr().empty()) {
    const AttrValue* types = FindAttr(node, arg.type_list_attr());
    return types == nullptr ? 0 : types->list().type_size();
  }
  return 1;
}

// One flag per tensor of `args`: whether its arg is named in `host_args`. Empty when the
// args do not add up to `expected` tensors.
template <typename Args>
std::vector<bool> Flags(const NodeDef& node, const Args& args,
                        const std::vector<std::string>& host_args, int expected) {
  std::vector<bool> flags;
  for (const OpDef::ArgDef& arg : args) {
    const bool host =
        std::find(host_args.begin(), host_args.end(), arg.name()) != host_args.end();
    flags.insert(flags.end(), ArgSize(node, arg), host);
  }
  if (static_cast<int>(flags.size()) != expected) return {};
  return flags;
}

}  // namespace

MemoryTypes HostMemoryTypes(const KernelSupport& kernels, const Node& node) {
  return HostMemoryTypes(kernels, node, node.assigned_device());
}

MemoryTypes HostMemoryTypes(const KernelSupport& kernels, const Node& node,
                            const std::string& device_name) {
  MemoryTypes types;
  types.host_inputs.assign(node.num_inputs(), false);
  types.host_outputs.assign(node.num_outputs(), false);
  absl::StatusOr<DeviceName> device = ParseDeviceName(device_name);
  // On the CPU, device memory is host memory: nothing to tell apart.
  if (!device.ok() || !device->type.has_value() || *device->type == "CPU") return types;
  const std::vector<std::string> host_args = kernels.HostMemoryArgs(node.def(), *device->type);
  if (host_args.empty()) return types;
  std::vector<bool> in = Flags(node.def(), node.op_def().input_arg(), host_args, node.num_inputs());
  std::vector<bool> out =
      Flags(node.def(), node.op_def().output_arg(), host_args, node.num_outputs());
  if (!in.empty()) types.host_inputs = std::move(in);
  if (!out.empty()) types.host_outputs = std::move(out);
  return types;
}

}  // namespace dflow
