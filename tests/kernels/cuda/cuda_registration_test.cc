// Runs wherever the CUDA toolkit is installed, with or without a GPU: the CUDA kernels
// register (one per op of kernels/sim/gpu_kernel_list.h, with exactly its dtypes and
// host-memory args, as the simulated GPUs' kernels; generic _Send/_Recv included), a
// CUDA kernel refuses a device that is not a CUDA GPU, and a machine without a GPU still
// gets simulated GPUs and their kernels.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/op_registry.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cuda/register_cuda_kernels.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/sim/gpu_kernel_list.h"
#include "kernels/sim/register_sim_kernels.h"
#include "runtime/cuda/cuda_gpus.h"
#include "session/device_factory.h"
#include "session/kernel_library.h"
#include "tests/testing/op_tester.h"
#include "tests/kernels/sim/gpu_table_check.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

TEST_CASE("CUDA kernels register every op of the table with exactly its dtypes",
          "[cuda_registration]") {
  KernelRegistry registry;
  REQUIRE(RegisterCpuKernels(&registry).ok());
  REQUIRE(RegisterIoKernels(&registry).ok());
  absl::Status status = RegisterCudaKernels(&registry);
  INFO(status.ToString());
  REQUIRE(status.ok());
  std::set<std::string> expected = testing::CheckGpuKernelsMatchTable(registry);
  for (const char* op : {"_Send", "_Recv"}) {
    INFO(op);
    CHECK_FALSE(registry.Entries(op, "GPU").empty());
  }
  // Exactly the listed ops (plus the copies) have GPU kernels.
  std::set<std::string> gpu_ops;
  for (const std::string& op : registry.OpsWithKernels()) {
    if (!registry.Entries(op, "GPU").empty()) gpu_ops.insert(op);
  }
  const std::set<std::string> routing = testing::CheckRoutingKernels(registry);
  expected.insert(routing.begin(), routing.end());
  CHECK(gpu_ops == expected);
}

TEST_CASE("CUDA and simulated-GPU kernels have the same dtypes and host-memory args",
          "[cuda_registration]") {
  KernelRegistry cuda_registry, sim_registry;
  REQUIRE(RegisterCpuKernels(&cuda_registry).ok());
  REQUIRE(RegisterIoKernels(&cuda_registry).ok());
  REQUIRE(RegisterCudaKernels(&cuda_registry).ok());
  REQUIRE(RegisterCpuKernels(&sim_registry).ok());
  REQUIRE(RegisterIoKernels(&sim_registry).ok());
  REQUIRE(RegisterSimGpuKernels(&sim_registry).ok());
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    INFO(spec.op);
    auto cuda = cuda_registry.Entries(spec.op, "GPU");
    auto sim = sim_registry.Entries(spec.op, "GPU");
    REQUIRE(cuda.size() == 1);
    REQUIRE(sim.size() == 1);
    CHECK(cuda[0].first.type_constraints == sim[0].first.type_constraints);
    CHECK(cuda[0].first.host_memory_args == sim[0].first.host_memory_args);
  }
}

TEST_CASE("A CUDA kernel built for a non-CUDA device fails naming the node and device",
          "[cuda_registration]") {
  KernelRegistry registry;
  REQUIRE(RegisterCpuKernels(&registry).ok());
  REQUIRE(RegisterIoKernels(&registry).ok());
  REQUIRE(RegisterCudaKernels(&registry).ok());
  NodeDef node;
  node.set_name("r");
  node.set_op("Relu");
  AttrValue t;
  t.set_type(DT_FLOAT);
  (*node.mutable_attr())["T"] = t;
  const OpDef* op_def = OpRegistry::Global().Find("Relu");
  REQUIRE(op_def != nullptr);
  DataTypeVector types = {DT_FLOAT};
  // The GPU kernel's factory, handed the CPU test device.
  REQUIRE(registry.Find(node, "GPU") != nullptr);
  auto entries = registry.Entries("Relu", "GPU");
  REQUIRE_FALSE(entries.empty());
  OpKernelConstruction construction(node, *op_def, types, types, testing::TestCpuDevice());
  std::unique_ptr<OpKernel> kernel = entries.front().second(&construction);
  INFO(construction.status().ToString());
  CHECK(construction.status().code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(construction.status().message(), "'r'"));
  CHECK(absl::StrContains(construction.status().message(), "not a CUDA GPU"));
}

TEST_CASE("Without a GPU: zero CUDA GPUs, simulated GPUs and their kernels still work",
          "[cuda_registration]") {
  absl::StatusOr<int> count = cuda::RealGpuCount();
  INFO(count.status().ToString());
  REQUIRE(count.ok());
  if (*count > 0) {
    WARN("this machine has a CUDA GPU; the no-GPU half of this test is moot here");
    return;
  }
  CHECK(cuda::CudaBuild());
  CHECK_FALSE(cuda::HaveRealGpus());
  testing::ScopedEnv env("DFLOW_SIMULATED_GPUS", "2:64");
  absl::StatusOr<SessionDevices> devices = CreateSessionDevices(ConfigProto());
  REQUIRE(devices.ok());
  int gpus = 0;
  for (Device* d : devices->devices->devices()) {
    if (d->device_type() == "GPU") {
      ++gpus;
      CHECK(absl::StrContains(d->attributes().physical_device_desc(), "simulated"));
    }
  }
  CHECK(gpus == 2);
  CHECK_FALSE(DefaultKernelRegistry().Entries("MatMul", "GPU").empty());
}

}  // namespace
}  // namespace dflow
