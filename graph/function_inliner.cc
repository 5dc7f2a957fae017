#include "graph/function_inliner.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/functional_control_flow.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using FunctionMap = std::map<std::string, const FunctionDef*>;

FunctionMap Functions(const GraphDef& graph_def) {
  FunctionMap functions;
  for (const FunctionDef& f : graph_def.library().function()) functions[f.signature().name()] = &f;
  return functions;
}

bool IsPartitionedCall(const NodeDef& node) {
  return node.op() == "PartitionedCall" || node.op() == "StatefulPartitionedCall";
}

// The function `node` calls and the attrs it binds, or nullptr when it calls none.
const FunctionDef* CalledFunction(const NodeDef& node, const FunctionMap& functions,
                                  const OpRegistry& ops,
                                  google::protobuf::Map<std::string, AttrValue>* bindings) {
  if (IsPartitionedCall(node)) {
    auto f = node.attr().find("f");
    if (f == node.attr().end() || !f->second.has_func()) return nullptr;
    auto it = functions.find(f->second.func().name());
    if (it == functions.end()) return nullptr;
    if (bindings != nullptr) *bindings = f->second.func().attr();
    return it->second;
  }
  if (ops.Find(node.op()) != nullptr) return nullptr;
  auto it = functions.find(node.op());
  if (it == functions.end()) return nullptr;
  if (bindings != nullptr) *bindings = node.attr();
  return it->second;
}

absl::Status CallError(const NodeDef& call, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("Cannot inline the function call '", call.name(), "' (", call.op(), "): ", what));
}

// Binds `placeholder` attrs of a body node from the call's attrs.
absl::Status BindAttrs(const NodeDef& call,
                       const google::protobuf::Map<std::string, AttrValue>& bindings,
                       NodeDef* node) {
  for (auto& [name, value] : *node->mutable_attr()) {
    if (value.placeholder().empty()) continue;
    auto bound = bindings.find(value.placeholder());
    if (bound == bindings.end()) {
      return CallError(call, absl::StrCat("body node '", node->name(), "' attr '", name,
                                          "' needs attr '", value.placeholder(),
                                          "', which the call does not set"));
    }
    value = bound->second;
  }
  return absl::OkStatus();
}

// How many tensors output arg `arg` of `node` (an op) has.
absl::StatusOr<int> ArgLength(const NodeDef& node, const OpDef::ArgDef& arg) {
  if (!arg.number_attr().empty()) {
    auto it = node.attr().find(arg.number_attr());
    if (it == node.attr().end()) return absl::InvalidArgumentError("missing " + arg.number_attr());
    return static_cast<int>(it->second.i());
  }
  if (!arg.type_list_attr().empty()) {
    auto it = node.attr().find(arg.type_list_attr());
    if (it == node.attr().end()) return absl::InvalidArgumentError("missing " + arg.type_list_attr());
    return it->second.list().type_size();
  }
  return 1;
}

// The dtype of a (single-tensor) function argument under the call's bindings.
absl::StatusOr<DataType> ArgType(const NodeDef& call, const OpDef::ArgDef& arg,
                                 const google::protobuf::Map<std::string, AttrValue>& bindings) {
  if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
    return CallError(call, absl::StrCat("argument '", arg.name(),
                                        "' is a list; lists of tensors are not supported"));
  }
  if (arg.type() != DT_INVALID) return arg.type();
  auto bound = bindings.find(arg.type_attr());
  if (bound == bindings.end()) {
    return CallError(call, absl::StrCat("argument '", arg.name(), "' needs attr '",
                                        arg.type_attr(), "', which the call does not set"));
  }
  return bound->second.type();
}

// "^a", "a", "a:out:0" -> "a".
std::string NodeOfInput(const std::string& input) {
  const size_t start = !input.empty() && input[0] == '^' ? 1 : 0;
  return input.substr(start, input.find(':') == std::string::npos ? std::string::npos
                                                                   : input.find(':') - start);
}

