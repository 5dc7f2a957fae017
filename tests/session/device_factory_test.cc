// CreateSessionDevices (session/device_factory.h): CPUs, then the simulated GPUs that
// DFLOW_SIMULATED_GPUS asks for, shaped by gpu_options; and the Device mapping text.
#include "session/device_factory.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/testing/scoped_env.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/cuda/cuda_gpus.h"
#include "runtime/device_backend_registry.h"
#include "runtime/gpu_options.h"
#include "runtime/sim/sim_device.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

using testing::ScopedEnv;

SessionDevices Create(const ConfigProto& config) {
  absl::StatusOr<SessionDevices> devices = CreateSessionDevices(config);
  INFO(devices.status().ToString());
  REQUIRE(devices.ok());
  return *std::move(devices);
}

std::string GpuName(int i) {
  return absl::StrCat("/job:localhost/replica:0/task:0/device:GPU:", i);
}

TEST_CASE("Without DFLOW_SIMULATED_GPUS there are no GPUs", "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, std::nullopt);
  ConfigProto config;
  // gpu_options are ignored without GPUs (users' configs often name GPU 0).
  config.mutable_gpu_options()->set_visible_device_list("0");
  SessionDevices devices = Create(config);
  REQUIRE(devices.devices->devices().size() == 1);
  CHECK(devices.devices->devices()[0]->name() == "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(DeviceMappingText(*devices.devices) == "Device mapping: no known devices.\n");

  ScopedEnv zero(kSimulatedGpusEnv, "0");
  CHECK(Create(ConfigProto()).devices->devices().size() == 1);
  ScopedEnv empty(kSimulatedGpusEnv, "");
  CHECK(Create(ConfigProto()).devices->devices().size() == 1);
}

TEST_CASE("DFLOW_SIMULATED_GPUS=4 gives CPU:0 then GPU:0..3", "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "4");
  ScopedEnv growth("TF_FORCE_GPU_ALLOW_GROWTH", std::nullopt);
  SessionDevices devices = Create(ConfigProto());
  const std::vector<Device*>& list = devices.devices->devices();
  REQUIRE(list.size() == 5);
  CHECK(list[0]->name() == "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(devices.devices->client_device() == list[0]);
  for (int i = 0; i < 4; ++i) {
    INFO("GPU " << i);
    Device* gpu = list[i + 1];
    CHECK(gpu->name() == GpuName(i));
    CHECK(gpu->device_type() == "GPU");
    CHECK(gpu->IsAccelerator());
    CHECK(gpu->compute_pool() == devices.pool.get());
    CHECK(gpu->allocator()->Name() == absl::StrCat("GPU_", i, "_bfc"));
    // A fresh 16 GiB card: available - max(300 MiB, 5%).
    CHECK(gpu->attributes().memory_limit() == DefaultGpuMemoryLimit(int64_t{16384} << 20));
    CHECK(gpu->attributes().memory_limit() == 16320875725);
    auto* sim = dynamic_cast<sim::SimGpuDevice*>(gpu);
    REQUIRE(sim != nullptr);
    CHECK(sim->options().total_bytes == int64_t{16384} << 20);
    CHECK(sim->options().physical_index == i);
    CHECK_FALSE(sim->options().allow_growth);
    absl::StatusOr<Device*> found = devices.devices->Lookup(absl::StrCat("/gpu:", i));
    REQUIRE(found.ok());
    CHECK(*found == gpu);
  }
  CHECK(devices.warnings.empty());
}

TEST_CASE("DFLOW_SIMULATED_GPUS=N:MiB sets each card's total", "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "4:1024");
  SessionDevices devices = Create(ConfigProto());
  REQUIRE(devices.devices->devices().size() == 5);
  for (int i = 1; i <= 4; ++i) {
    auto* sim = dynamic_cast<sim::SimGpuDevice*>(devices.devices->devices()[i]);
    REQUIRE(sim != nullptr);
    CHECK(sim->options().total_bytes == 1024 * kMiB);
    CHECK(sim->card_memory()->total_bytes() == static_cast<size_t>(1024 * kMiB));
    // Below 2 GiB TF keeps 225 MiB back.
    CHECK(sim->attributes().memory_limit() == (1024 - 225) * kMiB);
  }
}

TEST_CASE("A malformed DFLOW_SIMULATED_GPUS is INVALID_ARGUMENT naming it",
          "[device_factory]") {
  for (const char* bad : {"four", "4:", "4:x", "-2", "1:2:3"}) {
    INFO(bad);
    ScopedEnv env(kSimulatedGpusEnv, std::string(bad));
    absl::StatusOr<SessionDevices> devices = CreateSessionDevices(ConfigProto());
    REQUIRE_FALSE(devices.ok());
    CHECK(devices.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(devices.status().message(), "DFLOW_SIMULATED_GPUS"));
  }
}

TEST_CASE("Simulated GPUs follow every CPU and obey gpu_options", "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "2:1024");
  ScopedEnv growth("TF_FORCE_GPU_ALLOW_GROWTH", std::nullopt);

  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  config.mutable_gpu_options()->set_per_process_gpu_memory_fraction(0.25);
  config.mutable_gpu_options()->set_allow_growth(true);
  SessionDevices devices = Create(config);
  const std::vector<Device*>& list = devices.devices->devices();
  REQUIRE(list.size() == 4);
  CHECK(list[0]->name() == "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(list[1]->name() == "/job:localhost/replica:0/task:0/device:CPU:1");
  CHECK(list[2]->name() == GpuName(0));
  CHECK(list[3]->name() == GpuName(1));
  CHECK(list[2]->attributes().memory_limit() == 256 * kMiB);
  CHECK(dynamic_cast<sim::SimGpuDevice*>(list[3])->options().allow_growth);

  SECTION("visible_device_list reorders the cards") {
    ConfigProto visible;
    visible.mutable_gpu_options()->set_visible_device_list("1,0");
    SessionDevices reordered = Create(visible);
    REQUIRE(reordered.devices->devices().size() == 3);
    auto* gpu0 = dynamic_cast<sim::SimGpuDevice*>(reordered.devices->devices()[1]);
    REQUIRE(gpu0 != nullptr);
    CHECK(gpu0->name() == GpuName(0));
    CHECK(gpu0->options().physical_index == 1);
    CHECK(absl::StrContains(gpu0->attributes().physical_device_desc(), "pci bus id: sim:1"));
  }
  SECTION("device_count caps the GPUs") {
    ConfigProto capped;
    (*capped.mutable_device_count())["GPU"] = 1;
    CHECK(Create(capped).devices->devices().size() == 2);
    (*capped.mutable_device_count())["GPU"] = 0;
    CHECK(Create(capped).devices->devices().size() == 1);
  }
  SECTION("virtual devices split a card and share its memory") {
    ConfigProto split;
    split.mutable_gpu_options()->set_visible_device_list("0");
    auto* entry = split.mutable_gpu_options()->mutable_experimental()->add_virtual_devices();
    entry->add_memory_limit_mb(100.9f);
    entry->add_memory_limit_mb(200);
    SessionDevices virtual_devices = Create(split);
    REQUIRE(virtual_devices.devices->devices().size() == 3);
    auto* a = dynamic_cast<sim::SimGpuDevice*>(virtual_devices.devices->devices()[1]);
    auto* b = dynamic_cast<sim::SimGpuDevice*>(virtual_devices.devices->devices()[2]);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a->attributes().memory_limit() == 100 * kMiB);
    CHECK(b->attributes().memory_limit() == 200 * kMiB);
    CHECK(a->card_memory() == b->card_memory());
  }
  SECTION("invalid gpu_options are INVALID_ARGUMENT naming the field") {
    ConfigProto bad;
    bad.mutable_gpu_options()->set_visible_device_list("0,5");
    absl::StatusOr<SessionDevices> result = CreateSessionDevices(bad);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(result.status().message(), "visible_device_list"));

    ConfigProto both;
    both.mutable_gpu_options()->set_per_process_gpu_memory_fraction(0.5);
    both.mutable_gpu_options()->mutable_experimental()->add_virtual_devices();
    both.mutable_gpu_options()->mutable_experimental()->add_virtual_devices();
    result = CreateSessionDevices(both);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().message() ==
          "It's invalid to set per_process_gpu_memory_fraction when virtual_devices is set.");
  }
}

