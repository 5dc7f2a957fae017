// Stream rows of a step's trace: what each accelerator stream ran, for which node, and
// when (RunOptions FULL_TRACE; `dflow trace` shows them as rows of their own).
//
// The executor opens a ScopedStreamTrace around a traced node's kernel. Work the kernel
// enqueues on any Stream from that thread (host functions, copies, callbacks) is then
// timed when the stream runs it, and reported to the sink with the node's name. Off
// (no ScopedStreamTrace), a stream does nothing extra.
#ifndef DFLOW_RUNTIME_STREAM_TRACE_H_
#define DFLOW_RUNTIME_STREAM_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>

namespace dflow {

// One piece of work a stream ran, in host-clock nanoseconds.
struct StreamActivity {
  std::string stream;  // Stream::name()
  std::string kind;    // "compute", "host_to_device", ... (StreamKindName)
  std::string node;    // the node whose kernel enqueued it
  std::string what;    // "kernel", "memcpy", "callback"
  int64_t bytes = 0;   // copies: their size
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Receives activities from stream threads: must be thread-safe. Held by shared_ptr by
// the work it traces, so work finishing late never reports to a freed sink.
class StreamTraceSink {
 public:
  virtual ~StreamTraceSink() = default;
  virtual void Record(StreamActivity activity) = 0;
};

// Work timed by hand: a kernel that calls `done` from inside a stream callback must
// report before `done` (the step may end then), so it brackets its own compute.
struct PendingActivity {
  std::shared_ptr<StreamTraceSink> sink;
  StreamActivity activity;

  void Begin();
  void End();  // records
};

// While alive, work this thread enqueues on streams is traced to `sink` as `node`'s (a
// null sink traces nothing).
class ScopedStreamTrace {
 public:
  ScopedStreamTrace(std::shared_ptr<StreamTraceSink> sink, std::string node);
  ~ScopedStreamTrace();
  ScopedStreamTrace(const ScopedStreamTrace&) = delete;
  ScopedStreamTrace& operator=(const ScopedStreamTrace&) = delete;

  // The innermost trace open on this thread, or null.
  static const ScopedStreamTrace* Current();

  const std::shared_ptr<StreamTraceSink>& sink() const { return sink_; }
  const std::string& node() const { return node_; }

 private:
  std::shared_ptr<StreamTraceSink> sink_;
  std::string node_;
  const ScopedStreamTrace* outer_;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_STREAM_TRACE_H_