// Rewrites one input reference of a body node into the caller's graph.
class InputMapper {
 public:
  InputMapper(const NodeDef& call, const FunctionDef& f, std::vector<std::string> call_inputs,
              std::map<std::string, const NodeDef*> body, const OpRegistry& ops,
              const FunctionMap& functions)
      : call_(call), f_(f), call_inputs_(std::move(call_inputs)), body_(std::move(body)),
        ops_(ops), functions_(functions) {}

  absl::StatusOr<std::string> Map(const std::string& ref) const {
    const bool control = !ref.empty() && ref[0] == '^';
    const std::string name = control ? ref.substr(1) : ref;
    std::vector<std::string> parts = absl::StrSplit(name, ':');
    if (parts.size() == 1) {  // a function argument
      for (int i = 0; i < f_.signature().input_arg_size(); ++i) {
        if (f_.signature().input_arg(i).name() != name) continue;
        if (!control) return call_inputs_[i];
        return absl::StrCat("^", NodeOfInput(call_inputs_[i]));
      }
      if (control && body_.count(name)) return absl::StrCat("^", call_.name(), "/", name);
      return CallError(call_, absl::StrCat("the body refers to '", ref, "', which is neither "
                                           "an argument nor a body node"));
    }
    if (parts.size() != 3) return CallError(call_, absl::StrCat("malformed body input '", ref, "'"));
    auto node = body_.find(parts[0]);
    if (node == body_.end()) {
      return CallError(call_, absl::StrCat("the body refers to unknown node '", parts[0], "'"));
    }
    DFLOW_ASSIGN_OR_RETURN(int index, FlatIndex(*node->second, parts[1], parts[2]));
    return absl::StrCat(call_.name(), "/", parts[0], index == 0 ? "" : absl::StrCat(":", index));
  }

 private:
  // "out_arg" + "k" of `node` -> its flat output index.
  absl::StatusOr<int> FlatIndex(const NodeDef& node, const std::string& arg,
                                const std::string& k) const {
    const OpDef* op = ops_.Find(node.op());
    auto function = functions_.find(node.op());  // a call inside the body
    if (op == nullptr && function != functions_.end()) op = &function->second->signature();
    if (op == nullptr) {
      return CallError(call_, absl::StrCat("body node '", node.name(), "' has unknown op '",
                                           node.op(), "'"));
    }
    int offset = 0;
    for (const OpDef::ArgDef& out : op->output_arg()) {
      absl::StatusOr<int> length = ArgLength(node, out);
      if (!length.ok()) return CallError(call_, length.status().message());
      if (out.name() == arg) {
        int index = -1;
        if (!absl::SimpleAtoi(k, &index) || index < 0 || index >= *length) {
          return CallError(call_, absl::StrCat("the body refers to '", node.name(), ":", arg,
                                               ":", k, "', but output '", arg, "' of ",
                                               node.op(), " has indices 0 to ", *length - 1));
        }
        return offset + index;
      }
      offset += *length;
    }
    return CallError(call_, absl::StrCat("op ", node.op(), " has no output '", arg, "'"));
  }

  const NodeDef& call_;
  const FunctionDef& f_;
  std::vector<std::string> call_inputs_;
  std::map<std::string, const NodeDef*> body_;
  const OpRegistry& ops_;
  const FunctionMap& functions_;
};

