#include "tools/graph_dot.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/types.h"

namespace dflow {
namespace {

// Fill colours (light) and their cluster borders (dark), one pair per device in order.
constexpr const char* kFills[] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#d9d2e9",
                                  "#fce5cd", "#d0e0e3", "#ead1dc", "#f4cccc"};
constexpr const char* kBorders[] = {"#3d85c6", "#6aa84f", "#bf9000", "#674ea7",
                                    "#e69138", "#45818e", "#a64d79", "#cc0000"};
constexpr int kColours = sizeof(kFills) / sizeof(kFills[0]);

// `text` as a quoted DOT string; a newline becomes DOT's centred line break.
std::string Quoted(const std::string& text) {
  return absl::StrCat(
      "\"", absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}),
      "\"");
}

std::string NodeId(const Node& node) { return absl::StrCat("n", node.id()); }

// "float32[2,3] 24 B", or the dtype and what is known of the shape.
std::string TensorText(const Node& src, int slot) {
  std::string text = DataTypeNumpyName(BaseType(src.output_types()[slot]));
  if (slot >= static_cast<int>(src.output_shapes().size())) return text;
  const PartialShape& shape = src.output_shapes()[slot];
  absl::StrAppend(&text, shape.ToString());
  const std::optional<int64_t> elements = shape.NumElements();
  const int size = DataTypeSize(BaseType(src.output_types()[slot]));
  int64_t bytes = 0;
  if (elements.has_value() && size > 0 && !__builtin_mul_overflow(*elements, size, &bytes)) {
    absl::StrAppend(&text, " ", bytes, " B");
  }
  return text;
}

}  // namespace

std::string PlacedGraphDot(const Graph& graph) {
  std::map<std::string, std::vector<const Node*>> by_device;
  for (const Node* node : graph.nodes()) by_device[node->assigned_device()].push_back(node);
  std::string body;
  int colour = 0;
  for (const auto& [device, nodes] : by_device) {
    const char* fill = kFills[colour % kColours];
    absl::StrAppend(&body, "  subgraph cluster_", colour, " {\n    label=", Quoted(device),
                    "; style=\"rounded\"; color=", Quoted(kBorders[colour % kColours]),
                    "; fontcolor=", Quoted(kBorders[colour % kColours]), ";\n");
    for (const Node* node : nodes) {
      absl::StrAppend(&body, "    ", NodeId(*node), " [label=",
                      Quoted(absl::StrCat(node->name(), "\n", node->op())),
                      ", fillcolor=", Quoted(fill), "];\n");
    }
    absl::StrAppend(&body, "  }\n");
    ++colour;
  }
  int copies = 0;
  for (const Node* node : graph.nodes()) {
    for (const Edge* edge : node->in_edges()) {
      const std::string from = absl::StrCat("  ", NodeId(*edge->src), " -> ", NodeId(*node));
      if (edge->IsControlEdge()) {
        absl::StrAppend(&body, from, " [style=dashed, color=\"#999999\"];\n");
      } else if (edge->src->assigned_device() != node->assigned_device()) {
        ++copies;
        absl::StrAppend(&body, from, " [color=\"#cc0000\", penwidth=2.5, fontcolor=\"#cc0000\", ",
                        "label=", Quoted("copy " + TensorText(*edge->src, edge->src_output)),
                        "];\n");
      } else {
        absl::StrAppend(&body, from, ";\n");
      }
    }
  }
  const std::string title =
      absl::StrCat("dflow: ", graph.num_nodes(), " nodes on ", by_device.size(),
                   " device(s), ", copies, " cross-device edge(s) (red: copied)");
  return absl::StrCat("digraph dflow {\n  label=", Quoted(title),
                      "; labelloc=t; fontname=\"Helvetica\";\n",
                      "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n",
                      "  edge [fontname=\"Helvetica\", fontsize=10];\n", body, "}\n");
}

}  // namespace dflow
