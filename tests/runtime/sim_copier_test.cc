// SimGpuCopier (runtime/sim/sim_copier.h): stream ordering of device<->host and
// device<->device copies, buffer lifetime while a copy is in flight (a tiny allocator that
// would hand the buffer out again), peer versus host-staged GPU copies, injected faults.
//
// Conventions: memory is declared before the devices whose streams use it, gates after
// them, so that on a failed REQUIRE the gates open first and the streams drain before
// the memory goes. Callbacks only record what they saw; the test thread checks it.
#include "runtime/sim/sim_copier.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "runtime/allocator.h"
#include "runtime/sim/sim_device.h"
#include "runtime/thread_pool.h"

namespace dflow::sim {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

SimGpuOptions SmallGpu(int physical_index, int64_t total = 64 * kMiB) {
  SimGpuOptions options;
  options.physical_index = physical_index;
  options.total_bytes = total;
  return options;
}

Tensor HostTensor(int64_t n, float value = 0.f) {
  Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({n}));
  for (float& x : t.flat<float>()) x = value;
  return t;
}

Tensor DeviceTensor(SimGpuDevice& device, int64_t n) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(device.allocator(), DT_FLOAT, TensorShape({n}));
  REQUIRE(t.ok());
  return *std::move(t);
}

bool AllEqual(const Tensor& t, float value) {
  for (float x : t.flat<float>()) {
    if (x != value) return false;
  }
  return true;
}

// The result of one copy, filled in by its completion callback.
struct CopyResult {
  absl::Notification done;
  absl::Status status;
  DeviceCopier::StatusCallback Callback() {
    return [this](const absl::Status& s) {
      status = s;
      done.Notify();
    };
  }
  absl::Status Wait() {
    done.WaitForNotification();
    return status;
  }
};

// Blocks `stream` (on its worker) until Open(). The worker shares the notification: it
// may still be inside WaitForNotification when the gate is destroyed (found by TSan).
class StreamGate {
 public:
  explicit StreamGate(Stream* stream) {
    REQUIRE(stream->EnqueueHostFunction([open = open_] {
                      open->WaitForNotification();
                      return absl::OkStatus();
                    }).ok());
  }
  ~StreamGate() { Open(); }
  void Open() {
    if (!open_->HasBeenNotified()) open_->Notify();
  }

 private:
  std::shared_ptr<absl::Notification> open_ = std::make_shared<absl::Notification>();
};

TEST_CASE("Device-to-host waits on the device for compute work queued before it",
          "[sim_copier]") {
  ThreadPool pool(1, "test");
  SimGpuDevice gpu(0, &pool, SmallGpu(0));
  Tensor src = DeviceTensor(gpu, 1024);
  Tensor host = HostTensor(1024);
  CopyResult result;
  {
    StreamGate compute_busy(gpu.compute_stream());
    // The "kernel" producing src, queued on the compute stream behind the gate.
    REQUIRE(gpu.compute_stream()->EnqueueHostFunction([src] {
                  for (float& x : src.flat<float>()) x = 7.f;
                  return absl::OkStatus();
                }).ok());
    gpu.copier()->CopyDeviceToHost(src, host, result.Callback());
    // The host was not blocked, and the copy has not run ahead of the producer.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(result.done.HasBeenNotified());
  }
  REQUIRE(result.Wait().ok());
  CHECK(AllEqual(host, 7.f));
  CHECK(static_cast<SimGpuCopier*>(gpu.copier())->copies_enqueued() == 1);
}

TEST_CASE("Host-to-device waits for the compute stream before writing the fresh buffer",
          "[sim_copier]") {
  ThreadPool pool(1, "test");
  SimGpuDevice gpu(0, &pool, SmallGpu(0));
  Tensor dst = DeviceTensor(gpu, 256);
  for (float& x : dst.flat<float>()) x = 1.f;
  Tensor host = HostTensor(256, 5.f);
  float seen_by_compute = 0.f;
  CopyResult result;
  {
    StreamGate compute_busy(gpu.compute_stream());
    // Earlier compute work still reading the buffer's previous contents.
    REQUIRE(gpu.compute_stream()->EnqueueHostFunction([dst, &seen_by_compute] {
                  seen_by_compute = dst.flat<float>()[0];
                  return absl::OkStatus();
                }).ok());
    gpu.copier()->CopyHostToDevice(host, dst, result.Callback());
  }
  REQUIRE(result.Wait().ok());
  CHECK(seen_by_compute == 1.f);  // the copy did not overwrite it early
  CHECK(AllEqual(dst, 5.f));
}

