#include "session/session_limits.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

absl::Status Negative(const char* field, int64_t value) {
  return absl::InvalidArgumentError(absl::StrCat("ConfigProto dflow_limits.", field, " is ",
                                                 value, "; limits must be >= 0 (0: default)"));
}

}  // namespace

absl::StatusOr<SessionLimits> ResolveSessionLimits(const ConfigProto& config) {
  const DflowLimits& in = config.dflow_limits();
  if (in.max_nodes_after_inlining() < 0) {
    return Negative("max_nodes_after_inlining", in.max_nodes_after_inlining());
  }
  if (in.max_call_depth() < 0) return Negative("max_call_depth", in.max_call_depth());
  if (in.max_tensor_bytes() < 0) return Negative("max_tensor_bytes", in.max_tensor_bytes());
  if (in.max_host_bytes() < 0) return Negative("max_host_bytes", in.max_host_bytes());
  SessionLimits limits;
  if (in.max_nodes_after_inlining() > 0) {
    limits.inlining.max_nodes = in.max_nodes_after_inlining();
  }
  if (in.max_call_depth() > 0) limits.inlining.max_depth = in.max_call_depth();
  const int64_t physical = PhysicalMemoryBytes();
  limits.allocation.max_tensor_bytes = in.max_tensor_bytes() > 0 ? in.max_tensor_bytes() : physical;
  limits.allocation.max_host_bytes = in.max_host_bytes() > 0 ? in.max_host_bytes() : physical;
  return limits;
}

}  // namespace dflow
