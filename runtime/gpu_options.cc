#include "runtime/gpu_options.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dflow {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// int64(value) with saturation (a double beyond the int64 range is UB to convert).
int64_t SaturatingInt64(double value) {
  if (value >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (value <= 0) return 0;
  return static_cast<int64_t>(value);
}

}  // namespace

int64_t MinSystemMemory(int64_t available_bytes) {
  if (available_bytes < 2 * kGiB) return 225 * kMiB;
  return std::max<int64_t>(300 * kMiB,
                           static_cast<int64_t>(static_cast<double>(available_bytes) * 0.05));
}

int64_t DefaultGpuMemoryLimit(int64_t available_bytes) {
  return std::max<int64_t>(0, available_bytes - MinSystemMemory(available_bytes));
}

absl::StatusOr<std::vector<int>> ParseVisibleDeviceList(absl::string_view list,
                                                        int num_physical) {
  std::vector<int> order;
  if (absl::StripAsciiWhitespace(list).empty()) {
    for (int i = 0; i < num_physical; ++i) order.push_back(i);
    return order;
  }
  // TF 2.21's words and order (tsl/framework/device_id_utils.cc): every entry is parsed
  // and range-checked first, repeats are looked for afterwards.
  for (absl::string_view entry : absl::StrSplit(list, ',')) {
    int id = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(entry), &id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Could not parse entry in 'visible_device_list': '", entry, "'."));
    }
    if (id < 0 || id >= num_physical) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'visible_device_list' listed an invalid Device id '", id,
          "' but visible device count is ", num_physical));
    }
    order.push_back(id);
  }
  std::vector<bool> seen(std::max(0, num_physical), false);
  for (int id : order) {
    if (seen[id]) {
      return absl::InvalidArgumentError(
          absl::StrCat("visible_device_list contained a duplicate entry: ", list));
    }
    seen[id] = true;
  }
  return order;
}

bool ResolveAllowGrowth(bool config_value, std::optional<absl::string_view> env,
                        std::vector<std::string>* warnings) {
  if (!env.has_value()) return config_value;
  if (*env == "true" || *env == "false") {
    const bool forced = *env == "true";
    if (forced != config_value && warnings != nullptr) {
      // TF's words (gpu_bfc_allocator.cc), which stream the bool as 0 or 1.
      warnings->push_back(absl::StrCat(
          "Overriding allow_growth setting because the TF_FORCE_GPU_ALLOW_GROWTH environment "
          "variable is set. Original config value was ",
          config_value ? 1 : 0, "."));
    }
    return forced;
  }
  if (warnings != nullptr) {
    // TF 2.21's words (gpu_bfc_allocator.cc), the bool streamed as 0 or 1.
    warnings->push_back(absl::StrCat(
        "The TF_FORCE_GPU_ALLOW_GROWTH environment variable is set but could not be parsed: "
        "\"",
        *env, "\". Valid values are \"true\" or \"false\". Using original config value of ",
        config_value ? 1 : 0, "."));
  }
  return config_value;
}

