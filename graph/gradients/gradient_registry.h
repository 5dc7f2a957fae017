// GradientRegistry: which gradient function builds the backward pass of each op type.
//
// A gradient function gets the forward op and one incoming gradient per op output (dy),
// and returns one gradient per op input (dx): the graph that computes dL/dinput from
// dL/doutput. A null Output in dx means "no gradient flows to this input" (TF's
// NoGradient: integer shapes, indices, the labels of a loss). An op may instead be
// registered as having no gradient at all (Shape, Const, comparisons, ...); gradients
// stop there without an error, while an op that is neither is reported by name.
//
// Registration is explicit (docs/STYLE.md #14): `RegisterStandardGradients` fills a registry
// with every gradient this library defines; `GradientRegistry::Default()` is the
// process-wide one built from it on first use.
//
// Thread-safety: a registry is filled once, then read from any thread.
#ifndef DFLOW_GRAPH_GRADIENTS_GRADIENT_REGISTRY_H_
#define DFLOW_GRAPH_GRADIENTS_GRADIENT_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/scope.h"

namespace dflow {

// Builds dx (one entry per input of `op`, null for none) from dy (one entry per output
// of `op`; never null: outputs without a gradient get zeros first). New nodes go in
// `scope`.
using GradFunc = std::function<absl::Status(const Scope& scope, const Operation& op,
                                            const std::vector<Output>& dy,
                                            std::vector<Output>* dx)>;

class GradientRegistry {
 public:
  // The registry with RegisterStandardGradients' entries, built once per process.
  static const GradientRegistry& Default();

  // ALREADY_EXISTS if `op` already has an entry of either kind.
  absl::Status Register(absl::string_view op, GradFunc func);
  absl::Status RegisterNoGradient(absl::string_view op);

  // The function for `op`, or null when it has none (see HasNoGradient).
  const GradFunc* Find(absl::string_view op) const;
  // True when `op` is registered as having no gradient.
  bool HasNoGradient(absl::string_view op) const;
  // Every op with a gradient function, sorted.
  std::vector<std::string> OpsWithGradients() const;

 private:
  absl::flat_hash_map<std::string, GradFunc> funcs_;
  absl::flat_hash_set<std::string> no_gradient_;
};

// Every gradient of this library (each group in its own file).
absl::Status RegisterStandardGradients(GradientRegistry* registry);
absl::Status RegisterMathGradients(GradientRegistry* registry);   // math_grads.cc
absl::Status RegisterArrayGradients(GradientRegistry* registry);  // array_grads.cc
absl::Status RegisterNnGradients(GradientRegistry* registry);     // nn_grads.cc
absl::Status RegisterResourceGradients(GradientRegistry* registry);  // resource_grads.cc
absl::Status RegisterControlFlowGradients(GradientRegistry* registry);  // control_flow_grads.cc
absl::Status RegisterListGradients(GradientRegistry* registry);  // list_grads.cc
// tensor_array_grads.cc
absl::Status RegisterTensorArrayGradients(GradientRegistry* registry);
absl::Status RegisterEinsumGradient(GradientRegistry* registry);  // einsum_grad.cc
absl::Status RegisterVolumeGradients(GradientRegistry* registry);  // volume_grads.cc
absl::Status RegisterLinalgGradients(GradientRegistry* registry);  // linalg_grads.cc
absl::Status RegisterDecompositionGradients(GradientRegistry* registry);  // decomposition_grads.cc

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRADIENTS_GRADIENT_REGISTRY_H_
