// KernelRegistry: kernels keyed by (op, device type, dtype constraints).
//
// Kernel libraries register explicitly (kernels/cpu exports RegisterCpuKernels(...)),
// never through static initialisers. The registry answers graph/'s KernelSupport query
// ("which device types can run this node?") for the placer.
//
// Thread-safety: registration happens before use; lookups are const and may run
// concurrently.
#ifndef DFLOW_RUNTIME_KERNEL_REGISTRY_H_
#define DFLOW_RUNTIME_KERNEL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/kernel_support.h"
#include "runtime/op_kernel.h"

namespace dflow {

struct KernelDef {
  std::string op;
  std::string device_type;
  // attr name -> dtypes the kernel accepts for it (type or list(type) attrs).
  std::vector<std::pair<std::string, std::vector<DataType>>> type_constraints;
  // Input/output arg names kept in host memory even on an accelerator.
  std::vector<std::string> host_memory_args;
  int priority = 0;
};

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) { def_.op = std::move(op); }
  KernelDefBuilder& Device(std::string type) {
    def_.device_type = std::move(type);
    return *this;
  }
  KernelDefBuilder& TypeConstraint(std::string attr, std::vector<DataType> types) {
    def_.type_constraints.emplace_back(std::move(attr), std::move(types));
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(std::string attr) {
    return TypeConstraint(std::move(attr), {DataTypeOf<T>()});
  }
  KernelDefBuilder& HostMemory(std::string arg) {
    def_.host_memory_args.push_back(std::move(arg));
    return *this;
  }
  KernelDefBuilder& Priority(int priority) {
    def_.priority = priority;
    return *this;
  }
  KernelDef Build() const { return def_; }
  operator KernelDef() const { return def_; }  // NOLINT: builder convenience

 private:
  KernelDef def_;
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>(OpKernelConstruction*)>;

// True when every type attr `def` constrains holds an accepted dtype in `node`: the rule
// the registry picks kernels by (also for kernels that wrap another device's kernel).
bool KernelDefMatches(const KernelDef& def, const NodeDef& node);

class KernelRegistry final : public KernelSupport {
 public:
  // ALREADY_EXISTS when a kernel with the same op, device and constraints exists.
  absl::Status Register(KernelDef def, KernelFactory factory);

  // Registers kernel class K (constructible from OpKernelConstruction*).
  template <typename K>
  absl::Status Register(KernelDef def) {
    return Register(std::move(def), [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
      return std::make_unique<K>(c);
    });
  }

  // The highest-priority kernel for `node` on `device_type`, or nullptr.
  const KernelDef* Find(const NodeDef& node, absl::string_view device_type) const;

  // Instantiates the kernel for `node` on `device`. NOT_FOUND in TF's words when no
  // kernel matches; the kernel constructor's error (naming the node) otherwise.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(const NodeDef& node,
                                                         const OpDef& op_def,
                                                         const DataTypeVector& inputs,
                                                         const DataTypeVector& outputs,
                                                         Device* device) const;
  // As above; the kernel keeps `kept` (shared, not copied; `node` with attrs it reads
  // only while constructed possibly left out) and reads attrs from `node`.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(const NodeDef& node,
                                                         std::shared_ptr<const NodeDef> kept,
                                                         const OpDef& op_def,
                                                         const DataTypeVector& inputs,
                                                         const DataTypeVector& outputs,
                                                         Device* device) const;

  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node) const override;
  std::string DescribeKernels(absl::string_view op) const override;
  // The matching kernel's KernelDef::host_memory_args.
  std::vector<std::string> HostMemoryArgs(const NodeDef& node,
                                          absl::string_view device_type) const override;

  // Every registered kernel for `op` on `device_type`, highest priority first (kernel
  // libraries that wrap another device's kernels, e.g. kernels/sim, enumerate with it).
  std::vector<std::pair<KernelDef, KernelFactory>> Entries(absl::string_view op,
                                                           absl::string_view device_type) const;

  // Ops with at least one kernel, sorted.
  std::vector<std::string> OpsWithKernels() const;
  size_t size() const;

 private:
  struct Entry {
    KernelDef def;
    KernelFactory factory;
  };
  const Entry* FindEntry(const NodeDef& node, absl::string_view device_type) const;

  std::map<std::string, std::vector<Entry>, std::less<>> kernels_;  // by op
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_KERNEL_REGISTRY_H_
