// GPUOptions -> logical GPUs (runtime/gpu_options.h): TF's memory limits, visible ids,
// virtual devices, device_count, TF_FORCE_GPU_ALLOW_GROWTH, CUDA_VISIBLE_DEVICES and
// DFLOW_SIMULATED_GPUS.
#include "runtime/gpu_options.h"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

std::vector<PhysicalGpuMemory> Cards(std::vector<std::pair<int64_t, int64_t>> total_free) {
  std::vector<PhysicalGpuMemory> cards;
  for (auto [total, free] : total_free) cards.push_back(PhysicalGpuMemory{total, free});
  return cards;
}

std::vector<PhysicalGpuMemory> FreshCards(int n, int64_t bytes) {
  return std::vector<PhysicalGpuMemory>(n, PhysicalGpuMemory{bytes, bytes});
}

LogicalGpuPlan Plan(const GPUOptions& options, const std::vector<PhysicalGpuMemory>& cards,
                    std::optional<int> device_count = std::nullopt,
                    std::optional<absl::string_view> env = std::nullopt) {
  absl::StatusOr<LogicalGpuPlan> plan = ComputeLogicalGpus(options, device_count, cards, env);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  for (size_t i = 0; i < plan->gpus.size(); ++i) CHECK(plan->gpus[i].tf_id == static_cast<int>(i));
  return *plan;
}

absl::Status PlanError(const GPUOptions& options, const std::vector<PhysicalGpuMemory>& cards,
                       std::optional<int> device_count = std::nullopt) {
  absl::StatusOr<LogicalGpuPlan> plan = ComputeLogicalGpus(options, device_count, cards, {});
  REQUIRE_FALSE(plan.ok());
  return plan.status();
}

GPUOptions Visible(const std::string& list) {
  GPUOptions options;
  options.set_visible_device_list(list);
  return options;
}

TEST_CASE("Default limit is available minus max(300 MiB, 5%) on a 16 GiB card", "[gpu_options]") {
  // 5% of 16 GiB = 858993459.2 bytes, truncated; larger than 300 MiB.
  CHECK(MinSystemMemory(16 * kGiB) == 858993459);
  CHECK(DefaultGpuMemoryLimit(16 * kGiB) == 16 * kGiB - 858993459);
  LogicalGpuPlan plan = Plan(GPUOptions(), FreshCards(1, 16 * kGiB));
  REQUIRE(plan.gpus.size() == 1);
  CHECK(plan.gpus[0].physical_index == 0);
  CHECK(plan.gpus[0].memory_limit_bytes == 16320875725);
  CHECK_FALSE(plan.gpus[0].allow_growth);
  CHECK(plan.warnings.empty());
}

TEST_CASE("Default limit uses FREE memory and 225 MiB below 2 GiB", "[gpu_options]") {
  CHECK(MinSystemMemory(1536 * kMiB) == 225 * kMiB);
  CHECK(DefaultGpuMemoryLimit(1536 * kMiB) == (1536 - 225) * kMiB);
  // At 2 GiB the 300 MiB floor applies (5% is only ~102 MiB).
  CHECK(DefaultGpuMemoryLimit(2 * kGiB) == 2 * kGiB - 300 * kMiB);
  CHECK(DefaultGpuMemoryLimit(100 * kMiB) == 0);  // never negative

  // A 16 GiB card with 1.5 GiB free: computed from the free bytes.
  LogicalGpuPlan plan = Plan(GPUOptions(), Cards({{16 * kGiB, 1536 * kMiB}}));
  REQUIRE(plan.gpus.size() == 1);
  CHECK(plan.gpus[0].memory_limit_bytes == 1311 * kMiB);
}

