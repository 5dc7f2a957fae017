// cuda_gpus.h for builds without the CUDA toolkit: never any GPU.
#include "runtime/cuda/cuda_gpus.h"

namespace dflow::cuda {

bool CudaBuild() { return false; }
absl::StatusOr<int> RealGpuCount() { return 0; }
bool HaveRealGpus() { return false; }

absl::Status AddCudaGpus(const ConfigProto&, ThreadPool*, std::vector<std::unique_ptr<Device>>*,
                         std::vector<std::string>*) {
  return absl::OkStatus();
}

}  // namespace dflow::cuda
