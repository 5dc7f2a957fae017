// Event: a point in a Stream's queue. Recorded on one stream; another stream can wait
// for it on the device (Stream::WaitFor) and the host can wait for it (HostWait).
//
// Thread-safety: all methods may be called from any thread.
#ifndef DFLOW_RUNTIME_EVENT_H_
#define DFLOW_RUNTIME_EVENT_H_

#include "absl/status/status.h"

namespace dflow {

class Event {
 public:
  virtual ~Event() = default;
  // True once all work enqueued on the recording stream before the event has finished.
  virtual bool IsComplete() const = 0;
  // Blocks the calling thread until IsComplete(); returns the recording stream's error
  // if its work failed.
  virtual absl::Status HostWait() = 0;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_EVENT_H_
