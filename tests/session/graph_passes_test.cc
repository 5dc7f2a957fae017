// Sessions run the registered graph passes: dflow's own (constant folding, CPU fusion,
// constant-input marking) and one a program registers, on every plan it builds.
#include <atomic>

#include <catch2/catch.hpp>

#include "graph/graph_pass_registry.h"
#include "graph/ops.h"
#include "session/client_session.h"

namespace dflow {
namespace {

std::atomic<int> partitions_seen{0};

// A pass outside dflow's own folders, registered the way a new pass would be.
DFLOW_REGISTER_GRAPH_PASS(count_partitions, "test_count_partitions", GraphPassPhase::kPartition,
                          300, [](const GraphPassContext& context, Graph*) {
                            if (context.device_type == "CPU") ++partitions_seen;
                            return absl::OkStatus();
                          });

std::vector<std::string> Names(GraphPassPhase phase) {
  std::vector<std::string> names;
  for (const GraphPass& pass : GraphPassRegistry::Global().Passes(phase)) {
    names.push_back(pass.name);
  }
  return names;
}

TEST_CASE("dflow's passes are registered in their order", "[session]") {
  CHECK(Names(GraphPassPhase::kPrunedGraph) ==
        std::vector<std::string>{"constant_folding", "dependency_optimization"});
  CHECK(Names(GraphPassPhase::kPartition) ==
        std::vector<std::string>{"cpu_fusion", "mark_constant_inputs", "test_count_partitions"});
}

TEST_CASE("A registered pass runs on each partition of each new plan", "[session]") {
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithDevice("/cpu:0"), {1.f, 2.f});
  Output b = Neg(root.WithDevice("/cpu:1"), a);
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  auto session = ClientSession::Create(root, config);
  REQUIRE(session.ok());
  const int before = partitions_seen.load();
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({b}, &out).ok());
  CHECK(partitions_seen.load() - before == 2);  // one plan, two CPU partitions
  REQUIRE((*session)->Run({b}, &out).ok());
  CHECK(partitions_seen.load() - before == 2);  // the cached plan: no new passes
}

}  // namespace
}  // namespace dflow
