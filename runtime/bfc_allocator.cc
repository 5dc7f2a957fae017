#include "runtime/bfc_allocator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dflow {
namespace {

constexpr size_t kMaxSize = std::numeric_limits<size_t>::max();

// TF's HumanReadableNumBytes: "256B", "1.5KiB", "2.00MiB".
std::string HumanBytes(size_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, "B");
  static constexpr char kUnits[] = "KMGTPE";
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit + 1 < 6) {
    value /= 1024.0;
    ++unit;
  }
  // Two literal formats: absl checks them at compile time (clang refuses a chosen one).
  if (unit == 0) return absl::StrFormat("%.1f%ciB", value, kUnits[unit]);
  return absl::StrFormat("%.2f%ciB", value, kUnits[unit]);
}

// "4.00MiB (4194304 bytes)": readable, and exact for tests and scripts.
std::string BytesWithExact(size_t bytes) {
  return absl::StrFormat("%s (%u bytes)", HumanBytes(bytes), bytes);
}

[[noreturn]] void Fatal(const std::string& message) {
  std::fprintf(stderr, "FATAL: %s\n", message.c_str());
  std::abort();
}

}  // namespace

BfcAllocator::BfcAllocator(std::unique_ptr<SubAllocator> sub, BfcOptions options)
    : sub_(std::move(sub)),
      options_(std::move(options)),
      region_cap_(RoundedBytes(options_.memory_limit)) {
  absl::MutexLock lock(&mu_);
  // TF: growth starts at min(limit, 1 MiB); otherwise the first region is the whole limit.
  const size_t start = options_.allow_growth
                           ? std::min(options_.initial_region_bytes, options_.memory_limit)
                           : options_.memory_limit;
  first_region_bytes_ = std::max(kMinAllocationSize, RoundedBytes(start));
  next_region_bytes_ = first_region_bytes_;
  stats_.bytes_limit = static_cast<int64_t>(options_.memory_limit);
}

BfcAllocator::~BfcAllocator() {
  absl::MutexLock lock(&mu_);
  for (const auto& [base, region] : regions_) {
    sub_->Free(reinterpret_cast<void*>(base), region.size);
  }
}

size_t BfcAllocator::RoundedBytes(size_t bytes) {
  // Saturates instead of wrapping: a request that large can never be met anyway.
  if (bytes > kMaxSize - (kMinAllocationSize - 1)) return kMaxSize & ~(kMinAllocationSize - 1);
  return (bytes + kMinAllocationSize - 1) & ~(kMinAllocationSize - 1);
}

int BfcAllocator::BinIndex(size_t size) {
  // floor(log2(size / 256)), capped at the last, open-ended bin.
  size_t units = std::max<size_t>(size >> 8, 1);
  int index = 0;
  while (units > 1 && index < kNumBins - 1) {
    units >>= 1;
    ++index;
  }
  return index;
}

// ----- Allocation -----

void* BfcAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  if (bytes == 0) return nullptr;  // callers give empty tensors no buffer
  absl::MutexLock lock(&mu_);
  if (alignment > kMinAllocationSize) {
    last_failure_ = absl::StrFormat(
        "Allocator (%s) cannot allocate %u bytes: alignment %u exceeds the %u bytes every "
        "chunk is aligned to.",
        options_.name, bytes, alignment, kMinAllocationSize);
    return nullptr;
  }
  return AllocateLocked(bytes, RoundedBytes(bytes));
}

void* BfcAllocator::AllocateLocked(size_t bytes, size_t rounded) {
  ChunkHandle h = FindChunk(rounded);
  if (h == kInvalidChunk && Extend(rounded)) h = FindChunk(rounded);
  if (h == kInvalidChunk && CollectGarbage(rounded) && Extend(rounded)) h = FindChunk(rounded);
  if (h != kInvalidChunk) return UseChunk(h, rounded, bytes);
  last_failure_ = absl::StrCat(FailureReason(bytes, rounded), " ", StateSummary(), BinLines());
  return nullptr;
}

BfcAllocator::ChunkHandle BfcAllocator::FindChunk(size_t rounded) {
  // Bins above the request's hold only larger chunks, so the first hit while scanning
  // upward is the smallest fitting chunk overall, lowest address among equal sizes.
  for (int b = BinIndex(rounded); b < kNumBins; ++b) {
    const std::set<FreeEntry>& free_chunks = bins_[b].free_chunks;
    auto it = free_chunks.lower_bound(FreeEntry{rounded, 0, kInvalidChunk});
    if (it == free_chunks.end()) continue;
    const ChunkHandle h = it->handle;
    RemoveFree(h);
    return h;
  }
  return kInvalidChunk;
}