TEST_CASE("per_process_gpu_memory_fraction is a share of TOTAL memory", "[gpu_options]") {
  GPUOptions options;
  options.set_per_process_gpu_memory_fraction(0.5);
  // Only 2 GiB free of 16: the limit is still 8 GiB.
  LogicalGpuPlan plan = Plan(options, Cards({{16 * kGiB, 2 * kGiB}, {4 * kGiB, 4 * kGiB}}));
  REQUIRE(plan.gpus.size() == 2);
  CHECK(plan.gpus[0].memory_limit_bytes == 8 * kGiB);
  CHECK(plan.gpus[1].memory_limit_bytes == 2 * kGiB);

  options.set_per_process_gpu_memory_fraction(0.3);
  plan = Plan(options, FreshCards(1, 1000));
  CHECK(plan.gpus[0].memory_limit_bytes == 300);

  options.set_per_process_gpu_memory_fraction(-0.1);
  absl::Status error = PlanError(options, FreshCards(1, kGiB));
  CHECK(error.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(error.message(), "per_process_gpu_memory_fraction"));
}

TEST_CASE("virtual_devices split one GPU into logical GPUs with truncated MB limits",
          "[gpu_options]") {
  GPUOptions options;
  auto* entry = options.mutable_experimental()->add_virtual_devices();
  entry->add_memory_limit_mb(1024.9f);
  entry->add_memory_limit_mb(2048.0f);
  LogicalGpuPlan plan = Plan(options, FreshCards(1, 16 * kGiB));
  REQUIRE(plan.gpus.size() == 2);
  CHECK(plan.gpus[0].physical_index == 0);
  CHECK(plan.gpus[1].physical_index == 0);
  CHECK(plan.gpus[0].memory_limit_bytes == 1024 * kMiB);
  CHECK(plan.gpus[1].memory_limit_bytes == 2048 * kMiB);
}

TEST_CASE("virtual device ids run in sequence across GPUs; an empty entry is one default GPU",
          "[gpu_options]") {
  GPUOptions options;
  auto* first = options.mutable_experimental()->add_virtual_devices();
  first->add_memory_limit_mb(100.5f);
  first->add_memory_limit_mb(200.0f);
  options.mutable_experimental()->add_virtual_devices();  // empty: one default device
  auto* third = options.mutable_experimental()->add_virtual_devices();
  third->add_memory_limit_mb(300.0f);
  LogicalGpuPlan plan = Plan(options, FreshCards(3, 4 * kGiB));
  REQUIRE(plan.gpus.size() == 4);
  CHECK(plan.gpus[0].physical_index == 0);
  CHECK(plan.gpus[0].memory_limit_bytes == 100 * kMiB);
  CHECK(plan.gpus[1].physical_index == 0);
  CHECK(plan.gpus[1].memory_limit_bytes == 200 * kMiB);
  CHECK(plan.gpus[2].physical_index == 1);
  CHECK(plan.gpus[2].memory_limit_bytes == DefaultGpuMemoryLimit(4 * kGiB));
  CHECK(plan.gpus[3].physical_index == 2);
  CHECK(plan.gpus[3].memory_limit_bytes == 300 * kMiB);
}

TEST_CASE("virtual_devices with a memory fraction is TF's error", "[gpu_options]") {
  GPUOptions options;
  options.set_per_process_gpu_memory_fraction(0.5);
  options.mutable_experimental()->add_virtual_devices()->add_memory_limit_mb(100);
  absl::Status error = PlanError(options, FreshCards(1, kGiB));
  CHECK(error.code() == absl::StatusCode::kInvalidArgument);
  CHECK(error.message() ==
        "It's invalid to set per_process_gpu_memory_fraction when virtual_devices is set.");
}

