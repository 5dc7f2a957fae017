// GPU options: from ConfigProto.gpu_options (and the environment) to the list of logical
// TF GPUs a session creates. Pure functions over plain inputs, shared by the simulated and
// the CUDA device factories. The rules are TF 1.x's (GPUOptions in config.proto,
// common_runtime/gpu/gpu_device.cc and gpu_process_state.cc), restated below.
//
// The computation, in order:
//   1. visible_device_list ("5,3") maps visible GPU ids to TF order; empty = all physical
//      GPUs in index order. Entries must be integers in [0, #physical), without
//      duplicates.
//   2. experimental.virtual_devices: one entry per visible GPU, in order. Each
//      memory_limit_mb element makes one logical GPU with limit int64(mb) * 2^20 (the float
//      is truncated to whole MB); an entry with no elements makes one GPU with the default
//      limit. TF ids run in sequence across the entries. Setting it together with
//      per_process_gpu_memory_fraction is an error.
//   3. Without virtual devices, each visible GPU makes one logical GPU whose limit is
//        - fraction f > 0: f * TOTAL bytes (truncated to whole bytes);
//        - otherwise: available - MinSystemMemory(available), available = FREE bytes,
//          MinSystemMemory = 225 MiB below 2 GiB, else max(300 MiB, 5% of available).
//   4. device_count["GPU"] (when present) caps the number of logical GPUs: the lowest TF
//      ids are kept.
//   5. allow_growth is gpu_options.allow_growth, overridden by TF_FORCE_GPU_ALLOW_GROWTH
//      when that is exactly "true" or "false" (with TF's "Overriding allow_growth setting"
//      warning when that changes the value); any other value keeps the config value and
//      adds a warning (TF logs an error and carries on).
//
// Errors are INVALID_ARGUMENT naming the offending field.
#ifndef DFLOW_RUNTIME_GPU_OPTIONS_H_
#define DFLOW_RUNTIME_GPU_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/config.pb.h"

namespace dflow {

// What the backend reports about one physical GPU.
struct PhysicalGpuMemory {
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;
};

// One logical (TF) GPU: GPU:<tf_id>.
struct LogicalGpu {
  int tf_id = 0;
  int physical_index = 0;        // index into the physical GPU list
  int64_t memory_limit_bytes = 0;
  bool allow_growth = false;
};

struct LogicalGpuPlan {
  std::vector<LogicalGpu> gpus;   // in TF id order (gpus[i].tf_id == i)
  std::vector<std::string> warnings;  // things TF would log (e.g. a bad env value)
};

// MinSystemMemory(available) as TF reserves it for the driver and other processes.
int64_t MinSystemMemory(int64_t available_bytes);
// The default per-GPU limit: available - MinSystemMemory(available), never negative.
int64_t DefaultGpuMemoryLimit(int64_t available_bytes);

// Parses visible_device_list against `num_physical` GPUs; empty = 0..num_physical-1.
absl::StatusOr<std::vector<int>> ParseVisibleDeviceList(absl::string_view list,
                                                        int num_physical);

// Resolves allow_growth against TF_FORCE_GPU_ALLOW_GROWTH (`env` = its value, or nullopt
// when unset). "true"/"false" win, appending TF's override warning to `warnings` (when
// not null) only if they differ from `config_value`; any other value keeps
// `config_value` and appends a warning saying it is invalid.
bool ResolveAllowGrowth(bool config_value, std::optional<absl::string_view> env,
                        std::vector<std::string>* warnings);

// At most this many logical GPUs from GPUOptions.experimental.virtual_devices (as
// ConfigProto.device_count allows per type): more is INVALID_ARGUMENT, before any is made.
inline constexpr int kMaxLogicalGpus = 1024;

// The logical GPUs for `options`. `device_count_gpu` is device_count["GPU"] when the
// config sets it (nullopt otherwise); `force_allow_growth_env` is the value of
// TF_FORCE_GPU_ALLOW_GROWTH (nullopt when unset).
absl::StatusOr<LogicalGpuPlan> ComputeLogicalGpus(
    const GPUOptions& options, std::optional<int> device_count_gpu,
    const std::vector<PhysicalGpuMemory>& physical,
    std::optional<absl::string_view> force_allow_growth_env);

// CUDA_VISIBLE_DEVICES as the CUDA runtime reads it, for GPUs that CUDA does not filter
// itself (the simulated ones): the physical cards, in the order the process sees them,
// out of `num_cards`. nullopt (unset) = all cards in index order; "" = none. The value is
// a comma list of card indices; as in CUDA, the first entry that is not a non-negative
// integer below `num_cards` (or repeats an earlier one) ends the list there, so "1,x,0"
// is just card 1 and "7" (with fewer cards) is no card at all. Surrounding whitespace of
// each entry is ignored. visible_device_list then indexes this list, not the cards.
std::vector<int> CudaVisibleCards(std::optional<absl::string_view> env, int num_cards);

// The environment variable that adds simulated GPUs.
inline constexpr char kSimulatedGpusEnv[] = "DFLOW_SIMULATED_GPUS";
// CUDA's own card filter, honoured by the simulated GPUs too.
inline constexpr char kCudaVisibleDevicesEnv[] = "CUDA_VISIBLE_DEVICES";

// DFLOW_SIMULATED_GPUS: "N" or "N:MiB".
struct SimulatedGpusSpec {
  static constexpr int64_t kDefaultMiB = 16384;
  static constexpr int kMaxCount = 64;
  static constexpr int64_t kMaxMiB = int64_t{1} << 30;  // 1 PiB per card

  int count = 0;
  int64_t mib = kDefaultMiB;  // total memory of each simulated card
};

// INVALID_ARGUMENT naming DFLOW_SIMULATED_GPUS for anything but N in [0, kMaxCount] and an
// optional MiB in [1, kMaxMiB]. Surrounding whitespace is ignored.
absl::StatusOr<SimulatedGpusSpec> ParseSimulatedGpusEnv(absl::string_view value);

}  // namespace dflow

#endif  // DFLOW_RUNTIME_GPU_OPTIONS_H_
