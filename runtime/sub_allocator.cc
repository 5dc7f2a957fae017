#include "runtime/sub_allocator.h"

#include <unistd.h>

#include <cstdlib>

namespace dflow {

void* HostSubAllocator::Alloc(size_t bytes) {
  alloc_calls_.fetch_add(1);
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  // Reserve the bytes against the capacity first, so concurrent callers never overshoot.
  size_t current = allocated_.load();
  do {
    if (bytes == 0 || rounded < bytes || rounded > capacity_ - current) {
      failed_calls_.fetch_add(1);
      return nullptr;
    }
  } while (!allocated_.compare_exchange_weak(current, current + rounded));
  void* ptr = std::aligned_alloc(kAlignment, rounded);
  if (ptr == nullptr) {
    allocated_.fetch_sub(rounded);
    failed_calls_.fetch_add(1);
    return nullptr;
  }
  live_regions_.fetch_add(1);
  return ptr;
}

void HostSubAllocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  std::free(ptr);
  allocated_.fetch_sub((bytes + kAlignment - 1) / kAlignment * kAlignment);
  live_regions_.fetch_sub(1);
}

size_t HostSubAllocator::total_bytes() {
  if (capacity_ != kUnlimited) return capacity_;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kUnlimited;
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
}

size_t HostSubAllocator::free_bytes() {
  const size_t total = total_bytes();
  const size_t used = allocated_.load();
  return used >= total ? 0 : total - used;
}

}  // namespace dflow
