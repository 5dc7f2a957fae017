// The gradient of Einsum with one or two operands, as TF 2.21's _EinsumGrad
// (python/ops/linalg_grad.py), ellipses and repeated labels included:
//  - each operand's gradient is another Einsum of the output gradient (and the other
//    operand) back to the operand's labels, "...", repeated labels and all: the kernel
//    inflates a label repeated in its output ("i->ii" puts zeros off the diagonal);
//  - labels only that operand has (summed out of it alone) are left out of that Einsum
//    and broadcast back: a Reshape and BroadcastTo when the remaining labels keep their
//    order and none repeats, else a broadcast of the gradient over the summed labels
//    and one more Einsum to the operand's labels;
//  - with "..." in the output, each operand's gradient is summed over the batch
//    dimensions the other operand broadcast it to (BroadcastGradientArgs of the two
//    operands' "..." parts), as for BatchMatMulV2.
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using Grads = std::vector<Output>;

constexpr char kEllipsis[] = "...";

bool Has(const std::string& subscripts, char label) {
  return subscripts.find(label) != std::string::npos;
}
bool HasEllipsis(const std::string& subscripts) {
  return subscripts.find(kEllipsis) != std::string::npos;
}
std::string WithoutEllipsis(std::string subscripts) {
  const size_t at = subscripts.find(kEllipsis);
  if (at != std::string::npos) subscripts.erase(at, 3);
  return subscripts;
}

Output Einsum(const Scope& s, const std::string& equation, const std::vector<Input>& args) {
  return AddOp(s, "Einsum", {InputList(args)}, {{"equation", StringAttr(equation)}})
      .output(0);
}

// The axis of `label` in an operand with these subscripts: from the front before the
// ellipsis, from the back (negative) after it.
int AxisOfLabel(const std::string& subscripts, char label) {
  const size_t at = subscripts.find(kEllipsis);
  const std::string before = subscripts.substr(0, at);
  if (Has(before, label)) return static_cast<int>(before.find(label));
  const std::string after = subscripts.substr(at + 3);
  return static_cast<int>(after.find(label)) - static_cast<int>(after.size());
}

// Labels of `subscripts` outside `keep` (and not '.'), each once, in a fixed order.
std::string LabelsMissingFrom(const std::string& subscripts, const std::string& keep) {
  std::set<char> missing;
  for (char label : subscripts) {
    if (label != '.' && !Has(keep, label)) missing.insert(label);
  }
  return std::string(missing.begin(), missing.end());
}

bool RepeatsALabel(const std::string& subscripts) {
  const std::string labels = WithoutEllipsis(subscripts);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels.find(labels[i], i + 1) != std::string::npos) return true;
  }
  return false;
}

// `grad`, the gradient for `grad_subs` (an operand's subscripts less its labels in
// `reduced`), broadcast back over the `reduced` labels to the operand's `input_subs`.
Output BroadcastOverReduced(const Scope& s, const Output& grad, const std::string& grad_subs,
                            const std::string& input_subs, const Output& input_shape,
                            const std::string& reduced) {
  std::vector<int32_t> axes;
  for (char label : reduced) axes.push_back(AxisOfLabel(input_subs, label));
  const Input::Initializer axes_init(axes, {static_cast<int64_t>(axes.size())});
  Output axes_out = Const(s, axes_init);
  std::string unreduced;
  for (char label : input_subs) {
    if (!Has(reduced, label)) unreduced += label;
  }
  // The fast path only without "...": the gradient's batch dims may be the broadcast of
  // both operands', larger than this one's (TF's check counts '.' as a repeated label).
  if (!HasEllipsis(input_subs) && !RepeatsALabel(input_subs) && !RepeatsALabel(grad_subs) &&
      unreduced == grad_subs) {
    return grad::BroadcastOverAxes(s, grad, input_shape, axes_out);
  }
  Output positive = grad::PositiveAxes(s, axes_out, Size(s, input_shape));
  Output reduced_dims = GatherV2(s, input_shape, positive, 0);
  Output grad_shape = Shape(s, grad);
  Output ones = Fill(s, Const(s, {static_cast<int32_t>(reduced.size())}), 1);
  Output widened = BroadcastTo(s, Reshape(s, grad, ConcatV2(s, {ones, grad_shape}, 0)),
                               ConcatV2(s, {reduced_dims, grad_shape}, 0));
  return Einsum(s, absl::StrCat(reduced, grad_subs, "->", input_subs), {widened});
}

