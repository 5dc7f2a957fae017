#include "graph/graph_pass_registry.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dflow {

GraphPassRegistry& GraphPassRegistry::Global() {
  static GraphPassRegistry* registry = new GraphPassRegistry();
  return *registry;
}

absl::Status GraphPassRegistry::Register(GraphPass pass) {
  if (pass.name.empty() || !pass.run) {
    return absl::InvalidArgumentError("A graph pass needs a name and a function");
  }
  absl::MutexLock lock(&mu_);
  for (const GraphPass& existing : passes_) {
    if (existing.name == pass.name) {
      return absl::AlreadyExistsError(
          absl::StrCat("Graph pass '", pass.name, "' is already registered"));
    }
  }
  passes_.push_back(std::move(pass));
  return absl::OkStatus();
}

std::vector<GraphPass> GraphPassRegistry::Passes(GraphPassPhase phase) const {
  std::vector<GraphPass> passes;
  {
    absl::MutexLock lock(&mu_);
    for (const GraphPass& pass : passes_) {
      if (pass.phase == phase) passes.push_back(pass);
    }
  }
  std::sort(passes.begin(), passes.end(), [](const GraphPass& a, const GraphPass& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return passes;
}

absl::Status GraphPassRegistry::Run(GraphPassPhase phase, const GraphPassContext& context,
                                    Graph* graph) const {
  // A pass's error is returned as it is: passes name the nodes at fault in TF's texts.
  for (const GraphPass& pass : Passes(phase)) {
    absl::Status status = pass.run(context, graph);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

namespace internal {

GraphPassRegistrar::GraphPassRegistrar(GraphPass pass) {
  const std::string name = pass.name;
  const absl::Status status = GraphPassRegistry::Global().Register(std::move(pass));
  if (!status.ok()) {
    std::cerr << "dflow: registering graph pass '" << name << "' failed: " << status << "\n";
    std::abort();
  }
}

}  // namespace internal
}  // namespace dflow
