// AddSymbolicGradients: extends a graph with the backward pass (TF's
// cc/framework/gradients.h, with the same signature).
//
//   Scope root = Scope::NewRootScope();
//   Output x = Placeholder(root, DT_FLOAT);
//   Output y = Square(root, x);
//   std::vector<Output> dy_dx;
//   DFLOW_RETURN_IF_ERROR(AddSymbolicGradients(root, {y}, {x}, &dy_dx));
//
// The gradient of sum(outputs[i] * grad_inputs[i]) with respect to each of `inputs` is
// built by walking back from `outputs` through the nodes that lie between them and the
// inputs, calling each op's registered GradFunc, and summing (AddN) the gradients that
// reach one tensor along several paths. Nothing upstream of the inputs is touched.
//
// Where the new nodes go: under "<scope>/gradients/<forward node>_grad/", on the device
// the forward node requested (so each tower of a data-parallel model computes its own
// gradients), unless the scope names a device.
//
// Results: grad_outputs[i] is the gradient for inputs[i], or a null Output when no
// output depends on it (TF's NoGradient). A DT_RESOURCE input (a variable's handle)
// gets the gradient of its reads (ReadVariableOp, ResourceGather), summed.
//
// Errors: INVALID_ARGUMENT for mismatched lists or a handle of another graph;
// NOT_FOUND "No gradient defined for op: <type> (node '<name>')" for a node on the path
// whose op has no gradient function and is not registered as gradient-free. The scope's
// status records the first error too.
#ifndef DFLOW_GRAPH_GRADIENTS_SYMBOLIC_GRADIENTS_H_
#define DFLOW_GRAPH_GRADIENTS_SYMBOLIC_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/scope.h"

namespace dflow {

// `grad_inputs` has one entry per output: the incoming gradient dL/doutputs[i].
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs);

// The same with grad_inputs of ones (OnesLike(outputs[i])): the gradient of the sum of
// the outputs.
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  std::vector<Output>* grad_outputs);

// As above with an explicit registry (tests, extensions).
absl::Status AddSymbolicGradients(const GradientRegistry& registry, const Scope& scope,
                                  const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs);

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRADIENTS_SYMBOLIC_GRADIENTS_H_