TEST_CASE("virtual_devices needs one entry per visible GPU and non-negative limits",
          "[gpu_options]") {
  GPUOptions options;
  options.mutable_experimental()->add_virtual_devices()->add_memory_limit_mb(100);
  absl::Status error = PlanError(options, FreshCards(2, kGiB));
  CHECK(error.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(error.message(), "virtual_devices"));

  // With a visible list of one GPU, one entry is right.
  options.set_visible_device_list("1");
  LogicalGpuPlan plan = Plan(options, FreshCards(2, kGiB));
  REQUIRE(plan.gpus.size() == 1);
  CHECK(plan.gpus[0].physical_index == 1);
  CHECK(plan.gpus[0].memory_limit_bytes == 100 * kMiB);

  GPUOptions negative;
  negative.mutable_experimental()->add_virtual_devices()->add_memory_limit_mb(-1);
  error = PlanError(negative, FreshCards(1, kGiB));
  CHECK(error.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(error.message(), "memory_limit_mb"));

  // 5,000 virtual devices (a 95 KB --config) took 3.8 GB and 10 s: now refused at once.
  GPUOptions too_many;
  auto* split = too_many.mutable_experimental()->add_virtual_devices();
  for (int i = 0; i < 5000; ++i) split->add_memory_limit_mb(1);
  error = PlanError(too_many, FreshCards(1, kGiB));
  CHECK(error.code() == absl::StatusCode::kInvalidArgument);
  CHECK(error.message() ==
        "GPUOptions.experimental.virtual_devices declares 5000 logical GPUs; at most 1024 are "
        "supported");
}

TEST_CASE("visible_device_list maps visible ids to TF ids in order", "[gpu_options]") {
  std::vector<PhysicalGpuMemory> cards = Cards({{4 * kGiB, 4 * kGiB}, {8 * kGiB, 8 * kGiB}});
  LogicalGpuPlan plan = Plan(Visible("1,0"), cards);
  REQUIRE(plan.gpus.size() == 2);
  CHECK(plan.gpus[0].physical_index == 1);
  CHECK(plan.gpus[0].memory_limit_bytes == DefaultGpuMemoryLimit(8 * kGiB));
  CHECK(plan.gpus[1].physical_index == 0);
  CHECK(plan.gpus[1].memory_limit_bytes == DefaultGpuMemoryLimit(4 * kGiB));

  plan = Plan(Visible(" 1 "), cards);
  REQUIRE(plan.gpus.size() == 1);
  CHECK(plan.gpus[0].physical_index == 1);

  plan = Plan(Visible(""), cards);
  REQUIRE(plan.gpus.size() == 2);
  CHECK(plan.gpus[0].physical_index == 0);

  // Virtual device entries follow the visible order.
  GPUOptions options = Visible("1,0");
  options.mutable_experimental()->add_virtual_devices()->add_memory_limit_mb(10);
  options.mutable_experimental()->add_virtual_devices()->add_memory_limit_mb(20);
  plan = Plan(options, cards);
  REQUIRE(plan.gpus.size() == 2);
  CHECK(plan.gpus[0].physical_index == 1);
  CHECK(plan.gpus[0].memory_limit_bytes == 10 * kMiB);
  CHECK(plan.gpus[1].physical_index == 0);
  CHECK(plan.gpus[1].memory_limit_bytes == 20 * kMiB);
}

TEST_CASE("Bad visible_device_list entries are INVALID_ARGUMENT naming the field",
          "[gpu_options]") {
  for (const char* list : {"2", "-1", "0,0", "a", "0,,1", "1,", "0x1", "1.0"}) {
    INFO(list);
    absl::Status error = PlanError(Visible(list), FreshCards(2, kGiB));
    CHECK(error.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(error.message(), "visible_device_list"));
  }
  // TF 2.21's texts (tsl/framework/device_id_utils.cc).
  CHECK(PlanError(Visible("0,1,0"), FreshCards(2, kGiB)).message() ==
        "visible_device_list contained a duplicate entry: 0,1,0");
  CHECK(PlanError(Visible("5"), FreshCards(2, kGiB)).message() ==
        "'visible_device_list' listed an invalid Device id '5' but visible device count is 2");
  CHECK(PlanError(Visible("0,x"), FreshCards(2, kGiB)).message() ==
        "Could not parse entry in 'visible_device_list': 'x'.");
  // Every entry is range-checked before repeats are looked for, as in TF.
  CHECK(PlanError(Visible("0,0,7"), FreshCards(2, kGiB)).message() ==
        "'visible_device_list' listed an invalid Device id '7' but visible device count is 2");
}

