// Host-side entry points of optimizer_kernels.cu (work in progress). Shared by nvcc and the
// host compiler: CUDA runtime types only.
#ifndef DFLOW_KERNELS_CUDA_OPTIMIZER_LAUNCHERS_H_
#define DFLOW_KERNELS_CUDA_OPTIMIZER_LAUNCHERS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace dflow::cuda {}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_OPTIMIZER_LAUNCHERS_H_
