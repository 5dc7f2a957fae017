// The routing kernels (kernels/cpu/control_flow_ops.h): IdentityN and NoOp as kernels,
// and the registrations for the CPU and for accelerators (host-memory scalars). Switch,
// Merge and the loop kernels run through the executor in tests/runtime/control_flow_test.
#include "kernels/cpu/control_flow_ops.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::OpTester;

OpTester Op(const std::string& op) {
  return OpTester(op, testing::TestKernelRegistry(RegisterControlFlowKernels));
}

TEST_CASE("IdentityN forwards every input of mixed dtypes", "[kernels][control_flow]") {
  Tensor a = MakeTensor<float>({2}, {1, 2});
  Tensor b = MakeTensor<int64_t>({}, {5});
  AttrValue types;
  types.mutable_list()->add_type(DT_FLOAT);
  types.mutable_list()->add_type(DT_INT64);
  auto out = Op("IdentityN").Attr("T", types).Input(a).Input(b).Run();
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].SharesBufferWith(a));
  CHECK((*out)[1].SharesBufferWith(b));
}

TEST_CASE("NoOp runs and produces nothing", "[kernels][control_flow]") {
  auto out = Op("NoOp").Run();
  REQUIRE(out.ok());
  CHECK(out->empty());
}

TEST_CASE("Accelerators get the routing kernels with their scalars in host memory",
          "[kernels][control_flow]") {
  KernelRegistry registry;
  REQUIRE(RegisterControlFlowKernels(&registry).ok());
  REQUIRE(RegisterAcceleratorControlFlowKernels(&registry, "GPU").ok());
  using Args = std::vector<std::string>;
  auto host_args = [&](const std::string& op, const std::string& device) {
    auto entries = registry.Entries(op, device);
    REQUIRE(entries.size() == 1);
    return entries[0].first.host_memory_args;
  };
  CHECK(host_args("Switch", "GPU") == Args{"pred"});
  CHECK(host_args("RefSwitch", "GPU") == Args{"pred"});
  CHECK(host_args("_SwitchN", "GPU") == Args{"output_index"});
  CHECK(host_args("Merge", "GPU") == Args{"value_index"});
  CHECK(host_args("LoopCond", "GPU") == (Args{"input", "output"}));
  CHECK(host_args("ToBool", "GPU") == (Args{"input", "output"}));
  for (const char* op : {"Enter", "Exit", "NextIteration", "IdentityN", "NoOp"}) {
    INFO(op);
    CHECK(host_args(op, "GPU").empty());
  }
  // On the CPU there is nothing to tell apart.
  CHECK(host_args("Switch", "CPU").empty());
  CHECK(RegisterAcceleratorControlFlowKernels(&registry, "GPU").code() ==
        absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace dflow
