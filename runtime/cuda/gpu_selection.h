// Which physical GPUs a session will use, decided before any of them is touched: creating
// a CUDA context (cudaMemGetInfo, peer access) costs hundreds of MiB of GPU memory and
// seconds, and a process must leave alone the GPUs that gpu_options.visible_device_list or
// device_count["GPU"] leave out (another process may own them). No CUDA types: pure logic,
// tested without a GPU.
#ifndef DFLOW_RUNTIME_CUDA_GPU_SELECTION_H_
#define DFLOW_RUNTIME_CUDA_GPU_SELECTION_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/config.pb.h"

namespace dflow::cuda {

// The physical GPU indexes (ascending, no duplicates) that ComputeLogicalGpus would place
// logical GPUs on, out of `num_physical`. The same INVALID_ARGUMENT errors as
// ComputeLogicalGpus (none of them depends on the GPUs' memory).
absl::StatusOr<std::vector<int>> UsedPhysicalGpus(const GPUOptions& options,
                                                  std::optional<int> device_count_gpu,
                                                  int num_physical);

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_GPU_SELECTION_H_
