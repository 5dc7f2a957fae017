// Runs everywhere: the simulated-GPU registry is built from kernels/sim/gpu_kernel_list.h
// (one kernel per op with exactly the table's dtype constraints and host-memory args, as
// kernels/cuda registers), it refuses a table entry no CPU kernel can run, and in a
// Session a dtype the GPU kernels lack (DT_STRING) is placed on the CPU.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/sim/gpu_kernel_list.h"
#include "kernels/sim/register_sim_kernels.h"
#include "session/client_session.h"
#include "session/session.h"
#include "tests/kernels/sim/gpu_table_check.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

std::string DeviceOf(Session* session, const std::string& node) {
  for (const auto& d : session->placement().decisions) {
    if (d.node == node) return d.device;
  }
  return "<not placed>";
}

TEST_CASE("The table lists 105 distinct ops, each with a constrained type attr",
          "[sim_gpu_dtypes]") {
  std::set<std::string> ops;
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    ops.insert(spec.op);
    INFO(spec.op);
    // VarIsInitializedOp alone has no type attr.
    if (spec.op != "VarIsInitializedOp") CHECK_FALSE(spec.type_constraints.empty());
    CHECK(FindGpuKernelSpec(spec.op) == &spec);
  }
  CHECK(ops.size() == GpuKernelSpecs().size());
  CHECK(ops.size() == 105);
  CHECK(FindGpuKernelSpec("StringJoin") == nullptr);
}

TEST_CASE("Simulated-GPU kernels have exactly the table's dtype constraints and host args",
          "[sim_gpu_dtypes]") {
  KernelRegistry registry;
  REQUIRE(RegisterCpuKernels(&registry).ok());
  REQUIRE(RegisterIoKernels(&registry).ok());  // the resource-variable ops
  absl::Status status = RegisterSimGpuKernels(&registry);
  INFO(status.ToString());
  REQUIRE(status.ok());
  std::set<std::string> expected = testing::CheckGpuKernelsMatchTable(registry);
  const std::set<std::string> routing = testing::CheckRoutingKernels(registry);
  expected.insert(routing.begin(), routing.end());
  // No other op has a GPU kernel.
  std::set<std::string> gpu_ops;
  for (const std::string& op : registry.OpsWithKernels()) {
    if (!registry.Entries(op, "GPU").empty()) gpu_ops.insert(op);
  }
  CHECK(gpu_ops == expected);
  // A few dtypes the CPU kernels have and the CUDA kernels lack are not offered.
  auto supports_gpu = [&](const std::string& op, const std::string& attr, DataType t) {
    NodeDef node;
    node.set_op(op);
    (*node.mutable_attr())[attr].set_type(t);
    for (const std::string& device : registry.SupportedDeviceTypes(node)) {
      if (device == "GPU") return true;
    }
    return false;
  };
  CHECK_FALSE(supports_gpu("Identity", "T", DT_STRING));
  CHECK_FALSE(supports_gpu("Const", "dtype", DT_STRING));
  CHECK_FALSE(supports_gpu("Relu", "T", DT_INT32));
  CHECK_FALSE(supports_gpu("Softmax", "T", DT_DOUBLE));
  CHECK_FALSE(supports_gpu("Add", "T", DT_UINT8));
  CHECK(supports_gpu("Identity", "T", DT_INT32));
  CHECK(supports_gpu("Const", "dtype", DT_INT32));
  CHECK(supports_gpu("Add", "T", DT_INT64));
}

TEST_CASE("A table entry no CPU kernel can run fails registration naming op and dtype",
          "[sim_gpu_dtypes]") {
  // CPU kernels with exactly the table's constraints, except Softmax: double only.
  KernelRegistry registry;
  auto never = [](OpKernelConstruction*) -> std::unique_ptr<OpKernel> { return nullptr; };
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    KernelDef def = GpuKernelDef(spec);
    def.device_type = "CPU";
    if (spec.op == "Softmax") def.type_constraints = {{"T", {DT_DOUBLE}}};
    REQUIRE(registry.Register(def, never).ok());
  }
  absl::Status status = RegisterSimGpuKernels(&registry);
  INFO(status.ToString());
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(status.message(), "'Softmax'"));
  CHECK(absl::StrContains(status.message(), "T=float"));
}

TEST_CASE("A DT_STRING Const and Identity stay on the CPU with a simulated GPU",
          "[sim_gpu_dtypes]") {
  testing::ScopedEnv env("DFLOW_SIMULATED_GPUS", "1:256");
  Scope root = Scope::NewRootScope();
  TensorProto text;
  text.set_dtype(DT_STRING);
  text.mutable_tensor_shape();
  text.add_string_val("dflow");
  Output s = Const(root.WithOpName("s"), text);
  Output s_id = Identity(root.WithOpName("s_id"), s);
  // Dtypes the GPU kernels have: placed on the GPU, as before.
  Output i = Const(root.WithOpName("i"), {1, 2, 3});
  Output i_id = Identity(root.WithOpName("i_id"), i);
  Output f = Const(root.WithOpName("f"), {1.f, -2.f});
  Output r = Relu(root.WithOpName("r"), f);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({s_id, i_id, r}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  REQUIRE(out.size() == 3);
  CHECK(out[0].dtype() == DT_STRING);
  CHECK(out[0].scalar<std::string>() == "dflow");
  CHECK(out[1].flat<int32_t>()[2] == 3);
  CHECK(out[2].flat<float>()[0] == 1.f);
  CHECK(out[2].flat<float>()[1] == 0.f);
  Session* raw = (*session)->session();
  CHECK(DeviceOf(raw, "s") == kCpu0);
  CHECK(DeviceOf(raw, "s_id") == kCpu0);
  CHECK(DeviceOf(raw, "i") == kGpu0);
  CHECK(DeviceOf(raw, "i_id") == kGpu0);
  CHECK(DeviceOf(raw, "f") == kGpu0);
  CHECK(DeviceOf(raw, "r") == kGpu0);
}

}  // namespace
}  // namespace dflow
