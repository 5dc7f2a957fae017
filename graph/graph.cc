#include "graph/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {

Node::Node(int id, NodeDef def, const OpDef* op_def, DataTypeVector in, DataTypeVector out)
    : id_(id),
      def_(std::move(def)),
      op_def_(op_def),
      input_types_(std::move(in)),
      output_types_(std::move(out)),
      output_shapes_(output_types_.size()) {}

const Edge* Node::input_edge(int index) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input == index) return e;
  }
  return nullptr;
}

Graph::Graph(const OpRegistry& ops) : ops_(ops) {}
Graph::~Graph() = default;

const OpDef* Graph::FindOpDef(absl::string_view op) const {
  if (const OpDef* def = ops_.Find(op)) return def;
  for (const FunctionDef& fn : library_.function()) {
    if (fn.signature().name() == op) return &fn.signature();
  }
  return nullptr;
}

absl::StatusOr<Node*> Graph::AddNode(NodeDef def) {
  const OpDef* op_def = FindOpDef(def.op());
  if (op_def == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Node '", def.name(), "': Op type not registered '", def.op(), "'"));
  }
  if (by_name_.contains(def.name())) {
    return absl::InvalidArgumentError(absl::StrCat("Node '", def.name(), "' is not unique"));
  }
  AddDefaultAttrs(*op_def, &def);
  def.clear_input();
  DataTypeVector in, out;
  DFLOW_RETURN_IF_ERROR(InOutTypesForNode(def, *op_def, &in, &out));
  const int id = static_cast<int>(nodes_.size());
  nodes_.push_back(std::unique_ptr<Node>(
      new Node(id, std::move(def), op_def, std::move(in), std::move(out))));
  Node* node = nodes_.back().get();
  by_name_[node->name()] = node;
  ++num_nodes_;
  return node;
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  auto edge = std::make_unique<Edge>();
  edge->id = static_cast<int>(edges_.size());
  edge->src = src;
  edge->src_output = src_output;
  edge->dst = dst;
  edge->dst_input = dst_input;
  const Edge* e = edge.get();
  edges_.push_back(std::move(edge));
  src->out_edges_.push_back(e);
  dst->in_edges_.push_back(e);
  return e;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControlEdge() && e->src == src) return e;
  }
  return AddEdge(src, kControlSlot, dst, kControlSlot);
}

void Graph::RemoveEdge(const Edge* edge) {
  auto erase = [edge](std::vector<const Edge*>& v) {
    v.erase(std::remove(v.begin(), v.end(), edge), v.end());
  };
  erase(edge->src->out_edges_);
  erase(edge->dst->in_edges_);
  edges_[edge->id].reset();
}

void Graph::RemoveNode(Node* node) {
  std::vector<const Edge*> edges = node->in_edges_;
  edges.insert(edges.end(), node->out_edges_.begin(), node->out_edges_.end());
  for (const Edge* e : edges) RemoveEdge(e);
  by_name_.erase(node->name());
  nodes_[node->id()].reset();
  --num_nodes_;
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::FindNodeId(int id) const {
  if (id < 0 || id >= static_cast<int>(nodes_.size())) return nullptr;
  return nodes_[id].get();
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> result;
  result.reserve(num_nodes_);
  for (const auto& node : nodes_) {
    if (node) result.push_back(node.get());
  }
  return result;
}

std::string Graph::NewName(absl::string_view prefix) {
  std::string name;
  do {
    name = absl::StrCat(prefix, "/_", name_counter_++);
  } while (by_name_.contains(name));
  return name;
}

NodeDef Graph::NodeDefWithInputs(const Node& node) const {
  NodeDef def = node.def();
  SetInputs(node, &def);
  return def;
}

void Graph::SetInputs(const Node& node, NodeDef* def) const {
  def->clear_input();
  std::vector<const Edge*> data(node.num_inputs(), nullptr);
  std::vector<const Edge*> control;
  for (const Edge* e : node.in_edges()) {
    if (e->IsControlEdge()) {
      control.push_back(e);
    } else if (e->dst_input < static_cast<int>(data.size())) {
      data[e->dst_input] = e;
    }
  }
  for (const Edge* e : data) {
    if (e == nullptr) continue;
    def->add_input(e->src_output == 0 ? e->src->name()
                                      : absl::StrCat(e->src->name(), ":", e->src_output));
  }
  std::sort(control.begin(), control.end(),
            [](const Edge* a, const Edge* b) { return a->src->id() < b->src->id(); });
  for (const Edge* e : control) def->add_input(absl::StrCat("^", e->src->name()));
}

GraphDef Graph::ToGraphDef() const {
  GraphDef graph_def;
  *graph_def.mutable_versions() = versions_;
  if (library_.function_size() > 0 || library_.gradient_size() > 0) {
    *graph_def.mutable_library() = library_;
  }
  for (const Node* node : nodes()) *graph_def.add_node() = NodeDefWithInputs(*node);
  return graph_def;
}

}  // namespace dflow
