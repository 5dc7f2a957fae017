#include "runtime/stream_trace.h"

#include <utility>

#include "absl/time/clock.h"

namespace dflow {
namespace {

thread_local const ScopedStreamTrace* current_trace = nullptr;

}  // namespace

void PendingActivity::Begin() { activity.start_ns = absl::GetCurrentTimeNanos(); }

void PendingActivity::End() {
  activity.end_ns = absl::GetCurrentTimeNanos();
  sink->Record(activity);
}

ScopedStreamTrace::ScopedStreamTrace(std::shared_ptr<StreamTraceSink> sink, std::string node)
    : sink_(std::move(sink)), node_(std::move(node)), outer_(current_trace) {
  if (sink_ != nullptr) current_trace = this;
}

ScopedStreamTrace::~ScopedStreamTrace() {
  if (sink_ != nullptr) current_trace = outer_;
}

const ScopedStreamTrace* ScopedStreamTrace::Current() { return current_trace; }

}  // namespace dflow