// The gradient of one of two operands (`input_subs`, shape `input_shape`; the other is
// `other`) before unbroadcasting.
Output OperandGrad(const Scope& s, const Output& dy, const std::string& output_subs,
                   const Output& other, const std::string& other_subs,
                   const std::string& input_subs, const Output& input_shape) {
  const std::string reduced = LabelsMissingFrom(input_subs, output_subs + other_subs);
  std::string left;
  for (char label : input_subs) {
    if (!Has(reduced, label)) left += label;
  }
  Output g = Einsum(s, absl::StrCat(output_subs, ",", other_subs, "->", left), {dy, other});
  if (reduced.empty()) return g;
  return BroadcastOverReduced(s, g, left, input_subs, input_shape, reduced);
}

// The dims of `shape` an operand's "..." covers.
Output EllipsisDims(const Scope& s, const Output& shape, const std::string& subscripts) {
  const size_t at = subscripts.find(kEllipsis);
  const int start = static_cast<int>(at);
  const int after = static_cast<int>(subscripts.size() - at - 3);
  StridedSliceAttrs attrs;
  if (after == 0) attrs.end_mask = 1;
  return StridedSlice(s, shape, Const(s, {start}), Const(s, {-after}), Const(s, {1}), attrs);
}

// Sums `grad` over the batch dims at `start` that broadcasting added to its operand.
Output Unbroadcast(const Scope& s, const Output& grad, const Output& axes_in_batch,
                   const std::string& subscripts, const Output& shape) {
  const int start = static_cast<int>(subscripts.find(kEllipsis));
  Output axes = Add(s, axes_in_batch, start);
  return Reshape(s, Sum(s, grad, axes), shape);
}

absl::Status TwoOperandGrads(const Scope& s, const Operation& op, const Output& dy,
                             std::string x_subs, std::string y_subs,
                             const std::string& out_subs, Grads* dx) {
  if (HasEllipsis(out_subs)) {
    // "...ij,jk->ik" is valid with no batch dims on x, but not "jk,ik->...ij" backwards.
    if (!HasEllipsis(x_subs)) x_subs += kEllipsis;
    if (!HasEllipsis(y_subs)) y_subs += kEllipsis;
  }
  Output x = In(op, 0), y = In(op, 1);
  Output x_shape = Shape(s, x), y_shape = Shape(s, y);
  Output gx = OperandGrad(s, dy, out_subs, y, y_subs, x_subs, x_shape);
  Output gy = OperandGrad(s, dy, out_subs, x, x_subs, y_subs, y_shape);
  if (HasEllipsis(out_subs)) {
    Operation args = AddOp(s, "BroadcastGradientArgs",
                           {EllipsisDims(s, x_shape, x_subs), EllipsisDims(s, y_shape, y_subs)});
    gx = Unbroadcast(s, gx, args.output(0), x_subs, x_shape);
    gy = Unbroadcast(s, gy, args.output(1), y_subs, y_shape);
  }
  *dx = {gx, gy};
  return absl::OkStatus();
}

absl::Status EinsumGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  const std::string equation = op.node->attr("equation")->s();
  std::vector<std::string> sides = absl::StrSplit(equation, "->");
  std::vector<std::string> operands =
      sides.size() == 2 ? absl::StrSplit(sides[0], ',') : std::vector<std::string>();
  if (sides.size() != 2 || static_cast<int>(operands.size()) != op.node->num_inputs() ||
      operands.empty() || operands.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the gradient of Einsum '", equation, "' (node '", op.name(),
        "') needs one or two input subscripts matching the node's inputs, and one '->'"));
  }
  const std::string& out_subs = sides[1];
  if (operands.size() == 2) {
    return TwoOperandGrads(s, op, dy[0], operands[0], operands[1], out_subs, dx);
  }
  // One operand: dy broadcast straight back over the labels summed out of it.
  const std::string& in_subs = operands[0];
  const std::string reduced = LabelsMissingFrom(in_subs, out_subs);
  if (reduced.empty()) {
    *dx = {Einsum(s, absl::StrCat(out_subs, "->", in_subs), {dy[0]})};
  } else {
    *dx = {BroadcastOverReduced(s, dy[0], out_subs, in_subs, Shape(s, In(op, 0)), reduced)};
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterEinsumGradient(GradientRegistry* r) {
  return r->Register("Einsum", EinsumGrad);
}

}  // namespace dflow
