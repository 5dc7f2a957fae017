#include "runtime/cuda/gpu_selection.h"

#include <set>

#include "runtime/gpu_options.h"

namespace dflow::cuda {

absl::StatusOr<std::vector<int>> UsedPhysicalGpus(const GPUOptions& options,
                                                  std::optional<int> device_count_gpu,
                                                  int num_physical) {
  // Memory only sets the limits, never which GPUs are used: plan with zeros.
  const std::vector<PhysicalGpuMemory> unknown(num_physical < 0 ? 0 : num_physical);
  absl::StatusOr<LogicalGpuPlan> plan =
      ComputeLogicalGpus(options, device_count_gpu, unknown, std::nullopt);
  if (!plan.ok()) return plan.status();
  std::set<int> used;
  for (const LogicalGpu& gpu : plan->gpus) used.insert(gpu.physical_index);
  return std::vector<int>(used.begin(), used.end());
}

}  // namespace dflow::cuda
