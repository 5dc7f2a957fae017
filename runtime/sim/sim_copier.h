// SimGpuCopier: the simulated GPU's DeviceCopier (runtime/device_copier.h), with exactly
// the stream ordering a CUDA copier has, so that a missing wait shows up on the sim
// (chaos mode varies completion order; see sim_options.h).
//
//  - device -> host: device_to_host stream, after an Event wait on the compute stream;
//  - host -> device: host_to_device stream, after an Event wait on the compute stream;
//  - device -> device: the sender's device_to_device stream, after Event waits on the
//    sender's and the receiver's compute streams (a peer copy), when CanAccessPeer;
//    otherwise staged through a host buffer from the process's CPU allocator (pinned
//    staging memory on CUDA): device -> host here, then host -> device on the receiver.
//  - completion: a ThenExecute callback on the copy stream, which holds Tensor references
//    to the source and destination until it has called `done` (buffer lifetime).
//
// Simulated faults (SimGpuOptions): the Nth copy fails half-way with a recoverable error
// naming the stream and byte count; copy_delay_micros slows every copy down.
//
// "Device memory" is host memory, so a copy is a memcpy on the stream's worker thread.
// Ownership: owned by its SimGpuDevice, which it borrows. Thread-safety: as DeviceCopier.
#ifndef DFLOW_RUNTIME_SIM_SIM_COPIER_H_
#define DFLOW_RUNTIME_SIM_SIM_COPIER_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "runtime/device_copier.h"
#include "runtime/sim/sim_stream.h"

namespace dflow::sim {

class SimGpuDevice;

class SimGpuCopier final : public DeviceCopier {
 public:
  // `device` owns the copier and outlives it.
  explicit SimGpuCopier(SimGpuDevice* device) : device_(device) {}

  // Whether a copy between this device and `other` may be a peer copy: always for
  // logical GPUs of the same simulated card, else when both allow peer access.
  bool CanAccessPeer(const SimGpuDevice& other) const;
  // Copies enqueued so far (every kind; a staged copy counts once here, once on the
  // receiver).
  int64_t copies_enqueued() const { return copies_.load(std::memory_order_relaxed); }

 private:
  void CopyDeviceToHostImpl(const Tensor& src, const Tensor& dst, StatusCallback done) override;
  void CopyHostToDeviceImpl(const Tensor& src, const Tensor& dst, StatusCallback done) override;
  void CopyDeviceToDeviceImpl(const Tensor& src, Device* dst_device, const Tensor& dst,
                              StatusCallback done) override;

  // Enqueues on `stream`: a wait for each of `producers` (Event recorded now), the copy,
  // and the completion callback that calls `done`. Calls `done` with the error (after the
  // stream has passed everything enqueued so far) when enqueueing fails.
  void Enqueue(SimStream* stream, const std::vector<SimStream*>& producers, const Tensor& src,
               const Tensor& dst, StatusCallback done);

  SimGpuDevice* const device_;
  std::atomic<int64_t> copies_{0};
};

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_COPIER_H_