// Appends the inlined body of `call` to `out`.
absl::Status InlineCall(const NodeDef& call, const FunctionDef& f,
                        const google::protobuf::Map<std::string, AttrValue>& bindings,
                        const OpRegistry& ops, const FunctionMap& functions, GraphDef* out) {
  std::vector<std::string> data_inputs, control_inputs;
  for (const std::string& input : call.input()) {
    (input[0] == '^' ? control_inputs : data_inputs).push_back(input);
  }
  if (static_cast<int>(data_inputs.size()) != f.signature().input_arg_size()) {
    return CallError(call, absl::StrCat("the function takes ", f.signature().input_arg_size(),
                                        " inputs, the call gives ", data_inputs.size()));
  }
  std::map<std::string, const NodeDef*> body;
  for (const NodeDef& node : f.node_def()) body[node.name()] = &node;
  InputMapper mapper(call, f, data_inputs, body, ops, functions);

  NodeDef* gate = out->add_node();
  gate->set_name(absl::StrCat(call.name(), "/_inputs"));
  gate->set_op("NoOp");
  gate->set_device(call.device());
  for (const std::string& c : control_inputs) gate->add_input(c);

  std::set<std::string> consumed;  // body nodes some body node reads or waits for
  for (const NodeDef& node : f.node_def()) {
    for (const std::string& input : node.input()) consumed.insert(NodeOfInput(input));
  }
  NodeDef* result = out->add_node();  // filled below, after the body
  for (const NodeDef& node : f.node_def()) {
    NodeDef* copy = out->add_node();
    *copy = node;
    copy->set_name(absl::StrCat(call.name(), "/", node.name()));
    if (copy->device().empty()) copy->set_device(call.device());
    DFLOW_RETURN_IF_ERROR(BindAttrs(call, bindings, copy));
    copy->clear_input();
    for (const std::string& input : node.input()) {
      DFLOW_ASSIGN_OR_RETURN(std::string mapped, mapper.Map(input));
      copy->add_input(mapped);
    }
    if (node.input().empty()) copy->add_input(absl::StrCat("^", gate->name()));
  }

  result->set_name(call.name());
  result->set_op("IdentityN");
  result->set_device(call.device());
  AttrValue types;
  for (const OpDef::ArgDef& arg : f.signature().output_arg()) {
    DFLOW_ASSIGN_OR_RETURN(DataType type, ArgType(call, arg, bindings));
    types.mutable_list()->add_type(type);
    auto ret = f.ret().find(arg.name());
    if (ret == f.ret().end()) {
      return CallError(call, absl::StrCat("output '", arg.name(), "' has no ret entry"));
    }
    DFLOW_ASSIGN_OR_RETURN(std::string mapped, mapper.Map(ret->second));
    result->add_input(mapped);
  }
  (*result->mutable_attr())["T"] = types;
  // The call is done when its body is: wait for every body sink and control output.
  for (const NodeDef& node : f.node_def()) {
    if (!consumed.count(node.name())) result->add_input(absl::StrCat("^", call.name(), "/", node.name()));
  }
  for (const auto& [name, node] : f.control_ret()) {
    result->add_input(absl::StrCat("^", call.name(), "/", node));
  }
  if (f.signature().output_arg_size() == 0) result->add_input(absl::StrCat("^", gate->name()));
  return absl::OkStatus();
}

// The library functions `node` calls: its op, or a function-valued attr (PartitionedCall's
// f, If/While/Case branches, ...), where they name a library function.
std::vector<std::string> Callees(const NodeDef& node, const FunctionMap& functions,
                                 const OpRegistry& ops) {
  std::vector<std::string> callees;
  if (ops.Find(node.op()) == nullptr && functions.count(node.op()) > 0) {
    callees.push_back(node.op());
  }
  for (const auto& [name, value] : node.attr()) {
    if (value.has_func() && functions.count(value.func().name()) > 0) {
      callees.push_back(value.func().name());
    }
    for (const NameAttrList& f : value.list().func()) {
      if (functions.count(f.name()) > 0) callees.push_back(f.name());
    }
  }
  return callees;
}

// The call graph's edges: each library function's callees.
std::map<std::string, std::vector<std::string>> CallGraph(const FunctionMap& functions,
                                                          const OpRegistry& ops) {
  std::map<std::string, std::vector<std::string>> edges;
  for (const auto& [name, f] : functions) {
    std::vector<std::string>& callees = edges[name];
    for (const NodeDef& node : f->node_def()) {
      for (std::string& callee : Callees(node, functions, ops)) callees.push_back(callee);
    }
  }
  return edges;
}

