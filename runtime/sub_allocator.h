// SubAllocator: the source of raw device memory under a BfcAllocator.
//
// A sub-allocator hands out large, contiguous regions (cuMemAlloc on a GPU, aligned host
// memory on a simulated device) and knows how much memory the device has. It does no
// bookkeeping of small allocations; that is the BFC allocator's job.
//
// Backends:
//   - HostSubAllocator (here): aligned host memory with an optional capacity, for
//     simulated GPUs and tests.
//   - a CUDA sub-allocator lives under runtime/cuda.
#ifndef DFLOW_RUNTIME_SUB_ALLOCATOR_H_
#define DFLOW_RUNTIME_SUB_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace dflow {

class SubAllocator {
 public:
  virtual ~SubAllocator() = default;
  // Returns `bytes` of memory aligned to at least 256 bytes, or nullptr when the device
  // cannot provide them. REQUIRES: bytes > 0.
  virtual void* Alloc(size_t bytes) = 0;
  // Returns a region. REQUIRES: `ptr` came from Alloc(bytes) of this sub-allocator.
  virtual void Free(void* ptr, size_t bytes) = 0;
  // The device's memory size in bytes.
  virtual size_t total_bytes() = 0;
  // Bytes the device could still hand out now (a snapshot; other users may take them).
  virtual size_t free_bytes() = 0;
};

// Host memory standing in for device memory. With a capacity, Alloc fails once the live
// regions would exceed it, like a GPU whose memory is full; without one, only the host's
// malloc limits it and total_bytes() reports the host's physical memory.
//
// Thread-safe. REQUIRES: every region is freed before the sub-allocator is destroyed (a
// BfcAllocator returns all of its regions in its destructor).
class HostSubAllocator final : public SubAllocator {
 public:
  static constexpr size_t kAlignment = 256;
  static constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

  explicit HostSubAllocator(size_t capacity = kUnlimited) : capacity_(capacity) {}
  HostSubAllocator(const HostSubAllocator&) = delete;
  HostSubAllocator& operator=(const HostSubAllocator&) = delete;
  ~HostSubAllocator() override = default;

  void* Alloc(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;
  size_t total_bytes() override;
  size_t free_bytes() override;

  // Accounting, for tests and the simulated device's reports.
  size_t allocated_bytes() const { return allocated_.load(); }
  int64_t live_regions() const { return live_regions_.load(); }
  int64_t alloc_calls() const { return alloc_calls_.load(); }  // including failed ones
  int64_t failed_alloc_calls() const { return failed_calls_.load(); }

 private:
  const size_t capacity_;
  std::atomic<size_t> allocated_{0};
  std::atomic<int64_t> live_regions_{0};
  std::atomic<int64_t> alloc_calls_{0};
  std::atomic<int64_t> failed_calls_{0};
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_SUB_ALLOCATOR_H_
