// The graph pass registry: registration rules, phase order, errors naming the pass, and
// the passes dflow registers itself.
#include "graph/graph_pass_registry.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

namespace dflow {
namespace {

GraphPass Pass(std::string name, GraphPassPhase phase, int order, std::vector<std::string>* log,
               absl::Status result = absl::OkStatus()) {
  return GraphPass{name, phase, order, [name, log, result](const GraphPassContext&, Graph*) {
                     log->push_back(name);
                     return result;
                   }};
}

TEST_CASE("Passes of a phase run by order, then name; the first error stops them") {
  GraphPassRegistry registry;
  std::vector<std::string> log;
  REQUIRE(registry.Register(Pass("late", GraphPassPhase::kPartition, 200, &log)).ok());
  REQUIRE(registry.Register(Pass("b_early", GraphPassPhase::kPartition, 100, &log)).ok());
  REQUIRE(registry.Register(Pass("a_early", GraphPassPhase::kPartition, 100, &log)).ok());
  REQUIRE(registry.Register(Pass("whole", GraphPassPhase::kPrunedGraph, 1, &log)).ok());
  ConfigProto config;
  Graph graph(OpRegistry::Global());
  REQUIRE(registry.Run(GraphPassPhase::kPartition, {config, "CPU"}, &graph).ok());
  CHECK(log == std::vector<std::string>{"a_early", "b_early", "late"});

  REQUIRE(registry
              .Register(Pass("broken", GraphPassPhase::kPrunedGraph, 2, &log,
                             absl::InternalError("no luck")))
              .ok());
  absl::Status failed = registry.Run(GraphPassPhase::kPrunedGraph, {config, ""}, &graph);
  CHECK(failed.code() == absl::StatusCode::kInternal);
  CHECK(failed.message() == "no luck");
  CHECK(log.back() == "broken");
}

TEST_CASE("A pass name is registered once; a pass needs a name and a function") {
  GraphPassRegistry registry;
  std::vector<std::string> log;
  REQUIRE(registry.Register(Pass("p", GraphPassPhase::kPartition, 1, &log)).ok());
  absl::Status again = registry.Register(Pass("p", GraphPassPhase::kPrunedGraph, 2, &log));
  CHECK(again.code() == absl::StatusCode::kAlreadyExists);
  CHECK(absl::StrContains(again.message(), "'p'"));
  CHECK(registry.Register(GraphPass{"", GraphPassPhase::kPartition, 1, nullptr}).code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