absl::StatusOr<LogicalGpuPlan> ComputeLogicalGpus(
    const GPUOptions& options, std::optional<int> device_count_gpu,
    const std::vector<PhysicalGpuMemory>& physical,
    std::optional<absl::string_view> force_allow_growth_env) {
  const double fraction = options.per_process_gpu_memory_fraction();
  if (std::isnan(fraction) || fraction < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPUOptions.per_process_gpu_memory_fraction must be >= 0, got ", fraction));
  }
  if (device_count_gpu.has_value() && *device_count_gpu < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ConfigProto.device_count[\"GPU\"] must be >= 0, got ", *device_count_gpu));
  }
  const auto& virtual_devices = options.experimental().virtual_devices();
  if (!virtual_devices.empty() && fraction > 0) {
    return absl::InvalidArgumentError(
        "It's invalid to set per_process_gpu_memory_fraction when virtual_devices is set.");
  }
  const int num_physical = static_cast<int>(physical.size());
  std::vector<int> visible;
  {
    absl::StatusOr<std::vector<int>> parsed =
        ParseVisibleDeviceList(options.visible_device_list(), num_physical);
    if (!parsed.ok()) return parsed.status();
    visible = *std::move(parsed);
  }
  if (!virtual_devices.empty() && virtual_devices.size() != static_cast<int>(visible.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GPUOptions.experimental.virtual_devices has ", virtual_devices.size(),
        " entries but there are ", visible.size(),
        " visible GPUs; it needs exactly one entry per visible GPU"));
  }

  int num_logical = 0;
  for (const auto& device : virtual_devices) num_logical += device.memory_limit_mb_size();
  if (num_logical > kMaxLogicalGpus) {  // bounded like device_count: each costs memory
    return absl::InvalidArgumentError(absl::StrCat(
        "GPUOptions.experimental.virtual_devices declares ", num_logical,
        " logical GPUs; at most ", kMaxLogicalGpus, " are supported"));
  }

  LogicalGpuPlan plan;
  const bool allow_growth =
      ResolveAllowGrowth(options.allow_growth(), force_allow_growth_env, &plan.warnings);
  auto add = [&](int physical_index, int64_t limit) {
    LogicalGpu gpu;
    gpu.tf_id = static_cast<int>(plan.gpus.size());
    gpu.physical_index = physical_index;
    gpu.memory_limit_bytes = limit;
    gpu.allow_growth = allow_growth;
    plan.gpus.push_back(gpu);
  };
  auto default_limit = [&](int physical_index) {
    const PhysicalGpuMemory& mem = physical[physical_index];
    if (fraction > 0) return SaturatingInt64(static_cast<double>(mem.total_bytes) * fraction);
    return DefaultGpuMemoryLimit(mem.free_bytes);
  };

  for (size_t v = 0; v < visible.size(); ++v) {
    const int physical_index = visible[v];
    if (virtual_devices.empty() || virtual_devices[v].memory_limit_mb().empty()) {
      add(physical_index, default_limit(physical_index));
      continue;
    }
    const auto& limits = virtual_devices[v].memory_limit_mb();
    for (int k = 0; k < limits.size(); ++k) {
      const float mb = limits[k];
      if (std::isnan(mb) || mb < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("GPUOptions.experimental.virtual_devices[", v, "].memory_limit_mb[",
                         k, "] must be >= 0, got ", mb));
      }
      // Truncated to whole MB, as TF does: int64(memory_limit_mb) * 2^20.
      const int64_t whole_mb = SaturatingInt64(std::trunc(static_cast<double>(mb)));
      add(physical_index, whole_mb > std::numeric_limits<int64_t>::max() / kMiB
                              ? std::numeric_limits<int64_t>::max()
                              : whole_mb * kMiB);
    }
  }
  if (device_count_gpu.has_value() &&
      static_cast<int>(plan.gpus.size()) > *device_count_gpu) {
    plan.gpus.resize(*device_count_gpu);
  }
  return plan;
}

std::vector<int> CudaVisibleCards(std::optional<absl::string_view> env, int num_cards) {
  std::vector<int> cards;
  if (!env.has_value()) {
    for (int i = 0; i < num_cards; ++i) cards.push_back(i);
    return cards;
  }
  if (absl::StripAsciiWhitespace(*env).empty()) return cards;
  std::vector<bool> seen(std::max(0, num_cards), false);
  for (absl::string_view entry : absl::StrSplit(*env, ',')) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(entry);
    int index = 0;
    // CUDA stops at the first entry it cannot use rather than failing.
    if (stripped.empty() || stripped[0] == '+' || !absl::SimpleAtoi(stripped, &index) ||
        index < 0 || index >= num_cards || seen[index]) {
      break;
    }
    seen[index] = true;
    cards.push_back(index);
  }
  return cards;
}

absl::StatusOr<SimulatedGpusSpec> ParseSimulatedGpusEnv(absl::string_view value) {
  const absl::string_view stripped = absl::StripAsciiWhitespace(value);
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("DFLOW_SIMULATED_GPUS=\"", value, "\" is invalid: ", why,
                     ". Expected N or N:MiB, e.g. 4 or 4:2048"));
  };
  SimulatedGpusSpec spec;
  if (stripped.empty()) return spec;  // set but empty: no simulated GPUs
  std::vector<absl::string_view> parts = absl::StrSplit(stripped, ':');
  if (parts.size() > 2) return error("more than one ':'");
  int64_t count = 0;
  if (!absl::SimpleAtoi(parts[0], &count) || parts[0].empty() || parts[0][0] == '+') {
    return error("the GPU count is not a number");
  }
  if (count < 0 || count > SimulatedGpusSpec::kMaxCount) {
    return error(absl::StrCat("the GPU count must be in [0, ", SimulatedGpusSpec::kMaxCount,
                              "]"));
  }
  spec.count = static_cast<int>(count);
  if (parts.size() == 2) {
    int64_t mib = 0;
    if (!absl::SimpleAtoi(parts[1], &mib) || parts[1].empty() || parts[1][0] == '+') {
      return error("the memory size (MiB) is not a number");
    }
    if (mib < 1 || mib > SimulatedGpusSpec::kMaxMiB) {
      return error(absl::StrCat("the memory size must be in [1, ", SimulatedGpusSpec::kMaxMiB,
                                "] MiB"));
    }
    spec.mib = mib;
  }
  return spec;
}

}  // namespace dflow
