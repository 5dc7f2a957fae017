// The gradient of Einsum with one or two operands, as TF's _EinsumGrad for equations
// without ellipses: each operand's gradient is another Einsum of the output gradient
// (and the other operand) back to the operand's labels. Labels only that operand has
// (summed out of it alone) are left out of that Einsum and broadcast back.
//
// UNIMPLEMENTED naming the node: ellipses ("...") and a label repeated within one operand
// (a diagonal), whose gradients TF builds with extra reshapes not written here.
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

bool HasRepeatedLabel(const std::string& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels.find(labels[i], i + 1) != std::string::npos) return true;
  }
  return false;
}

// Operand `k`'s gradient: Einsum(dy[, other]) to the labels of operand k that the output
// or the other operand has, then broadcast over the ones summed out of operand k alone.
Output OperandGrad(const Scope& s, const Operation& op, const Output& dy,
                   const std::vector<std::string>& operands, const std::string& out, int k) {
  const std::string& labels = operands[k];
  const bool two = operands.size() == 2;
  const std::string other = two ? operands[1 - k] : "";
  std::string kept;
  std::vector<int32_t> mask;  // per label of operand k: 1 kept, 0 summed out alone
  for (char label : labels) {
    const bool keep = out.find(label) != std::string::npos ||
                      other.find(label) != std::string::npos;
    if (keep) kept += label;
    mask.push_back(keep ? 1 : 0);
  }
  const std::string equation = absl::StrCat(out, two ? "," + other : "", "->", kept);
  std::vector<Input> args = {dy};
  if (two) args.push_back(In(op, 1 - k));
  Output g = AddOp(s, "Einsum", {InputList(args)}, {{"equation", StringAttr(equation)}})
                 .output(0);
  if (kept.size() == labels.size()) return g;
  Output shape = Shape(s, In(op, k));
  const Input::Initializer kept_mask(mask, {static_cast<int64_t>(mask.size())});
  Output keep = Const(s, kept_mask);
  Output with_ones = Add(s, Mul(s, shape, keep), Sub(s, 1, keep));
  return BroadcastTo(s, Reshape(s, g, with_ones), shape);
}

absl::Status EinsumGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  const std::string equation = op.node->attr("equation")->s();
  std::vector<std::string> sides = absl::StrSplit(equation, "->");
  std::vector<std::string> operands =
      sides.size() == 2 ? absl::StrSplit(sides[0], ',') : std::vector<std::string>();
  bool supported = sides.size() == 2 && equation.find('.') == std::string::npos &&
                   static_cast<int>(operands.size()) == op.node->num_inputs() &&
                   (operands.size() == 1 || operands.size() == 2);
  for (const std::string& labels : operands) supported &= !HasRepeatedLabel(labels);
  if (!supported) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of Einsum '", equation, "' (node '", op.name(),
        "') is supported for one or two operands without ellipses or a label repeated "
        "within an operand"));
  }
  dx->clear();
  for (int k = 0; k < static_cast<int>(operands.size()); ++k) {
    dx->push_back(OperandGrad(s, op, dy[0], operands, sides[1], k));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterEinsumGradient(GradientRegistry* r) {
  return r->Register("Einsum", EinsumGrad);
}

}  // namespace dflow
