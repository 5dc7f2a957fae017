// SubAllocators over CUDA memory, feeding BfcAllocator (runtime/bfc_allocator.h):
//  - CudaSubAllocator: device memory of one GPU (cudaMalloc / cudaFree), its size and free
//    bytes from cudaMemGetInfo. Several logical GPUs carved from one card (virtual devices)
//    each own one; they are stateless, so that is safe.
//  - PinnedHostSubAllocator: page-locked host memory (cudaHostAlloc, portable), which the
//    DMA engines read and write directly; for staging host<->device copies. With unified
//    addressing (every 64-bit CUDA platform) it is also mapped into every GPU's address
//    space, so kernels may read it (slowly, over PCIe/NVLink).
// A failed cudaMalloc is not an error here: Alloc returns nullptr (the BFC allocator then
// reports out-of-memory with its state) and the CUDA error is cleared so that it does not
// surface in an unrelated later call.
//
// This header includes no CUDA header. Thread-safe (CUDA's allocation calls are).
#ifndef DFLOW_RUNTIME_CUDA_CUDA_SUB_ALLOCATOR_H_
#define DFLOW_RUNTIME_CUDA_CUDA_SUB_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/sub_allocator.h"

namespace dflow::cuda {

// Total and free bytes of GPU `ordinal` (cudaMemGetInfo; creates the device's context).
struct CudaMemoryInfo {
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;
};
absl::StatusOr<CudaMemoryInfo> GetCudaMemoryInfo(int ordinal);

class CudaSubAllocator final : public SubAllocator {
 public:
  explicit CudaSubAllocator(int ordinal) : ordinal_(ordinal) {}
  // cudaMalloc on the GPU (256-byte aligned, as CUDA guarantees); nullptr when it fails.
  void* Alloc(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;
  size_t total_bytes() override;
  size_t free_bytes() override;

 private:
  const int ordinal_;
};

class PinnedHostSubAllocator final : public SubAllocator {
 public:
  PinnedHostSubAllocator() = default;
  // cudaHostAlloc(cudaHostAllocPortable); nullptr when it fails.
  void* Alloc(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;
  // The host's physical memory (sysconf); pinning more than that is never possible.
  size_t total_bytes() override;
  size_t free_bytes() override;
};

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_SUB_ALLOCATOR_H_
