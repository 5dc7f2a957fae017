// The kernels a session can run: every kernel library, registered once per process.
#ifndef DFLOW_SESSION_KERNEL_LIBRARY_H_
#define DFLOW_SESSION_KERNEL_LIBRARY_H_

#include "runtime/kernel_registry.h"

namespace dflow {

// The process-wide registry with the CPU kernels (and accelerator kernels where built).
const KernelRegistry& DefaultKernelRegistry();

}  // namespace dflow

#endif  // DFLOW_SESSION_KERNEL_LIBRARY_H_
