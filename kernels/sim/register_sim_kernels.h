// The simulated-GPU kernel library's one entry point (explicit registration, STYLE.md 14).
//
// Simulated GPU kernels are the CPU implementations run on the SimGpuDevice's compute
// stream (shared/DESIGN.md "Devices, streams, memory"), for the ops in sim_kernel_list.h,
// plus "GPU" _Send/_Recv for cross-device copies.
#ifndef DFLOW_KERNELS_SIM_REGISTER_SIM_KERNELS_H_
#define DFLOW_KERNELS_SIM_REGISTER_SIM_KERNELS_H_

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// Registers a "GPU" kernel for every op in sim::kGpuKernelOps (wrapping each CPU kernel
// of that op, with the same dtype constraints) and "GPU" _Send/_Recv.
// REQUIRES: the CPU kernels are already registered in `registry` (RegisterCpuKernels);
// FAILED_PRECONDITION naming the op otherwise.
absl::Status RegisterSimGpuKernels(KernelRegistry* registry);

}  // namespace dflow

#endif  // DFLOW_KERNELS_SIM_REGISTER_SIM_KERNELS_H_
