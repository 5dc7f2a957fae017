// GPU memory options through a Session on simulated GPUs: the memory fraction caps what
// a step may allocate, out of memory is RESOURCE_EXHAUSTED at once naming the node,
// shape, dtype and device with the allocator's state, the session keeps working, and
// virtual devices each get their own limit; allow_growth (and TF_FORCE_GPU_ALLOW_GROWTH)
// take the card's memory a region at a time instead of reserving the whole limit.
#include <chrono>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/sim/sim_device.h"
#include "session/client_session.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

using testing::ScopedEnv;

constexpr int64_t kMiB = 1 << 20;

// A one-element int32 vector (Fill's dims).
Input::Initializer Vector(int64_t n) {
  return Input::Initializer(std::vector<int32_t>{static_cast<int32_t>(n)}, {1});
}

// Fill of `mib` MiB of floats on `device`, reduced to a scalar on the same device so
// only 4 bytes travel back to the client.
struct FillGraph {
  Scope root = Scope::NewRootScope();
  Output total;
  FillGraph(const std::string& device, int64_t mib) {
    Scope on = root.WithDevice(device);
    Output dims = Const(root.WithOpName("dims"), Vector(mib * kMiB / 4));
    Output big = Fill(on.WithOpName("big"), dims, Const(root.WithOpName("one"), 1.0f));
    total = Sum(on.WithOpName("total"), big, Const(root.WithOpName("axis"), Vector(0)));
  }
};

ConfigProto WithFraction(double fraction) {
  ConfigProto config;
  config.mutable_gpu_options()->set_per_process_gpu_memory_fraction(fraction);
  return config;
}

TEST_CASE("per_process_gpu_memory_fraction caps a step; OOM names node, shape and device at "
          "once; the session keeps working",
          "[gpu_memory][sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "1:64");
  FillGraph too_big("/gpu:0", 20);  // 20 MiB > 25% of 64 MiB
  // Built in the same scope, so one session holds both the failing and the fitting step.
  // (6 MiB, not 8: like TF's BFC, a free chunk is split only when it is at least twice
  // the request, so 8 MiB would take the whole 16 MiB region minus the small constants.)
  Scope fits_scope = too_big.root.NewSubScope("fits").WithDevice("/gpu:0");
  Output fits_dims = Const(fits_scope.WithOpName("dims"), Vector(6 * kMiB / 4));
  Output fits_big =
      Fill(fits_scope.WithOpName("big"), fits_dims, Const(fits_scope.WithOpName("one"), 1.0f));
  Output fits_total =
      Sum(fits_scope.WithOpName("total"), fits_big, Const(fits_scope.WithOpName("axis"), Vector(0)));
  auto session = ClientSession::Create(too_big.root, WithFraction(0.25));
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = (*session)->Run({too_big.total}, &out);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  REQUIRE(status.code() == absl::StatusCode::kResourceExhausted);
  const std::string message(status.message());
  INFO(message);
  CHECK(absl::StrContains(message, "OOM when allocating tensor with shape[5242880] and type "
                                   "float on /job:localhost/replica:0/task:0/device:GPU:0 by "
                                   "allocator GPU_0_bfc"));
  CHECK(absl::StrContains(message, "{{node big}}"));
  CHECK(absl::StrContains(message, "\nHint: If you want to see a list of allocated tensors "
                                   "when OOM happens, add report_tensor_allocations_upon_oom"));
  // The allocator's state (BfcAllocator::DescribeState): limit, in use, largest free chunk.
  CHECK(absl::StrContains(message, "Limit 16.00MiB"));
  CHECK(absl::StrContains(message, "; in use "));
  CHECK(absl::StrContains(message, "; largest free chunk "));
  CHECK(absl::StrContains(message, "Allocator (GPU_0_bfc) ran out of memory trying to allocate "
                                   "20.00MiB"));

  // The SAME session then runs a step that fits, and the failing one fails again.
  absl::Status fits_status = (*session)->Run({fits_total}, &out);
  UNSCOPED_INFO(fits_status.ToString());
  REQUIRE(fits_status.ok());
  CHECK(out[0].scalar<float>() == static_cast<float>(6 * kMiB / 4));
  CHECK((*session)->Run({too_big.total}, &out).code() == absl::StatusCode::kResourceExhausted);
  REQUIRE((*session)->Run({fits_total}, &out).ok());
  CHECK(out[0].scalar<float>() == static_cast<float>(6 * kMiB / 4));
}

// Bytes the simulated card behind `session`'s GPU:0 has handed to its BFC allocator.
size_t CardBytes(ClientSession& session) {
  absl::StatusOr<Device*> gpu = session.session()->devices().Lookup("GPU:0");
  REQUIRE(gpu.ok());
  auto* sim_gpu = dynamic_cast<sim::SimGpuDevice*>(*gpu);
  REQUIRE(sim_gpu != nullptr);
  return sim_gpu->card_memory()->allocated_bytes();
}

