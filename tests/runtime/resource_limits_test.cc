// The allocation limits a session hands its kernels (runtime/resource_limits.h).
#include "runtime/resource_limits.h"

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow {
namespace {

TEST_CASE("No limits allow any tensor", "[resource_limits]") {
  CpuAllocator allocator;
  CHECK(CheckAllocation({}, "n", "Fill", DT_FLOAT, TensorShape({1 << 20, 1 << 20}), allocator,
                        true).ok());
}

TEST_CASE("A tensor over max_tensor_bytes is RESOURCE_EXHAUSTED naming the node",
          "[resource_limits]") {
  CpuAllocator allocator;
  ResourceLimits limits;
  limits.max_tensor_bytes = 4000;
  CHECK(CheckAllocation(limits, "small", "Fill", DT_FLOAT, TensorShape({1000}), allocator, true)
            .ok());
  const absl::Status over =
      CheckAllocation(limits, "big", "Fill", DT_FLOAT, TensorShape({1001}), allocator, true);
  REQUIRE(over.code() == absl::StatusCode::kResourceExhausted);
  const std::string message(over.message());
  INFO(message);
  CHECK(absl::StrContains(message, "node 'big' (Fill) asks for a float tensor of shape [1001]"));
  CHECK(absl::StrContains(message, "(3.9 KiB)"));
  CHECK(absl::StrContains(message, "limit of 3.9 KiB"));
  CHECK(absl::StrContains(message, "dflow_limits { max_tensor_bytes }"));
  // Strings count their std::string objects; shapes past int64 bytes do not overflow.
  CHECK_FALSE(CheckAllocation(limits, "s", "Const", DT_STRING, TensorShape({200}), allocator,
                              true).ok());
  CHECK_FALSE(CheckAllocation(limits, "huge", "Fill", DT_DOUBLE,
                              TensorShape({int64_t{1} << 31, int64_t{1} << 31}), allocator, true)
                  .ok());
}

TEST_CASE("max_host_bytes counts the host allocator's live bytes", "[resource_limits]") {
  CpuAllocator allocator;
  ResourceLimits limits;
  limits.max_host_bytes = 10000;
  CHECK(CheckAllocation(limits, "a", "Fill", DT_FLOAT, TensorShape({2000}), allocator, true).ok());
  void* held = allocator.AllocateRaw(Allocator::kAlignment, 4096);
  const absl::Status over =
      CheckAllocation(limits, "b", "Fill", DT_FLOAT, TensorShape({2000}), allocator, true);
  CHECK(over.code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(over.message(), "of host memory in use would be"));
  CHECK(absl::StrContains(over.message(), "max_host_bytes"));
  // Device (non-host) allocations are bounded by the device's own allocator instead.
  CHECK(CheckAllocation(limits, "b", "Fill", DT_FLOAT, TensorShape({2000}), allocator, false)
            .ok());
  allocator.DeallocateRaw(held, 4096);
  CHECK(CheckAllocation(limits, "b", "Fill", DT_FLOAT, TensorShape({2000}), allocator, true).ok());
}

TEST_CASE("The machine's physical memory is known", "[resource_limits]") {
  CHECK(PhysicalMemoryBytes() > (int64_t{64} << 20));
}

}  // namespace
}  // namespace dflow
