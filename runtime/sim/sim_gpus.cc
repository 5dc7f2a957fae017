#include "runtime/sim/sim_gpus.h"

#include <cstdlib>
#include <map>
#include <optional>

#include "runtime/gpu_options.h"
#include "runtime/sim/sim_device.h"
#include "runtime/sim/sim_gpu_spec.h"

namespace dflow::sim {
namespace {

std::optional<absl::string_view> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return absl::string_view(value);
}

}  // namespace

absl::Status AddSimulatedGpus(const ConfigProto& config, ThreadPool* pool,
                              std::vector<std::unique_ptr<Device>>* devices,
                              std::vector<std::string>* warnings) {
  const std::optional<absl::string_view> env = GetEnv(kSimulatedGpusEnv);
  if (!env.has_value()) return absl::OkStatus();
  absl::StatusOr<SimulatedGpusSpec> spec = ParseSimulatedGpusEnv(*env);
  if (!spec.ok()) return spec.status();
  if (spec->count == 0) return absl::OkStatus();

  sim::SimGpuOptions knobs;  // test knobs, sim/sim_gpu_spec.h
  if (const auto knob_spec = GetEnv(sim::kSimulatedGpuOptionsEnv); knob_spec.has_value()) {
    absl::Status parsed = sim::ApplySimGpuSpec(*knob_spec, &knobs);
    if (!parsed.ok()) return parsed;
  }
  const int64_t card_bytes = spec->mib << 20;
  // What the CUDA runtime would do for real cards: CUDA_VISIBLE_DEVICES picks and orders
  // them before gpu_options sees them. visible[i] is the simulated card behind CUDA's i.
  const std::vector<int> visible =
      CudaVisibleCards(GetEnv(kCudaVisibleDevicesEnv), spec->count);
  if (visible.empty()) return absl::OkStatus();
  std::vector<PhysicalGpuMemory> cards(visible.size(), PhysicalGpuMemory{card_bytes, card_bytes});
  std::optional<int> device_count_gpu;
  if (auto it = config.device_count().find("GPU"); it != config.device_count().end()) {
    device_count_gpu = it->second;
  }
  absl::StatusOr<LogicalGpuPlan> plan = ComputeLogicalGpus(
      config.gpu_options(), device_count_gpu, cards, GetEnv("TF_FORCE_GPU_ALLOW_GROWTH"));
  if (!plan.ok()) return plan.status();
  for (const std::string& warning : plan->warnings) warnings->push_back(warning);

  // One memory per card, shared by the logical GPUs carved from it.
  std::map<int, std::shared_ptr<HostSubAllocator>> card_memory;
  for (const LogicalGpu& gpu : plan->gpus) {
    const int card = visible[gpu.physical_index];
    std::shared_ptr<HostSubAllocator>& memory = card_memory[card];
    if (memory == nullptr) {
      memory = std::make_shared<HostSubAllocator>(static_cast<size_t>(card_bytes));
    }
    sim::SimGpuOptions options = knobs;
    options.physical_index = card;
    options.total_bytes = card_bytes;
    options.memory_limit = gpu.memory_limit_bytes;
    options.allow_growth = gpu.allow_growth;
    options.card_memory = memory;
    devices->push_back(
        std::make_unique<sim::SimGpuDevice>(gpu.tf_id, pool, std::move(options)));
  }
  return absl::OkStatus();
}

}  // namespace dflow::sim
