#include "graph/cond_ops.h"

#include <utility>

namespace dflow {

SwitchOutputs Switch(const Scope& scope, Input data, Input pred) {
  Operation op = AddOp(scope, "Switch", {std::move(data), std::move(pred)});
  return {op.output(0), op.output(1)};  // null Outputs when the op failed
}

MergeOutputs Merge(const Scope& scope, InputList inputs) {
  Operation op = AddOp(scope, "Merge", {std::move(inputs)});
  return {op.output(0), op.output(1)};
}

}  // namespace dflow
