// GraphDef -> Graph, validated completely up front.
//
// Rules (every violated rule is reported; one problem per offending node or edge, each
// naming its node, so a user fixes a file in one pass instead of one error at a time;
// problems come in the file's node order, graph-level ones first):
//  1. Versions: producer >= 0, min_consumer <= kGraphDefVersion, not a bad consumer.
//  2. Names: non-empty, legal characters, unique.
//  3. Ops: set and registered (or a function in the graph's library).
//  4. Attrs: every required attr present, values of the declared type, allowed values,
//     minimums. An attr the op does not declare (other than `_`-prefixed ones) is what a
//     TensorFlow newer than the registry's 2.21 adds: as TF does, the node is accepted,
//     the attr dropped before any kernel sees it, and a warning reported.
//  5. Tensors in attrs: valid dtype, shape, content size (no tensor is materialised).
//  6. Devices: every requested device string parses.
//  7. Inputs: well-formed names, data before control, sources exist (unless fed),
//     output index in range, the op's input count, matching dtypes.
//  8. No cycles except through NextIteration (v1 while loops).
//  9. Shape inference succeeds (incompatible constant shapes are reported).
#ifndef DFLOW_GRAPH_GRAPH_DEF_IMPORT_H_
#define DFLOW_GRAPH_GRAPH_DEF_IMPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "proto/graph.pb.h"

namespace dflow {

// The GraphDef version dflow consumes (TF 1.15's TF_GRAPH_DEF_VERSION).
inline constexpr int kGraphDefVersion = 134;

struct GraphProblem {
  std::string node;     // the offending node; empty for graph-level problems
  std::string message;  // a complete sentence that names the node
  // TF's code for the problem: NOT_FOUND for an unregistered or missing op, else
  // INVALID_ARGUMENT.
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
};

// What checking a GraphDef found: problems make it unusable; warnings (attrs a newer
// TensorFlow added, dropped on import) do not.
struct GraphReport {
  std::vector<GraphProblem> problems;
  std::vector<GraphProblem> warnings;
};

struct ImportOptions {
  // Tensors ("x" or "x:0") the caller will feed. An input naming a fed tensor of a node
  // the GraphDef lacks is not dangling: a Placeholder of the consumer's dtype stands in.
  std::vector<std::string> fed_tensors;
  // Run shape inference (rule 9).
  bool infer_shapes = true;
};

// Checks rules 1-9 and returns every problem found (empty when the GraphDef is valid).
std::vector<GraphProblem> ValidateGraphDef(const GraphDef& graph_def,
                                           const ImportOptions& options = {},
                                           const OpRegistry& ops = OpRegistry::Global());
// The same, with the warnings.
GraphReport CheckGraphDef(const GraphDef& graph_def, const ImportOptions& options = {},
                          const OpRegistry& ops = OpRegistry::Global());

// Builds a Graph; an error listing every problem when the GraphDef is invalid. The
// graph's import_warnings() hold the warnings.
absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(
    const GraphDef& graph_def, const ImportOptions& options = {},
    const OpRegistry& ops = OpRegistry::Global());
// The same from a GraphDef the caller gives up: its nodes move into the Graph instead of
// being copied (a graph with big constants is not held twice while importing).
absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(
    GraphDef&& graph_def, const ImportOptions& options = {},
    const OpRegistry& ops = OpRegistry::Global());

// One status listing `problems` ("GraphDef has N problems:\n  ..."), with TensorFlow's
// code: NOT_FOUND when any op is unregistered (TF looks every op up first), else the
// first problem's (TF stops at the first problem in node order).
absl::Status ProblemsToStatus(const std::vector<GraphProblem>& problems);

// One paragraph for stderr about dropped attrs: what they are, why, and where.
std::string FormatUnknownAttrWarnings(const std::vector<std::string>& warnings);

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRAPH_DEF_IMPORT_H_
