#include "runtime/device_backend_registry.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dflow {

DeviceBackendRegistry& DeviceBackendRegistry::Global() {
  static DeviceBackendRegistry* registry = new DeviceBackendRegistry();
  return *registry;
}

absl::Status DeviceBackendRegistry::Register(DeviceBackend backend) {
  if (backend.name.empty() || backend.device_type.empty() || !backend.usable ||
      !backend.register_kernels || !backend.add_devices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Device backend '", backend.name,
        "' needs a name, a device type, and usable, register_kernels and add_devices"));
  }
  absl::MutexLock lock(&mu_);
  for (const DeviceBackend& existing : backends_) {
    if (existing.name == backend.name) {
      return absl::AlreadyExistsError(
          absl::StrCat("Device backend '", backend.name, "' is already registered"));
    }
  }
  backends_.push_back(std::move(backend));
  return absl::OkStatus();
}

std::vector<DeviceBackend> DeviceBackendRegistry::All() const {
  std::vector<DeviceBackend> all;
  {
    absl::MutexLock lock(&mu_);
    all = backends_;
  }
  std::sort(all.begin(), all.end(),
            [](const DeviceBackend& a, const DeviceBackend& b) { return a.name < b.name; });
  return all;
}

std::vector<DeviceBackend> DeviceBackendRegistry::Chosen() const {
  std::map<std::string, DeviceBackend> best;
  for (DeviceBackend& backend : All()) {
    if (!backend.usable()) continue;
    auto it = best.find(backend.device_type);
    if (it == best.end() || backend.priority > it->second.priority) {
      best[backend.device_type] = std::move(backend);
    }
  }
  std::vector<DeviceBackend> chosen;
  for (auto& [type, backend] : best) chosen.push_back(std::move(backend));
  return chosen;
}

namespace internal {

DeviceBackendRegistrar::DeviceBackendRegistrar(DeviceBackend backend) {
  const std::string name = backend.name;
  const absl::Status status = DeviceBackendRegistry::Global().Register(std::move(backend));
  if (!status.ok()) {
    std::cerr << "dflow: registering device backend '" << name << "' failed: " << status
              << "\n";
    std::abort();
  }
}

}  // namespace internal
}  // namespace dflow
