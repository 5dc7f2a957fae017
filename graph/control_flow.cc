#include "graph/control_flow.h"

#include <deque>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

bool OpIs(const Node& node, absl::string_view op) {
  const std::string& name = node.op();
  return name == op || (name.size() == op.size() + 3 && absl::string_view(name).substr(0, 3) ==
                                                            "Ref" &&
                        absl::string_view(name).substr(3) == op);
}

// The frame `node`'s successors run in (rules 2-4); creates Enter's child frame.
absl::StatusOr<int> SuccessorFrame(const Node& node, ControlFlowInfo* info) {
  const int frame = info->node_frame[node.id()];
  if (IsExit(node)) {
    if (frame == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Exit node '", node.name(), "' is not inside a while loop frame"));
    }
    return info->frames[frame].parent;
  }
  if (!IsEnter(node)) return frame;
  if (info->entered_frame[node.id()] >= 0) return info->entered_frame[node.id()];
  const AttrValue* name = node.attr("frame_name");
  if (name == nullptr || name->s().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("The Enter node '", node.name(), "' must have a frame name."));
  }
  int child = -1;
  for (size_t f = 0; f < info->frames.size(); ++f) {
    if (info->frames[f].parent == frame && info->frames[f].name == name->s()) child = f;
  }
  if (child < 0) {
    StaticFrame created;
    created.name = name->s();
    created.parent = frame;
    created.first_enter = &node;
    const AttrValue* parallel = node.attr("parallel_iterations");
    created.parallel_iterations = parallel == nullptr ? 10 : static_cast<int>(parallel->i());
    if (created.parallel_iterations < 1) created.parallel_iterations = 1;
    child = static_cast<int>(info->frames.size());
    info->frames.push_back(std::move(created));
  }
  ++info->frames[child].num_enters;
  info->entered_frame[node.id()] = child;
  return child;
}

absl::Status DifferentFrames(const ControlFlowInfo& info, const Node& dst, const Node& a,
                             int frame_a, const Node& b, int frame_b) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Node '", dst.name(), "' has inputs from different frames. The input '", a.name(),
      "' is in frame '", info.frames[frame_a].name, "'. The input '", b.name(),
      "' is in frame '", info.frames[frame_b].name, "'."));
}

}  // namespace

int OutermostLoop(const ControlFlowInfo& info, const Node& node) {
  const int entered = info.entered_frame[node.id()];
  int frame = entered >= 0 ? entered : info.node_frame[node.id()];
  while (frame > 0 && info.frames[frame].parent > 0) frame = info.frames[frame].parent;
  return frame;
}

bool IsEnter(const Node& node) { return OpIs(node, "Enter"); }
bool IsExit(const Node& node) { return OpIs(node, "Exit"); }
bool IsNextIteration(const Node& node) { return OpIs(node, "NextIteration"); }
bool IsMerge(const Node& node) { return OpIs(node, "Merge"); }

bool IsConstantEnter(const Node& node) {
  const AttrValue* constant = node.attr("is_constant");
  return IsEnter(node) && constant != nullptr && constant->b();
}

bool IsV1ControlFlowOp(const Node& node) {
  return IsEnter(node) || IsExit(node) || IsNextIteration(node) || IsMerge(node) ||
         OpIs(node, "Switch") || OpIs(node, "LoopCond") || node.op() == "_SwitchN";
}

bool HasControlFlow(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (IsEnter(*node) || IsExit(*node) || IsNextIteration(*node) || IsMerge(*node)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph) {
  ControlFlowInfo info;
  info.frames.emplace_back();
  info.node_frame.assign(graph.num_node_ids(), -1);
  info.entered_frame.assign(graph.num_node_ids(), -1);
  std::vector<const Node*> reached_from(graph.num_node_ids(), nullptr);
  const std::vector<Node*> nodes = graph.nodes();
  std::deque<const Node*> ready;
  for (const Node* node : nodes) {
    if (!node->in_edges().empty()) continue;
    info.node_frame[node->id()] = 0;
    ready.push_back(node);
  }
  while (!ready.empty()) {
    const Node* node = ready.front();
    ready.pop_front();
    DFLOW_ASSIGN_OR_RETURN(const int out_frame, SuccessorFrame(*node, &info));
    for (const Edge* e : node->out_edges()) {
      const int dst = e->dst->id();
      if (info.node_frame[dst] == -1) {
        info.node_frame[dst] = out_frame;
        reached_from[dst] = node;
        ready.push_back(e->dst);
      } else if (info.node_frame[dst] != out_frame) {
        const Node& other = *reached_from[dst];
        return DifferentFrames(info, *e->dst, *node, out_frame, other, info.node_frame[dst]);
      }
    }
  }
  for (const Node* node : nodes) {
    if (info.node_frame[node->id()] == -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Node '", node->name(),
          "' is not reachable from any node without inputs (a cycle that is not a while "
          "loop?)"));
    }
  }
  return info;
}

}  // namespace dflow
