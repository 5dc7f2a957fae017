// Einsum's equation ("ij,jk->ik", "...ii->...i"), parsed as TF 2.21's
// ParseEinsumEquation (core/util/einsum_op_util.cc) parses it, so the kernel
// and the graph's shape function classify every label the same way TF's kernel
// does.
//
// Why a separate file: the kernel (einsum_op.cc) needs the labels and their
// roles at construction, and shape inference needs the same parse; both take
// TF's words for bad equations from here.
//
// Like TF: exactly one "->" (the op has no implicit form: tf.einsum writes the
// output subscripts before it builds the node), one or two input subscripts,
// any character is a label, and '.' starts an ellipsis that takes three
// characters.
#ifndef DFLOW_KERNELS_CPU_EINSUM_EQUATION_H_
#define DFLOW_KERNELS_CPU_EINSUM_EQUATION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace dflow {

// A label's role, TF's EinsumDimensionType; the order is the order the kernel
// lays an operand out in.
enum class EinsumDim : int {
  kBroadcasting = 0,  // under an ellipsis
  kBatch = 1,         // in both inputs and the output
  kFree = 2,          // in one input and the output
  kContract = 3,      // in both inputs, not the output
  kReduce = 4,        // in one input only: summed before the contraction
};

// Stands for "..." in a label list until the operand's rank is known.
inline constexpr int kEinsumEllipsis = -1;

struct EinsumEquation {
  // Labels are numbered 0, 1, ... in order of first appearance (inputs, then
  // output).
  std::vector<std::vector<int>> input_labels;  // kEinsumEllipsis where "..." stands
  std::vector<int> output_labels;
  std::vector<EinsumDim> label_types;                // per named label
  std::vector<std::vector<int>> input_label_counts;  // per input, per named label
  std::vector<int> output_label_counts;
  std::vector<bool> input_has_ellipsis;
  bool output_has_ellipsis = false;
  std::vector<char> label_chars;  // the character of each named label
};

// TF's parse, or its INVALID_ARGUMENT texts: "Expecting exactly one '->' in
// einsum equation: <eq>", "Expecting 1 or 2 input subscripts in equation '<eq>'
// but got: <n>".
absl::StatusOr<EinsumEquation> ParseEinsumEquation(const std::string &equation);

// A label of the output that no input has, or -1. TF's kernel aborts the
// process on such an equation (its graph shape function rejects it); callers
// report it with EinsumOutputOnlyLabelError.
int EinsumOutputOnlyLabel(const EinsumEquation &eq);
absl::Status EinsumOutputOnlyLabelError(const std::string &equation, const EinsumEquation &eq,
                                        int label);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_EINSUM_EQUATION_H_
