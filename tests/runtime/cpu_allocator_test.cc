// CpuAllocator's block cache: freed blocks of 64 KiB and more come back for requests of
// their size class (64 KiB steps below 1 MiB, whole MiB above), smaller ones go back to
// malloc, and the statistics count what tensors use, not what the cache holds.
#include <cstdint>

#include <catch2/catch.hpp>

#include "runtime/allocator.h"

namespace dflow {
namespace {

constexpr size_t kKiB = 1024;

TEST_CASE("CpuAllocator size classes are 64 KiB steps below 1 MiB, whole MiB above",
          "[allocator]") {
  CHECK(CpuAllocator::CachedBlockSize(64 * kKiB) == 64 * kKiB);
  CHECK(CpuAllocator::CachedBlockSize(64 * kKiB + 1) == 128 * kKiB);
  CHECK(CpuAllocator::CachedBlockSize(128 * kKiB) == 128 * kKiB);
  CHECK(CpuAllocator::CachedBlockSize(1024 * kKiB - 1) == 1024 * kKiB);
  CHECK(CpuAllocator::CachedBlockSize(1024 * kKiB + 1) == 2048 * kKiB);
}

TEST_CASE("CpuAllocator hands a freed block to the next request of its class", "[allocator]") {
  CpuAllocator allocator;
  // 64x512 floats: the activations of an MLP layer, freed and wanted again every step.
  void* first = allocator.AllocateRaw(64, 128 * kKiB);
  REQUIRE(first != nullptr);
  allocator.DeallocateRaw(first, 128 * kKiB);
  void* again = allocator.AllocateRaw(64, 100 * kKiB);  // rounds to the same 128 KiB
  CHECK(again == first);
  CHECK(allocator.GetStats().bytes_in_use == static_cast<int64_t>(100 * kKiB));
  // Another class does not take it.
  allocator.DeallocateRaw(again, 100 * kKiB);
  void* other = allocator.AllocateRaw(64, 200 * kKiB);
  CHECK(other != again);
  allocator.DeallocateRaw(other, 200 * kKiB);
  CHECK(allocator.GetStats().bytes_in_use == 0);
}

TEST_CASE("CpuAllocator writes reach the whole of a reused block", "[allocator]") {
  CpuAllocator allocator;
  void* block = allocator.AllocateRaw(64, 1024 * kKiB + 10);
  REQUIRE(block != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(block) % Allocator::kAlignment == 0);
  allocator.DeallocateRaw(block, 1024 * kKiB + 10);
  // A request of the same class may be larger than the first one: the block is 2 MiB.
  auto* bytes = static_cast<unsigned char*>(allocator.AllocateRaw(64, 2048 * kKiB));
  REQUIRE(bytes == block);
  bytes[2048 * kKiB - 1] = 7;
  CHECK(bytes[2048 * kKiB - 1] == 7);
  allocator.DeallocateRaw(bytes, 2048 * kKiB);
}

}  // namespace
}  // namespace dflow
