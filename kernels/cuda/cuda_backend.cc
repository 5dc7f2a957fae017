// The CUDA backend: the machine's GPUs (runtime/cuda/cuda_gpus.h) and the CUDA kernels.
// Usable where a driver and a GPU are present; it then serves "GPU" before the simulated
// backend (runtime/device_backend_registry.h). Built only where CUDA was found.
#include "kernels/cuda/register_cuda_kernels.h"
#include "runtime/cuda/cuda_gpus.h"
#include "runtime/device_backend_registry.h"

namespace dflow {
namespace {

DeviceBackend CudaBackend() {
  DeviceBackend backend;
  backend.name = "cuda";
  backend.device_type = "GPU";
  backend.priority = 100;
  backend.usable = cuda::HaveRealGpus;
  backend.register_kernels = RegisterCudaKernels;
  backend.add_devices = cuda::AddCudaGpus;
  return backend;
}

DFLOW_REGISTER_DEVICE_BACKEND(cuda, CudaBackend());

}  // namespace
}  // namespace dflow
