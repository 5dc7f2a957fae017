// SimGpuDevice (runtime/sim/sim_device.h): attributes, the BFC limit, card memory shared by
// virtual devices, and the four streams.
#include "runtime/sim/sim_device.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "runtime/thread_pool.h"

namespace dflow::sim {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

SimGpuOptions Options(int64_t total, int64_t limit, bool allow_growth = false) {
  SimGpuOptions options;
  options.total_bytes = total;
  options.memory_limit = limit;
  options.allow_growth = allow_growth;
  return options;
}

TEST_CASE("A simulated GPU is named, typed and described like a GPU", "[sim_device]") {
  ThreadPool pool(2, "test");
  SimGpuOptions options = Options(1024 * kMiB, 512 * kMiB);
  options.physical_index = 3;
  SimGpuDevice device(1, &pool, options);

  CHECK(device.name() == "/job:localhost/replica:0/task:0/device:GPU:1");
  CHECK(device.device_type() == "GPU");
  CHECK(device.IsAccelerator());
  CHECK(device.compute_pool() == &pool);
  CHECK(device.tf_id() == 1);
  const DeviceAttributes& attributes = device.attributes();
  CHECK(attributes.device_type() == "GPU");
  CHECK(attributes.memory_limit() == 512 * kMiB);
  CHECK(attributes.incarnation() != 0);
  CHECK(attributes.physical_device_desc() ==
        "device: 1, name: dflow simulated GPU, pci bus id: sim:3, compute capability: 9.0 "
        "(simulated)");
  REQUIRE(device.parsed_name().type.has_value());
  CHECK(*device.parsed_name().type == "GPU");
  CHECK(*device.parsed_name().id == 1);

  CHECK(device.allocator()->Name() == "GPU_1_bfc");
  CHECK(device.allocator()->GetStats().bytes_limit == 512 * kMiB);
  REQUIRE(device.card_memory() != nullptr);
  CHECK(device.card_memory()->total_bytes() == static_cast<size_t>(1024 * kMiB));
}

TEST_CASE("compute_threads gives a simulated GPU compute of its own", "[sim_device]") {
  ThreadPool pool(2, "test");
  SECTION("0: the session's pool, shared with the host") {
    SimGpuDevice device(0, &pool, Options(64 * kMiB, 0));
    CHECK(device.compute_pool() == &pool);
  }
  SECTION("1: the compute stream alone (kernels run their loops inline)") {
    SimGpuOptions options = Options(64 * kMiB, 0);
    options.compute_threads = 1;
    SimGpuDevice device(0, &pool, options);
    CHECK(device.compute_pool() == nullptr);
  }
  SECTION("N: the compute stream and N - 1 threads of the card's own") {
    SimGpuOptions options = Options(64 * kMiB, 0);
    options.compute_threads = 3;
    SimGpuDevice device(0, &pool, options);
    REQUIRE(device.compute_pool() != nullptr);
    CHECK(device.compute_pool() != &pool);
    CHECK(device.compute_pool()->NumThreads() == 2);
    std::atomic<int64_t> sum{0};
    device.compute_pool()->ParallelFor(1000, 100000, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sum += i;
    });
    CHECK(sum.load() == 999 * 1000 / 2);
  }
  SECTION("out of range: clamped to [0, kMaxComputeThreads]") {
    SimGpuOptions options = Options(64 * kMiB, 0);
    options.compute_threads = 100000;
    SimGpuDevice device(0, &pool, options);
    CHECK(device.options().compute_threads == SimGpuOptions::kMaxComputeThreads);
    options.compute_threads = -4;
    SimGpuDevice shared(1, &pool, options);
    CHECK(shared.compute_pool() == &pool);
  }
}

TEST_CASE("Without a limit a simulated GPU may use its whole card", "[sim_device]") {
  ThreadPool pool(1, "test");
  SimGpuDevice device(0, &pool, Options(64 * kMiB, 0));
  CHECK(device.attributes().memory_limit() == 64 * kMiB);
  CHECK(device.allocator()->Name() == "GPU_0_bfc");
  CHECK(device.attributes().physical_device_desc() ==
        "device: 0, name: dflow simulated GPU, pci bus id: sim:0, compute capability: 9.0 "
        "(simulated)");
}

