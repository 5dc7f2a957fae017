// SessionLimits: ConfigProto's `dflow_limits` resolved to what each layer enforces:
// the function inliner's node and depth budget (graph/function_inliner.h) and the
// kernels' allocation limits (runtime/resource_limits.h). docs/LIMITS.md lists them.
#ifndef DFLOW_SESSION_SESSION_LIMITS_H_
#define DFLOW_SESSION_SESSION_LIMITS_H_

#include "absl/status/statusor.h"
#include "graph/function_inliner.h"
#include "proto/config.pb.h"
#include "runtime/resource_limits.h"

namespace dflow {

struct SessionLimits {
  InlineLimits inlining;
  ResourceLimits allocation;
};

// The limits of `config` with every 0 replaced by its default. INVALID_ARGUMENT naming
// the field for negative values.
absl::StatusOr<SessionLimits> ResolveSessionLimits(const ConfigProto& config);

}  // namespace dflow

#endif  // DFLOW_SESSION_SESSION_LIMITS_H_
