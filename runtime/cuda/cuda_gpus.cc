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
#include "runtime/gpu_options.h"

namespace dflow::cuda {
namespace {

std::optional<absl::string_view> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return absl::string_view(value);
}

// Lets every pair of GPUs that can reach each other over NVLink/PCIe copy directly
// (cudaMemcpyPeerAsync then skips the host). Already-enabled pairs are fine.
absl::Status EnablePeerAccess(int count) {
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int can = 0;
      DFLOW_CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) continue;
      DFLOW_CUDA_RETURN_IF_ERROR(cudaSetDevice(a));
      cudaError_t error = cudaDeviceEnablePeerAccess(b, 0);
      if (error == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else if (error != cudaSuccess) {
        return CudaErrorToStatus(error, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
      }
    }
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
  std::vector<PhysicalGpuMemory> physical;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    DFLOW_ASSIGN_OR_RETURN(CudaMemoryInfo info, GetCudaMemoryInfo(ordinal));
    physical.push_back(PhysicalGpuMemory{info.total_bytes, info.free_bytes});
  }
  std::optional<int> device_count_gpu;
  if (auto it = config.device_count().find("GPU"); it != config.device_count().end()) {
    device_count_gpu = it->second;
  }
  DFLOW_ASSIGN_OR_RETURN(LogicalGpuPlan plan,
                         ComputeLogicalGpus(config.gpu_options(), device_count_gpu, physical,
                                            GetEnv("TF_FORCE_GPU_ALLOW_GROWTH")));
  for (const std::string& warning : plan.warnings) warnings->push_back(warning);
  DFLOW_RETURN_IF_ERROR(EnablePeerAccess(count));
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
