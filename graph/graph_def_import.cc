#include "graph/graph_def_import.h"

#include <algorithm>
#include <deque>
#include <optional>

#include <google/protobuf/util/message_differencer.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "graph/device_name.h"
#include "graph/node_def_util.h"
#include "graph/shape_inference.h"
#include "graph/tensor_proto_util.h"

namespace dflow {
namespace {

bool DtypesCompatible(DataType produced, DataType expected) {
  if (produced == expected) return true;
  // A ref output may feed a non-ref input of its base type (reading a variable).
  return IsRefType(produced) && !IsRefType(expected) && BaseType(produced) == expected;
}

class Importer {
 public:
  // `consumable`: the same GraphDef, which the caller gives up; accepted nodes are moved
  // out of it instead of copied (a big Const's value is not copied).
  Importer(const GraphDef& graph_def, const ImportOptions& options, const OpRegistry& ops,
           GraphDef* consumable = nullptr)
      : graph_def_(graph_def),
        consumable_(consumable),
        options_(options),
        graph_(std::make_unique<Graph>(ops)) {
    for (const std::string& t : options.fed_tensors) {
      absl::StatusOr<TensorId> id = ParseTensorName(t);
      if (id.ok()) fed_.insert(id->ToString());
    }
  }

  GraphReport Run() {
    CheckVersions();
    CheckLibrary();
    *graph_->mutable_library() = graph_def_.library();
    *graph_->mutable_versions() = graph_def_.versions();
    for (int i = 0; i < graph_def_.node_size(); ++i) {
      declared_.insert(graph_def_.node(i).name());
      file_position_.try_emplace(graph_def_.node(i).name(), i);
    }
    for (int i = 0; i < graph_def_.node_size(); ++i) {
      AddNodeChecked(graph_def_.node(i),
                     consumable_ != nullptr ? consumable_->mutable_node(i) : nullptr);
    }
    for (const NodeDef& def : graph_def_.node()) ConnectInputs(def);
    CheckCycles();
    if (problems_.empty() && options_.infer_shapes) InferAllShapes();
    SortInFileOrder(problems_);
    for (const GraphProblem& w : warnings_) graph_->mutable_import_warnings()->push_back(w.message);
    return {std::move(problems_), std::move(warnings_)};
  }

  std::unique_ptr<Graph> TakeGraph() { return std::move(graph_); }

 private:
  void AddGraphProblem(std::string message) { problems_.push_back({"", std::move(message)}); }
  // "Node 'n' (Op): text", once: some texts come from helpers that name the node already.
  static std::string Describe(const NodeDef& def, absl::string_view text) {
    const std::string prefix =
        absl::StrCat("Node '", def.name(), "' (", def.op().empty() ? "no op" : def.op(), "): ");
    if (absl::StartsWith(text, prefix)) return std::string(text);
    return absl::StrCat(prefix, text);
  }
  void AddProblem(const NodeDef& def, absl::string_view text,
                  absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    problems_.push_back({def.name(), Describe(def, text), code});
  }

  // The node a problem is about, for ordering: shape inference's messages name it
  // ("Node 'x' (Op): ...") without filling GraphProblem::node.
  static absl::string_view NodeOf(const GraphProblem& problem) {
    if (!problem.node.empty()) return problem.node;
    absl::string_view message = problem.message;
    if (!absl::ConsumePrefix(&message, "Node '")) return "";
    return message.substr(0, message.find('\''));
  }

  // Graph-level problems first, then by the offending node's place in the file (the
  // order a user reads, and the one TensorFlow stops at), stable within a node.
  void SortInFileOrder(std::vector<GraphProblem>& problems) const {
    auto rank = [this](const GraphProblem& p) -> int64_t {
      absl::string_view node = NodeOf(p);
      if (node.empty()) return -1;
      auto it = file_position_.find(node);
      return it == file_position_.end() ? graph_def_.node_size() : it->second;
    };
    std::stable_sort(problems.begin(), problems.end(),
                     [&](const GraphProblem& a, const GraphProblem& b) {
                       return rank(a) < rank(b);
                     });
  }

