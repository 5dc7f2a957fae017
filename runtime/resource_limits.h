// ResourceLimits: what a session lets one graph's kernels allocate, so that a graph from
// an untrusted source ends with a clear RESOURCE_EXHAUSTED naming the node instead of
// taking the machine's memory (issue 15; docs/LIMITS.md lists every limit).
//
// The session fills them from ConfigProto's `dflow_limits` (0 keeps the default, which
// is the machine's physical memory for both: an allocation that could never be backed
// fails up front instead of being overcommitted and killed later) and hands them to
// every kernel through OpKernelContext, which checks each output and temporary before
// allocating it.
//
// Thread-safety: immutable once the session is created.
#ifndef DFLOW_RUNTIME_RESOURCE_LIMITS_H_
#define DFLOW_RUNTIME_RESOURCE_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

struct ResourceLimits {
  // Bytes of one tensor a kernel allocates. 0: no limit.
  int64_t max_tensor_bytes = 0;
  // Live bytes of host (CPU) memory the process's CPU allocator may hold after an
  // allocation by one of the session's kernels. 0: no limit.
  int64_t max_host_bytes = 0;
};

// The machine's physical memory in bytes (the defaults), or 0 when unknown.
int64_t PhysicalMemoryBytes();

// OK when a tensor of `dtype` and `shape` from `allocator` fits `limits`, else
// RESOURCE_EXHAUSTED naming `node` (its name and op), the tensor, the limit and the
// ConfigProto field that raises it. `host`: the allocator hands out host memory (its
// live bytes count against max_host_bytes). `string_bytes`: for a string tensor, the
// characters its elements will hold (they live outside the allocator, so a kernel that
// replicates or grows strings says how many before making them).
absl::Status CheckAllocation(const ResourceLimits& limits, const std::string& node,
                             const std::string& op, DataType dtype, const TensorShape& shape,
                             const Allocator& allocator, bool host, double string_bytes = 0);

}  // namespace dflow

#endif  // DFLOW_RUNTIME_RESOURCE_LIMITS_H_
