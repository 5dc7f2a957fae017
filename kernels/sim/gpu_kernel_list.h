// The GPU kernels, in ONE place: which ops have one, for which dtypes of each type attr,
// and which args they keep in host memory.
//
// Simulated GPUs run exactly what the CUDA kernels implement, so that placement on
// simulated GPUs predicts placement on real ones.
// Both registrations build their KernelDefs from this table (GpuKernelDef), never from
// their own lists: kernels/sim wraps the CPU kernel of the op (and refuses to register
// when the CPU lacks a dtype listed here), kernels/cuda must implement every dtype listed
// here (tests/kernels:gpu_conformance_cuda_test runs them on a real GPU). Adding a dtype
// to a CUDA kernel means adding it here, nowhere else. (_Send/_Recv and the control-flow
// routing kernels, kernels/cpu/control_flow_ops.h, are registered for "GPU" separately:
// they never touch a tensor's bytes; _Arg/_Retval stay on the CPU, the client device.)
#ifndef DFLOW_KERNELS_SIM_GPU_KERNEL_LIST_H_
#define DFLOW_KERNELS_SIM_GPU_KERNEL_LIST_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/kernel_registry.h"

namespace dflow {

struct GpuKernelSpec {
  std::string op;
  // attr name -> the dtypes the GPU kernel accepts (KernelDef::type_constraints' form).
  std::vector<std::pair<std::string, std::vector<DataType>>> type_constraints;
  // Input/output args the GPU kernel keeps in host memory (TF's HostMemory).
  std::vector<std::string> host_memory_args;
};

// Every GPU kernel, one entry per op (no duplicates).
const std::vector<GpuKernelSpec>& GpuKernelSpecs();

// The entry for `op`, or nullptr when `op` has no GPU kernel.
const GpuKernelSpec* FindGpuKernelSpec(absl::string_view op);

// The "GPU" KernelDef of `spec`: its constraints and host-memory args, priority 0.
KernelDef GpuKernelDef(const GpuKernelSpec& spec);

}  // namespace dflow

#endif  // DFLOW_KERNELS_SIM_GPU_KERNEL_LIST_H_