// Adds without overflow, saturating at a value far above any node budget.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kCap = int64_t{1} << 60;
  return a >= kCap - b ? kCap : a + b;
}

// What inlining a function makes, lower bounds (the calls' own gates and results, and
// the extra level functional control flow adds, are not counted).
struct InlinedSize {
  int64_t nodes = 0;       // its body's nodes, every call in it inlined
  int depth = 0;           // calls nested in it, itself included
  std::string deepest;     // the callee on its deepest path ("" at the bottom)
};

// A cycle reachable from `root` ("A", "B", "A"), or empty. Iterative depth-first search
// with the usual colours (a 100,000-function chain must not overflow the stack); `done`
// holds the functions already proven acyclic across roots with their InlinedSize, so the
// whole check is linear.
std::vector<std::string> FindCycle(const std::string& root, const FunctionMap& functions,
                                   const std::map<std::string, std::vector<std::string>>& edges,
                                   std::map<std::string, InlinedSize>* done) {
  if (done->count(root) > 0) return {};
  std::vector<std::pair<std::string, size_t>> stack = {{root, 0}};  // function, next callee
  std::set<std::string> on_path = {root};
  while (!stack.empty()) {
    auto& [function, next] = stack.back();
    const std::vector<std::string>& callees = edges.at(function);
    if (next == callees.size()) {  // post-order: every callee is done
      InlinedSize size;
      size.nodes = functions.at(function)->node_def_size();
      for (const std::string& callee : callees) {
        const InlinedSize& inner = done->at(callee);
        size.nodes = SaturatingAdd(size.nodes, inner.nodes);
        if (inner.depth >= size.depth) {
          size.depth = inner.depth;
          size.deepest = callee;
        }
      }
      ++size.depth;
      on_path.erase(function);
      (*done)[function] = std::move(size);
      stack.pop_back();
      continue;
    }
    const std::string& callee = callees[next++];
    if (on_path.count(callee) > 0) {
      std::vector<std::string> cycle;
      bool in_cycle = false;
      for (const auto& [f, unused] : stack) {
        in_cycle = in_cycle || f == callee;
        if (in_cycle) cycle.push_back(f);
      }
      cycle.push_back(callee);
      return cycle;
    }
    if (done->count(callee) > 0) continue;
    on_path.insert(callee);
    stack.emplace_back(callee, 0);
  }
  return {};
}

// "f0 -> f1 -> ... -> f99 (100 functions deep)": the deepest call path from `function`,
// its first `shown` functions named.
std::string DeepestChain(const std::string& function,
                         const std::map<std::string, InlinedSize>& done, int shown) {
  std::vector<std::string> names;
  for (std::string f = function; !f.empty() && static_cast<int>(names.size()) < shown;
       f = done.at(f).deepest) {
    names.push_back(f);
  }
  const int depth = done.at(function).depth;
  return absl::StrCat(absl::StrJoin(names, " -> "), depth > shown ? " -> ..." : "", ", ", depth,
                      " functions deep");
}

