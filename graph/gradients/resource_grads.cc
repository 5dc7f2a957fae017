// Gradients through resource variables: a read passes its gradient to the handle, so
// AddSymbolicGradients with a variable's handle among `inputs` sums every read's.
#include "absl/status/status.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using Grads = std::vector<Output>;

absl::Status ReadVariableGrad(const Scope&, const Operation&, const Grads& dy, Grads* dx) {
  *dx = {dy[0]};
  return absl::OkStatus();
}

// ResourceGather (axis 0, batch_dims 0): the gathered rows' gradients summed into a
// dense gradient of the variable's shape (TF returns IndexedSlices of the same values).
absl::Status ResourceGatherGrad(const Scope& s, const Operation& op, const Grads& dy,
                                Grads* dx) {
  if (grad::IntAttrOf(op, "batch_dims") != 0) {
    return absl::UnimplementedError("the gradient of ResourceGather (node '" + op.name() +
                                    "') needs batch_dims = 0");
  }
  Output handle = In(op, 0), indices = In(op, 1);
  Output var_shape = AddOp(s, "VariableShape", {handle}).output(0);
  Output inner = Slice(s, var_shape, {1}, {-1});
  Output rows = Reshape(s, dy[0], ConcatV2(s, {Output(Const(s, {-1})), inner}, 0));
  Output num_rows = GatherV2(s, var_shape, 0, 0);
  Output summed =
      AddOp(s, "UnsortedSegmentSum", {rows, Reshape(s, indices, {-1}), num_rows}).output(0);
  *dx = {summed, Output()};
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterResourceGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("ReadVariableOp", ReadVariableGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("ResourceGather", ResourceGatherGrad));
  for (const char* op : {"VarHandleOp", "VarIsInitializedOp", "VariableShape",
                         "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}) {
    DFLOW_RETURN_IF_ERROR(r->RegisterNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace dflow
