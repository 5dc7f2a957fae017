// BfcAllocator: best-fit with coalescing over regions of device memory (TensorFlow's
// BFCAllocator algorithm, common_runtime/bfc_allocator.cc, restated below).
//
// Algorithm:
//   1. Every request is rounded up to a multiple of 256 bytes. A request of 0 bytes returns
//      nullptr: callers give empty tensors no buffer, so a 0-byte request is a bug upstream
//      and must not consume a chunk.
//   2. Free chunks sit in 21 bins; bin b holds sizes in [256 << b, 256 << (b + 1)), and the
//      last bin (>= 256 MiB) is open-ended. Inside a bin they are ordered by (size, address).
//   3. Allocation scans from the request's bin upward and takes the first chunk that fits:
//      the smallest fitting chunk, lowest address among equals.
//   4. The chunk is split when it is at least twice the request or the leftover is at least
//      128 MiB; the leftover (right-hand part) goes back into a bin.
//   5. Chunks of one region form a doubly linked list in address order. Freeing a chunk
//      merges it with free neighbours on both sides, so no two adjacent chunks are free.
//   6. When no free chunk fits, a new region is taken from the sub-allocator (Extend):
//        - without allow_growth the first region is the whole limit, taken at the first
//          allocation;
//        - with allow_growth regions start at initial_region_bytes (1 MiB) and double after
//          each extension; a request larger than the current size doubles it until it fits,
//          and that extension skips the extra doubling;
//        - every region is capped at limit - bytes already in regions;
//        - if the sub-allocator refuses, retry at 90%, 81%, ... of the size while that is
//          still >= the request.
//   7. If that fails too and some regions are wholly free, they are returned to the
//      sub-allocator and one more region is tried (TF's garbage collection).
//   8. Otherwise the allocation fails at once with nullptr (TF waits up to 10 s for frees;
//      dflow does not). DescribeState() then says why.
//
// Differences from TF (deliberate):
//   - no 10 s retry on OOM; the failure is reported at once, with DescribeState();
//   - the sub-allocator back-off is tried on every failed extension, not only the first;
//   - pointers are found through a hash map of in-use chunks plus an ordered region map,
//     not a handle per 256 bytes of every region (which costs ~1 GiB of host memory per
//     80 GiB of device memory);
//   - ReleaseFreeRegions() lets the owner give memory back between steps.
//
// Alignment: every chunk starts at a multiple of 256 bytes from a 256-aligned region, so
// any alignment up to 256 is honoured. Larger alignments fail (nullptr).
//
// Statistics count chunk sizes, as TF does: bytes_in_use and largest_alloc_size include
// the rounding and any unsplit remainder.
//
// Thread-safety: all public methods are safe to call concurrently (one mutex).
#ifndef DFLOW_RUNTIME_BFC_ALLOCATOR_H_
#define DFLOW_RUNTIME_BFC_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "runtime/allocator.h"
#include "runtime/sub_allocator.h"

namespace dflow {

struct BfcOptions {
  std::string name;              // "GPU_0_bfc"
  size_t memory_limit = 0;       // bytes this allocator may take from the sub-allocator
  bool allow_growth = false;     // false: first region = the whole limit, on first allocation
  size_t initial_region_bytes = size_t{1} << 20;  // growth start (rounded up to 256)
  // On OOM, return wholly free regions to the sub-allocator and try one more region
  // (TF_ENABLE_GPU_GARBAGE_COLLECTION, default on in TF).
  bool garbage_collection = true;
};

class BfcAllocator final : public Allocator {
 public:
  static constexpr size_t kMinAllocationSize = 256;
  static constexpr int kNumBins = 21;
  // A fitting chunk is split when its leftover is at least this large, even if the chunk
  // is less than twice the request.
  static constexpr size_t kSplitLeftoverThreshold = size_t{128} << 20;

  // `sub` provides the regions and is owned.
  BfcAllocator(std::unique_ptr<SubAllocator> sub, BfcOptions options);
  BfcAllocator(const BfcAllocator&) = delete;
  BfcAllocator& operator=(const BfcAllocator&) = delete;
  // Returns every region to the sub-allocator. REQUIRES: nothing is in use any more
  // (outstanding pointers dangle afterwards).
  ~BfcAllocator() override;

  std::string Name() const override { return options_.name; }
  // Returns nullptr at once when bytes == 0, alignment > 256, or the memory cannot be had
  // within the limit; DescribeState() then explains the failure.
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  // REQUIRES: `ptr` came from AllocateRaw of this allocator and is not yet freed (checked:
  // an unknown pointer aborts). `bytes` is ignored; the chunk knows its size.
  void DeallocateRaw(void* ptr, size_t bytes) override;
  // In use, peak, largest allocation (chunk sizes), bytes_limit = memory_limit, num_allocs.
  AllocatorStats GetStats() const override;
  void ResetPeak() override;

