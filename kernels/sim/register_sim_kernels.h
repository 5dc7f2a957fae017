// The simulated-GPU kernel library's one entry point (explicit registration: the session
// calls it, nothing registers itself at load time).
//
// Simulated GPU kernels are the CPU implementations run on the SimGpuDevice's compute
// stream, for the ops and dtypes of gpu_kernel_list.h (exactly what the CUDA kernels
// implement, so placement on simulated GPUs predicts placement on real ones), plus "GPU"
// _Send/_Recv for cross-device copies.
#ifndef DFLOW_KERNELS_SIM_REGISTER_SIM_KERNELS_H_
#define DFLOW_KERNELS_SIM_REGISTER_SIM_KERNELS_H_

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// Registers one "GPU" kernel per entry of GpuKernelSpecs(), with the entry's dtype
// constraints and host-memory args (GpuKernelDef), wrapping the op's CPU kernel that
// matches the node; and "GPU" _Send/_Recv.
// REQUIRES: the CPU kernels are already registered in `registry` (RegisterCpuKernels);
// FAILED_PRECONDITION naming the op otherwise, or when no CPU kernel of the op accepts a
// dtype combination the table lists.
absl::Status RegisterSimGpuKernels(KernelRegistry* registry);

}  // namespace dflow

#endif  // DFLOW_KERNELS_SIM_REGISTER_SIM_KERNELS_H_
