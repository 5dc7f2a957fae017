// SimGpuDevice: a simulated GPU, named, limited and laid out exactly like a CUDA GPU
// (DFLOW_SIMULATED_GPUS, docs/CLI.md; the backend: runtime/sim/README.md).
//
//  - type "GPU", name /job:localhost/replica:0/task:0/device:GPU:<tf_id>, an accelerator;
//  - memory: a BfcAllocator named GPU_<tf_id>_bfc whose limit is the logical GPU's limit,
//    over host memory standing in for the card's memory (a HostSubAllocator with the card's
//    total as capacity, shared by all logical GPUs carved from one simulated card);
//  - four SimStreams: compute, host_to_device, device_to_host, device_to_device;
//  - host_allocator(): ProcessSimHostAllocator(), like a CUDA GPU's pinned host memory;
//  - copier(): a SimGpuCopier (sim_copier.h) copying on those streams with TF's ordering;
//  - compute_pool(): where its kernels shard their loops. By default the session's pool
//    (borrowed), shared with the CPU and every other simulated GPU; with
//    SimGpuOptions::compute_threads = N >= 1 the card computes on its own, as a real one
//    does: its compute stream's thread alone (N = 1: no pool) or with a pool of N - 1
//    threads of its own, so that two GPUs compute side by side instead of taking turns
//    on the host's cores (the multi-GPU speed experiments of issue 13);
//  - DeviceAttributes: memory_limit = the BFC limit, physical_device_desc
//    "device: <tf_id>, name: dflow simulated GPU, pci bus id: sim:<physical index>,
//     compute capability: 9.0 (simulated)".
//
// Destruction: the streams drain and join first, then the allocator returns its regions.
// REQUIRES: no tensor allocated from allocator() outlives the device.
// Thread-safety: as Device; the streams and the allocator are thread-safe.
#ifndef DFLOW_RUNTIME_SIM_SIM_DEVICE_H_
#define DFLOW_RUNTIME_SIM_SIM_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "runtime/bfc_allocator.h"
#include "runtime/device.h"
#include "runtime/device_copier.h"
#include "runtime/sim/sim_stream.h"
#include "runtime/sub_allocator.h"
#include "runtime/thread_pool.h"

namespace dflow::sim {

// The physical name every simulated card reports.
inline constexpr char kSimGpuName[] = "dflow simulated GPU";

struct SimGpuOptions {
  static constexpr int64_t kDefaultTotalBytes = int64_t{16384} << 20;

  // Which simulated card this logical GPU lives on (pci bus id "sim:<index>").
  int physical_index = 0;
  // The card's memory. Used for the capacity of a private HostSubAllocator when
  // `card_memory` is null.
  int64_t total_bytes = kDefaultTotalBytes;
  // The BFC limit (bytes); <= 0 means total_bytes.
  int64_t memory_limit = 0;
  bool allow_growth = false;
  // SimStreamOptions::chaos_seed for all four streams (0: no delays).
  uint64_t chaos_seed = 0;
  // The card's memory, shared by the logical GPUs of one card (virtual devices). Null: the
  // device makes its own HostSubAllocator of capacity total_bytes.
  std::shared_ptr<HostSubAllocator> card_memory;
  // Copies (SimGpuCopier, sim_copier.h):
  //  - peer_access: whether this GPU can copy directly to and from GPUs on other simulated
  //    cards (logical GPUs of one card always can). A copy between two GPUs takes the
  //    peer path only when both allow it; otherwise it is staged through host memory.
  bool peer_access = true;
  //  - fail_copy_number N >= 1: the Nth copy this GPU's copier enqueues (counting from 1,
  //    every kind) copies only half its bytes and then reports `injected_copy_fault`
  //    through its completion callback. The stream itself does not fail, so later copies
  //    and steps work (a recoverable copy error, unlike SimStreamOptions' sticky fault).
  int64_t fail_copy_number = 0;
  absl::Status injected_copy_fault =
      absl::InternalError("injected copy fault (SimGpuOptions.fail_copy_number)");
  //  - copy_delay_micros: every copy takes at least this long on its stream (a slow bus),
  //    for timeouts that must strike while a copy is in flight.
  int64_t copy_delay_micros = 0;
  // Threads the card computes with (see compute_pool() above): 0 = the session's pool;
  // N in [1, kMaxComputeThreads] = its compute stream plus N - 1 threads of its own.
  static constexpr int kMaxComputeThreads = 256;
  int compute_threads = 0;
};

class SimGpuDevice final : public Device {
 public:
  // `pool` is borrowed and must outlive the device. REQUIRES: tf_id >= 0.
  SimGpuDevice(int tf_id, ThreadPool* pool, SimGpuOptions options);
  ~SimGpuDevice() override;

  BfcAllocator* allocator() override { return allocator_.get(); }
  ThreadPool* compute_pool() override { return pool_; }  // may be null: run inline
  bool IsAccelerator() const override { return true; }
  DeviceCopier* copier() override;
  // ProcessSimHostAllocator() (sim_host_allocator.h): the stand-in for pinned host memory.
  BfcAllocator* host_allocator() override;
  // Waits for every stream; returns the first stream error (INTERNAL "GPU sync failed: ...").
  absl::Status Sync() override;

  SimStream* compute_stream() { return compute_.get(); }
  SimStream* host_to_device_stream() { return host_to_device_.get(); }
  SimStream* device_to_host_stream() { return device_to_host_.get(); }
  SimStream* device_to_device_stream() { return device_to_device_.get(); }

  int tf_id() const { return tf_id_; }
  const SimGpuOptions& options() const { return options_; }
  // The simulated card's memory (shared with other logical GPUs of the same card).
  HostSubAllocator* card_memory() const { return options_.card_memory.get(); }

 private:
  // `options` already normalized (limit and card memory set).
  SimGpuDevice(int tf_id, ThreadPool* pool, SimGpuOptions options, int);

  const int tf_id_;
  const SimGpuOptions options_;  // card_memory always set
  // The card's own helper threads (compute_threads >= 2); destroyed after the streams,
  // whose kernels use them.
  std::unique_ptr<ThreadPool> own_pool_;
  // The session's pool, own_pool_, or null (compute_threads == 1).
  ThreadPool* const pool_;
  // Declared before the streams so that the streams (whose queued work may free memory)
  // are destroyed first.
  std::unique_ptr<BfcAllocator> allocator_;
  std::unique_ptr<SimStream> compute_;
  std::unique_ptr<SimStream> host_to_device_;
  std::unique_ptr<SimStream> device_to_host_;
  std::unique_ptr<SimStream> device_to_device_;
  // After the streams: destroyed first, though it holds no queued work of its own.
  std::unique_ptr<DeviceCopier> copier_;
};

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_DEVICE_H_
