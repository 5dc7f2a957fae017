// The process's page-locked host memory (TF's gpu_host_bfc): one BfcAllocator over
// cudaHostAlloc(portable) shared by every CUDA GPU of the process. A GPU's copies land
// their host side here (a fetched result is one DMA, no staging), pinned Consts and
// HostMemory outputs live here, and users may allocate feeds here to skip staging.
//
// Process-wide and never destroyed, because fetched tensors outlive their session (and
// cudaFreeHost during static destruction, after the CUDA runtime may have torn down, is
// unsafe). Created on first use; grows on demand up to 64 GiB, TF's default limit.
// This header includes no CUDA header. Thread-safe.
#ifndef DFLOW_RUNTIME_CUDA_PINNED_HOST_ALLOCATOR_H_
#define DFLOW_RUNTIME_CUDA_PINNED_HOST_ALLOCATOR_H_

#include <cstddef>

#include "runtime/bfc_allocator.h"

namespace dflow::cuda {

inline constexpr size_t kPinnedHostMemoryLimit = size_t{64} << 30;

BfcAllocator* ProcessPinnedHostAllocator();

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_PINNED_HOST_ALLOCATOR_H_
