// Accelerator backends: where a session's non-CPU devices come from (CUDA GPUs, simulated
// GPUs) and which kernels they run, chosen through a registry. A backend registers itself
// in its own folder with DFLOW_REGISTER_DEVICE_BACKEND (its library alwayslink), so adding
// one touches only that folder; sessions use, per device type, the usable backend of
// highest priority (a real GPU's CUDA backend before the simulated one). Registration
// happens during static initialization: nothing may open a session before main().
#ifndef DFLOW_RUNTIME_DEVICE_BACKEND_REGISTRY_H_
#define DFLOW_RUNTIME_DEVICE_BACKEND_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "proto/config.pb.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"

namespace dflow {

struct DeviceBackend {
  std::string name;         // "cuda", "simulated_gpu"
  std::string device_type;  // the type its devices have ("GPU")
  int priority = 0;         // among usable backends of a type, the highest serves it
  // Whether it can serve this process (e.g. a CUDA driver and a GPU are present).
  std::function<bool()> usable;
  // Adds its kernels; called once per process, after the CPU kernels.
  std::function<absl::Status(KernelRegistry*)> register_kernels;
  // Appends the devices `config` asks for, sharing `pool`; `warnings` get what TF would
  // log (e.g. an invalid TF_FORCE_GPU_ALLOW_GROWTH).
  std::function<absl::Status(const ConfigProto& config, ThreadPool* pool,
                             std::vector<std::unique_ptr<Device>>* devices,
                             std::vector<std::string>* warnings)>
      add_devices;
};

class DeviceBackendRegistry {
 public:
  // The process's registry, which DFLOW_REGISTER_DEVICE_BACKEND fills.
  static DeviceBackendRegistry& Global();

  // ALREADY_EXISTS for a name taken; INVALID_ARGUMENT when a field is missing.
  absl::Status Register(DeviceBackend backend);
  // Per device type, the usable backend of highest priority (then by name), ordered by
  // device type.
  std::vector<DeviceBackend> Chosen() const;
  // Every registered backend, by name.
  std::vector<DeviceBackend> All() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<DeviceBackend> backends_ ABSL_GUARDED_BY(mu_);
};

namespace internal {
// Registers at static initialization; a failure is a programming error and aborts.
struct DeviceBackendRegistrar {
  explicit DeviceBackendRegistrar(DeviceBackend backend);
};
}  // namespace internal

#define DFLOW_REGISTER_DEVICE_BACKEND(id, backend)                                           \
  static const ::dflow::internal::DeviceBackendRegistrar dflow_device_backend_registrar_##id( \
      backend)

}  // namespace dflow

#endif  // DFLOW_RUNTIME_DEVICE_BACKEND_REGISTRY_H_