TEST_CASE("The BFC limit is honoured: allocations beyond it fail", "[sim_device]") {
  ThreadPool pool(1, "test");
  const bool growth = GENERATE(false, true);
  INFO("allow_growth " << growth);
  SimGpuDevice device(0, &pool, Options(64 * kMiB, 16 * kMiB, growth));
  BfcAllocator* allocator = device.allocator();

  CHECK(allocator->AllocateRaw(256, 17 * kMiB) == nullptr);
  void* a = allocator->AllocateRaw(256, 8 * kMiB);
  REQUIRE(a != nullptr);
  CHECK(allocator->AllocateRaw(256, 12 * kMiB) == nullptr);  // 8 + 12 > 16
  CHECK_FALSE(allocator->DescribeState().empty());
  void* b = allocator->AllocateRaw(256, 4 * kMiB);
  void* c = allocator->AllocateRaw(256, 4 * kMiB);
  REQUIRE(b != nullptr);
  REQUIRE(c != nullptr);
  CHECK(allocator->GetStats().bytes_in_use == 16 * kMiB);
  CHECK(allocator->AllocateRaw(256, 1 * kMiB) == nullptr);  // full
  CHECK(device.card_memory()->allocated_bytes() <= static_cast<size_t>(16 * kMiB));
  allocator->DeallocateRaw(a, 8 * kMiB);
  allocator->DeallocateRaw(b, 4 * kMiB);
  allocator->DeallocateRaw(c, 4 * kMiB);
  void* whole = allocator->AllocateRaw(256, 16 * kMiB);
  CHECK(whole != nullptr);
  if (whole != nullptr) allocator->DeallocateRaw(whole, 16 * kMiB);
}

TEST_CASE("The card's capacity bounds a limit larger than the card", "[sim_device]") {
  ThreadPool pool(1, "test");
  SimGpuDevice device(0, &pool, Options(8 * kMiB, 32 * kMiB, /*allow_growth=*/true));
  CHECK(device.attributes().memory_limit() == 32 * kMiB);
  CHECK(device.allocator()->AllocateRaw(256, 12 * kMiB) == nullptr);
  void* p = device.allocator()->AllocateRaw(256, 4 * kMiB);
  REQUIRE(p != nullptr);
  device.allocator()->DeallocateRaw(p, 4 * kMiB);
}

TEST_CASE("Logical GPUs of one card share its memory", "[sim_device]") {
  ThreadPool pool(1, "test");
  auto card = std::make_shared<HostSubAllocator>(16 * kMiB);
  SimGpuOptions options = Options(16 * kMiB, 12 * kMiB, /*allow_growth=*/true);
  options.card_memory = card;
  SimGpuDevice first(0, &pool, options);
  SimGpuDevice second(1, &pool, options);
  CHECK(first.card_memory() == card.get());
  CHECK(second.card_memory() == card.get());
  CHECK(second.attributes().physical_device_desc() ==
        "device: 1, name: dflow simulated GPU, pci bus id: sim:0, compute capability: 9.0 "
        "(simulated)");

  void* a = first.allocator()->AllocateRaw(256, 10 * kMiB);
  REQUIRE(a != nullptr);
  // Within the second device's own limit, but the card has only 6 MiB left.
  CHECK(second.allocator()->AllocateRaw(256, 10 * kMiB) == nullptr);
  void* b = second.allocator()->AllocateRaw(256, 2 * kMiB);
  REQUIRE(b != nullptr);
  first.allocator()->DeallocateRaw(a, 10 * kMiB);
  second.allocator()->DeallocateRaw(b, 2 * kMiB);
}