void* BfcAllocator::UseChunk(ChunkHandle h, size_t rounded, size_t bytes) {
  const size_t size = chunks_[h].size;
  if (size >= 2 * rounded || size - rounded >= kSplitLeftoverThreshold) SplitChunk(h, rounded);
  Chunk& c = chunks_[h];  // SplitChunk may have moved chunks_
  c.in_use = true;
  c.requested = bytes;
  in_use_[c.ptr] = h;
  CountInUse(c, +1);
  ++stats_.num_allocs;
  stats_.bytes_in_use += static_cast<int64_t>(c.size);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(c.size));
  return reinterpret_cast<void*>(c.ptr);
}

void BfcAllocator::SplitChunk(ChunkHandle h, size_t size) {
  // REQUIRES: chunk h is in no bin and larger than `size`. The right-hand leftover is
  // free; its right neighbour cannot be free, since h was free and neighbours never both are.
  const ChunkHandle right = NewChunk();
  Chunk& c = chunks_[h];
  Chunk& r = chunks_[right];
  r.ptr = c.ptr + size;
  r.size = c.size - size;
  r.prev = h;
  r.next = c.next;
  if (c.next != kInvalidChunk) chunks_[c.next].prev = right;
  c.next = right;
  c.size = size;
  InsertFree(right);
}

// ----- Deallocation -----

void BfcAllocator::DeallocateRaw(void* ptr, size_t /*bytes*/) {
  if (ptr == nullptr) return;
  absl::MutexLock lock(&mu_);
  auto it = in_use_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == in_use_.end()) {
    Fatal(absl::StrFormat("Allocator (%s) asked to free %p, which it did not allocate or "
                          "already freed",
                          options_.name, ptr));
  }
  const ChunkHandle h = it->second;
  in_use_.erase(it);
  stats_.bytes_in_use -= static_cast<int64_t>(chunks_[h].size);
  FreeAndCoalesce(h);
}

void BfcAllocator::FreeAndCoalesce(ChunkHandle h) {
  CountInUse(chunks_[h], -1);
  chunks_[h].in_use = false;
  chunks_[h].requested = 0;
  const ChunkHandle next = chunks_[h].next;
  if (next != kInvalidChunk && !chunks_[next].in_use) {
    RemoveFree(next);
    MergeWithNext(h);
  }
  const ChunkHandle prev = chunks_[h].prev;
  if (prev != kInvalidChunk && !chunks_[prev].in_use) {
    RemoveFree(prev);
    MergeWithNext(prev);
    h = prev;
  }
  InsertFree(h);
}

void BfcAllocator::MergeWithNext(ChunkHandle h) {
  // The lower chunk survives, so a region's `first` handle stays valid.
  const ChunkHandle n = chunks_[h].next;
  Chunk& c = chunks_[h];
  c.size += chunks_[n].size;
  c.next = chunks_[n].next;
  if (c.next != kInvalidChunk) chunks_[c.next].prev = h;
  DeleteChunk(n);
}

// ----- Bins and chunk storage -----

void BfcAllocator::InsertFree(ChunkHandle h) {
  const Chunk& c = chunks_[h];
  Bin& bin = bins_[BinIndex(c.size)];
  bin.free_chunks.insert(FreeEntry{c.size, c.ptr, h});
  bin.free_bytes += c.size;
}

void BfcAllocator::RemoveFree(ChunkHandle h) {
  const Chunk& c = chunks_[h];
  Bin& bin = bins_[BinIndex(c.size)];
  bin.free_chunks.erase(FreeEntry{c.size, c.ptr, h});
  bin.free_bytes -= c.size;
}

void BfcAllocator::CountInUse(const Chunk& c, int sign) {
  Bin& bin = bins_[BinIndex(c.size)];
  bin.in_use_chunks += sign;
  if (sign > 0) {
    bin.in_use_bytes += c.size;
    bin.in_use_requested += c.requested;
  } else {
    bin.in_use_bytes -= c.size;
    bin.in_use_requested -= c.requested;
  }
}

BfcAllocator::ChunkHandle BfcAllocator::NewChunk() {
  if (free_handles_.empty()) {
    chunks_.emplace_back();
    return chunks_.size() - 1;
  }
  const ChunkHandle h = free_handles_.back();
  free_handles_.pop_back();
  chunks_[h] = Chunk();
  return h;
}

void BfcAllocator::DeleteChunk(ChunkHandle h) {
  chunks_[h] = Chunk();
  free_handles_.push_back(h);
}

