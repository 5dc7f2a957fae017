#include "runtime/cuda/gpu_selection.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow::cuda {
namespace {

using Ordinals = std::vector<int>;

Ordinals Used(const GPUOptions& options, std::optional<int> device_count, int physical) {
  absl::StatusOr<Ordinals> used = UsedPhysicalGpus(options, device_count, physical);
  INFO(used.status().ToString());
  REQUIRE(used.ok());
  return *used;
}

TEST_CASE("Without options every physical GPU is used", "[runtime][gpu_selection]") {
  CHECK(Used({}, std::nullopt, 4) == Ordinals{0, 1, 2, 3});
  CHECK(Used({}, std::nullopt, 0).empty());
}

TEST_CASE("visible_device_list leaves the other GPUs untouched", "[runtime][gpu_selection]") {
  GPUOptions options;
  options.set_visible_device_list("3,1");
  CHECK(Used(options, std::nullopt, 4) == Ordinals{1, 3});
  // device_count keeps the lowest TF ids: GPU:0 is physical 3.
  CHECK(Used(options, 1, 4) == Ordinals{3});
  CHECK(Used(options, 0, 4).empty());
  CHECK(Used({}, 2, 8) == Ordinals{0, 1});
}

TEST_CASE("Virtual devices on one GPU use that GPU once", "[runtime][gpu_selection]") {
  GPUOptions options;
  options.set_visible_device_list("2");
  auto* virtual_devices = options.mutable_experimental()->add_virtual_devices();
  virtual_devices->add_memory_limit_mb(1024);
  virtual_devices->add_memory_limit_mb(2048);
  CHECK(Used(options, std::nullopt, 3) == Ordinals{2});
  CHECK(Used(options, 1, 3) == Ordinals{2});
}

TEST_CASE("Bad gpu_options are errors before any GPU is touched", "[runtime][gpu_selection]") {
  GPUOptions options;
  options.set_visible_device_list("4");
  absl::StatusOr<Ordinals> used = UsedPhysicalGpus(options, std::nullopt, 4);
  REQUIRE(used.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(used.status().message(), "visible_device_list"));
  CHECK(UsedPhysicalGpus({}, -1, 4).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow::cuda