// The simulated GPUs of `devices` (after the CPUs), in TF id order; `devices` owns them.
std::vector<sim::SimGpuDevice*> SimGpus(const SessionDevices& devices) {
  std::vector<sim::SimGpuDevice*> gpus;
  for (Device* device : devices.devices->devices()) {
    if (device->device_type() != "GPU") continue;
    auto* gpu = dynamic_cast<sim::SimGpuDevice*>(device);
    REQUIRE(gpu != nullptr);
    gpus.push_back(gpu);
  }
  return gpus;
}

TEST_CASE("CUDA_VISIBLE_DEVICES filters and reorders simulated cards as CUDA does",
          "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "2:1024");
  SECTION("unset: every card in order") {
    ScopedEnv cuda(kCudaVisibleDevicesEnv, std::nullopt);
    SessionDevices devices = Create(ConfigProto());
    std::vector<sim::SimGpuDevice*> gpus = SimGpus(devices);
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0]->options().physical_index == 0);
    CHECK(gpus[1]->options().physical_index == 1);
  }
  SECTION("1,0 makes card 1 GPU:0") {
    ScopedEnv cuda(kCudaVisibleDevicesEnv, "1,0");
    SessionDevices devices = Create(ConfigProto());
    std::vector<sim::SimGpuDevice*> gpus = SimGpus(devices);
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0]->name() == GpuName(0));
    CHECK(gpus[0]->options().physical_index == 1);
    CHECK(absl::StrContains(gpus[0]->attributes().physical_device_desc(),
                            "device: 0, name: dflow simulated GPU, pci bus id: sim:1,"));
    CHECK(gpus[1]->name() == GpuName(1));
    CHECK(absl::StrContains(gpus[1]->attributes().physical_device_desc(), "pci bus id: sim:0,"));
    CHECK(gpus[0]->card_memory() != gpus[1]->card_memory());
  }
  SECTION("an empty value hides every card") {
    ScopedEnv cuda(kCudaVisibleDevicesEnv, "");
    SessionDevices devices = Create(ConfigProto());
    CHECK(SimGpus(devices).empty());
    CHECK(devices.devices->devices().size() == 1);
  }
  SECTION("an out-of-range entry ends the list") {
    ScopedEnv cuda(kCudaVisibleDevicesEnv, "1,5,0");
    SessionDevices devices = Create(ConfigProto());
    std::vector<sim::SimGpuDevice*> gpus = SimGpus(devices);
    REQUIRE(gpus.size() == 1);
    CHECK(gpus[0]->options().physical_index == 1);
  }
  SECTION("visible_device_list indexes the cards CUDA left visible") {
    ScopedEnv cuda(kCudaVisibleDevicesEnv, "1");
    ConfigProto config;
    config.mutable_gpu_options()->set_visible_device_list("0");
    SessionDevices devices = Create(config);
    std::vector<sim::SimGpuDevice*> gpus = SimGpus(devices);
    REQUIRE(gpus.size() == 1);
    CHECK(gpus[0]->name() == GpuName(0));
    CHECK(gpus[0]->options().physical_index == 1);
    CHECK(absl::StrContains(gpus[0]->attributes().physical_device_desc(), "pci bus id: sim:1,"));

    // Only one card is visible, so "1" no longer exists.
    config.mutable_gpu_options()->set_visible_device_list("1");
    absl::StatusOr<SessionDevices> result = CreateSessionDevices(config);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(result.status().message(), "visible device count is 1"));
  }
  SECTION("both reorder: visible_device_list 1,0 over CUDA's 1,0 is cards 0,1") {
    ScopedEnv cuda(kCudaVisibleDevicesEnv, "1,0");
    ConfigProto config;
    config.mutable_gpu_options()->set_visible_device_list("1,0");
    SessionDevices devices = Create(config);
    std::vector<sim::SimGpuDevice*> gpus = SimGpus(devices);
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0]->options().physical_index == 0);
    CHECK(gpus[1]->options().physical_index == 1);
  }
}

