// The device backend registry: per device type the usable backend of highest priority
// serves; registration errors; the backends dflow registers itself.
#include "runtime/device_backend_registry.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow {
namespace {

DeviceBackend Backend(std::string name, std::string type, int priority, bool usable) {
  DeviceBackend backend;
  backend.name = std::move(name);
  backend.device_type = std::move(type);
  backend.priority = priority;
  backend.usable = [usable] { return usable; };
  backend.register_kernels = [](KernelRegistry*) { return absl::OkStatus(); };
  backend.add_devices = [](const ConfigProto&, ThreadPool*,
                           std::vector<std::unique_ptr<Device>>*,
                           std::vector<std::string>*) { return absl::OkStatus(); };
  return backend;
}

std::vector<std::string> Names(const std::vector<DeviceBackend>& backends) {
  std::vector<std::string> names;
  for (const DeviceBackend& b : backends) names.push_back(b.name);
  return names;
}

TEST_CASE("Per device type, the usable backend of highest priority is chosen") {
  DeviceBackendRegistry registry;
  REQUIRE(registry.Register(Backend("sim", "GPU", 0, true)).ok());
  REQUIRE(registry.Register(Backend("cuda", "GPU", 100, false)).ok());
  REQUIRE(registry.Register(Backend("tpu_sim", "TPU", 0, true)).ok());
  CHECK(Names(registry.Chosen()) == std::vector<std::string>{"sim", "tpu_sim"});

  DeviceBackendRegistry with_gpu;
  REQUIRE(with_gpu.Register(Backend("sim", "GPU", 0, true)).ok());
  REQUIRE(with_gpu.Register(Backend("cuda", "GPU", 100, true)).ok());
  CHECK(Names(with_gpu.Chosen()) == std::vector<std::string>{"cuda"});
  CHECK(Names(with_gpu.All()) == std::vector<std::string>{"cuda", "sim"});
}

TEST_CASE("A backend is registered once, with every field") {
  DeviceBackendRegistry registry;
  REQUIRE(registry.Register(Backend("sim", "GPU", 0, true)).ok());
  absl::Status again = registry.Register(Backend("sim", "GPU", 1, true));
  CHECK(again.code() == absl::StatusCode::kAlreadyExists);
  DeviceBackend partial = Backend("x", "GPU", 0, true);
  partial.add_devices = nullptr;
  absl::Status missing = registry.Register(partial);
  CHECK(missing.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(missing.message(), "'x'"));
}

}  // namespace
}  // namespace dflow
