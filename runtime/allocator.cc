#include "runtime/allocator.h"

#include <algorithm>
#include <cstdlib>

namespace dflow {
namespace {

void UpdateMax(std::atomic<int64_t>& target, int64_t value) {
  int64_t current = target.load(std::memory_order_relaxed);
  while (value > current &&
         !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

constexpr size_t kMaxAllocationBytes = size_t{1} << 48;

size_t RoundUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace

size_t CpuAllocator::CachedBlockSize(size_t bytes) {
  return RoundUp(bytes, bytes >= kLargeBlock ? kLargeBlock : kCachedBlockMin);
}

CpuAllocator::~CpuAllocator() {
  for (auto& [size, block] : cache_) std::free(block);
}

void* CpuAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  // No machine has 2^48 bytes; refusing here also keeps RoundUp below from wrapping a
  // request near 2^64 (a hostile Range or BroadcastTo size) to a tiny block.
  if (bytes > kMaxAllocationBytes) return nullptr;
  alignment = std::max(alignment, sizeof(void*));
  // Cached blocks are sized in size classes so a freed one can serve any request that
  // rounds to its size. They are kAlignment-aligned: stricter requests skip the cache
  // (their blocks may still be cached when freed, which is harmless).
  const bool large = bytes >= kCachedBlockMin;
  const size_t rounded = large ? CachedBlockSize(bytes) : RoundUp(bytes, alignment);
  void* ptr = nullptr;
  if (large && alignment <= kAlignment) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(rounded);
    if (it != cache_.end()) {
      ptr = it->second;
      cached_bytes_ -= it->first;
      cache_.erase(it);
    }
  }
  if (ptr == nullptr) {
    ptr = std::aligned_alloc(large ? std::max(alignment, kAlignment) : alignment, rounded);
  }
  if (ptr == nullptr) return nullptr;
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
                      static_cast<int64_t>(bytes);
  UpdateMax(peak_, now);
  UpdateMax(largest_, static_cast<int64_t>(bytes));
  return ptr;
}

void CpuAllocator::DeallocateRaw(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  in_use_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  if (bytes >= kCachedBlockMin) {
    const size_t rounded = CachedBlockSize(bytes);
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cached_bytes_ + rounded <= kCacheLimit) {
      cache_.emplace(rounded, ptr);
      cached_bytes_ += rounded;
      return;
    }
  }
  std::free(ptr);
}

AllocatorStats CpuAllocator::GetStats() const {
  AllocatorStats stats;
  stats.num_allocs = num_allocs_.load(std::memory_order_relaxed);
  stats.bytes_in_use = in_use_.load(std::memory_order_relaxed);
  stats.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
  stats.largest_alloc_size = largest_.load(std::memory_order_relaxed);
  return stats;
}

void CpuAllocator::ResetPeak() { peak_.store(in_use_.load(std::memory_order_relaxed)); }

CpuAllocator* ProcessCpuAllocator() {
  static CpuAllocator* const allocator = new CpuAllocator();
  return allocator;
}

}  // namespace dflow