TEST_CASE("TF_FORCE_GPU_ALLOW_GROWTH reaches the simulated GPUs", "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "1:256");
  {
    ScopedEnv growth("TF_FORCE_GPU_ALLOW_GROWTH", "true");
    SessionDevices devices = Create(ConfigProto());
    auto* gpu = dynamic_cast<sim::SimGpuDevice*>(devices.devices->devices()[1]);
    REQUIRE(gpu != nullptr);
    CHECK(gpu->options().allow_growth);
    // It changed the config's value, so TF's override warning is reported.
    REQUIRE(devices.warnings.size() == 1);
    CHECK(absl::StartsWith(devices.warnings[0], "Overriding allow_growth setting because the "
                                                "TF_FORCE_GPU_ALLOW_GROWTH environment"));

    ConfigProto already;
    already.mutable_gpu_options()->set_allow_growth(true);
    CHECK(Create(already).warnings.empty());
  }
  {
    ScopedEnv growth("TF_FORCE_GPU_ALLOW_GROWTH", "maybe");
    ConfigProto config;
    config.mutable_gpu_options()->set_allow_growth(true);
    SessionDevices devices = Create(config);
    auto* gpu = dynamic_cast<sim::SimGpuDevice*>(devices.devices->devices()[1]);
    REQUIRE(gpu != nullptr);
    CHECK(gpu->options().allow_growth);
    REQUIRE(devices.warnings.size() == 1);
    CHECK(absl::StrContains(devices.warnings[0], "TF_FORCE_GPU_ALLOW_GROWTH"));
  }
}

