// Test helper shared by the simulated-GPU and the CUDA registration tests: both
// registries must offer exactly kernels/sim/gpu_kernel_list.h's ops, dtypes and
// host-memory args, which is what makes placement on simulated GPUs predict placement
// on real ones.
#ifndef DFLOW_TESTS_KERNELS_SIM_GPU_TABLE_CHECK_H_
#define DFLOW_TESTS_KERNELS_SIM_GPU_TABLE_CHECK_H_

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/sim/gpu_kernel_list.h"
#include "runtime/kernel_registry.h"

namespace dflow::testing {

// Checks that `registry` has exactly one "GPU" kernel per op of the table, with the
// table's type constraints and host-memory args. Returns the table's ops.
inline std::set<std::string> CheckGpuKernelsMatchTable(const KernelRegistry& registry) {
  std::set<std::string> ops;
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    INFO(spec.op);
    ops.insert(spec.op);
    auto entries = registry.Entries(spec.op, "GPU");
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].first.type_constraints == spec.type_constraints);
    CHECK(entries[0].first.host_memory_args == spec.host_memory_args);
  }
  return ops;
}

// The ops every accelerator registers outside the table because they never touch a
// tensor's bytes: the copies (kernels/cpu/sendrecv_ops.h) and the control-flow routing
// kernels (kernels/cpu/control_flow_ops.h), the latter with their host-memory scalars.
inline std::set<std::string> CheckRoutingKernels(const KernelRegistry& registry) {
  const std::set<std::string> ops = {
      "_Send", "_Recv", "_HostSend", "_HostRecv", "Enter", "RefEnter", "Exit", "RefExit",
      "NextIteration", "RefNextIteration", "Switch", "RefSwitch", "Merge", "RefMerge",
      "_SwitchN", "ToBool", "LoopCond", "ControlTrigger", "IdentityN", "NoOp"};
  for (const std::string& op : ops) {
    INFO(op);
    CHECK(registry.Entries(op, "GPU").size() == 1);
  }
  using Args = std::vector<std::string>;
  CHECK(registry.Entries("Switch", "GPU")[0].first.host_memory_args == Args{"pred"});
  CHECK(registry.Entries("Merge", "GPU")[0].first.host_memory_args == Args{"value_index"});
  CHECK(registry.Entries("LoopCond", "GPU")[0].first.host_memory_args ==
        Args{"input", "output"});
  CHECK(registry.Entries("Enter", "GPU")[0].first.host_memory_args.empty());
  return ops;
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_KERNELS_SIM_GPU_TABLE_CHECK_H_
