// The simulated GPUs' stand-in for page-locked host memory: one BfcAllocator
// "sim_gpu_host_bfc" over plain host memory, shared by every simulated GPU of the process,
// as the CUDA backend's ProcessPinnedHostAllocator (runtime/cuda/pinned_host_allocator.h)
// is shared by every real GPU. It exists so that tests on simulated GPUs see the same
// allocator choices as real GPUs make: a fetched GPU result and a GPU kernel's HostMemory
// output live here, not in the CPU allocator, and outlive the session that made them.
//
// Process-wide and never destroyed for that reason (like ProcessCpuAllocator()).
// Thread-safe.
#ifndef DFLOW_RUNTIME_SIM_SIM_HOST_ALLOCATOR_H_
#define DFLOW_RUNTIME_SIM_SIM_HOST_ALLOCATOR_H_

#include "runtime/bfc_allocator.h"

namespace dflow::sim {

// Grows on demand up to 64 GiB (TF's default gpu_host_bfc limit).
BfcAllocator* ProcessSimHostAllocator();

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_HOST_ALLOCATOR_H_