TEST_CASE("The Device mapping text lists the simulated GPUs", "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "2");
  SessionDevices devices = Create(ConfigProto());
  CHECK(DeviceMappingText(*devices.devices) ==
        "Device mapping:\n"
        "/job:localhost/replica:0/task:0/device:GPU:0 -> device: 0, name: dflow simulated GPU, "
        "pci bus id: sim:0, compute capability: 9.0 (simulated)\n"
        "/job:localhost/replica:0/task:0/device:GPU:1 -> device: 1, name: dflow simulated GPU, "
        "pci bus id: sim:1, compute capability: 9.0 (simulated)\n");
}

TEST_CASE("A session with simulated GPUs lists them and still runs on the CPU",
          "[device_factory]") {
  ScopedEnv env(kSimulatedGpusEnv, "2:512");
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(ConfigProto());
  REQUIRE(session.ok());
  std::vector<DeviceAttributes> listed = (*session)->ListDevices();
  REQUIRE(listed.size() == 3);
  CHECK(listed[1].name() == GpuName(0));
  CHECK(listed[1].device_type() == "GPU");
  CHECK(listed[2].memory_limit() == DefaultGpuMemoryLimit(512 * kMiB));

  // Add has a GPU kernel, so the graph runs on GPU:0 and the result comes back.
  REQUIRE((*session)->Create(testing::GraphFromText(R"(
    node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                                float_val: 1 float_val: 2 } } } }
    node { name: "b" op: "Add" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  )")).ok());
  std::vector<Tensor> out;
  absl::Status run = (*session)->Run({}, {"b"}, {}, &out);
  INFO(run.ToString());
  REQUIRE(run.ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].flat<float>()[0] == 2.0f);
  CHECK(out[0].flat<float>()[1] == 4.0f);
  bool placed = false;
  for (const auto& decision : (*session)->placement().decisions) {
    if (decision.node != "b") continue;
    placed = true;
    CHECK(decision.device == GpuName(0));
  }
  CHECK(placed);
}

// This machine has no GPU: of the two GPU backends linked in, the simulated one serves.
TEST_CASE("dflow's GPU backends are registered; without a GPU the simulated one serves",
          "[session]") {
  std::vector<std::string> all;
  for (const DeviceBackend& backend : DeviceBackendRegistry::Global().All()) {
    all.push_back(backend.name);
  }
  CHECK(std::count(all.begin(), all.end(), "simulated_gpu") == 1);
  std::vector<DeviceBackend> chosen = DeviceBackendRegistry::Global().Chosen();
  REQUIRE(chosen.size() == 1);
  CHECK(chosen[0].device_type == "GPU");
  CHECK(chosen[0].name == (cuda::HaveRealGpus() ? "cuda" : "simulated_gpu"));
}

}  // namespace
}  // namespace dflow
