#include "session/device_factory.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_gpus.h"
#include "runtime/gpu_options.h"
#include "runtime/sim/sim_device.h"
#include "runtime/sim/sim_gpu_spec.h"

namespace dflow {
namespace {

constexpr int kMaxDevicesPerType = 1024;

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<absl::string_view> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return absl::string_view(value);
}

// Appends the simulated GPUs DFLOW_SIMULATED_GPUS asks for to `devices`.
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

}  // namespace

int SessionThreadCount(const ConfigProto& config) {
  const int requested = std::max(config.inter_op_parallelism_threads(),
                                 config.intra_op_parallelism_threads());
  return requested > 0 ? requested : AvailableCores();
}

absl::StatusOr<SessionDevices> CreateSessionDevices(const ConfigProto& config) {
  int num_cpus = 1;
  for (const auto& [type, count] : config.device_count()) {
    if (count < 0 || count > kMaxDevicesPerType) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConfigProto.device_count[\"", type, "\"] = ", count, " is out of range [0, ",
          kMaxDevicesPerType, "]"));
    }
    if (type == "CPU") num_cpus = std::max(1, count);
  }
  if (config.inter_op_parallelism_threads() > 4096 || config.intra_op_parallelism_threads() > 4096) {
    return absl::InvalidArgumentError("ConfigProto thread counts above 4096 are not supported");
  }
  SessionDevices result;
  result.pool = std::make_unique<ThreadPool>(SessionThreadCount(config), "dflow");
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < num_cpus; ++i) {
    devices.push_back(
        std::make_unique<CpuDevice>(i, ProcessCpuAllocator(), result.pool.get()));
  }
  // Real CUDA GPUs when the machine has any; simulated ones only where it has none.
  absl::Status gpus =
      cuda::HaveRealGpus()
          ? cuda::AddCudaGpus(config, result.pool.get(), &devices, &result.warnings)
          : AddSimulatedGpus(config, result.pool.get(), &devices, &result.warnings);
  if (!gpus.ok()) return gpus;
  result.devices = std::make_unique<DeviceMgr>(std::move(devices));
  return result;
}

}  // namespace dflow