TEST_CASE("device_count[\"GPU\"] caps the number of GPUs", "[gpu_options]") {
  CHECK(Plan(GPUOptions(), FreshCards(3, kGiB), 1).gpus.size() == 1);
  CHECK(Plan(GPUOptions(), FreshCards(3, kGiB), 0).gpus.empty());
  CHECK(Plan(GPUOptions(), FreshCards(3, kGiB), 8).gpus.size() == 3);
  LogicalGpuPlan plan = Plan(Visible("2,1"), FreshCards(3, kGiB), 1);
  REQUIRE(plan.gpus.size() == 1);
  CHECK(plan.gpus[0].physical_index == 2);

  // The cap counts logical GPUs: the lowest TF ids are kept.
  GPUOptions options;
  auto* entry = options.mutable_experimental()->add_virtual_devices();
  entry->add_memory_limit_mb(1);
  entry->add_memory_limit_mb(2);
  entry->add_memory_limit_mb(3);
  plan = Plan(options, FreshCards(1, kGiB), 2);
  REQUIRE(plan.gpus.size() == 2);
  CHECK(plan.gpus[1].memory_limit_bytes == 2 * kMiB);

  CHECK(PlanError(GPUOptions(), FreshCards(1, kGiB), -1).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("TF_FORCE_GPU_ALLOW_GROWTH overrides allow_growth when true or false",
          "[gpu_options]") {
  GPUOptions growth;
  growth.set_allow_growth(true);
  GPUOptions no_growth;

  CHECK(Plan(growth, FreshCards(2, kGiB)).gpus[1].allow_growth);
  CHECK_FALSE(Plan(no_growth, FreshCards(1, kGiB)).gpus[0].allow_growth);

  // An override that changes the value warns once per plan, in TF's words.
  LogicalGpuPlan plan = Plan(no_growth, FreshCards(2, kGiB), std::nullopt, "true");
  CHECK(plan.gpus[0].allow_growth);
  CHECK(plan.gpus[1].allow_growth);
  CHECK(plan.warnings == std::vector<std::string>{
                             "Overriding allow_growth setting because the "
                             "TF_FORCE_GPU_ALLOW_GROWTH environment variable is set. Original "
                             "config value was 0."});

  plan = Plan(growth, FreshCards(1, kGiB), std::nullopt, "false");
  CHECK_FALSE(plan.gpus[0].allow_growth);
  CHECK(plan.warnings == std::vector<std::string>{
                             "Overriding allow_growth setting because the "
                             "TF_FORCE_GPU_ALLOW_GROWTH environment variable is set. Original "
                             "config value was 1."});

  // One that agrees with the config says nothing.
  plan = Plan(growth, FreshCards(1, kGiB), std::nullopt, "true");
  CHECK(plan.gpus[0].allow_growth);
  CHECK(plan.warnings.empty());
  plan = Plan(no_growth, FreshCards(1, kGiB), std::nullopt, "false");
  CHECK_FALSE(plan.gpus[0].allow_growth);
  CHECK(plan.warnings.empty());

  // Anything else keeps the config value, with a warning (TF logs an error).
  for (const char* garbage : {"garbage", "TRUE", "1", ""}) {
    INFO(garbage);
    plan = Plan(growth, FreshCards(1, kGiB), std::nullopt, garbage);
    CHECK(plan.gpus[0].allow_growth);
    REQUIRE(plan.warnings.size() == 1);
    CHECK(plan.warnings[0] ==
          absl::StrCat("The TF_FORCE_GPU_ALLOW_GROWTH environment variable is set but could "
                       "not be parsed: \"",
                       garbage,
                       "\". Valid values are \"true\" or \"false\". Using original config "
                       "value of 1."));
    plan = Plan(no_growth, FreshCards(1, kGiB), std::nullopt, garbage);
    CHECK_FALSE(plan.gpus[0].allow_growth);
  }

  std::vector<std::string> warnings;
  CHECK(ResolveAllowGrowth(true, "true", &warnings));
  CHECK_FALSE(ResolveAllowGrowth(false, "false", &warnings));
  CHECK(ResolveAllowGrowth(true, std::nullopt, &warnings));
  CHECK(warnings.empty());
  CHECK(ResolveAllowGrowth(false, "true", &warnings));
  CHECK_FALSE(ResolveAllowGrowth(true, "false", &warnings));
  CHECK(warnings.size() == 2);
  CHECK_FALSE(ResolveAllowGrowth(false, "yes", nullptr));
  CHECK(ResolveAllowGrowth(false, "true", nullptr));
}

TEST_CASE("CUDA_VISIBLE_DEVICES picks and orders cards, stopping at a bad entry",
          "[gpu_options]") {
  using V = std::vector<int>;
  CHECK(CudaVisibleCards(std::nullopt, 3) == V{0, 1, 2});
  CHECK(CudaVisibleCards(std::nullopt, 0) == V{});
  CHECK(CudaVisibleCards("", 3) == V{});
  CHECK(CudaVisibleCards("  ", 3) == V{});
  CHECK(CudaVisibleCards("1,0", 3) == V{1, 0});
  CHECK(CudaVisibleCards(" 2 , 0", 3) == V{2, 0});
  CHECK(CudaVisibleCards("2", 3) == V{2});
  // CUDA ignores everything from the first unusable entry on.
  CHECK(CudaVisibleCards("1,7,0", 3) == V{1});
  CHECK(CudaVisibleCards("7,0", 3) == V{});
  CHECK(CudaVisibleCards("0,x,1", 3) == V{0});
  CHECK(CudaVisibleCards("1,-1,0", 3) == V{1});
  CHECK(CudaVisibleCards("0,,1", 3) == V{0});
  CHECK(CudaVisibleCards("+1", 3) == V{});
  CHECK(CudaVisibleCards("GPU-8a1b2c3d", 3) == V{});
  CHECK(CudaVisibleCards("1,0,1", 3) == V{1, 0});
}

TEST_CASE("No physical GPUs give no logical GPUs", "[gpu_options]") {
  CHECK(Plan(GPUOptions(), {}).gpus.empty());
  // A visible id with no GPUs is out of range.
  CHECK(PlanError(Visible("0"), {}).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("DFLOW_SIMULATED_GPUS parses N and N:MiB", "[gpu_options][simulated]") {
  absl::StatusOr<SimulatedGpusSpec> spec = ParseSimulatedGpusEnv("4");
  REQUIRE(spec.ok());
  CHECK(spec->count == 4);
  CHECK(spec->mib == 16384);

  spec = ParseSimulatedGpusEnv("4:2048");
  REQUIRE(spec.ok());
  CHECK(spec->count == 4);
  CHECK(spec->mib == 2048);

  spec = ParseSimulatedGpusEnv(" 2:512 ");
  REQUIRE(spec.ok());
  CHECK(spec->count == 2);
  CHECK(spec->mib == 512);

  spec = ParseSimulatedGpusEnv("0");
  REQUIRE(spec.ok());
  CHECK(spec->count == 0);

  spec = ParseSimulatedGpusEnv("");
  REQUIRE(spec.ok());
  CHECK(spec->count == 0);
}

TEST_CASE("Malformed DFLOW_SIMULATED_GPUS values are clear errors",
          "[gpu_options][simulated]") {
  for (const char* bad : {"four", "4:", ":4", "4:0", "4:-1", "4:2:1", "-1", "65", "4:abc",
                          "4.5", "4:1.5", "+4", "4:+8", "99999999999999999999"}) {
    INFO(bad);
    absl::StatusOr<SimulatedGpusSpec> spec = ParseSimulatedGpusEnv(bad);
    REQUIRE_FALSE(spec.ok());
    CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(spec.status().message(), "DFLOW_SIMULATED_GPUS"));
    CHECK(absl::StrContains(spec.status().message(), bad));
  }
}

}  // namespace
}  // namespace dflow
