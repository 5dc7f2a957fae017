#include "runtime/resource_limits.h"

#include <unistd.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dflow {
namespace {

std::string HumanBytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? absl::StrCat(static_cast<int64_t>(bytes), " bytes")
                   : absl::StrFormat("%.1f %s", bytes, units[unit]);
}

// The tensor's bytes as a double (no overflow for any valid shape).
double TensorBytes(DataType dtype, const TensorShape& shape) {
  const size_t element = dtype == DT_STRING ? sizeof(std::string) : DataTypeSize(dtype);
  return static_cast<double>(shape.num_elements()) * static_cast<double>(element);
}

absl::Status OverLimit(const std::string& node, const std::string& op, DataType dtype,
                       const TensorShape& shape, double bytes, const std::string& what,
                       int64_t limit, const char* field) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "node '", node, "' (", op, ") asks for a ", DataTypeString(dtype), " tensor of shape ",
      shape.DebugString(), " (", HumanBytes(bytes), "), ", what, " over this session's limit ",
      "of ", HumanBytes(static_cast<double>(limit)), " (ConfigProto dflow_limits { ", field,
      " } raises it; docs/LIMITS.md)"));
}

}  // namespace

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
}

absl::Status CheckAllocation(const ResourceLimits& limits, const std::string& node,
                             const std::string& op, DataType dtype, const TensorShape& shape,
                             const Allocator& allocator, bool host, double string_bytes) {
  if (limits.max_tensor_bytes <= 0 && (limits.max_host_bytes <= 0 || !host)) {
    return absl::OkStatus();
  }
  const double bytes = TensorBytes(dtype, shape) + string_bytes;
  if (limits.max_tensor_bytes > 0 && bytes > static_cast<double>(limits.max_tensor_bytes)) {
    return OverLimit(node, op, dtype, shape, bytes, "which is", limits.max_tensor_bytes,
                     "max_tensor_bytes");
  }
  if (host && limits.max_host_bytes > 0) {
    const double in_use = static_cast<double>(allocator.GetStats().bytes_in_use);
    if (in_use + bytes > static_cast<double>(limits.max_host_bytes)) {
      return OverLimit(node, op, dtype, shape, bytes,
                       absl::StrCat("which with the ", HumanBytes(in_use),
                                    " of host memory in use would be"),
                       limits.max_host_bytes, "max_host_bytes");
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
