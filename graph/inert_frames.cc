#include "graph/inert_frames.h"

#include <algorithm>
#include <deque>

namespace dflow {
namespace {

bool IsTransfer(const Node& node) {
  const std::string& op = node.op();
  return op == "_Send" || op == "_Recv" || op == "_HostSend" || op == "_HostRecv";
}

class InertFrameFinder {
 public:
  InertFrameFinder(const Graph& graph, const ControlFlowInfo& info)
      : info_(info),
        nodes_(info.frames.size()),
        inert_(info.frames.size(), false),
        pending_(graph.num_node_ids(), 0),
        live_inputs_(graph.num_node_ids(), 0) {
    for (const Node* node : graph.nodes()) {
      const int frame = info.node_frame[node->id()];
      if (frame > 0) nodes_[frame].push_back(node);
    }
  }

  std::vector<bool> Find() {
    for (int frame : InnermostFirst()) inert_[frame] = Simulate(frame);
    return inert_;
  }

 private:
  // Frames nested deepest first, so a frame's children are decided before it.
  std::vector<int> InnermostFirst() const {
    std::vector<int> depth(info_.frames.size(), 0);
    for (size_t f = 1; f < info_.frames.size(); ++f) {
      for (int p = info_.frames[f].parent; p > 0; p = info_.frames[p].parent) ++depth[f];
    }
    std::vector<int> order;
    for (size_t f = 1; f < info_.frames.size(); ++f) order.push_back(static_cast<int>(f));
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return depth[a] > depth[b]; });
    return order;
  }

  bool InFrame(const Node& node, int frame) const { return info_.node_frame[node.id()] == frame; }

  // Rule 1 for an input from outside the walk.
  bool SourceLive(const Node& src, int frame) const {
    if (IsNextIteration(src)) return false;
    if (IsEnter(src) && info_.entered_frame[src.id()] == frame) return IsConstantEnter(src);
    if (IsExit(src)) return false;  // a nested frame's Exit (this frame's own lead out)
    return true;
  }

  // Rule 3.
  bool Observable(const Node& node) const {
    if (IsExit(node) || IsNextIteration(node) || IsTransfer(node)) return true;
    if (node.op_def().is_stateful()) return true;
    if (IsEnter(node)) {
      const int child = info_.entered_frame[node.id()];
      return !IsConstantEnter(node) || child < 0 || !inert_[child];
    }
    return false;
  }

  // Rules 1-3 for one frame: a walk of its nodes in dependency order (NextIteration back
  // edges cut), with the shared buffers reset for the next frame on the way out.
  bool Simulate(int frame) {
    std::deque<const Node*> ready;
    for (const Node* node : nodes_[frame]) {
      pending_[node->id()] = static_cast<int>(node->in_edges().size());
      live_inputs_[node->id()] = 0;
    }
    auto arrive = [&](const Node& dst, bool live) {
      if (live) ++live_inputs_[dst.id()];
      if (--pending_[dst.id()] == 0) ready.push_back(&dst);
    };
    for (const Node* node : nodes_[frame]) {
      if (node->in_edges().empty()) ready.push_back(node);
      for (const Edge* edge : node->in_edges()) {
        if (!InFrame(*edge->src, frame) || IsNextIteration(*edge->src)) {
          arrive(*node, SourceLive(*edge->src, frame));
        }
      }
    }
    bool inert = true;
    while (!ready.empty() && inert) {
      const Node* node = ready.front();
      ready.pop_front();
      const int inputs = static_cast<int>(node->in_edges().size());
      const bool live = IsMerge(*node) ? live_inputs_[node->id()] > 0
                        : node->op() == "ControlTrigger" || live_inputs_[node->id()] == inputs;
      if (live && Observable(*node)) inert = false;
      if (IsNextIteration(*node)) continue;
      for (const Edge* edge : node->out_edges()) {
        if (InFrame(*edge->dst, frame)) arrive(*edge->dst, live);
      }
    }
    return inert;
  }

  const ControlFlowInfo& info_;
  std::vector<std::vector<const Node*>> nodes_;  // per frame
  std::vector<bool> inert_;
  std::vector<int> pending_;      // per node id, reset per frame
  std::vector<int> live_inputs_;  // per node id, reset per frame
};

}  // namespace

std::vector<bool> InertFrames(const Graph& graph, const ControlFlowInfo& info) {
  return InertFrameFinder(graph, info).Find();
}

}  // namespace dflow
