// Data parallelism as TF 1's multi-tower example and MirroredStrategy do it: the model
// is built once per device (a "tower") on that device's share of the batch, all towers
// reading the same variables; each tower's gradients are computed on its device; their
// average is built on one chosen device and applied once, so there is one copy of the
// variables and the towers can never drift apart.
//
//   for (i ...) {
//     Scope tower = root.NewSubScope("tower_" + i).WithDevice(devices[i]);
//     Output loss = BuildModel(tower, vars, x[i], y[i]);
//     tower_grads.push_back(*opt.ComputeGradients(tower, loss, vars));
//   }
//   auto avg = AverageGradients(root.WithDevice("/cpu:0"), tower_grads);
//   Operation train = *opt.ApplyGradients(root.WithDevice("/cpu:0"), *avg);
#ifndef DFLOW_GRAPH_TRAIN_TOWERS_H_
#define DFLOW_GRAPH_TRAIN_TOWERS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "graph/train/optimizer.h"

namespace dflow {

// Per variable, the mean of the towers' gradients (AddN, then times 1/towers), built in
// `scope` (its device is where the towers' gradients meet). Every tower must list the
// same variables in the same order (INVALID_ARGUMENT otherwise); a variable no tower
// has a gradient for keeps a null one, a variable only some towers have one for is an
// INVALID_ARGUMENT naming it.
absl::StatusOr<std::vector<GradAndVar>> AverageGradients(
    const Scope& scope, const std::vector<std::vector<GradAndVar>>& tower_grads);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_TOWERS_H_
