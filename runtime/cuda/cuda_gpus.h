// The real CUDA GPUs as a session's devices. The one entry point session/ uses, with no
// CUDA type in sight: where the build has no CUDA toolkit (or DFLOW_CUDA_PATH=none) the
// same header is backed by cuda_gpus_stub.cc, which reports zero GPUs.
//
// Discovery: the CUDA runtime itself honours CUDA_VISIBLE_DEVICES (ordinals are
// renumbered from 0); each visible GPU's total and free memory come from cudaMemGetInfo
// and runtime/gpu_options.h turns them, with gpu_options (visible_device_list,
// virtual_devices, per_process_gpu_memory_fraction, allow_growth,
// TF_FORCE_GPU_ALLOW_GROWTH) and device_count["GPU"], into logical GPUs, exactly as for
// simulated GPUs. DFLOW_GPU_ALLOW_TF32=1 lets MatMul use TF32 tensor cores (default off).
#ifndef DFLOW_RUNTIME_CUDA_CUDA_GPUS_H_
#define DFLOW_RUNTIME_CUDA_CUDA_GPUS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/config.pb.h"
#include "runtime/device.h"
#include "runtime/thread_pool.h"

namespace dflow::cuda {

inline constexpr char kAllowTf32Env[] = "DFLOW_GPU_ALLOW_TF32";

// True when this build links the CUDA runtime (false for the stub).
bool CudaBuild();
// CUDA GPUs this process can use: 0 with no driver, no GPU or a CPU-only build. Other
// CUDA failures are errors.
absl::StatusOr<int> RealGpuCount();
// RealGpuCount() > 0; an error counts as no GPU.
bool HaveRealGpus();

// Appends one CudaGpuDevice per logical GPU to `devices` (nothing when there is no GPU).
// INVALID_ARGUMENT for bad gpu_options (naming the field), INTERNAL for CUDA failures.
absl::Status AddCudaGpus(const ConfigProto& config, ThreadPool* pool,
                         std::vector<std::unique_ptr<Device>>* devices,
                         std::vector<std::string>* warnings);

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_GPUS_H_
