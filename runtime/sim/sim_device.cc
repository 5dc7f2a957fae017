#include "runtime/sim/sim_device.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/sim/sim_copier.h"
#include "runtime/sim/sim_host_allocator.h"

namespace dflow::sim {
namespace {

// A BfcAllocator owns its sub-allocator; the card's memory is shared by every logical GPU
// carved from the card, so each one gets this forwarding handle.
class SharedCardMemory final : public SubAllocator {
 public:
  explicit SharedCardMemory(std::shared_ptr<HostSubAllocator> card) : card_(std::move(card)) {}
  void* Alloc(size_t bytes) override { return card_->Alloc(bytes); }
  void Free(void* ptr, size_t bytes) override { card_->Free(ptr, bytes); }
  size_t total_bytes() override { return card_->total_bytes(); }
  size_t free_bytes() override { return card_->free_bytes(); }

 private:
  const std::shared_ptr<HostSubAllocator> card_;
};

SimGpuOptions Normalized(SimGpuOptions options) {
  if (options.total_bytes <= 0) options.total_bytes = SimGpuOptions::kDefaultTotalBytes;
  if (options.memory_limit <= 0) options.memory_limit = options.total_bytes;
  options.compute_threads =
      std::clamp(options.compute_threads, 0, SimGpuOptions::kMaxComputeThreads);
  if (options.card_memory == nullptr) {
    options.card_memory =
        std::make_shared<HostSubAllocator>(static_cast<size_t>(options.total_bytes));
  }
  return options;
}

DeviceAttributes SimGpuAttributes(int tf_id, const SimGpuOptions& options) {
  DeviceAttributes attributes;
  attributes.set_name(FullDeviceName("GPU", tf_id));
  attributes.set_device_type("GPU");
  attributes.set_memory_limit(options.memory_limit);
  attributes.mutable_locality()->set_bus_id(1);
  attributes.set_physical_device_desc(
      absl::StrCat("device: ", tf_id, ", name: ", kSimGpuName, ", pci bus id: sim:",
                   options.physical_index, ", compute capability: 9.0 (simulated)"));
  return attributes;
}

std::unique_ptr<ThreadPool> OwnComputePool(int tf_id, const SimGpuOptions& options) {
  if (options.compute_threads < 2) return nullptr;
  return std::make_unique<ThreadPool>(options.compute_threads - 1,
                                      absl::StrCat("GPU:", tf_id, "/compute_pool"));
}

// The pool a card's kernels shard over (SimGpuDevice::compute_pool()).
ThreadPool* ComputePool(ThreadPool* session_pool, ThreadPool* own_pool,
                        const SimGpuOptions& options) {
  if (options.compute_threads == 0) return session_pool;
  return own_pool;  // null for one thread: the kernels run their loops inline
}

std::unique_ptr<SimStream> MakeStream(Stream::Kind kind, int tf_id, uint64_t chaos_seed) {
  SimStreamOptions stream_options;
  stream_options.chaos_seed = chaos_seed;
  return std::make_unique<SimStream>(
      kind, absl::StrCat("GPU:", tf_id, "/", StreamKindName(kind)), stream_options);
}

}  // namespace

SimGpuDevice::SimGpuDevice(int tf_id, ThreadPool* pool, SimGpuOptions options)
    : SimGpuDevice(tf_id, pool, Normalized(std::move(options)), 0) {}

SimGpuDevice::SimGpuDevice(int tf_id, ThreadPool* pool, SimGpuOptions options, int)
    : Device(SimGpuAttributes(tf_id, options)),
      tf_id_(tf_id),
      options_(std::move(options)),
      own_pool_(OwnComputePool(tf_id, options_)),
      pool_(ComputePool(pool, own_pool_.get(), options_)) {
  BfcOptions bfc;
  bfc.name = absl::StrCat("GPU_", tf_id, "_bfc");
  bfc.memory_limit = static_cast<size_t>(options_.memory_limit);
  bfc.allow_growth = options_.allow_growth;
  allocator_ = std::make_unique<BfcAllocator>(
      std::make_unique<SharedCardMemory>(options_.card_memory), std::move(bfc));
  compute_ = MakeStream(Stream::Kind::kCompute, tf_id, options_.chaos_seed);
  host_to_device_ = MakeStream(Stream::Kind::kHostToDevice, tf_id, options_.chaos_seed);
  device_to_host_ = MakeStream(Stream::Kind::kDeviceToHost, tf_id, options_.chaos_seed);
  device_to_device_ = MakeStream(Stream::Kind::kDeviceToDevice, tf_id, options_.chaos_seed);
  copier_ = std::make_unique<SimGpuCopier>(this);
}

DeviceCopier* SimGpuDevice::copier() { return copier_.get(); }

BfcAllocator* SimGpuDevice::host_allocator() { return ProcessSimHostAllocator(); }

SimGpuDevice::~SimGpuDevice() {
  // Streams first: their queued work may still use device memory.
  compute_.reset();
  host_to_device_.reset();
  device_to_host_.reset();
  device_to_device_.reset();
  // Variables before the memory their values live in.
  variables()->Clear();
  allocator_.reset();
}

absl::Status SimGpuDevice::Sync() {
  absl::Status first;
  for (SimStream* stream : {compute_.get(), host_to_device_.get(), device_to_host_.get(),
                            device_to_device_.get()}) {
    absl::Status status = stream->BlockHostUntilDone();
    if (!status.ok() && first.ok()) first = status;
  }
  if (first.ok()) return first;
  return absl::InternalError(absl::StrCat("GPU sync failed: ", first.message()));
}

}  // namespace dflow::sim
