// [cuda] FULL_TRACE's stream rows on a real GPU: the MatMul's launches are timed on the
// compute stream and its input's copy on the host-to-device stream (runtime/stream_trace.h).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "session/step_stats_collector.h"
#include "tests/kernels/cuda/gpu_session.h"

namespace dflow::testing {
namespace {

TEST_CASE("A traced step has compute and copy stream rows on the GPU", "[cuda]") {
  RequireGpu();
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithDevice("/cpu:0").WithOpName("a"), {{1.f, 2.f}, {3.f, 4.f}});
  Output c = MatMul(root.WithDevice("/gpu:0").WithOpName("c"), a, a);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  REQUIRE((*session)->Run(options, {}, {c}, {}, &out, &metadata).ok());
  CHECK(out[0].data<float>()[0] == 7.f);

  std::map<std::string, std::vector<std::string>> nodes_by_row;
  for (const DeviceStepStats& dev : metadata.step_stats().dev_stats()) {
    if (!IsStreamStats(dev)) continue;
    for (const NodeExecStats& node : dev.node_stats()) {
      nodes_by_row[dev.device()].push_back(node.node_name());
      CHECK(node.all_end_rel_nanos() >= 0);
    }
  }
  std::string compute, host_to_device;
  for (const auto& [row, nodes] : nodes_by_row) {
    if (absl::EndsWith(row, "GPU:0/stream:compute")) compute = row;
    if (absl::EndsWith(row, "GPU:0/stream:host_to_device")) host_to_device = row;
  }
  INFO("rows: " << nodes_by_row.size());
  REQUIRE(!compute.empty());
  CHECK(std::count(nodes_by_row[compute].begin(), nodes_by_row[compute].end(), "c") == 1);
  CHECK(!host_to_device.empty());
}

}  // namespace
}  // namespace dflow::testing
