#include "session/kernel_library.h"

#include <cstdlib>

#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/sim/register_sim_kernels.h"

namespace dflow {

const KernelRegistry& DefaultKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    // Registration of built-in kernels cannot fail unless two kernels collide, which
    // tests catch; that is a programming error, not a runtime condition.
    if (!RegisterCpuKernels(r).ok()) std::abort();
    if (!RegisterIoKernels(r).ok()) std::abort();
    // Simulated-GPU kernels wrap the CPU kernels, so they come after them.
    if (!RegisterSimGpuKernels(r).ok()) std::abort();
    return r;
  }();
  return *registry;
}

}  // namespace dflow
