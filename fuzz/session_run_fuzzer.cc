// Fuzz target: import -> place -> partition -> run on the CPU. The input is a GraphDef
// (binary or text); a Session on one CPU thread with a 2 s operation timeout and small
// dflow_limits (64 MiB a tensor, 1 GiB of host memory, 100,000 nodes) creates it
// and runs every node of it as a target, then fetches its last node. Errors are
// expected; crashes, hangs past the timeout and runaway memory are findings.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/proto_io.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "session/session.h"

namespace {

// Nodes run as targets at most (the inlining and run limits bound the rest).
constexpr int kMaxTargets = 64;

dflow::ConfigProto SmallConfig() {
  dflow::ConfigProto config;
  config.set_intra_op_parallelism_threads(1);
  config.set_inter_op_parallelism_threads(1);
  config.set_operation_timeout_in_ms(2000);
  (*config.mutable_device_count())["GPU"] = 0;
  // Small limits (docs/LIMITS.md), so that a mutated size is an error, not an OOM.
  dflow::DflowLimits* limits = config.mutable_dflow_limits();
  limits->set_max_nodes_after_inlining(100000);
  limits->set_max_call_depth(16);
  limits->set_max_tensor_bytes(int64_t{64} << 20);
  limits->set_max_host_bytes(int64_t{1} << 30);
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dflow::GraphDef graph_def;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (!dflow::ParseProto(bytes, "GraphDef", &graph_def).ok()) return 0;
  if (graph_def.node_size() == 0) return 0;
  absl::StatusOr<std::unique_ptr<dflow::Session>> session = dflow::NewSession(SmallConfig());
  if (!session.ok() || !(*session)->Create(graph_def).ok()) return 0;
  std::vector<std::string> targets;
  for (int i = 0; i < graph_def.node_size() && i < kMaxTargets; ++i) {
    targets.push_back(graph_def.node(i).name());
  }
  std::vector<dflow::Tensor> outputs;
  (void)(*session)->Run({}, {}, targets, &outputs);
  (void)(*session)->Run({}, {graph_def.node(graph_def.node_size() - 1).name()}, {}, &outputs);
  (void)(*session)->Close();
  return 0;
}
