#include "runtime/cuda/cuda_sub_allocator.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include "graph/status_macros.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/scoped_activate_device.h"

namespace dflow::cuda {

absl::StatusOr<CudaMemoryInfo> GetCudaMemoryInfo(int ordinal) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(ordinal));
  size_t free_bytes = 0, total_bytes = 0;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  return CudaMemoryInfo{static_cast<int64_t>(total_bytes), static_cast<int64_t>(free_bytes)};
}

void* CudaSubAllocator::Alloc(size_t bytes) {
  ScopedActivateDevice device;
  if (!device.Activate(ordinal_).ok()) return nullptr;
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();  // out of memory is not sticky; keep it out of later calls
    return nullptr;
  }
  return ptr;
}

void CudaSubAllocator::Free(void* ptr, size_t) {
  ScopedActivateDevice device;
  if (device.Activate(ordinal_).ok()) cudaFree(ptr);
}

size_t CudaSubAllocator::total_bytes() {
  absl::StatusOr<CudaMemoryInfo> info = GetCudaMemoryInfo(ordinal_);
  return info.ok() ? static_cast<size_t>(info->total_bytes) : 0;
}

size_t CudaSubAllocator::free_bytes() {
  absl::StatusOr<CudaMemoryInfo> info = GetCudaMemoryInfo(ordinal_);
  return info.ok() ? static_cast<size_t>(info->free_bytes) : 0;
}

void* PinnedHostSubAllocator::Alloc(size_t bytes) {
  void* ptr = nullptr;
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

void PinnedHostSubAllocator::Free(void* ptr, size_t) { cudaFreeHost(ptr); }

size_t PinnedHostSubAllocator::total_bytes() {
  return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t PinnedHostSubAllocator::free_bytes() {
  return static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace dflow::cuda
