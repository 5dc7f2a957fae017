#include "runtime/cuda/cuda_gpus.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_probe.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/cuda_sub_allocator.h"
#include "runtime/cuda/gpu_selection.h"
#include "runtime/cuda/scoped_activate_device.h"
#include "runtime/gpu_options.h"

namespace dflow::cuda {
namespace {

std::optional<absl::string_view> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return absl::string_view(value);
}

// Lets every pair of used GPUs that can reach each other over NVLink/PCIe copy directly.
// Only an optimisation: the copier's cudaMemcpyDefault stages through the host without
// it. So a pair that cannot be enabled (more than 8 peers: cudaErrorTooManyPeers, an
// unsupported topology, ...) is skipped with a warning, never a session error, and
// already-enabled pairs (a second session) are fine. The calling thread's current device
// is restored (ScopedActivateDevice): it may be a thread that runs kernels.
absl::Status EnablePeerAccess(const std::vector<int>& ordinals,
                              std::vector<std::string>* warnings) {
  int failed_pairs = 0;
  std::string first_failure;
  for (int a : ordinals) {
    ScopedActivateDevice device;
    DFLOW_RETURN_IF_ERROR(device.Activate(a));
    for (int b : ordinals) {
      if (a == b) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      if (!can) continue;
      const cudaError_t error = cudaDeviceEnablePeerAccess(b, 0);
      if (error == cudaSuccess) continue;
      cudaGetLastError();  // clear it: later calls must not report it
      if (error != cudaErrorPeerAccessAlreadyEnabled && failed_pairs++ == 0) {
        first_failure = absl::StrCat("GPU ", a, " -> GPU ", b, ": ", cudaGetErrorName(error));
      }
    }
  }
  if (failed_pairs > 0) {  // one line, not one per pair (16 GPUs: 120+ pairs)
    warnings->push_back(absl::StrCat("No direct peer access for ", failed_pairs,
                                     " GPU pair(s) (first: ", first_failure,
                                     "); copies between them go through host memory"));
  }
  return absl::OkStatus();
}

}  // namespace

bool CudaBuild() { return true; }

absl::StatusOr<int> RealGpuCount() { return CountCudaDevices(); }

bool HaveRealGpus() {
  absl::StatusOr<int> count = RealGpuCount();
  return count.ok() && *count > 0;
}

absl::Status AddCudaGpus(const ConfigProto& config, ThreadPool* pool,
                         std::vector<std::unique_ptr<Device>>* devices,
                         std::vector<std::string>* warnings) {
  DFLOW_ASSIGN_OR_RETURN(int count, RealGpuCount());
  if (count == 0) return absl::OkStatus();
  std::optional<int> device_count_gpu;
  if (auto it = config.device_count().find("GPU"); it != config.device_count().end()) {
    device_count_gpu = it->second;
  }
  // Only the GPUs the session uses get a context (cudaMemGetInfo creates one).
  DFLOW_ASSIGN_OR_RETURN(std::vector<int> used,
                         UsedPhysicalGpus(config.gpu_options(), device_count_gpu, count));
  std::vector<PhysicalGpuMemory> physical(count);
  for (int ordinal : used) {
    DFLOW_ASSIGN_OR_RETURN(CudaMemoryInfo info, GetCudaMemoryInfo(ordinal));
    physical[ordinal] = PhysicalGpuMemory{info.total_bytes, info.free_bytes};
  }
  DFLOW_ASSIGN_OR_RETURN(LogicalGpuPlan plan,
                         ComputeLogicalGpus(config.gpu_options(), device_count_gpu, physical,
                                            GetEnv("TF_FORCE_GPU_ALLOW_GROWTH")));
  for (const std::string& warning : plan.warnings) warnings->push_back(warning);
  DFLOW_RETURN_IF_ERROR(EnablePeerAccess(used, warnings));
  const std::optional<absl::string_view> tf32 = GetEnv(kAllowTf32Env);
  for (const LogicalGpu& gpu : plan.gpus) {
    CudaGpuOptions options;
    options.tf_id = gpu.tf_id;
    options.ordinal = gpu.physical_index;
    options.memory_limit = gpu.memory_limit_bytes;
    options.allow_growth = gpu.allow_growth;
    options.allow_tf32 = tf32.has_value() && *tf32 == "1";
    DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<CudaGpuDevice> device,
                           CudaGpuDevice::Create(options, pool));
    devices->push_back(std::move(device));
  }
  return absl::OkStatus();
}

}  // namespace dflow::cuda
