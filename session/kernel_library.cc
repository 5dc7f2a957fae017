#include "session/kernel_library.h"

#include <cstdlib>
#include <iostream>

#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cuda/register_cuda_kernels.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/sim/register_sim_kernels.h"
#include "runtime/cuda/cuda_gpus.h"

namespace dflow {

const KernelRegistry& DefaultKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    // Registration of built-in kernels cannot fail unless two kernels collide, which
    // tests catch; that is a programming error, not a runtime condition.
    if (!RegisterCpuKernels(r).ok()) std::abort();
    if (!RegisterIoKernels(r).ok()) std::abort();
    // "GPU" kernels: CUDA ones where the machine has a real GPU (the session then makes
    // CUDA devices, never simulated ones), else the simulated-GPU kernels, which wrap the
    // CPU kernels and so come after them. One or the other: both register "GPU" kernels
    // for the same ops.
    if (cuda::HaveRealGpus()) {
      const absl::Status cuda_kernels = RegisterCudaKernels(r);
      if (!cuda_kernels.ok()) {
        std::cerr << "dflow: registering the CUDA kernels failed: " << cuda_kernels << "\n";
        std::abort();
      }
    } else if (!RegisterSimGpuKernels(r).ok()) {
      std::abort();
    }
    return r;
  }();
  return *registry;
}

}  // namespace dflow