  // Why the last failed allocation failed, as one human-readable paragraph captured at
  // the failure: requested and rounded bytes, the reason, limit, in use, total region
  // bytes, total and largest free chunk, fragmentation (1 - largest_free / total_free), then
  // one summary line per non-empty bin. Before any failure, the current state with the
  // same fields. With concurrent failures, the most recent one wins.
  std::string DescribeState() const override;
  // The largest free chunk in any region (0 when none).
  size_t LargestFreeChunk() const;
  // Returns wholly free regions to the sub-allocator; returns the bytes released.
  size_t ReleaseFreeRegions();
  size_t ReleaseUnusedMemory() override { return ReleaseFreeRegions(); }
  // The chunk size backing the in-use allocation `ptr`; 0 if `ptr` is not one.
  size_t AllocatedSize(const void* ptr) const;
  // Bytes currently held in regions from the sub-allocator, and their count.
  size_t RegionBytes() const;
  size_t NumRegions() const;

 private:
  using ChunkHandle = size_t;
  static constexpr ChunkHandle kInvalidChunk = ~ChunkHandle{0};

  // A contiguous piece of one region. Invariants: the chunks of a region tile it exactly,
  // in address order along prev/next; no two neighbours are both free; a free chunk is
  // in exactly the bin for its size; an in-use chunk is in in_use_.
  struct Chunk {
    uintptr_t ptr = 0;
    size_t size = 0;            // a multiple of 256
    size_t requested = 0;       // the caller's bytes while in use, 0 while free
    bool in_use = false;
    ChunkHandle prev = kInvalidChunk;  // lower-address neighbour in the region
    ChunkHandle next = kInvalidChunk;  // higher-address neighbour in the region
  };
  // A free chunk's entry in its bin, ordered by (size, address) so that lower_bound finds
  // the best fit.
  struct FreeEntry {
    size_t size;
    uintptr_t ptr;
    ChunkHandle handle;
    bool operator<(const FreeEntry& o) const {
      return size != o.size ? size < o.size : ptr < o.ptr;
    }
  };
  // Free chunks of sizes [256 << index, 256 << (index + 1)), plus counters of the in-use
  // chunks of the same sizes for the OOM summary.
  struct Bin {
    std::set<FreeEntry> free_chunks;
    size_t free_bytes = 0;
    int64_t in_use_chunks = 0;
    size_t in_use_bytes = 0;
    size_t in_use_requested = 0;
  };
  // One block from the sub-allocator; `first` is its lowest chunk.
  struct Region {
    size_t size = 0;
    ChunkHandle first = kInvalidChunk;
  };

  static size_t RoundedBytes(size_t bytes);
  static int BinIndex(size_t size);

  // All private methods REQUIRE mu_ held.
  void* AllocateLocked(size_t bytes, size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ChunkHandle FindChunk(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void* UseChunk(ChunkHandle h, size_t rounded, size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SplitChunk(ChunkHandle h, size_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreeAndCoalesce(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MergeWithNext(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InsertFree(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveFree(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountInUse(const Chunk& c, int sign) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ChunkHandle NewChunk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteChunk(ChunkHandle h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  bool Extend(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t DoubledRegionBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void* AllocateRegion(size_t* bytes, size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddRegion(void* base, size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t AvailableForRegions() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t FreeRegionBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t ReleaseFreeRegionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After regions were released: the next region is the first of the doubling schedule
  // that is at least the bytes still held, so growth restarts from what is in use.
  void RewindGrowthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool CollectGarbage(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  size_t LargestFreeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  size_t TotalFreeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string FailureReason(size_t bytes, size_t rounded) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string StateSummary() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string BinLines() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<SubAllocator> sub_;
  const BfcOptions options_;
  const size_t region_cap_;  // RoundedBytes(memory_limit): no region is ever larger
  size_t first_region_bytes_ = 0;  // the growth schedule's start (set once, in the ctor)

  mutable absl::Mutex mu_;
  std::vector<Chunk> chunks_ ABSL_GUARDED_BY(mu_);            // indexed by ChunkHandle
  std::vector<ChunkHandle> free_handles_ ABSL_GUARDED_BY(mu_);  // unused slots of chunks_
  Bin bins_[kNumBins] ABSL_GUARDED_BY(mu_);
  std::map<uintptr_t, Region> regions_ ABSL_GUARDED_BY(mu_);  // by base address
  absl::flat_hash_map<uintptr_t, ChunkHandle> in_use_ ABSL_GUARDED_BY(mu_);
  size_t region_bytes_ ABSL_GUARDED_BY(mu_) = 0;      // sum of regions_' sizes
  size_t next_region_bytes_ ABSL_GUARDED_BY(mu_);     // the next Extend's target size
  std::string device_refusal_ ABSL_GUARDED_BY(mu_);  // why the last Extend's sub_ calls failed
  AllocatorStats stats_ ABSL_GUARDED_BY(mu_);
  std::string last_failure_ ABSL_GUARDED_BY(mu_);  // DescribeState() after a failure
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_BFC_ALLOCATOR_H_
