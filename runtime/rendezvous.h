// Rendezvous: where a step's _Send and _Recv kernels meet (TF's IntraProcessRendezvous).
//
// One Rendezvous per step, shared by all partitions of that step. Each key holds a FIFO:
// a Send with no waiting Recv is stored, a Recv with no value waits. Abort (the step's
// first error, a timeout, Close) fails every pending and future Recv/Send with the abort
// status, so blocked partitions wake up and drain.
//
// Thread-safety: all methods may be called concurrently.
#ifndef DFLOW_RUNTIME_RENDEZVOUS_H_
#define DFLOW_RUNTIME_RENDEZVOUS_H_

#include <deque>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {

class Rendezvous {
 public:
  // Called exactly once per RecvAsync: with the value (and its dead bit), or an error.
  using DoneCallback = std::function<void(const absl::Status&, const Tensor&, bool is_dead)>;
  // RecvAsyncFrom's callback: also the device whose memory holds the value's bytes, as the
  // sender published it; null means host memory. A receiver whose device cannot read
  // that memory directly copies through producer->copier() (device_copier.h), which
  // orders the copy after the producer's stream work (TF passes the sender's
  // DeviceContext the same way).
  using FromDeviceCallback =
      std::function<void(const absl::Status&, const Tensor&, bool is_dead, Device* producer)>;

  Rendezvous() = default;
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // TF's key: "<send_device>;<incarnation as 16 hex>;<recv_device>;<name>;<frame>:<iter>".
  static std::string CreateKey(absl::string_view send_device, uint64_t incarnation,
                               absl::string_view recv_device, absl::string_view tensor_name,
                               FrameAndIter frame_iter);

  // The abort status once aborted; a value is never delivered twice. `producer` (borrowed,
  // outlives the step): the device whose memory holds `value`; null for host memory.
  absl::Status Send(const std::string& key, const Tensor& value, bool is_dead,
                    Device* producer = nullptr);
  // `done` may run on this thread (value already there) or on the sender's thread.
  void RecvAsync(const std::string& key, DoneCallback done);
  void RecvAsyncFrom(const std::string& key, FromDeviceCallback done);
  // Fails all pending and future operations with `status` (first abort wins).
  void StartAbort(const absl::Status& status);
  absl::Status status() const;

 private:
  struct Item {
    Tensor value;
    bool is_dead = false;
    Device* producer = nullptr;
    FromDeviceCallback waiter;  // set for a waiting Recv, empty for a stored value
  };

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::deque<Item>> table_ ABSL_GUARDED_BY(mu_);
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_RENDEZVOUS_H_
