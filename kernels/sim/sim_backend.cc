// The simulated-GPU backend: DFLOW_SIMULATED_GPUS cards (runtime/sim/sim_gpus.h) running
// the CPU kernels on their compute streams (sim_kernels.cc). Lowest priority: a machine
// with a real GPU gets the CUDA backend instead (runtime/device_backend_registry.h).
#include "kernels/sim/register_sim_kernels.h"
#include "runtime/device_backend_registry.h"
#include "runtime/sim/sim_gpus.h"

namespace dflow {
namespace {

DeviceBackend SimulatedGpuBackend() {
  DeviceBackend backend;
  backend.name = "simulated_gpu";
  backend.device_type = "GPU";
  backend.priority = 0;
  backend.usable = [] { return true; };
  backend.register_kernels = RegisterSimGpuKernels;
  backend.add_devices = sim::AddSimulatedGpus;
  return backend;
}

DFLOW_REGISTER_DEVICE_BACKEND(simulated_gpu, SimulatedGpuBackend());

}  // namespace
}  // namespace dflow
