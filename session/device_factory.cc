#include "session/device_factory.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/device_backend_registry.h"

namespace dflow {
namespace {

constexpr int kMaxDevicesPerType = 1024;

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}


}  // namespace

int SessionThreadCount(const ConfigProto& config) {
  const int requested = std::max(config.inter_op_parallelism_threads(),
                                 config.intra_op_parallelism_threads());
  return requested > 0 ? requested : AvailableCores();
}

absl::StatusOr<SessionDevices> CreateSessionDevices(const ConfigProto& config) {
  int num_cpus = 1;
  for (const auto& [type, count] : config.device_count()) {
    if (count < 0 || count > kMaxDevicesPerType) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConfigProto.device_count[\"", type, "\"] = ", count, " is out of range [0, ",
          kMaxDevicesPerType, "]"));
    }
    if (type == "CPU") num_cpus = std::max(1, count);
  }
  if (config.inter_op_parallelism_threads() > 4096 || config.intra_op_parallelism_threads() > 4096) {
    return absl::InvalidArgumentError("ConfigProto thread counts above 4096 are not supported");
  }
  SessionDevices result;
  result.pool = std::make_unique<ThreadPool>(SessionThreadCount(config), "dflow");
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < num_cpus; ++i) {
    devices.push_back(
        std::make_unique<CpuDevice>(i, ProcessCpuAllocator(), result.pool.get()));
  }
  // Accelerators from the chosen backends (runtime/device_backend_registry.h): real CUDA
  // GPUs when the machine has any, simulated ones only where it has none.
  for (const DeviceBackend& backend : DeviceBackendRegistry::Global().Chosen()) {
    absl::Status added =
        backend.add_devices(config, result.pool.get(), &devices, &result.warnings);
    if (!added.ok()) return added;
  }
  result.devices = std::make_unique<DeviceMgr>(std::move(devices));
  return result;
}

}  // namespace dflow