TEST_CASE("A buffer in flight is not returned to the allocator until its copy is done",
          "[sim_copier][lifetime]") {
  ThreadPool pool(1, "test");
  // Room for one 600 KiB buffer, not two: a second allocation could only reuse the first.
  SimGpuOptions options = SmallGpu(0, kMiB);
  options.memory_limit = kMiB;
  SimGpuDevice gpu(0, &pool, options);
  const int64_t n = 600 * 1024 / 4;
  Tensor host = HostTensor(n);
  CopyResult result;
  {
    Tensor src = DeviceTensor(gpu, n);
    for (float& x : src.flat<float>()) x = 3.f;
    StreamGate d2h_busy(gpu.device_to_host_stream());
    gpu.copier()->CopyDeviceToHost(src, host, result.Callback());
    src = Tensor();  // the caller lets go while the copy is still queued
    absl::StatusOr<Tensor> reuse = Tensor::Allocate(gpu.allocator(), DT_FLOAT, TensorShape({n}));
    INFO(reuse.status().ToString());
    CHECK(reuse.status().code() == absl::StatusCode::kResourceExhausted);
  }
  REQUIRE(result.Wait().ok());
  CHECK(AllEqual(host, 3.f));
  // The copier has let go now (the callback ran after the copy): the memory is free again.
  absl::StatusOr<Tensor> after = Tensor::Allocate(gpu.allocator(), DT_FLOAT, TensorShape({n}));
  CHECK(after.ok());
}

TEST_CASE("Chaos ordering: every copy sees its own producer's data although buffers recycle",
          "[sim_copier][lifetime][chaos]") {
  const uint64_t seed = GENERATE(1, 2, 3, 4);
  INFO("chaos seed " << seed);
  ThreadPool pool(1, "test");
  SimGpuOptions options = SmallGpu(0, kMiB);
  options.memory_limit = kMiB;  // two 300 KiB buffers at a time
  options.chaos_seed = seed;
  SimGpuDevice gpu(0, &pool, options);
  const int64_t n = 300 * 1024 / 4;
  constexpr int kCopies = 12;
  std::vector<Tensor> hosts;
  std::vector<std::unique_ptr<CopyResult>> results;
  for (int i = 0; i < kCopies; ++i) {
    absl::StatusOr<Tensor> src = Tensor::Allocate(gpu.allocator(), DT_FLOAT, TensorShape({n}));
    while (!src.ok()) {  // both buffers still in flight: wait for a copy to let go
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      src = Tensor::Allocate(gpu.allocator(), DT_FLOAT, TensorShape({n}));
    }
    const float value = static_cast<float>(i + 1);
    REQUIRE(gpu.compute_stream()->EnqueueHostFunction([t = *src, value] {
                  for (float& x : t.flat<float>()) x = value;
                  return absl::OkStatus();
                }).ok());
    hosts.push_back(HostTensor(n));
    results.push_back(std::make_unique<CopyResult>());
    gpu.copier()->CopyDeviceToHost(*src, hosts.back(), results.back()->Callback());
  }
  for (int i = 0; i < kCopies; ++i) {
    INFO("copy " << i);
    REQUIRE(results[i]->Wait().ok());
    CHECK(AllEqual(hosts[i], static_cast<float>(i + 1)));
  }
}

