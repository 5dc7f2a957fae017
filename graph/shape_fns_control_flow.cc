// Shape functions for ops that forward their inputs (Identity, Enter, Exit,
// NextIteration, ...), Switch and Merge, and ops whose outputs stay unknown (NoOp,
// _Send/_Recv, _Arg/_Retval).
#include <algorithm>
#include <optional>
#include <utility>

#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"

namespace dflow {
namespace shape_fn_util {
namespace {

absl::Status UnknownShapes(Ctx&) { return absl::OkStatus(); }

// Output i is input i (Identity, IdentityN, Enter, ...), value included.
absl::Status ForwardInputs(Ctx& c) {
  for (int i = 0; i < std::min(c.num_inputs(), c.num_outputs()); ++i) {
    c.set_output(i, c.input(i));
    ForwardValue(c, i, i);
  }
  return absl::OkStatus();
}

absl::Status SwitchShape(Ctx& c) {
  for (int i = 0; i < c.num_outputs(); ++i) {
    c.set_output(i, c.input(0));
    ForwardValue(c, 0, i);
  }
  return absl::OkStatus();
}

// Merge forwards whichever input arrives, so its shape is the one all inputs fit.
absl::Status MergeShape(Ctx& c) {
  std::optional<PartialShape> out;
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.input_available(i)) continue;
    out = out.has_value() ? RelaxShapes(*out, c.input(i)) : c.input(i);
  }
  if (out.has_value()) c.set_output(0, std::move(*out));
  if (c.num_outputs() > 1) c.set_output(1, PartialShape::Scalar());
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlowShapeFns(ShapeRegistry& r) {
  RegisterAll(r,
              {"Identity", "IdentityN", "RefIdentity", "StopGradient", "PreventGradient",
               "Snapshot", "Print", "Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
               "RefNextIteration", "LoopCond"},
              ForwardInputs);
  RegisterAll(r, {"Switch", "RefSwitch", "_SwitchN"}, SwitchShape);
  RegisterAll(r, {"ToBool"}, [](Ctx& c) {
    c.set_output(0, PartialShape::Scalar());
    return absl::OkStatus();
  });
  RegisterAll(r, {"Merge", "RefMerge"}, MergeShape);
  RegisterAll(
      r, {"NoOp", "ControlTrigger", "_Send", "_Recv", "_HostSend", "_HostRecv", "_Arg", "_Retval"},
      UnknownShapes);
}

}  // namespace shape_fn_util
}  // namespace dflow
