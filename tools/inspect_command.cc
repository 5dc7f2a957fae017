#include "tools/inspect_command.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/function_inliner.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/gradients/while_grad.h"
#include "graph/graph_def_import.h"
#include "graph/node_def_util.h"
#include "graph/partial_shape.h"
#include "graph/proto_io.h"
#include "graph/types.h"
#include "session/kernel_coverage.h"
#include "session/kernel_library.h"
#include "tools/cli_args.h"

namespace dflow {
namespace {

void PrintOpHistogram(const GraphDef& graph_def, std::ostream& out) {
  std::map<std::string, int> counts;
  for (const NodeDef& node : graph_def.node()) ++counts[node.op()];
  out << "ops (" << counts.size() << " types):\n";
  for (const auto& [op, count] : counts) {
    out << absl::StrFormat("  %-32s %d\n", op, count);
  }
}

std::string PlaceholderShape(const NodeDef& node) {
  const AttrValue* shape = FindAttr(node, "shape");
  if (shape == nullptr || !shape->has_shape()) return "<unknown>";
  absl::StatusOr<PartialShape> parsed = PartialShape::FromProto(shape->shape());
  return parsed.ok() ? parsed->ToString() : "<malformed>";
}

void PrintPlaceholders(const GraphDef& graph_def, std::ostream& out) {
  out << "placeholders:\n";
  int count = 0;
  for (const NodeDef& node : graph_def.node()) {
    if (node.op() != "Placeholder" && node.op() != "PlaceholderWithDefault") continue;
    const AttrValue* dtype = FindAttr(node, "dtype");
    out << "  " << node.name() << ":0  "
        << (dtype ? DataTypeString(dtype->type()) : std::string("<no dtype>")) << " "
        << PlaceholderShape(node) << (node.op() == "PlaceholderWithDefault" ? " (has default)" : "")
        << "\n";
    ++count;
  }
  if (count == 0) out << "  (none)\n";
}

// Nodes whose outputs no other node reads: the graph's likely results.
void PrintUnconsumedOutputs(const GraphDef& graph_def, std::ostream& out) {
  absl::flat_hash_set<std::string> consumed;
  for (const NodeDef& node : graph_def.node()) {
    for (const std::string& input : node.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (id.ok()) consumed.insert(id->node);
    }
  }
  out << "outputs nothing consumes:\n";
  for (const NodeDef& node : graph_def.node()) {
    if (!consumed.contains(node.name())) out << "  " << node.name() << " (" << node.op() << ")\n";
  }
}

void PrintDevices(const GraphDef& graph_def, std::ostream& out) {
  std::map<std::string, int> devices;
  for (const NodeDef& node : graph_def.node()) {
    if (!node.device().empty()) ++devices[node.device()];
  }
  out << "requested devices:\n";
  if (devices.empty()) out << "  (none)\n";
  for (const auto& [device, count] : devices) {
    out << "  " << device << "  (" << count << " nodes)\n";
  }
}

// The nodes of `graph_def` that are valid on their own, without their edges: enough to
// ask which ops have no kernel when the graph as a whole has import problems.
std::unique_ptr<Graph> NodesOnly(const GraphDef& graph_def) {
  auto graph = std::make_unique<Graph>();
  for (NodeDef node : graph_def.node()) {
    node.clear_input();
    graph->AddNode(std::move(node)).IgnoreError();  // an invalid node is a listed problem
  }
  return graph;
}

// `graph_def` with every Const's value replaced by an empty tensor of its dtype: what the
// kernel lookup needs, without copying the weights (a frozen VGG16 holds 553 MB).
GraphDef WithoutConstValues(const GraphDef& graph_def) {
  GraphDef bare;
  *bare.mutable_versions() = graph_def.versions();
  *bare.mutable_library() = graph_def.library();
  for (const NodeDef& node : graph_def.node()) {
    NodeDef* copy = bare.add_node();
    copy->set_name(node.name());
    copy->set_op(node.op());
    copy->set_device(node.device());
    *copy->mutable_input() = node.input();
    for (const auto& [key, value] : node.attr()) {
      if (key == "value" && IsConstantOp(node.op()) && value.has_tensor()) {
        (*copy->mutable_attr())[key].mutable_tensor()->set_dtype(value.tensor().dtype());
      } else {
        (*copy->mutable_attr())[key] = value;
      }
    }
  }
  return bare;
}

// Issue 5: every op this build cannot run, all at once, before anyone tries to run it;
// listed even when the graph has import problems (they are listed below it).
// Function calls run as their inlined bodies (as a Session runs them), so `checked` is
// the graph inlined (or as it is when it has no calls or they cannot be inlined).
void PrintMissingKernels(const GraphDef& checked, std::ostream& out) {
  ImportOptions options;
  options.infer_shapes = false;  // dtypes pick kernels; the values were left out
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      ImportGraphDef(WithoutConstValues(checked), options);
  std::unique_ptr<Graph> nodes = graph.ok() ? *std::move(graph) : NodesOnly(checked);
  const std::vector<MissingKernel> missing =
      FindMissingKernels(*nodes, DefaultKernelRegistry());
  out << "ops without a kernel here: " << missing.size();
  if (!graph.ok()) out << " (of the nodes valid on their own; the graph has problems, below)";
  out << "\n" << FormatMissingKernels(missing);
}

// Issue 13: the op types AddSymbolicGradients cannot differentiate (neither a gradient
// function nor declared gradient-free), so a user knows before building a backward pass.
void PrintOpsWithoutGradients(const GraphDef& graph_def, std::ostream& out) {
  const GradientRegistry& registry = GradientRegistry::Default();
  std::map<std::string, int> missing;
  for (const NodeDef& node : graph_def.node()) {
    if (registry.Find(node.op()) == nullptr && !registry.HasNoGradient(node.op()) &&
        !DifferentiatedAsLoop(node.op())) {
      ++missing[node.op()];
    }
  }
  out << "ops without a C++ gradient: " << missing.size() << "\n";
  for (const auto& [op, count] : missing) out << "  " << op << "  (" << count << " nodes)\n";
}

}  // namespace

absl::Status InspectGraphDef(const GraphDef& graph_def, std::ostream& out) {
  out << "nodes: " << graph_def.node_size() << "\n";
  out << "producer version: " << graph_def.versions().producer() << "\n";
  out << "library functions: " << graph_def.library().function_size() << "\n";
  PrintOpHistogram(graph_def, out);
  PrintPlaceholders(graph_def, out);
  PrintUnconsumedOutputs(graph_def, out);
  PrintDevices(graph_def, out);
  // Inlining copies the graph: only when it calls functions.
  absl::StatusOr<GraphDef> inlined = absl::NotFoundError("no function calls");
  const bool calls = HasFunctionCalls(graph_def);
  if (calls) inlined = InlineFunctionCalls(graph_def);
  PrintMissingKernels(calls && inlined.ok() ? *inlined : graph_def, out);
  PrintOpsWithoutGradients(graph_def, out);
  GraphReport report = CheckGraphDef(graph_def);
  // What stops the functions from inlining (recursion, a missing function, a budget)
  // stops a Session too: a problem, after the graph's own.
  if (calls && !inlined.ok()) {
    report.problems.push_back(
        {"", std::string(inlined.status().message()), inlined.status().code()});
  }
  out << "warnings: " << report.warnings.size() << "\n";
  for (const GraphProblem& warning : report.warnings) out << "  " << warning.message << "\n";
  out << "problems: " << report.problems.size() << "\n";
  for (const GraphProblem& problem : report.problems) out << "  " << problem.message << "\n";
  return ProblemsToStatus(report.problems);
}

absl::Status RunInspectCommand(const std::vector<std::string>& args, std::ostream& out) {
  absl::StatusOr<CliArgs> flags = CliArgs::Parse(args, {"graph"});
  if (!flags.ok()) return flags.status();
  absl::StatusOr<std::string> path = flags->Require("graph");
  if (!path.ok()) return path.status();
  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(*path);
  if (!graph_def.ok()) return graph_def.status();
  out << "graph: " << *path << "\n";
  return InspectGraphDef(*graph_def, out);
}

}  // namespace dflow