TEST_CASE("GPU to GPU: a peer copy on the sender's d2d stream, else staged through the host",
          "[sim_copier][d2d]") {
  ThreadPool pool(1, "test");
  const bool peer = GENERATE(true, false);
  INFO("peer access " << peer);
  SimGpuOptions sender_options = SmallGpu(0);
  sender_options.peer_access = peer;
  SimGpuDevice sender(0, &pool, sender_options);
  SimGpuDevice receiver(1, &pool, SmallGpu(1));
  auto* sender_copier = static_cast<SimGpuCopier*>(sender.copier());
  auto* receiver_copier = static_cast<SimGpuCopier*>(receiver.copier());
  CHECK(sender_copier->CanAccessPeer(receiver) == peer);

  Tensor src = DeviceTensor(sender, 4096);
  for (float& x : src.flat<float>()) x = 9.f;
  Tensor dst = DeviceTensor(receiver, 4096);
  CopyResult result;
  {
    // The receiver's compute stream may still use the fresh buffer's old contents.
    StreamGate receiver_busy(receiver.compute_stream());
    sender.copier()->CopyDeviceToDevice(src, &receiver, dst, result.Callback());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(result.done.HasBeenNotified());
  }
  REQUIRE(result.Wait().ok());
  // `done` has run, but the sender's stream may still hold `dst` (the receiver's memory)
  // until its callback returns; drain it before the receiver, declared later, goes first.
  REQUIRE(sender.Sync().ok());
  CHECK(AllEqual(dst, 9.f));
  // Peer: one copy, on the sender. Staged: device->host on the sender, host->device on
  // the receiver.
  CHECK(sender_copier->copies_enqueued() == 1);
  CHECK(receiver_copier->copies_enqueued() == (peer ? 0 : 1));
}

TEST_CASE("Logical GPUs of one card are always peers", "[sim_copier][d2d]") {
  ThreadPool pool(1, "test");
  SimGpuOptions a = SmallGpu(0);
  a.peer_access = false;
  a.card_memory = std::make_shared<HostSubAllocator>(static_cast<size_t>(64 * kMiB));
  SimGpuOptions b = a;
  SimGpuDevice gpu0(0, &pool, a);
  SimGpuDevice gpu1(1, &pool, b);
  CHECK(static_cast<SimGpuCopier*>(gpu0.copier())->CanAccessPeer(gpu1));
  SimGpuDevice other_card(2, &pool, SmallGpu(1));
  CHECK_FALSE(static_cast<SimGpuCopier*>(gpu0.copier())->CanAccessPeer(other_card));
}

TEST_CASE("An injected copy fault fails that copy half-way; the next copy works",
          "[sim_copier][fault]") {
  ThreadPool pool(1, "test");
  SimGpuOptions options = SmallGpu(0);
  options.fail_copy_number = 1;
  SimGpuDevice gpu(0, &pool, options);
  Tensor src = DeviceTensor(gpu, 1000);
  for (float& x : src.flat<float>()) x = 4.f;
  Tensor host = HostTensor(1000, 0.f);
  CopyResult failed;
  gpu.copier()->CopyDeviceToHost(src, host, failed.Callback());
  absl::Status status = failed.Wait();
  INFO(status.ToString());
  CHECK(status.code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(status.message(), "injected copy fault"));
  CHECK(absl::StrContains(status.message(), "GPU:0/device_to_host copy of 4000 bytes"));
  CHECK(host.flat<float>()[0] == 4.f);    // the first half arrived
  CHECK(host.flat<float>()[999] == 0.f);  // the second did not
  CHECK(gpu.device_to_host_stream()->status().ok());  // not a sticky device error

  CopyResult retried;
  gpu.copier()->CopyDeviceToHost(src, host, retried.Callback());
  REQUIRE(retried.Wait().ok());
  CHECK(AllEqual(host, 4.f));
}

TEST_CASE("Copies of mismatched or empty tensors complete at once", "[sim_copier]") {
  ThreadPool pool(1, "test");
  SimGpuDevice gpu(0, &pool, SmallGpu(0));
  Tensor src = DeviceTensor(gpu, 8);
  CopyResult mismatched;
  gpu.copier()->CopyDeviceToHost(src, HostTensor(9), mismatched.Callback());
  REQUIRE(mismatched.done.HasBeenNotified());
  CHECK(mismatched.status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(mismatched.status.message(), "[8]"));
  CopyResult to_cpu;
  CpuDevice cpu(0, ProcessCpuAllocator(), &pool);
  gpu.copier()->CopyDeviceToDevice(src, &cpu, HostTensor(8), to_cpu.Callback());
  REQUIRE(to_cpu.done.HasBeenNotified());
  CHECK(to_cpu.status.code() == absl::StatusCode::kInvalidArgument);
  CopyResult empty;
  gpu.copier()->CopyDeviceToHost(DeviceTensor(gpu, 0), HostTensor(0), empty.Callback());
  REQUIRE(empty.done.HasBeenNotified());
  CHECK(empty.status.ok());
  CHECK(static_cast<SimGpuCopier*>(gpu.copier())->copies_enqueued() == 0);
}

}  // namespace
}  // namespace dflow::sim