  // TF's FunctionLibraryDefinition::AddFunctionDef rules and texts: a name is defined
  // once (an identical repeat is allowed) and never shadows an op. Before, the last
  // duplicate silently won, and a function named like an op was silently ignored.
  void CheckLibrary() {
    absl::flat_hash_map<std::string, const FunctionDef*> defined;
    for (const FunctionDef& function : graph_def_.library().function()) {
      const std::string& name = function.signature().name();
      if (name.empty()) {
        AddGraphProblem("A function in the library has no name (signature.name is empty)");
        continue;
      }
      if (graph_->op_registry().Find(name) != nullptr) {
        AddGraphProblem(absl::StrCat("Cannot add function '", name,
                                     "' because an op with the same name already exists."));
        continue;
      }
      auto [it, added] = defined.emplace(name, &function);
      if (!added && !google::protobuf::util::MessageDifferencer::Equals(*it->second, function)) {
        AddGraphProblem(absl::StrCat("Cannot add function '", name,
                                     "' because a different function with the same name "
                                     "already exists."));
      }
    }
  }

  void CheckVersions() {
    const VersionDef& v = graph_def_.versions();
    if (v.producer() < 0) {
      AddGraphProblem(absl::StrCat("GraphDef producer version ", v.producer(),
                                   " below min producer 0 supported by dflow.  Please "
                                   "regenerate your graph."));
    }
    if (v.min_consumer() > kGraphDefVersion) {
      AddGraphProblem(absl::StrCat("GraphDef min consumer version ", v.min_consumer(),
                                   " above current version ", kGraphDefVersion,
                                   " for dflow.  Please upgrade dflow."));
    }
    for (int bad : v.bad_consumers()) {
      if (bad == kGraphDefVersion) {
        AddGraphProblem(absl::StrCat("GraphDef disallows consumer version ", bad, "."));
      }
    }
  }

  bool CheckNameAndOp(const NodeDef& def) {
    bool ok = true;
    if (!IsValidNodeName(def.name(), /*allow_internal=*/true)) {
      AddProblem(def, def.name().empty() ? "node has no name"
                                         : "Node name contains invalid characters");
      ok = false;
    }
    if (!seen_.insert(def.name()).second) {
      AddProblem(def, "Node name is not unique");
      return false;
    }
    if (def.op().empty()) {  // TF: NOT_FOUND "Op type not registered ''"
      AddProblem(def, "Node does not specify an operation", absl::StatusCode::kNotFound);
      return false;
    }
    if (graph_->FindOpDef(def.op()) == nullptr) {
      AddProblem(def,
                 absl::StrCat("Op type not registered '", def.op(),
                              "' (dflow declares TensorFlow 2.21's ops, its own internal "
                              "ops and the graph's library functions)"),
                 absl::StatusCode::kNotFound);
      return false;
    }
    return ok;
  }

  bool CheckDevice(const NodeDef& def) {
    if (def.device().empty()) return true;
    absl::StatusOr<DeviceName> parsed = ParseDeviceName(def.device());
    if (parsed.ok()) return true;
    AddProblem(def, parsed.status().message());
    return false;
  }

  bool CheckTensorAttr(const NodeDef& def, const std::string& name, const TensorProto& t) {
    absl::Status status = CheckTensorProto(t);
    if (status.ok()) return true;
    AddProblem(def, absl::StrCat("attr '", name, "' holds a malformed tensor: ",
                                 status.message()));
    return false;
  }

  // Checks `def`'s attrs against `op`; the undeclared ones it will drop go in `unknown`.
  bool CheckAttrs(const NodeDef& def, const OpDef& op, std::vector<std::string>* unknown) {
    bool ok = true;
    absl::flat_hash_set<std::string> declared;
    for (const OpDef::AttrDef& attr : op.attr()) {
      declared.insert(attr.name());
      const AttrValue* value = FindAttr(def, attr.name());
      if (value == nullptr) {
        if (!attr.has_default_value()) {
          AddProblem(def, absl::StrCat("missing required attr '", attr.name(), "' of type ",
                                       attr.type()));
          ok = false;
        }
        continue;
      }
      std::string why = CheckAttrValue(attr, *value);
      if (!why.empty()) {
        AddProblem(def, absl::StrCat("attr '", attr.name(), "' ", why));
        ok = false;
      }
    }
    for (const auto& [name, value] : def.attr()) {
      if (!declared.contains(name) && name.rfind('_', 0) != 0) {
        // TF 2.21 does the same (node_def_util.cc): "Unknown attributes will be ignored".
        warnings_.push_back(
            {def.name(),
             Describe(def, absl::StrCat("attr '", name, "' is not in the op's definition; "
                                        "ignored (written by a TensorFlow newer than 2.21?)"))});
        unknown->push_back(name);
        continue;
      }
      if (value.has_tensor()) ok &= CheckTensorAttr(def, name, value.tensor());
      for (const TensorProto& t : value.list().tensor()) ok &= CheckTensorAttr(def, name, t);
    }
    return ok;
  }