// Refused before inlining starts, instead of after it has grown the graph for seconds and
// gigabytes: recursion (inlining it never ends) and calls that would pass the node budget
// (fan-out grows exponentially), judged on the call graph alone.
absl::Status CheckCallGraph(const GraphDef& graph_def, const FunctionMap& functions,
                            const OpRegistry& ops, const InlineLimits& limits) {
  const std::map<std::string, std::vector<std::string>> edges = CallGraph(functions, ops);
  std::map<std::string, InlinedSize> done;
  int64_t total = graph_def.node_size();
  for (const NodeDef& node : graph_def.node()) {
    for (const std::string& callee : Callees(node, functions, ops)) {
      const std::vector<std::string> cycle = FindCycle(callee, functions, edges, &done);
      if (!cycle.empty()) {
        return CallError(node, absl::StrCat("function '", cycle.front(), "' is recursive (",
                                            absl::StrJoin(cycle, " -> "),
                                            "); dflow inlines every call, so a recursive "
                                            "function cannot run"));
      }
      const InlinedSize& size = done.at(callee);
      if (size.depth > limits.max_depth) {
        return CallError(node, absl::StrCat("calls nest deeper than ", limits.max_depth,
                                            " levels (", DeepestChain(callee, done, 6),
                                            "; ConfigProto dflow_limits { max_call_depth } "
                                            "raises it)"));
      }
      total = SaturatingAdd(total, size.nodes);
      if (total > limits.max_nodes) {
        return CallError(node, absl::StrCat(
                                   "inlining would make the graph larger than ",
                                   limits.max_nodes, " nodes (function '", callee,
                                   "' alone becomes at least ", size.nodes,
                                   "; calls that fan out grow exponentially; ConfigProto "
                                   "dflow_limits { max_nodes_after_inlining } raises it)"));
      }
    }
  }
  return absl::OkStatus();
}

// INVALID_ARGUMENT naming `call` once the graph being built passes limits.max_nodes.
absl::Status CheckBudget(const NodeDef& call, const GraphDef& next, int depth,
                         const InlineLimits& limits) {
  if (next.node_size() <= limits.max_nodes) return absl::OkStatus();
  return CallError(call, absl::StrCat("inlining makes the graph larger than ", limits.max_nodes,
                                      " nodes (at call depth ", depth + 1,
                                      "; calls that fan out grow exponentially; ConfigProto "
                                      "dflow_limits { max_nodes_after_inlining } raises it)"));
}

}  // namespace

bool HasFunctionCalls(const GraphDef& graph_def, const OpRegistry& ops) {
  const FunctionMap functions = Functions(graph_def);
  for (const NodeDef& node : graph_def.node()) {
    if (IsFunctionalControlFlow(node)) return true;
    if (!functions.empty() && CalledFunction(node, functions, ops, nullptr) != nullptr) return true;
  }
  return false;
}

absl::StatusOr<GraphDef> InlineFunctionCalls(const GraphDef& graph_def, const OpRegistry& ops,
                                             const InlineLimits& limits) {
  const int max_depth = limits.max_depth;
  const FunctionMap functions = Functions(graph_def);
  if (!functions.empty()) DFLOW_RETURN_IF_ERROR(CheckCallGraph(graph_def, functions, ops, limits));
  GraphDef current = graph_def;
  for (int depth = 0; HasFunctionCalls(current, ops); ++depth) {
    GraphDef next = current;
    next.clear_node();
    for (const NodeDef& node : current.node()) {
      if (IsFunctionalControlFlow(node)) {  // If/Case/While: v1 frames around calls
        if (depth >= max_depth) {
          return CallError(node, absl::StrCat("control flow nests deeper than ", max_depth,
                                              " levels (ConfigProto dflow_limits { "
                                              "max_call_depth } raises it)"));
        }
        DFLOW_RETURN_IF_ERROR(LowerFunctionalControlFlow(node, current.library(), &next));
        DFLOW_RETURN_IF_ERROR(CheckBudget(node, next, depth, limits));
        continue;
      }
      google::protobuf::Map<std::string, AttrValue> bindings;
      const FunctionDef* f = CalledFunction(node, functions, ops, &bindings);
      if (f == nullptr) {
        *next.add_node() = node;
        continue;
      }
      if (depth >= max_depth) {
        return CallError(node, absl::StrCat("calls nest deeper than ", max_depth,
                                            " levels (a recursive function? ConfigProto "
                                            "dflow_limits { max_call_depth } raises it)"));
      }
      DFLOW_RETURN_IF_ERROR(InlineCall(node, *f, bindings, ops, functions, &next));
      DFLOW_RETURN_IF_ERROR(CheckBudget(node, next, depth, limits));
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace dflow
