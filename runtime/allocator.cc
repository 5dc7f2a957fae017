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

}  // namespace

void* CpuAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  alignment = std::max(alignment, sizeof(void*));
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
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

}  // namespace dflow
