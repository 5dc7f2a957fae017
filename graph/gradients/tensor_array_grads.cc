// Gradients of TF 1 TensorArray ops (TensorArrayV3 and friends: resource handles with a
// float `flow` that orders their reads and writes), as TF's tensor_array_grad.py builds
// them: every op's gradient works on the gradient TensorArray TensorArrayGradV3 gives
// for the forward handle, and a read becomes a write there (and so on) while the
// gradient of the flow carries the order back.
//
// One backward pass shares one gradient TensorArray per forward one: TensorArrayGradV3's
// `source` is the gradient scope's name up to its first "gradients" component (TF's
// _GetGradSource), the same for every op of one AddSymbolicGradients call, loops' bodies
// included.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::Out;
using Grads = std::vector<Output>;

// TF's _GetGradSource: the scope's name up to and including its first component that
// starts with "gradients".
absl::StatusOr<std::string> GradSource(const Scope& s, const Operation& op) {
  std::string source;
  for (absl::string_view part : absl::StrSplit(s.name_prefix(), '/')) {
    source += source.empty() ? std::string(part) : "/" + std::string(part);
    if (absl::StartsWith(part, "gradients")) return source;
  }
  return absl::InvalidArgumentError(
      "the gradient of TensorArray op '" + op.name() +
      "' must be built under a 'gradients' scope (AddSymbolicGradients makes one)");
}

// The gradient TensorArray of `op`'s forward handle (input 0) and its flow.
absl::StatusOr<Operation> GradArray(const Scope& s, const Operation& op, const Output& flow) {
  DFLOW_ASSIGN_OR_RETURN(std::string source, GradSource(s, op));
  return AddOp(s, "TensorArrayGradV3", {In(op, 0), flow}, {{"source", StringAttr(source)}});
}

// For an op that wrote the forward array (its output 0 is the flow after the write): the
// gradient array, made only after the write ran (TF's write_barrier on the incoming flow
// gradient), and the value `read_op` reads back from it with `inputs` between its handle
// and flow. `*flow` gets the barrier's flow, the gradient of the op's flow input.
absl::StatusOr<Output> ReadBackAfterWrite(const Scope& s, const Operation& op,
                                          const Output& flow_grad, const char* read_op,
                                          const std::vector<Output>& inputs, Output* flow) {
  *flow = Identity(s.WithControlDependencies(Operation(Out(op, 0).node)), flow_grad);
  DFLOW_ASSIGN_OR_RETURN(Operation g, GradArray(s, op, *flow));
  std::vector<OpArg> args = {g.output(0)};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.push_back(g.output(1));
  const AttrValue* dtype = op.node->attr("T");  // absent: DT_INVALID, refused by AddOp
  return AddOp(s, read_op, args, {{"dtype", TypeAttr(dtype ? dtype->type() : DT_INVALID)}})
      .output(0);
}

// ReadV3(handle, index, flow) -> value: the gradient is written at `index`.
absl::Status ReadGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  DFLOW_ASSIGN_OR_RETURN(Operation g, GradArray(s, op, In(op, 2)));
  Output flow = AddOp(s, "TensorArrayWriteV3", {g.output(0), In(op, 1), dy[0], g.output(1)})
                    .output(0);
  *dx = {Output(), Output(), flow};
  return absl::OkStatus();
}

// WriteV3(handle, index, value, flow) -> flow: the value's gradient is read at `index`,
// after the writes later in the forward pass (the incoming flow gradient).
absl::Status WriteGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output flow;
  DFLOW_ASSIGN_OR_RETURN(Output value, ReadBackAfterWrite(s, op, dy[0], "TensorArrayReadV3",
                                                          {In(op, 1)}, &flow));
  *dx = {Output(), Output(), value, flow};
  return absl::OkStatus();
}

// GatherV3(handle, indices, flow) -> value: scattered back.
absl::Status GatherGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  DFLOW_ASSIGN_OR_RETURN(Operation g, GradArray(s, op, In(op, 2)));
  Output flow =
      AddOp(s, "TensorArrayScatterV3", {g.output(0), In(op, 1), dy[0], g.output(1)}).output(0);
  *dx = {Output(), Output(), flow};
  return absl::OkStatus();
}

// ScatterV3(handle, indices, value, flow) -> flow: gathered back.
absl::Status ScatterGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output flow;
  DFLOW_ASSIGN_OR_RETURN(Output value, ReadBackAfterWrite(s, op, dy[0], "TensorArrayGatherV3",
                                                          {In(op, 1)}, &flow));
  *dx = {Output(), Output(), value, flow};
  return absl::OkStatus();
}

// ConcatV3(handle, flow) -> (value, lengths): split back by the same lengths.
absl::Status ConcatGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  DFLOW_ASSIGN_OR_RETURN(Operation g, GradArray(s, op, In(op, 1)));
  Output flow =
      AddOp(s, "TensorArraySplitV3", {g.output(0), dy[0], Out(op, 1), g.output(1)}).output(0);
  *dx = {Output(), flow};
  return absl::OkStatus();
}

// SplitV3(handle, value, lengths, flow) -> flow: concatenated back.
absl::Status SplitGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output flow;
  DFLOW_ASSIGN_OR_RETURN(Output value,
                         ReadBackAfterWrite(s, op, dy[0], "TensorArrayConcatV3", {}, &flow));
  *dx = {Output(), value, Output(), flow};
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterTensorArrayGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("TensorArrayReadV3", ReadGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorArrayWriteV3", WriteGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorArrayGatherV3", GatherGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorArrayScatterV3", ScatterGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorArrayConcatV3", ConcatGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorArraySplitV3", SplitGrad));
  for (const char* op : {"TensorArrayV3", "TensorArraySizeV3", "TensorArrayCloseV3",
                         "TensorArrayGradV3"}) {
    DFLOW_RETURN_IF_ERROR(r->RegisterNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace dflow
