// Graph: dflow's in-memory dataflow graph (nodes, data edges, control edges).
//
// A Node owns its NodeDef (attrs, requested device) plus what import derived from it:
// its OpDef, input/output dtypes, inferred output shapes and, after placement, its
// assigned device. Edges are the truth for connectivity; a node's NodeDef `input` list
// is regenerated from edges by ToGraphDef().
//
// Ids are stable: a node keeps its id until removed and ids are never reused, so passes
// can index side tables by id. Lookup by name is O(1).
//
// Ownership: the Graph owns all nodes and edges; Node*/Edge* are borrowed and valid
// until removed from (or destruction of) the graph. Not thread-safe for mutation;
// concurrent const access is fine.
#ifndef DFLOW_GRAPH_GRAPH_H_
#define DFLOW_GRAPH_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "graph/partial_shape.h"
#include "graph/types.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "proto/versions.pb.h"

namespace dflow {

class Node;

struct Edge {
  int id = -1;
  Node* src = nullptr;
  int src_output = 0;  // kControlSlot for control edges
  Node* dst = nullptr;
  int dst_input = 0;   // kControlSlot for control edges
  bool IsControlEdge() const { return src_output == kControlSlot; }
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  // Mutating attrs is allowed; edges (not def().input) define connectivity.
  NodeDef* mutable_def() { return &def_; }
  // The op's declaration; for a call of a library function, that function's signature.
  const OpDef& op_def() const { return *op_def_; }

  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }

  const std::string& requested_device() const { return def_.device(); }
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string device) { assigned_device_ = std::move(device); }

  // Inferred shapes, one per output (unknown until shape inference ran).
  const std::vector<PartialShape>& output_shapes() const { return output_shapes_; }
  void set_output_shape(int output, PartialShape shape) {
    output_shapes_[output] = std::move(shape);
  }

  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge feeding input `index`, or nullptr if none.
  const Edge* input_edge(int index) const;
  const AttrValue* attr(absl::string_view name) const { return FindAttr(def_, name); }

 private:
  friend class Graph;
  Node(int id, NodeDef def, const OpDef* op_def, DataTypeVector in, DataTypeVector out);

  int id_;
  NodeDef def_;
  const OpDef* op_def_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  std::vector<PartialShape> output_shapes_;
  std::string assigned_device_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
};

class Graph {
 public:
  // `ops` must outlive the graph.
  explicit Graph(const OpRegistry& ops = OpRegistry::Global());
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node (its `input` field is ignored: add edges separately). Fills default
  // attrs. INVALID_ARGUMENT when the op is unknown, the name is taken or the type attrs
  // its args need are missing.
  absl::StatusOr<Node*> AddNode(NodeDef def);
  // REQUIRES: src_output < src->num_outputs(), dst_input < dst->num_inputs().
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  const Edge* AddControlEdge(Node* src, Node* dst);
  void RemoveEdge(const Edge* edge);
  // Removes the node and all its edges.
  void RemoveNode(Node* node);

  Node* FindNode(absl::string_view name) const;
  Node* FindNodeId(int id) const;
  // Live nodes in id order.
  std::vector<Node*> nodes() const;
  int num_nodes() const { return num_nodes_; }
  // One past the largest id ever given (for id-indexed side tables).
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }

  // The declaration for `op`: the registry's, else a library function's signature.
  const OpDef* FindOpDef(absl::string_view op) const;
  const OpRegistry& op_registry() const { return ops_; }

  VersionDef* mutable_versions() { return &versions_; }
  const VersionDef& versions() const { return versions_; }
  // Adding functions after nodes that call them is not supported.
  FunctionDefLibrary* mutable_library() { return &library_; }
  const FunctionDefLibrary& library() const { return library_; }

  // What importing the GraphDef warned about (graph_def_import.h: attrs a newer
  // TensorFlow added, dropped), one complete sentence each.
  std::vector<std::string>* mutable_import_warnings() { return &import_warnings_; }
  const std::vector<std::string>& import_warnings() const { return import_warnings_; }

  // A node name not used yet, derived from `prefix` ("prefix/_N").
  std::string NewName(absl::string_view prefix);

  // Nodes in id order; data inputs by input index, then control inputs.
  GraphDef ToGraphDef() const;
  // `node`'s NodeDef with its `input` list rebuilt from its edges.
  NodeDef NodeDefWithInputs(const Node& node) const;
  // Replaces `def`'s `input` list with `node`'s inputs, rebuilt from its edges.
  void SetInputs(const Node& node, NodeDef* def) const;

 private:
  const OpRegistry& ops_;
  std::vector<std::unique_ptr<Node>> nodes_;  // by id; null once removed
  std::vector<std::unique_ptr<Edge>> edges_;  // by id; null once removed
  absl::flat_hash_map<std::string, Node*> by_name_;
  int num_nodes_ = 0;
  int name_counter_ = 0;
  VersionDef versions_;
  FunctionDefLibrary library_;
  std::vector<std::string> import_warnings_;
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRAPH_H_
