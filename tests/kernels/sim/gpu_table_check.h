// Test helper shared by the simulated-GPU and the CUDA registration tests: both
// registries must offer exactly kernels/sim/gpu_kernel_list.h's ops, dtypes and
// host-memory args, which is what makes placement on simulated GPUs predict placement
// on real ones.
#ifndef DFLOW_TESTS_KERNELS_SIM_GPU_TABLE_CHECK_H_
#define DFLOW_TESTS_KERNELS_SIM_GPU_TABLE_CHECK_H_

#include <set>
#include <string>

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

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_KERNELS_SIM_GPU_TABLE_CHECK_H_
