#include "tools/op_profile.h"

#include <catch2/catch.hpp>

namespace dflow {
namespace {

void AddNode(DeviceStepStats* device, const std::string& name, const std::string& label,
             int64_t nanos) {
  NodeExecStats* node = device->add_node_stats();
  node->set_node_name(name);
  node->set_timeline_label(label);
  node->set_op_end_rel_nanos(nanos);
  node->set_op_end_rel_micros(nanos / 1000);
}

// One step of a MatMul+Add graph on one device: mm takes `mm_nanos`.
StepStats Step(int64_t mm_nanos) {
  StepStats stats;
  DeviceStepStats* cpu = stats.add_dev_stats();
  cpu->set_device("/device:CPU:0");
  AddNode(cpu, "w", "w = Const()", 1000);
  AddNode(cpu, "mm", "mm = MatMul(x, w)", mm_nanos);
  AddNode(cpu, "y", "y = Add(mm, b)", 2000);
  AddNode(cpu, "b", "b = Const()", 1000);
  return stats;
}

TEST_CASE("OpTypeFromTimelineLabel reads TF's \"name = Op(inputs)\"", "[tools]") {
  CHECK(OpTypeFromTimelineLabel("mm = MatMul(x, w)") == "MatMul");
  CHECK(OpTypeFromTimelineLabel("c = Const()") == "Const");
  CHECK(OpTypeFromTimelineLabel("scope/n = _FusedConv2D") == "_FusedConv2D");
  CHECK(OpTypeFromTimelineLabel("no op here").empty());
}

TEST_CASE("OpProfiler averages per step, by op type and by node, time descending",
          "[tools]") {
  OpProfiler profiler;
  profiler.Add(Step(6000));
  profiler.Add(Step(10000));
  const OpProfile profile = profiler.Summarize(2);
  CHECK(profile.traced_runs == 2);
  CHECK(profile.total_us == Approx(12.0));  // (8 + 2 + 2) us per step
  REQUIRE(profile.ops.size() == 3);
  CHECK(profile.ops[0].op == "MatMul");
  CHECK(profile.ops[0].avg_us == Approx(8.0));
  CHECK(profile.ops[0].percent == Approx(100.0 * 8 / 12));
  CHECK(profile.ops[1].op == "Add");  // ties with Const broken by name
  CHECK(profile.ops[2].op == "Const");
  CHECK(profile.ops[2].count == Approx(2.0));
  CHECK(profile.ops[2].cumulative_percent == Approx(100.0));
  REQUIRE(profile.nodes.size() == 2);  // the top 2 only
  CHECK(profile.nodes[0].name == "mm");
  CHECK(profile.nodes[0].device == "/device:CPU:0");
  CHECK(profile.nodes[1].name == "y");
  CHECK(profile.nodes[1].op == "Add");
}

TEST_CASE("OpProfiler: no runs, no rows; a label without an op is (unknown)", "[tools]") {
  CHECK(OpProfiler().Summarize(15).ops.empty());
  OpProfiler profiler;
  StepStats stats;
  AddNode(stats.add_dev_stats(), "n", "", 3000);
  profiler.Add(stats);
  const OpProfile profile = profiler.Summarize(15);
  REQUIRE(profile.ops.size() == 1);
  CHECK(profile.ops[0].op == "(unknown)");
  CHECK(profile.nodes[0].avg_us == Approx(3.0));
}

}  // namespace
}  // namespace dflow