// ----- Regions -----

size_t BfcAllocator::AvailableForRegions() const {
  if (region_bytes_ >= options_.memory_limit) return 0;
  return (options_.memory_limit - region_bytes_) & ~(kMinAllocationSize - 1);
}

bool BfcAllocator::Extend(size_t rounded) {
  device_refusal_.clear();
  const size_t available = AvailableForRegions();
  if (rounded > available) return false;
  // Terminates: rounded <= available <= region_cap_.
  bool increased = false;
  while (rounded > next_region_bytes_) {
    next_region_bytes_ = DoubledRegionBytes();
    increased = true;
  }
  size_t bytes = std::min(next_region_bytes_, available);
  void* base = AllocateRegion(&bytes, rounded);
  if (base == nullptr) return false;
  if (!increased) next_region_bytes_ = DoubledRegionBytes();
  AddRegion(base, bytes);
  return true;
}

size_t BfcAllocator::DoubledRegionBytes() const {
  // Capped at the limit (regions never exceed it anyway), which also rules out overflow.
  return next_region_bytes_ > region_cap_ / 2 ? region_cap_ : next_region_bytes_ * 2;
}

void* BfcAllocator::AllocateRegion(size_t* bytes, size_t rounded) {
  void* base = sub_->Alloc(*bytes);
  // Back off to 90%, 81%, ... while that still holds the request. Each step must shrink,
  // or a 256-byte region would be retried forever.
  size_t size = *bytes;
  while (base == nullptr) {
    const size_t smaller = RoundedBytes(size / 10 * 9);
    if (smaller < rounded || smaller >= size) break;
    size = smaller;
    base = sub_->Alloc(size);
  }
  if (base != nullptr) {
    *bytes = size;
    return base;
  }
  device_refusal_ = absl::StrFormat(
      "the device refused a new region of %s and every 90%% back-off down to the request "
      "(the device reports %s free of %s)",
      HumanBytes(*bytes), HumanBytes(sub_->free_bytes()), HumanBytes(sub_->total_bytes()));
  return nullptr;
}

void BfcAllocator::AddRegion(void* base, size_t bytes) {
  const ChunkHandle h = NewChunk();
  Chunk& c = chunks_[h];
  c.ptr = reinterpret_cast<uintptr_t>(base);
  c.size = bytes;
  regions_[c.ptr] = Region{bytes, h};
  region_bytes_ += bytes;
  InsertFree(h);
}

size_t BfcAllocator::FreeRegionBytes() const {
  size_t total = 0;
  for (const auto& [base, region] : regions_) {
    const Chunk& c = chunks_[region.first];
    if (!c.in_use && c.next == kInvalidChunk) total += region.size;
  }
  return total;
}

size_t BfcAllocator::ReleaseFreeRegionsLocked() {
  size_t released = 0;
  for (auto it = regions_.begin(); it != regions_.end();) {
    const ChunkHandle h = it->second.first;
    // Coalescing guarantees a wholly free region is exactly one free chunk.
    if (chunks_[h].in_use || chunks_[h].next != kInvalidChunk) {
      ++it;
      continue;
    }
    RemoveFree(h);
    DeleteChunk(h);
    sub_->Free(reinterpret_cast<void*>(it->first), it->second.size);
    region_bytes_ -= it->second.size;
    released += it->second.size;
    it = regions_.erase(it);
  }
  if (released > 0) RewindGrowthLocked();
  return released;
}

void BfcAllocator::RewindGrowthLocked() {
  // Without the rewind, a process-wide allocator that gives its regions back at every
  // session's end (the pinned host BFC) doubled its next region each session: the 7th
  // session after a 256 MiB feed pinned 32 GiB, and each took twice as long as the last.
  next_region_bytes_ = first_region_bytes_;
  while (next_region_bytes_ < region_bytes_ && next_region_bytes_ < region_cap_) {
    next_region_bytes_ = DoubledRegionBytes();
  }
}

bool BfcAllocator::CollectGarbage(size_t rounded) {
  if (!options_.garbage_collection) return false;
  const size_t free_regions = FreeRegionBytes();
  // Only worth it when the released bytes plus the headroom can hold the request.
  if (free_regions == 0 || rounded > AvailableForRegions() + free_regions) return false;
  ReleaseFreeRegionsLocked();
  return true;
}

size_t BfcAllocator::ReleaseFreeRegions() {
  absl::MutexLock lock(&mu_);
  return ReleaseFreeRegionsLocked();
}

// ----- Queries -----

