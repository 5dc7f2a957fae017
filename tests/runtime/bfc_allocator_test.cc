#include "runtime/bfc_allocator.h"
#include "runtime/tensor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/sub_allocator.h"

namespace dflow {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// Forwards to a HostSubAllocator owned by the test, so its accounting can be checked after
// the BfcAllocator (which owns this forwarder) is gone, and records every region request.
class RecordingSubAllocator final : public SubAllocator {
 public:
  RecordingSubAllocator(HostSubAllocator* host, std::vector<size_t>* requests)
      : host_(host), requests_(requests) {}
  void* Alloc(size_t bytes) override {
    if (requests_ != nullptr) requests_->push_back(bytes);
    return host_->Alloc(bytes);
  }
  void Free(void* ptr, size_t bytes) override { host_->Free(ptr, bytes); }
  size_t total_bytes() override { return host_->total_bytes(); }
  size_t free_bytes() override { return host_->free_bytes(); }

 private:
  HostSubAllocator* host_;          // not owned; outlives this
  std::vector<size_t>* requests_;  // not owned; may be null
};

std::unique_ptr<BfcAllocator> MakeBfc(HostSubAllocator* host, size_t limit, bool allow_growth,
                                      std::vector<size_t>* requests = nullptr,
                                      bool garbage_collection = true) {
  BfcOptions options;
  options.name = "GPU_0_bfc";
  options.memory_limit = limit;
  options.allow_growth = allow_growth;
  options.garbage_collection = garbage_collection;
  return std::make_unique<BfcAllocator>(std::make_unique<RecordingSubAllocator>(host, requests),
                                        std::move(options));
}

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("BfcAllocator rounds every request up to a multiple of 256 bytes", "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 4 * kMiB, false);
  const std::vector<std::pair<size_t, size_t>> cases = {
      {1, 256}, {255, 256}, {256, 256}, {257, 512}, {1000, 1024}, {4096, 4096}, {4097, 4352}};
  for (const auto& [request, expected] : cases) {
    void* p = bfc->AllocateRaw(64, request);
    REQUIRE(p != nullptr);
    CHECK(bfc->AllocatedSize(p) == expected);
    CHECK(Addr(p) % 256 == 0);
    bfc->DeallocateRaw(p, request);
  }
}

TEST_CASE("BfcAllocator returns nullptr for zero bytes and takes no memory for them",
          "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 4 * kMiB, false);
  CHECK(bfc->AllocateRaw(64, 0) == nullptr);
  CHECK(bfc->NumRegions() == 0);
  CHECK(host.allocated_bytes() == 0);
  CHECK(bfc->GetStats().num_allocs == 0);
}

TEST_CASE("BfcAllocator refuses alignments above 256 bytes", "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 4 * kMiB, false);
  CHECK(bfc->AllocateRaw(4096, 1024) == nullptr);
  CHECK(Contains(bfc->DescribeState(), "alignment 4096"));
  void* p = bfc->AllocateRaw(256, 1024);
  CHECK(p != nullptr);
  bfc->DeallocateRaw(p, 1024);
}

TEST_CASE("BfcAllocator hands out the smallest fitting free chunk, lowest address first",
          "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 1 * kMiB, false);
  // Holes of 4096, 2048, 3072 and 3072 bytes, kept apart by 256-byte separators.
  const std::vector<size_t> holes = {4096, 2048, 3072, 3072};
  std::vector<void*> hole_ptrs, separators;
  for (size_t size : holes) {
    hole_ptrs.push_back(bfc->AllocateRaw(64, size));
    separators.push_back(bfc->AllocateRaw(64, 256));
  }
  for (size_t i = 1; i < hole_ptrs.size(); ++i) REQUIRE(Addr(hole_ptrs[i - 1]) < Addr(hole_ptrs[i]));
  for (size_t i = 0; i < holes.size(); ++i) bfc->DeallocateRaw(hole_ptrs[i], holes[i]);

  // 2560 fits 3072 (no split: 3072 < 2 * 2560): first the lower 3072 hole, then the other.
  void* a = bfc->AllocateRaw(64, 2560);
  CHECK(a == hole_ptrs[2]);
  CHECK(bfc->AllocatedSize(a) == 3072);
  void* b = bfc->AllocateRaw(64, 2560);
  CHECK(b == hole_ptrs[3]);
  // Both 3072 holes are taken: the 4096 hole is now the best fit, unsplit.
  void* c = bfc->AllocateRaw(64, 2560);
  CHECK(c == hole_ptrs[0]);
  CHECK(bfc->AllocatedSize(c) == 4096);
  // 1024 best fits the 2048 hole, which is split (2048 >= 2 * 1024).
  void* d = bfc->AllocateRaw(64, 1024);
  CHECK(d == hole_ptrs[1]);
  CHECK(bfc->AllocatedSize(d) == 1024);
  void* e = bfc->AllocateRaw(64, 1024);
  CHECK(Addr(e) == Addr(hole_ptrs[1]) + 1024);
}

TEST_CASE("BfcAllocator splits a chunk only when it is twice the request or leaves 128 MiB",
          "[runtime][bfc]") {
  HostSubAllocator host;
  SECTION("a chunk of at least twice the request is split") {
    auto bfc = MakeBfc(&host, 1 * kMiB, false);
    void* p = bfc->AllocateRaw(64, 512 * kKiB);
    CHECK(bfc->AllocatedSize(p) == 512 * kKiB);
    CHECK(bfc->LargestFreeChunk() == 512 * kKiB);
    bfc->DeallocateRaw(p, 0);
  }
  SECTION("a chunk under twice the request with a small leftover is not split") {
    auto bfc = MakeBfc(&host, 1 * kMiB, false);
    void* p = bfc->AllocateRaw(64, 512 * kKiB + 1);
    CHECK(bfc->AllocatedSize(p) == 1 * kMiB);
    CHECK(bfc->LargestFreeChunk() == 0);
    CHECK(bfc->GetStats().bytes_in_use == static_cast<int64_t>(1 * kMiB));
    bfc->DeallocateRaw(p, 0);
  }
  SECTION("a leftover of 128 MiB or more is split off even under twice the request") {
    // Regions are reserved but never touched, so these sizes cost no real memory.
    auto bfc = MakeBfc(&host, 384 * kMiB, false);
    void* p = bfc->AllocateRaw(64, 200 * kMiB);
    CHECK(bfc->AllocatedSize(p) == 200 * kMiB);
    CHECK(bfc->LargestFreeChunk() == 184 * kMiB);
    bfc->DeallocateRaw(p, 0);
  }
  SECTION("a leftover just under 128 MiB stays with the chunk") {
    auto bfc = MakeBfc(&host, 327 * kMiB, false);
    void* p = bfc->AllocateRaw(64, 200 * kMiB);
    CHECK(bfc->AllocatedSize(p) == 327 * kMiB);
    bfc->DeallocateRaw(p, 0);
  }
}

TEST_CASE("BfcAllocator coalesces freed neighbours in any order into one chunk again",
          "[runtime][bfc]") {
  std::vector<int> order = {0, 1, 2};
  do {
    HostSubAllocator host;
    auto bfc = MakeBfc(&host, 1 * kMiB, false);
    // Three 256 KiB chunks and a 256 KiB free tail fill the one region.
    void* p[3];
    for (void*& ptr : p) ptr = bfc->AllocateRaw(64, 256 * kKiB);
    CHECK(bfc->LargestFreeChunk() == 256 * kKiB);
    for (int i : order) bfc->DeallocateRaw(p[i], 256 * kKiB);
    INFO("free order " << order[0] << order[1] << order[2]);
    CHECK(bfc->LargestFreeChunk() == 1 * kMiB);
    void* whole = bfc->AllocateRaw(64, 1 * kMiB);
    CHECK(whole == p[0]);
    CHECK(bfc->NumRegions() == 1);
    bfc->DeallocateRaw(whole, 1 * kMiB);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE("BfcAllocator with allow_growth starts at 1 MiB and doubles each region",
          "[runtime][bfc]") {
  HostSubAllocator host;
  std::vector<size_t> requests;
  SECTION("regions of 1, 2, 4 and 8 MiB") {
    auto bfc = MakeBfc(&host, 1024 * kMiB, true, &requests);
    CHECK(bfc->NumRegions() == 0);
    std::vector<void*> ptrs;
    for (size_t size : {1 * kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB}) ptrs.push_back(bfc->AllocateRaw(64, size));
    CHECK(requests == std::vector<size_t>{1 * kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB});
    CHECK(bfc->RegionBytes() == 15 * kMiB);
    for (void* p : ptrs) bfc->DeallocateRaw(p, 0);
  }
  SECTION("a request above the region size doubles until it fits, without the extra doubling") {
    auto bfc = MakeBfc(&host, 1024 * kMiB, true, &requests);
    void* a = bfc->AllocateRaw(64, 1 * kMiB);  // region 1 MiB; next 2 MiB
    void* b = bfc->AllocateRaw(64, 5 * kMiB);  // 2 -> 4 -> 8 MiB, unsplit; next stays 8 MiB
    void* c = bfc->AllocateRaw(64, 8 * kMiB);  // 8 MiB; next 16 MiB
    void* d = bfc->AllocateRaw(64, 9 * kMiB);  // 16 MiB
    CHECK(requests == std::vector<size_t>{1 * kMiB, 8 * kMiB, 8 * kMiB, 16 * kMiB});
    for (void* p : {a, b, c, d}) bfc->DeallocateRaw(p, 0);
  }
  SECTION("regions never go beyond the limit") {
    auto bfc = MakeBfc(&host, 5 * kMiB, true, &requests);
    void* a = bfc->AllocateRaw(64, 1 * kMiB);
    void* b = bfc->AllocateRaw(64, 2 * kMiB);
    void* c = bfc->AllocateRaw(64, 2 * kMiB);  // the next region would be 4 MiB; 2 MiB remain
    REQUIRE(c != nullptr);
    CHECK(requests == std::vector<size_t>{1 * kMiB, 2 * kMiB, 2 * kMiB});
    CHECK(bfc->RegionBytes() == 5 * kMiB);
    CHECK(bfc->AllocateRaw(64, 256) == nullptr);
    CHECK(requests.size() == 3);  // the limit is checked before asking the device
    CHECK(host.allocated_bytes() == 5 * kMiB);
    for (void* p : {a, b, c}) bfc->DeallocateRaw(p, 0);
  }
}

TEST_CASE("BfcAllocator without allow_growth takes the whole limit at the first allocation",
          "[runtime][bfc]") {
  HostSubAllocator host;
  std::vector<size_t> requests;
  // A limit that is not a multiple of 256 gives a region rounded down to one.
  auto bfc = MakeBfc(&host, 10 * kMiB + 100, false, &requests);
  CHECK(bfc->NumRegions() == 0);
  CHECK(host.allocated_bytes() == 0);
  void* p = bfc->AllocateRaw(64, 1000);
  REQUIRE(p != nullptr);
  CHECK(requests == std::vector<size_t>{10 * kMiB});
  CHECK(bfc->NumRegions() == 1);
  CHECK(host.allocated_bytes() == 10 * kMiB);
  void* q = bfc->AllocateRaw(64, 5 * kMiB);
  CHECK(q != nullptr);
  CHECK(bfc->NumRegions() == 1);
  bfc->DeallocateRaw(p, 1000);
  bfc->DeallocateRaw(q, 5 * kMiB);
}

TEST_CASE("BfcAllocator fails at once beyond its limit and says why", "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 4 * kMiB, false);
  void* used = bfc->AllocateRaw(64, 2 * kMiB);  // split: 2 MiB + 2 MiB free
  void* used2 = bfc->AllocateRaw(64, 1 * kMiB);  // split: 1 MiB + 1 MiB free
  REQUIRE(used != nullptr);
  REQUIRE(used2 != nullptr);
  const auto start = std::chrono::steady_clock::now();
  CHECK(bfc->AllocateRaw(64, 2 * kMiB - 100) == nullptr);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  const std::string state = bfc->DescribeState();
  INFO(state);
  CHECK(Contains(state, "GPU_0_bfc"));
  CHECK(Contains(state, "requested 2097052 bytes, rounded to 2097152"));
  CHECK(Contains(state, "Limit 4.00MiB (4194304 bytes)"));
  CHECK(Contains(state, "in use 3.00MiB (3145728 bytes)"));
  CHECK(Contains(state, "largest free chunk 1.00MiB (1048576 bytes)"));
  CHECK(Contains(state, "the limit is reached"));
  CHECK(Contains(state, "Bin 12 [1.00MiB, 2.00MiB): 1 in use (1.00MiB, 1.00MiB requested), 1 free (1.00MiB)"));
  CHECK(Contains(state, "Bin 13 [2.00MiB, 4.00MiB): 1 in use (2.00MiB, 2.00MiB requested), 0 free"));
  SECTION("a request above the whole limit is named as such") {
    CHECK(bfc->AllocateRaw(64, 5 * kMiB) == nullptr);
    CHECK(Contains(bfc->DescribeState(), "larger than the whole memory limit"));
  }
  SECTION("the allocator stays usable after the failure") {
    void* p = bfc->AllocateRaw(64, 1 * kMiB);
    CHECK(p != nullptr);
    bfc->DeallocateRaw(p, 1 * kMiB);
  }
  bfc->DeallocateRaw(used, 2 * kMiB);
  bfc->DeallocateRaw(used2, 1 * kMiB);
}

TEST_CASE("BfcAllocator fails when free memory is fragmented and reports the fragmentation",
          "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 1 * kMiB, false);
  std::vector<void*> ptrs;
  for (int i = 0; i < 16; ++i) ptrs.push_back(bfc->AllocateRaw(64, 64 * kKiB));
  REQUIRE(bfc->LargestFreeChunk() == 0);
  for (int i = 0; i < 16; i += 2) bfc->DeallocateRaw(ptrs[i], 64 * kKiB);
  // 512 KiB is free in total, but no two free chunks are adjacent.
  CHECK(bfc->LargestFreeChunk() == 64 * kKiB);
  CHECK(bfc->AllocateRaw(64, 128 * kKiB) == nullptr);
  const std::string state = bfc->DescribeState();
  INFO(state);
  CHECK(Contains(state, "memory is fragmented: 512.0KiB is free in total"));
  CHECK(Contains(state, "free 512.0KiB (524288 bytes) in 8 chunks"));
  CHECK(Contains(state, "largest free chunk 64.0KiB (65536 bytes)"));
  CHECK(Contains(state, "fragmentation 87.5%"));
  CHECK(Contains(state, "Bin 8 [64.0KiB, 128.0KiB): 8 in use (512.0KiB, 512.0KiB requested), 8 free (512.0KiB)"));
  for (int i = 1; i < 16; i += 2) bfc->DeallocateRaw(ptrs[i], 64 * kKiB);
}

TEST_CASE("BfcAllocator describes its state before any failure", "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 2 * kMiB, false);
  void* p = bfc->AllocateRaw(64, 300);
  const std::string state = bfc->DescribeState();
  INFO(state);
  CHECK(Contains(state, "has not failed"));
  CHECK(Contains(state, "in use 512B (512 bytes) in 1 chunks"));
  CHECK(Contains(state, "regions 2.00MiB (2097152 bytes) in 1 regions"));
  bfc->DeallocateRaw(p, 300);
}

TEST_CASE("BfcAllocator keeps in-use, peak, largest and count statistics", "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 8 * kMiB, true);
  CHECK(bfc->GetStats().bytes_limit == static_cast<int64_t>(8 * kMiB));
  CHECK(bfc->Name() == "GPU_0_bfc");
  void* a = bfc->AllocateRaw(64, 1000);     // chunk 1024
  void* b = bfc->AllocateRaw(64, 64 * kKiB);
  AllocatorStats stats = bfc->GetStats();
  CHECK(stats.num_allocs == 2);
  CHECK(stats.bytes_in_use == static_cast<int64_t>(1024 + 64 * kKiB));
  CHECK(stats.peak_bytes_in_use == stats.bytes_in_use);
  CHECK(stats.largest_alloc_size == static_cast<int64_t>(64 * kKiB));
  bfc->DeallocateRaw(b, 64 * kKiB);
  stats = bfc->GetStats();
  CHECK(stats.bytes_in_use == 1024);
  CHECK(stats.peak_bytes_in_use == static_cast<int64_t>(1024 + 64 * kKiB));
  bfc->ResetPeak();
  CHECK(bfc->GetStats().peak_bytes_in_use == 1024);
  void* c = bfc->AllocateRaw(64, 512);
  CHECK(bfc->GetStats().peak_bytes_in_use == 1536);
  CHECK(bfc->GetStats().num_allocs == 3);
  bfc->DeallocateRaw(a, 1000);
  bfc->DeallocateRaw(c, 512);
  CHECK(bfc->GetStats().bytes_in_use == 0);
  CHECK(bfc->AllocatedSize(a) == 0);
}

TEST_CASE("BfcAllocator returns wholly free regions to the sub-allocator", "[runtime][bfc]") {
  HostSubAllocator host;
  {
    auto bfc = MakeBfc(&host, 64 * kMiB, true);
    void* a = bfc->AllocateRaw(64, 1 * kMiB);
    void* b = bfc->AllocateRaw(64, 2 * kMiB);
    void* c = bfc->AllocateRaw(64, 4 * kMiB);
    CHECK(host.allocated_bytes() == 7 * kMiB);
    CHECK(host.live_regions() == 3);
    bfc->DeallocateRaw(a, 0);
    bfc->DeallocateRaw(c, 0);
    CHECK(bfc->ReleaseFreeRegions() == 5 * kMiB);
    CHECK(host.allocated_bytes() == 2 * kMiB);
    CHECK(host.live_regions() == 1);
    CHECK(bfc->RegionBytes() == 2 * kMiB);
    CHECK(bfc->ReleaseFreeRegions() == 0);  // the 2 MiB region is still in use
    // The allocator keeps working and grows again.
    void* d = bfc->AllocateRaw(64, 1 * kMiB);
    CHECK(d != nullptr);
    CHECK(host.live_regions() == 2);
    bfc->DeallocateRaw(b, 0);
    bfc->DeallocateRaw(d, 0);
  }
  // The destructor returned the rest.
  CHECK(host.allocated_bytes() == 0);
  CHECK(host.live_regions() == 0);
}

TEST_CASE("BfcAllocator restarts its growth from what it still holds after giving regions back",
          "[runtime][bfc]") {
  // The process-wide pinned host BFC gives its free regions back at every session's end;
  // its next region once kept doubling anyway, so each session pinned twice as much as
  // the last (32 GiB by the 7th on an H200: seconds per session).
  HostSubAllocator host;
  std::vector<size_t> requests;
  auto bfc = MakeBfc(&host, 1024 * kMiB, true, &requests);
  for (int session = 0; session < 6; ++session) {
    void* big = bfc->AllocateRaw(64, 200 * kMiB);  // grows to a 256 MiB region
    REQUIRE(big != nullptr);
    bfc->DeallocateRaw(big, 0);
    CHECK(bfc->ReleaseFreeRegions() == 256 * kMiB);
  }
  // Every session asked for the same 256 MiB, never 512 MiB or more.
  REQUIRE(requests.size() == 6);
  for (size_t bytes : requests) CHECK(bytes == 256 * kMiB);
  // Nothing held: a small request gets the first 1 MiB region again.
  requests.clear();
  void* small = bfc->AllocateRaw(64, 4 * kKiB);
  REQUIRE(small != nullptr);
  CHECK(requests == std::vector<size_t>{1 * kMiB});
  // Still held: the next region continues the schedule above what is held (1 MiB -> 2).
  void* more = bfc->AllocateRaw(64, 1 * kMiB);
  REQUIRE(more != nullptr);
  CHECK(requests == std::vector<size_t>{1 * kMiB, 2 * kMiB});
  bfc->DeallocateRaw(small, 0);
  bfc->DeallocateRaw(more, 0);
}

TEST_CASE("BfcAllocator gives free regions back and retries before failing an allocation",
          "[runtime][bfc]") {
  HostSubAllocator host;
  for (bool gc : {true, false}) {
    auto bfc = MakeBfc(&host, 8 * kMiB, true, nullptr, gc);
    std::vector<void*> ptrs;
    for (size_t size : {1 * kMiB, 2 * kMiB, 4 * kMiB}) ptrs.push_back(bfc->AllocateRaw(64, size));
    for (void* p : ptrs) bfc->DeallocateRaw(p, 0);
    // 7 MiB of regions, all free, but no chunk holds 6 MiB and only 1 MiB is left to grow.
    void* big = bfc->AllocateRaw(64, 6 * kMiB);
    INFO("garbage_collection " << gc);
    CHECK((big != nullptr) == gc);
    if (gc) {
      CHECK(bfc->NumRegions() == 1);
      CHECK(bfc->RegionBytes() == 8 * kMiB);
      bfc->DeallocateRaw(big, 0);
    }
  }
}

TEST_CASE("BfcAllocator backs off to 90% steps when the sub-allocator refuses a region",
          "[runtime][bfc]") {
  HostSubAllocator host(10 * kMiB);  // a device with only 10 MiB, under a 100 MiB limit
  std::vector<size_t> requests;
  auto bfc = MakeBfc(&host, 100 * kMiB, false, &requests);
  SECTION("the first size that fits is taken") {
    void* p = bfc->AllocateRaw(64, 1 * kMiB);
    REQUIRE(p != nullptr);
    REQUIRE(requests.size() > 2);
    CHECK(requests.front() == 100 * kMiB);
    for (size_t i = 1; i < requests.size(); ++i) {
      CHECK(requests[i] % 256 == 0);
      CHECK(requests[i] >= requests[i - 1] / 10 * 9);
      CHECK(requests[i] < requests[i - 1] / 10 * 9 + 256);
    }
    CHECK(requests.back() <= 10 * kMiB);
    CHECK(requests[requests.size() - 2] > 10 * kMiB);
    CHECK(bfc->RegionBytes() == requests.back());
    bfc->DeallocateRaw(p, 0);
  }
  SECTION("backing off stops below the request and the failure names the device") {
    CHECK(bfc->AllocateRaw(64, 50 * kMiB) == nullptr);
    CHECK(requests.back() >= 50 * kMiB);
    CHECK(requests.back() / 10 * 9 < 50 * kMiB);
    const std::string state = bfc->DescribeState();
    INFO(state);
    CHECK(Contains(state, "the device refused a new region of 100.00MiB"));
    CHECK(Contains(state, "10.00MiB free of 10.00MiB"));
    CHECK(bfc->NumRegions() == 0);
  }
}

// A live allocation in the shadow model: its chunk and the byte pattern written into it.
struct Live {
  size_t chunk;
  size_t requested;
  unsigned char fill;
};

void CheckNoOverlap(const std::map<uintptr_t, Live>& live, uintptr_t p, size_t chunk) {
  auto next = live.lower_bound(p);
  if (next != live.end()) REQUIRE(p + chunk <= next->first);
  if (next != live.begin()) {
    auto prev = std::prev(next);
    REQUIRE(prev->first + prev->second.chunk <= p);
  }
}

bool FilledWith(const void* p, size_t n, unsigned char fill) {
  const auto* bytes = static_cast<const unsigned char*>(p);
  return std::all_of(bytes, bytes + n, [fill](unsigned char b) { return b == fill; });
}

TEST_CASE("BfcAllocator survives thousands of random allocations against a shadow model",
          "[runtime][bfc]") {
  HostSubAllocator host;
  // Roomy: nearly everything succeeds. Tight: many requests fail, and each failure must
  // be real (no free chunk fits and the limit leaves no room for a region).
  size_t limit = 128 * kMiB;
  bool tight = false;
  SECTION("roomy limit") {}
  SECTION("tight limit") {
    limit = 6 * kMiB;
    tight = true;
  }
  auto bfc = MakeBfc(&host, limit, true);
  std::mt19937 rng(1234);
  std::map<uintptr_t, Live> live;
  size_t in_use = 0;
  int64_t allocs = 0, failures = 0;
  for (int step = 0; step < 20000; ++step) {
    const bool allocate = live.empty() || rng() % 100 < 55;
    if (allocate) {
      const size_t bytes = 1 + rng() % (size_t{1} << (rng() % 19));  // 1 B .. 256 KiB
      void* p = bfc->AllocateRaw(64, bytes);
      if (p == nullptr) {
        const size_t rounded = (bytes + 255) / 256 * 256;
        REQUIRE(bfc->LargestFreeChunk() < rounded);
        REQUIRE(bfc->RegionBytes() + rounded > limit);
        ++failures;
        continue;
      }
      const size_t chunk = bfc->AllocatedSize(p);
      REQUIRE(Addr(p) % 256 == 0);
      REQUIRE(chunk >= bytes);
      REQUIRE(chunk % 256 == 0);
      CheckNoOverlap(live, Addr(p), chunk);
      const auto fill = static_cast<unsigned char>(rng());
      std::memset(p, fill, bytes);
      live[Addr(p)] = Live{chunk, bytes, fill};
      in_use += chunk;
      ++allocs;
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      void* p = reinterpret_cast<void*>(it->first);
      REQUIRE(FilledWith(p, it->second.requested, it->second.fill));
      in_use -= it->second.chunk;
      bfc->DeallocateRaw(p, it->second.requested);
      live.erase(it);
    }
    REQUIRE(bfc->GetStats().bytes_in_use == static_cast<int64_t>(in_use));
  }
  CHECK(bfc->GetStats().num_allocs == allocs);
  CHECK(allocs > 5000);
  if (tight) {
    CHECK(failures > 100);
  } else {
    CHECK(failures < allocs / 100);
  }
  CHECK(host.allocated_bytes() == bfc->RegionBytes());
  for (const auto& [addr, l] : live) bfc->DeallocateRaw(reinterpret_cast<void*>(addr), 0);
  CHECK(bfc->GetStats().bytes_in_use == 0);
  // Everything coalesced: each region is one free chunk again and can be released.
  const size_t regions = bfc->RegionBytes();
  CHECK(bfc->ReleaseFreeRegions() == regions);
  CHECK(host.allocated_bytes() == 0);
}

TEST_CASE("BfcAllocator stays consistent under 8 threads allocating and freeing",
          "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 256 * kMiB, true);
  std::atomic<int> errors{0};
  std::atomic<int64_t> allocs{0};
  auto worker = [&](int id) {
    std::mt19937 rng(id);
    std::vector<std::pair<void*, size_t>> mine;
    for (int step = 0; step < 3000; ++step) {
      if (mine.empty() || rng() % 100 < 55) {
        const size_t bytes = 1 + rng() % (size_t{1} << (rng() % 17));
        void* p = bfc->AllocateRaw(64, bytes);
        if (p == nullptr || Addr(p) % 256 != 0) {
          ++errors;
          continue;
        }
        std::memset(p, id, bytes);
        mine.emplace_back(p, bytes);
        ++allocs;
      } else {
        const size_t i = rng() % mine.size();
        if (!FilledWith(mine[i].first, mine[i].second, static_cast<unsigned char>(id))) ++errors;
        bfc->DeallocateRaw(mine[i].first, mine[i].second);
        mine[i] = mine.back();
        mine.pop_back();
      }
    }
    for (auto& [p, bytes] : mine) {
      if (!FilledWith(p, bytes, static_cast<unsigned char>(id))) ++errors;
      bfc->DeallocateRaw(p, bytes);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back(worker, t + 1);
  for (auto& t : threads) t.join();
  CHECK(errors == 0);
  CHECK(bfc->GetStats().num_allocs == allocs);
  CHECK(bfc->GetStats().bytes_in_use == 0);
  const size_t regions = bfc->RegionBytes();
  CHECK(bfc->ReleaseFreeRegions() == regions);
  CHECK(host.allocated_bytes() == 0);
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

TEST_CASE("A tensor that does not fit fails at once with TF's OOM text and the allocator's state",
          "[runtime][bfc]") {
  HostSubAllocator host;
  auto bfc = MakeBfc(&host, 4 * kMiB, false);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Tensor> big = Tensor::Allocate(bfc.get(), DT_FLOAT, TensorShape({1024, 1024, 2}));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  REQUIRE(big.status().code() == absl::StatusCode::kResourceExhausted);
  const std::string message(big.status().message());
  INFO(message);
  CHECK(message.rfind("OOM when allocating tensor with shape[1024,1024,2] and type float by "
                      "allocator GPU_0_bfc\n", 0) == 0);
  CHECK(Contains(message, "Limit 4.00MiB (4194304 bytes)"));
  CHECK(Contains(message, "larger than the whole memory limit"));
  // The allocator keeps working.
  absl::StatusOr<Tensor> small = Tensor::Allocate(bfc.get(), DT_FLOAT, TensorShape({1024}));
  CHECK(small.ok());
}

}  // namespace
}  // namespace dflow
