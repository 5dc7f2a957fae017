// LogSink: where a Session's messages for people go — log_device_placement's device
// mapping and per-node placement lines, and warnings (attrs a newer TensorFlow added,
// GPU options that cannot be honoured). TensorFlow prints them to stderr, and so does the
// default sink; a program that wants them elsewhere (its own log, a test) passes its own
// sink to NewSession.
//
// Thread-safety: a sink may be called from several threads at once (sessions, and Runs
// of one session, on many threads); implementations must allow that.
#ifndef DFLOW_SESSION_LOG_SINK_H_
#define DFLOW_SESSION_LOG_SINK_H_

#include <memory>

#include "absl/strings/string_view.h"

namespace dflow {

enum class LogKind {
  kDeviceMapping,  // "Device mapping:" and its lines, when a session is made
  kPlacement,      // "c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0" lines
  kWarning,        // "dflow: warning: ..."
};

class LogSink {
 public:
  virtual ~LogSink() = default;
  // `text` is one or more whole lines, each ending in '\n'.
  virtual void Write(LogKind kind, absl::string_view text) = 0;
};

// Writes to stderr and flushes, as TensorFlow's logging does. Shared, never destroyed.
std::shared_ptr<LogSink> StderrLogSink();

}  // namespace dflow

#endif  // DFLOW_SESSION_LOG_SINK_H_