  // `movable`: `def` itself, when it may be moved into the graph.
  void AddNodeChecked(const NodeDef& def, NodeDef* movable) {
    if (!CheckNameAndOp(def)) return;
    bool ok = CheckDevice(def);
    std::vector<std::string> unknown_attrs;
    ok &= CheckAttrs(def, *graph_->FindOpDef(def.op()), &unknown_attrs);
    if (!ok) return;
    std::optional<NodeDef> trimmed;  // `def` less its unknown attrs, when it cannot move
    if (!unknown_attrs.empty()) {
      NodeDef* target = movable;
      if (target == nullptr) target = &trimmed.emplace(def);
      for (const std::string& name : unknown_attrs) target->mutable_attr()->erase(name);
    }
    NodeDef header;  // what ConnectInputs and a problem report need, should `def` move
    if (movable != nullptr) {
      header.set_name(def.name());
      header.set_op(def.op());
      *header.mutable_input() = def.input();
    }
    absl::StatusOr<Node*> node = movable != nullptr ? graph_->AddNode(std::move(*movable))
                                 : trimmed.has_value() ? graph_->AddNode(std::move(*trimmed))
                                                       : graph_->AddNode(def);
    if (!node.ok()) {
      AddProblem(movable != nullptr ? header : def, node.status().message());
      return;
    }
    created_[&def] = *node;
    if (movable != nullptr) moved_headers_[&def] = std::move(header);
  }

  // Resolves `id` to a node, standing in a Placeholder for a fed tensor of a node the
  // GraphDef lacks. Returns nullptr (after reporting) when it cannot.
  // `as_written`: the input as the file spells it ("^x" for a control input).
  Node* ResolveSource(const NodeDef& def, const TensorId& id, absl::string_view as_written,
                      DataType expected) {
    if (Node* src = graph_->FindNode(id.node)) return src;
    if (declared_.contains(id.node)) return nullptr;  // already reported at that node
    if (!id.IsControl() && fed_.contains(id.ToString()) && id.index == 0) {
      NodeDef placeholder;
      placeholder.set_name(id.node);
      placeholder.set_op("Placeholder");
      (*placeholder.mutable_attr())["dtype"].set_type(BaseType(expected));
      absl::StatusOr<Node*> node = graph_->AddNode(std::move(placeholder));
      if (node.ok()) return *node;
    }
    AddProblem(def, absl::StrCat("input '", as_written,
                                 "' refers to a node that is not in the graph"));
    return nullptr;
  }

  void ConnectDataInput(const NodeDef& def, Node* dst, const TensorId& id,
                        absl::string_view as_written, int index) {
    if (index >= dst->num_inputs()) return;  // counted and reported by the caller
    const DataType expected = dst->input_types()[index];
    Node* src = ResolveSource(def, id, as_written, expected);
    if (src == nullptr) return;
    if (id.index >= src->num_outputs()) {
      AddProblem(def, absl::StrCat("input ", index, " '", id.ToString(), "' asks for output ",
                                   id.index, " but node '", src->name(), "' has ",
                                   src->num_outputs(), " outputs"));
      return;
    }
    const DataType produced = src->output_types()[id.index];
    if (!DtypesCompatible(produced, expected)) {
      AddProblem(def, absl::StrCat("input ", index, " expects ", DataTypeString(expected),
                                   " but '", id.ToString(), "' produces ",
                                   DataTypeString(produced)));
      return;
    }
    graph_->AddEdge(src, id.index, dst, index);
  }

  void ConnectInputs(const NodeDef& graph_def_node) {
    auto created = created_.find(&graph_def_node);
    if (created == created_.end()) return;  // the node itself was rejected
    Node* dst = created->second;
    auto moved = moved_headers_.find(&graph_def_node);
    const NodeDef& def = moved != moved_headers_.end() ? moved->second : graph_def_node;
    int data_inputs = 0;
    bool seen_control = false;
    for (const std::string& input : def.input()) {
      absl::StatusOr<TensorId> id = ParseTensorName(input);
      if (!id.ok()) {
        AddProblem(def, id.status().message());
        continue;
      }
      if (id->IsControl()) {
        seen_control = true;
        if (Node* src = ResolveSource(def, *id, input, DT_INVALID)) {
          graph_->AddControlEdge(src, dst);
        }
        continue;
      }
      if (seen_control) {
        AddProblem(def, absl::StrCat("data input '", input, "' comes after a control input"));
      }
      ConnectDataInput(def, dst, *id, input, data_inputs++);
    }
    if (data_inputs != dst->num_inputs()) {
      AddProblem(def, absl::StrCat("expects ", dst->num_inputs(), " data inputs but has ",
                                   data_inputs));
    }
  }