// After one tiny step on GPU:0, how many bytes the card has handed out.
size_t CardBytesAfterTinyStep(const ConfigProto& config) {
  Scope root = Scope::NewRootScope();
  Output tiny = Fill(root.WithOpName("tiny").WithDevice("/gpu:0"),
                     Const(root.WithOpName("four"), Vector(4)),
                     Const(root.WithOpName("three"), 3.0f));
  auto session = ClientSession::Create(root, config);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({tiny}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()) ==
        std::vector<float>{3, 3, 3, 3});
  return CardBytes(**session);
}

TEST_CASE("allow_growth starts small; without it the whole limit is reserved; "
          "TF_FORCE_GPU_ALLOW_GROWTH=true forces growth",
          "[gpu_memory][sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "1:64");
  ScopedEnv unset("TF_FORCE_GPU_ALLOW_GROWTH", std::nullopt);
  ConfigProto growth = WithFraction(0.5);  // a 32 MiB limit
  growth.mutable_gpu_options()->set_allow_growth(true);
  const size_t grown = CardBytesAfterTinyStep(growth);
  CHECK(grown > 0);
  CHECK(grown <= size_t{2} * kMiB);

  const ConfigProto reserve = WithFraction(0.5);
  CHECK(CardBytesAfterTinyStep(reserve) == size_t{32} * kMiB);

  ScopedEnv force("TF_FORCE_GPU_ALLOW_GROWTH", "true");
  const size_t forced = CardBytesAfterTinyStep(reserve);
  CHECK(forced > 0);
  CHECK(forced <= size_t{2} * kMiB);
}

TEST_CASE("A failed step leaves nothing allocated on the GPU", "[gpu_memory][sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "1:64");
  // Two 10 MiB fills on a 16 MiB limit: the second fails while the first is alive.
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Output dims = Const(root.WithOpName("dims"), Vector(10 * kMiB / 4));
  Output a = Fill(gpu.WithOpName("a"), dims, Const(root.WithOpName("one"), 1.0f));
  Output b = Fill(gpu.WithOpName("b").WithControlDependencies(Operation(a)), dims,
                  Const(root.WithOpName("two"), 2.0f));
  Output sum = Add(gpu.WithOpName("sum"), a, b);
  auto session = ClientSession::Create(root, WithFraction(0.25));
  REQUIRE(session.ok());
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(RunOptions(), {}, {sum}, {}, &out, &metadata);
  REQUIRE(status.code() == absl::StatusCode::kResourceExhausted);
  // The same session (ClientSession extends its graph) runs a small step on the GPU,
  // and the device reports nothing left over from the failed step.
  Output tiny = Fill(gpu.WithOpName("tiny"), Const(root.WithOpName("four"), Vector(4)),
                     Const(root.WithOpName("three"), 3.0f));
  metadata.Clear();
  REQUIRE((*session)->Run(RunOptions(), {}, {tiny}, {}, &out, &metadata).ok());
  REQUIRE(metadata.device_memory_size() >= 1);
  for (const DeviceMemoryUsage& usage : metadata.device_memory()) {
    // Only the small constants the kernels hold (each rounded to 256 bytes) remain.
    if (absl::StrContains(usage.device(), "GPU:0")) CHECK(usage.bytes_in_use() <= 1024);
  }
}

TEST_CASE("Virtual devices split one simulated GPU, each with its own limit",
          "[gpu_memory][sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "1:64");
  ConfigProto config;
  auto* split = config.mutable_gpu_options()->mutable_experimental()->add_virtual_devices();
  split->add_memory_limit_mb(8);
  split->add_memory_limit_mb(24);
  std::vector<Tensor> out;

  FillGraph on_small("/gpu:0", 12);  // over GPU:0's 8 MiB
  auto s0 = ClientSession::Create(on_small.root, config);
  REQUIRE(s0.ok());
  absl::Status status = (*s0)->Run({on_small.total}, &out);
  REQUIRE(status.code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(status.message(), "device:GPU:0"));

  FillGraph on_large("/gpu:1", 10);  // within GPU:1's 24 MiB
  auto s1 = ClientSession::Create(on_large.root, config);
  REQUIRE(s1.ok());
  absl::Status large_status = (*s1)->Run({on_large.total}, &out);
  UNSCOPED_INFO(large_status.ToString());
  REQUIRE(large_status.ok());
  CHECK(out[0].scalar<float>() == static_cast<float>(10 * kMiB / 4));
}

}  // namespace
}  // namespace dflow
