// Allocator: raw memory for tensor buffers, with usage statistics.
//
// Backends: the CPU allocator (aligned host memory), and later a BFC allocator over
// device memory (issue 4). Allocation failure returns nullptr; callers turn it into a
// RESOURCE_EXHAUSTED status naming what they were allocating.
//
// Thread-safety: implementations must be safe to call from many threads at once.
#ifndef DFLOW_RUNTIME_ALLOCATOR_H_
#define DFLOW_RUNTIME_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace dflow {

struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = 0;  // 0 when unlimited
};

class Allocator {
 public:
  // Tensor buffers are aligned for the widest SIMD loads (AVX-512).
  static constexpr size_t kAlignment = 64;

  virtual ~Allocator() = default;
  // "cpu", "GPU_0_bfc", ... (TF's allocator names, used in RunMetadata).
  virtual std::string Name() const = 0;
  // `bytes` > 0; returns nullptr when the memory cannot be had.
  virtual void* AllocateRaw(size_t alignment, size_t bytes) = 0;
  // REQUIRES: `ptr` came from AllocateRaw of this allocator.
  virtual void DeallocateRaw(void* ptr, size_t bytes) = 0;
  virtual AllocatorStats GetStats() const = 0;
  // Starts a new peak measurement (peak := current in-use).
  virtual void ResetPeak() = 0;
  // Why the last allocation failed and what the allocator holds (limit, in use, largest
  // free chunk, ...), for out-of-memory errors; "" when there is nothing useful to say.
  virtual std::string DescribeState() const { return ""; }
  // Gives memory it holds but no tensor uses back to where it came from (the OS, the
  // driver); returns the bytes released. Allocators that keep nothing return 0.
  virtual size_t ReleaseUnusedMemory() { return 0; }
};

// Allocator for host memory: aligned malloc with atomic counters. Blocks of 64 KiB and
// more are cached when freed (up to 1 GiB) and handed out again for requests that round
// to the block's size (64 KiB steps below 1 MiB, whole MiB above): malloc maps blocks
// of 128 KiB and more with fresh pages and unmaps them when freed, and first-touching
// those pages costs far more than the work a kernel does on them (a ReluGrad over
// 64x512 floats: 130 us with fresh pages, a few us without).
// The process's host allocator, which every session's CPU devices share (TF's
// cpu_allocator()). Process-wide on purpose, the one global besides the registries:
// host tensors returned by Session::Run must outlive the session that made them.
// Never destroyed, so buffers freed during static destruction stay safe.
class CpuAllocator;
CpuAllocator* ProcessCpuAllocator();

class CpuAllocator final : public Allocator {
 public:
  static constexpr size_t kCachedBlockMin = size_t{64} << 10;
  static constexpr size_t kLargeBlock = size_t{1} << 20;
  static constexpr size_t kCacheLimit = size_t{1} << 30;

  CpuAllocator() = default;
  ~CpuAllocator() override;
  std::string Name() const override { return "cpu"; }
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  void DeallocateRaw(void* ptr, size_t bytes) override;
  AllocatorStats GetStats() const override;
  void ResetPeak() override;

  // The size of the cached block a request of `bytes` (>= kCachedBlockMin) gets.
  static size_t CachedBlockSize(size_t bytes);

 private:
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> largest_{0};
  std::mutex cache_mu_;
  std::multimap<size_t, void*> cache_;  // block size -> block, guarded by cache_mu_
  size_t cached_bytes_ = 0;             // guarded by cache_mu_
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_ALLOCATOR_H_
