#include "tools/place_command.h"

#include <memory>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_import.h"
#include "graph/node_def_util.h"
#include "graph/partition.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "session/session.h"
#include "tools/cli_args.h"

namespace dflow {
namespace {

// The bytes one copy of `copy` moves per step, when shape inference knows the shape.
std::optional<int64_t> CopyBytes(const Graph& graph, const CrossDeviceCopy& copy,
                                 std::string* shape_text) {
  *shape_text = "<unknown>";
  absl::StatusOr<TensorId> id = ParseTensorName(copy.tensor);
  if (!id.ok()) return std::nullopt;
  const Node* src = graph.FindNode(id->node);
  if (src == nullptr || id->index < 0 ||
      id->index >= static_cast<int>(src->output_shapes().size())) {
    return std::nullopt;
  }
  const PartialShape& shape = src->output_shapes()[id->index];
  *shape_text = shape.ToString();
  const std::optional<int64_t> elements = shape.NumElements();
  const int element_size = DataTypeSize(copy.dtype);
  int64_t bytes = 0;
  if (!elements.has_value() || element_size == 0 ||
      __builtin_mul_overflow(*elements, static_cast<int64_t>(element_size), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

// Lists the copies the partitioner inserts for `placement` of `graph_def`.
absl::Status PrintCopies(const GraphDef& graph_def, const PlacementResult& placement,
                         std::ostream& out) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportPlacedGraph(graph_def, placement));
  const std::vector<CrossDeviceCopy> copies = ListCrossDeviceCopies(*graph);
  out << "\ncross-device copies: " << copies.size() << "\n";
  int64_t total = 0;
  int unknown = 0;
  for (const CrossDeviceCopy& copy : copies) {
    std::string shape;
    const std::optional<int64_t> bytes = CopyBytes(*graph, copy, &shape);
    if (bytes.has_value()) {
      total += *bytes;
    } else {
      ++unknown;
    }
    out << "  " << copy.tensor << " " << DataTypeNumpyName(copy.dtype) << " " << shape << " "
        << (bytes.has_value() ? absl::StrCat(*bytes, " bytes") : std::string("unknown size"))
        << ": " << copy.src_device << " -> " << copy.dst_device << " (read by "
        << absl::StrJoin(copy.consumers, ", ") << ")\n";
  }
  if (copies.empty()) return absl::OkStatus();
  out << "total: " << (unknown > 0 ? "at least " : "") << total << " bytes per step";
  if (unknown > 0) out << " (" << unknown << " of unknown size)";
  out << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ImportPlacedGraph(const GraphDef& graph_def,
                                                         const PlacementResult& placement) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportGraphDef(graph_def));
  absl::flat_hash_map<std::string, const PlacementDecision*> by_name;
  for (const PlacementDecision& decision : placement.decisions) {
    by_name[decision.node] = &decision;
  }
  for (Node* node : graph->nodes()) {
    auto it = by_name.find(node->name());
    if (it != by_name.end()) node->set_assigned_device(it->second->device);
  }
  return graph;
}

absl::Status PrintPlacement(const GraphDef& graph_def, const ConfigProto& config, bool explain,
                            std::ostream& out) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config));
  DFLOW_RETURN_IF_ERROR(session->Create(graph_def));
  const PlacementResult placement = session->placement();
  // Buffered so that nothing reaches `out` when listing the copies fails.
  std::ostringstream report;
  for (const PlacementDecision& decision : placement.decisions) {
    report << decision.node << ": (" << decision.op << "): " << decision.device << "\n";
    if (explain) report << "    reason: " << decision.reason << "\n";
  }
  if (explain) DFLOW_RETURN_IF_ERROR(PrintCopies(graph_def, placement, report));
  out << report.str();
  return absl::OkStatus();
}

absl::Status RunPlaceCommand(const std::vector<std::string>& args, std::ostream& out) {
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, {"graph", "config", "explain"}));
  DFLOW_ASSIGN_OR_RETURN(std::string path, flags.Require("graph"));
  const std::string explain = flags.Get("explain", "false");
  if (explain != "true" && explain != "false") {
    return absl::InvalidArgumentError(
        absl::StrCat("--explain=", explain, ": expected --explain, true or false"));
  }
  ConfigProto config;
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &config));
  }
  DFLOW_ASSIGN_OR_RETURN(GraphDef graph_def, ReadGraphDef(path));
  return PrintPlacement(graph_def, config, explain == "true", out);
}

}  // namespace dflow
