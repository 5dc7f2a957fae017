#include "session/kernel_library.h"

#include <cstdlib>
#include <iostream>

#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/io/register_io_kernels.h"
#include "runtime/device_backend_registry.h"

namespace dflow {

const KernelRegistry& DefaultKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    // Registration of built-in kernels cannot fail unless two kernels collide, which
    // tests catch; that is a programming error, not a runtime condition.
    if (!RegisterCpuKernels(r).ok()) std::abort();
    if (!RegisterIoKernels(r).ok()) std::abort();
    // The accelerator backends' kernels (runtime/device_backend_registry.h): CUDA where
    // the machine has a real GPU (the session then makes CUDA devices, never simulated
    // ones), else the simulated-GPU kernels, which wrap the CPU kernels and so come after
    // them. One backend per device type: both register "GPU" kernels for the same ops.
    for (const DeviceBackend& backend : DeviceBackendRegistry::Global().Chosen()) {
      const absl::Status registered = backend.register_kernels(r);
      if (!registered.ok()) {
        std::cerr << "dflow: registering the " << backend.name
                  << " kernels failed: " << registered << "\n";
        std::abort();
      }
    }
    return r;
  }();
  return *registry;
}

}  // namespace dflow
