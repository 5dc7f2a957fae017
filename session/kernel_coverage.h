// Kernel coverage: which ops of a graph have no kernel in this build, found before
// anything runs, and reported all at once with the nodes that use them.
//
// TF 1.x fails at the first such node ("No OpKernel was registered to support Op ..."),
// at session creation, even when that node would never run (a SavedModel's
// ParseExample when the client feeds `x:0` directly). dflow instead:
//   - places such nodes anyway (PermissiveKernelSupport below), so a graph whose
//     unsupported ops are never needed still runs;
//   - refuses a step whose pruned graph needs any of them, listing every missing op
//     with its nodes (ExecutionPlan::Build), before running anything;
//   - lets `dflow inspect` list every missing op of the whole graph.
#ifndef DFLOW_SESSION_KERNEL_COVERAGE_H_
#define DFLOW_SESSION_KERNEL_COVERAGE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/graph.h"
#include "graph/kernel_support.h"

namespace dflow {

// One op (with one combination of type attrs) that no device type can run.
struct MissingKernel {
  std::string op;
  std::string type_attrs;          // "T=DT_FLOAT, Tpaddings=DT_INT32"; "" when none
  std::vector<std::string> nodes;  // in graph order
};

// The ops of `graph` with no kernel on any device type, in order of first use. Callers
// inline library function calls first (graph/function_inliner.h), as the Session does,
// so a call is judged by its body's ops.
std::vector<MissingKernel> FindMissingKernels(const Graph& graph, const KernelSupport& kernels);

// INVALID_ARGUMENT "No OpKernel was registered to support 2 ops this step needs
// (nothing was run): ..." with one line per op naming its nodes; OK when `missing` is
// empty.
absl::Status MissingKernelsError(const std::vector<MissingKernel>& missing);

// One line per op: "  Pad [T=DT_FLOAT, Tpaddings=DT_INT32]: 1 node: first/Pad".
std::string FormatMissingKernels(const std::vector<MissingKernel>& missing);

// Answers like `base`, except that a node no device type can run is reported as
// runnable on `fallback_type`, so placement succeeds and the missing kernel is
// reported later, only if a step needs the node.
class PermissiveKernelSupport : public KernelSupport {
 public:
  // `base` is borrowed and must outlive this object.
  PermissiveKernelSupport(const KernelSupport& base, std::string fallback_type)
      : base_(base), fallback_type_(std::move(fallback_type)) {}

  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node) const override;
  std::string DescribeKernels(absl::string_view op) const override {
    return base_.DescribeKernels(op);
  }

 private:
  const KernelSupport& base_;
  std::string fallback_type_;
};

}  // namespace dflow

#endif  // DFLOW_SESSION_KERNEL_COVERAGE_H_