  static bool IsLoopBackEdge(const Edge* e) {
    return e->src->op() == "NextIteration" || e->src->op() == "RefNextIteration";
  }

  void CheckCycles() {
    std::vector<Node*> nodes = graph_->nodes();
    std::vector<int> pending(graph_->num_node_ids(), 0);
    std::deque<Node*> ready;
    for (Node* n : nodes) {
      for (const Edge* e : n->in_edges()) pending[n->id()] += IsLoopBackEdge(e) ? 0 : 1;
      if (pending[n->id()] == 0) ready.push_back(n);
    }
    size_t visited = 0;
    while (!ready.empty()) {
      Node* n = ready.front();
      ready.pop_front();
      ++visited;
      for (const Edge* e : n->out_edges()) {
        if (!IsLoopBackEdge(e) && --pending[e->dst->id()] == 0) ready.push_back(e->dst);
      }
    }
    if (visited == nodes.size()) return;
    std::vector<std::string> stuck;
    for (Node* n : nodes) {
      if (pending[n->id()] > 0) stuck.push_back(n->name());
    }
    problems_.push_back(
        {stuck.front(), absl::StrCat(stuck.size(), " nodes in a cycle or fed by one: ",
                                     absl::StrJoin(stuck, ", "))});
  }

  void InferAllShapes() {
    std::vector<std::string> messages;
    absl::Status status = InferShapes(*graph_, &messages);
    if (!status.ok()) messages.push_back(std::string(status.message()));
    for (std::string& m : messages) problems_.push_back({"", std::move(m)});
  }

  const GraphDef& graph_def_;
  GraphDef* const consumable_;
  const ImportOptions& options_;
  std::unique_ptr<Graph> graph_;
  absl::flat_hash_set<std::string> fed_;
  absl::flat_hash_set<std::string> declared_;
  absl::flat_hash_set<std::string> seen_;
  absl::flat_hash_map<std::string, int> file_position_;  // a node's index in the file
  absl::flat_hash_map<const NodeDef*, Node*> created_;
  // Name, op and inputs of the nodes moved into the graph, keyed like created_.
  absl::flat_hash_map<const NodeDef*, NodeDef> moved_headers_;
  std::vector<GraphProblem> problems_;
  std::vector<GraphProblem> warnings_;
};

}  // namespace

std::vector<GraphProblem> ValidateGraphDef(const GraphDef& graph_def,
                                           const ImportOptions& options,
                                           const OpRegistry& ops) {
  return Importer(graph_def, options, ops).Run().problems;
}

GraphReport CheckGraphDef(const GraphDef& graph_def, const ImportOptions& options,
                          const OpRegistry& ops) {
  return Importer(graph_def, options, ops).Run();
}

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(const GraphDef& graph_def,
                                                      const ImportOptions& options,
                                                      const OpRegistry& ops) {
  Importer importer(graph_def, options, ops);
  GraphReport report = importer.Run();
  if (!report.problems.empty()) return ProblemsToStatus(report.problems);
  return importer.TakeGraph();
}

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(GraphDef&& graph_def,
                                                      const ImportOptions& options,
                                                      const OpRegistry& ops) {
  GraphDef consumed = std::move(graph_def);
  Importer importer(consumed, options, ops, &consumed);
  GraphReport report = importer.Run();
  if (!report.problems.empty()) return ProblemsToStatus(report.problems);
  return importer.TakeGraph();
}

absl::Status ProblemsToStatus(const std::vector<GraphProblem>& problems) {
  if (problems.empty()) return absl::OkStatus();
  // TF looks every op up (adding default attrs) before any other check, so an
  // unregistered op anywhere is its error; otherwise it stops at the first problem.
  absl::StatusCode code = problems[0].code;
  for (const GraphProblem& p : problems) {
    if (p.code == absl::StatusCode::kNotFound) code = absl::StatusCode::kNotFound;
  }
  if (problems.size() == 1) return absl::Status(code, problems[0].message);
  std::string message = absl::StrCat("GraphDef has ", problems.size(), " problems:");
  for (const GraphProblem& p : problems) absl::StrAppend(&message, "\n  ", p.message);
  return absl::Status(code, message);
}

std::string FormatUnknownAttrWarnings(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return "";
  std::string text = absl::StrCat(
      "dflow: warning: ", warnings.size(), warnings.size() == 1 ? " attr is" : " attrs are",
      " not in dflow's op definitions (TensorFlow 2.21's) and will be ignored, as "
      "TensorFlow ignores attrs a newer version added:");
  for (const std::string& w : warnings) absl::StrAppend(&text, "\n  ", w);
  return text;
}

}  // namespace dflow
