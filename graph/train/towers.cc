#include "graph/train/towers.h"

#include "absl/strings/str_cat.h"
#include "graph/ops.h"

namespace dflow {

absl::StatusOr<std::vector<GradAndVar>> AverageGradients(
    const Scope& scope, const std::vector<std::vector<GradAndVar>>& tower_grads) {
  if (tower_grads.empty()) {
    return absl::InvalidArgumentError("AverageGradients: no towers");
  }
  const std::vector<GradAndVar>& first = tower_grads[0];
  for (size_t t = 1; t < tower_grads.size(); ++t) {
    bool same = tower_grads[t].size() == first.size();
    for (size_t i = 0; same && i < first.size(); ++i) {
      same = tower_grads[t][i].variable.handle() == first[i].variable.handle();
    }
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AverageGradients: tower ", t, " lists other variables than tower 0"));
    }
  }
  Scope s = scope.NewSubScope("average_gradients");
  const double scale = 1.0 / static_cast<double>(tower_grads.size());
  std::vector<GradAndVar> averaged;
  for (size_t i = 0; i < first.size(); ++i) {
    std::vector<Output> grads;
    for (const std::vector<GradAndVar>& tower : tower_grads) {
      if (tower[i].gradient.node != nullptr) grads.push_back(tower[i].gradient);
    }
    if (grads.empty()) {
      averaged.push_back({Output(), first[i].variable});
      continue;
    }
    if (grads.size() != tower_grads.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AverageGradients: variable '", first[i].variable.name(), "' has a gradient in ",
          grads.size(), " of ", tower_grads.size(), " towers"));
    }
    Output sum = grads.size() == 1 ? grads[0] : AddN(s, grads);
    averaged.push_back({Mul(s, sum, scale), first[i].variable});
  }
  if (!scope.ok()) return scope.status();
  return averaged;
}

}  // namespace dflow