TEST_CASE("A simulated GPU has four streams of the right kinds that run work",
          "[sim_device]") {
  ThreadPool pool(1, "test");
  SimGpuOptions options = Options(64 * kMiB, 16 * kMiB);
  options.chaos_seed = GENERATE(0u, 7u);
  SimGpuDevice device(2, &pool, options);

  REQUIRE(device.compute_stream() != nullptr);
  REQUIRE(device.host_to_device_stream() != nullptr);
  REQUIRE(device.device_to_host_stream() != nullptr);
  REQUIRE(device.device_to_device_stream() != nullptr);
  CHECK(device.compute_stream()->kind() == Stream::Kind::kCompute);
  CHECK(device.host_to_device_stream()->kind() == Stream::Kind::kHostToDevice);
  CHECK(device.device_to_host_stream()->kind() == Stream::Kind::kDeviceToHost);
  CHECK(device.device_to_device_stream()->kind() == Stream::Kind::kDeviceToDevice);
  CHECK(device.compute_stream()->name() == "GPU:2/compute");
  CHECK(device.device_to_device_stream()->name() == "GPU:2/device_to_device");

  std::atomic<int> ran{0};
  for (Stream* stream : {static_cast<Stream*>(device.compute_stream()),
                         static_cast<Stream*>(device.host_to_device_stream()),
                         static_cast<Stream*>(device.device_to_host_stream()),
                         static_cast<Stream*>(device.device_to_device_stream())}) {
    REQUIRE(stream->EnqueueHostFunction([&ran] {
                    ran.fetch_add(1);
                    return absl::OkStatus();
                  }).ok());
  }
  REQUIRE(device.Sync().ok());
  CHECK(ran.load() == 4);

  // Host -> device -> device -> host through device memory, ordered by events.
  const size_t n = 1024;
  std::vector<float> host(n), back(n, 0.0f);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i) * 0.5f;
  void* d1 = device.allocator()->AllocateRaw(256, n * sizeof(float));
  void* d2 = device.allocator()->AllocateRaw(256, n * sizeof(float));
  REQUIRE(d1 != nullptr);
  REQUIRE(d2 != nullptr);
  REQUIRE(device.host_to_device_stream()->MemcpyHostToDevice(d1, host.data(), n * 4).ok());
  auto h2d_done = device.host_to_device_stream()->RecordEvent();
  REQUIRE(h2d_done.ok());
  REQUIRE(device.device_to_device_stream()->WaitFor(**h2d_done).ok());
  REQUIRE(device.device_to_device_stream()->MemcpyDeviceToDevice(d2, d1, n * 4).ok());
  auto d2d_done = device.device_to_device_stream()->RecordEvent();
  REQUIRE(d2d_done.ok());
  REQUIRE(device.device_to_host_stream()->WaitFor(**d2d_done).ok());
  REQUIRE(device.device_to_host_stream()->MemcpyDeviceToHost(back.data(), d2, n * 4).ok());
  REQUIRE(device.device_to_host_stream()->BlockHostUntilDone().ok());
  CHECK(back == host);
  device.allocator()->DeallocateRaw(d1, n * 4);
  device.allocator()->DeallocateRaw(d2, n * 4);
}

TEST_CASE("Sync reports a failed stream as GPU sync failed", "[sim_device]") {
  ThreadPool pool(1, "test");
  SimGpuDevice device(0, &pool, Options(8 * kMiB, 0));
  REQUIRE(device.compute_stream()
              ->EnqueueHostFunction([] { return absl::InternalError("kernel exploded"); })
              .ok());
  absl::Status status = device.Sync();
  CHECK(status.code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(status.message(), "GPU sync failed"));
  CHECK(absl::StrContains(status.message(), "kernel exploded"));
}

TEST_CASE("A simulated GPU destroyed with queued work drains its streams first",
          "[sim_device]") {
  ThreadPool pool(1, "test");
  std::atomic<int> ran{0};
  {
    SimGpuDevice device(0, &pool, Options(8 * kMiB, 0));
    void* p = device.allocator()->AllocateRaw(256, 1024);
    REQUIRE(p != nullptr);
    BfcAllocator* allocator = device.allocator();
    for (int i = 0; i < 20; ++i) {
      REQUIRE(device.compute_stream()->EnqueueHostFunction([&ran] {
        ran.fetch_add(1);
        return absl::OkStatus();
      }).ok());
    }
    // Memory released once the stream is done with it, as a kernel's output would be.
    REQUIRE(device.compute_stream()
                ->ThenExecute([allocator, p](const absl::Status&) {
                  allocator->DeallocateRaw(p, 1024);
                })
                .ok());
  }
  CHECK(ran.load() == 20);
}

}  // namespace
}  // namespace dflow::sim