AllocatorStats BfcAllocator::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void BfcAllocator::ResetPeak() {
  absl::MutexLock lock(&mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

size_t BfcAllocator::AllocatedSize(const void* ptr) const {
  absl::MutexLock lock(&mu_);
  auto it = in_use_.find(reinterpret_cast<uintptr_t>(ptr));
  return it == in_use_.end() ? 0 : chunks_[it->second].size;
}

size_t BfcAllocator::LargestFreeChunk() const {
  absl::MutexLock lock(&mu_);
  return LargestFreeLocked();
}

size_t BfcAllocator::RegionBytes() const {
  absl::MutexLock lock(&mu_);
  return region_bytes_;
}

size_t BfcAllocator::NumRegions() const {
  absl::MutexLock lock(&mu_);
  return regions_.size();
}

size_t BfcAllocator::LargestFreeLocked() const {
  for (int b = kNumBins - 1; b >= 0; --b) {
    if (!bins_[b].free_chunks.empty()) return bins_[b].free_chunks.rbegin()->size;
  }
  return 0;
}

size_t BfcAllocator::TotalFreeLocked() const {
  size_t total = 0;
  for (const Bin& bin : bins_) total += bin.free_bytes;
  return total;
}

// ----- Diagnostics -----

std::string BfcAllocator::DescribeState() const {
  absl::MutexLock lock(&mu_);
  if (!last_failure_.empty()) return last_failure_;
  return absl::StrCat("Allocator (", options_.name, ") has not failed an allocation. ",
                      StateSummary(), BinLines());
}

std::string BfcAllocator::FailureReason(size_t bytes, size_t rounded) const {
  const size_t total_free = TotalFreeLocked();
  std::string why;
  if (rounded > options_.memory_limit) {
    why = "the request is larger than the whole memory limit";
  } else if (!device_refusal_.empty()) {
    why = device_refusal_;
  } else if (total_free >= rounded) {
    why = absl::StrFormat(
        "memory is fragmented: %s is free in total, enough for the request, but the largest "
        "free chunk is only %s and the limit leaves %s for a new region",
        HumanBytes(total_free), HumanBytes(LargestFreeLocked()),
        HumanBytes(AvailableForRegions()));
  } else {
    why = absl::StrFormat(
        "the limit is reached: free chunks hold %s (largest %s) and the limit leaves %s for "
        "a new region",
        HumanBytes(total_free), HumanBytes(LargestFreeLocked()),
        HumanBytes(AvailableForRegions()));
  }
  return absl::StrFormat(
      "Allocator (%s) ran out of memory trying to allocate %s (requested %u bytes, rounded "
      "to %u): %s.",
      options_.name, HumanBytes(rounded), bytes, rounded, why);
}

std::string BfcAllocator::StateSummary() const {
  const size_t total_free = TotalFreeLocked();
  const size_t largest = LargestFreeLocked();
  const double fragmentation =
      total_free == 0 ? 0.0 : 1.0 - static_cast<double>(largest) / static_cast<double>(total_free);
  size_t free_chunks = 0;
  for (const Bin& bin : bins_) free_chunks += bin.free_chunks.size();
  return absl::StrFormat(
      "Limit %s; in use %s in %u chunks (peak %s); regions %s in %u regions; free %s in %u "
      "chunks; largest free chunk %s; fragmentation %.1f%% (1 - largest free / total free).",
      BytesWithExact(options_.memory_limit), BytesWithExact(stats_.bytes_in_use),
      in_use_.size(), HumanBytes(stats_.peak_bytes_in_use), BytesWithExact(region_bytes_),
      regions_.size(), BytesWithExact(total_free), free_chunks, BytesWithExact(largest),
      100.0 * fragmentation);
}

std::string BfcAllocator::BinLines() const {
  std::string lines;
  for (int b = 0; b < kNumBins; ++b) {
    const Bin& bin = bins_[b];
    if (bin.in_use_chunks == 0 && bin.free_chunks.empty()) continue;
    const size_t low = kMinAllocationSize << b;
    const std::string range =
        b == kNumBins - 1 ? absl::StrCat(">= ", HumanBytes(low))
                          : absl::StrCat("[", HumanBytes(low), ", ", HumanBytes(low << 1), ")");
    absl::StrAppendFormat(&lines,
                          "\n  Bin %d %s: %d in use (%s, %s requested), %u free (%s)", b,
                          range, bin.in_use_chunks, HumanBytes(bin.in_use_bytes),
                          HumanBytes(bin.in_use_requested), bin.free_chunks.size(),
                          HumanBytes(bin.free_bytes));
  }
  return lines;
}

}  // namespace dflow
