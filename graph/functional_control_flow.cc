#include "graph/functional_control_flow.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

constexpr int kDefaultParallelIterations = 10;  // While's attr default in TF

absl::Status LoweringError(const NodeDef& node, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("Cannot lower '", node.name(), "' (", node.op(), "): ", what));
}

std::string Output(const std::string& node, int index) {
  return index == 0 ? node : absl::StrCat(node, ":", index);
}

// One branch of a conditional after lowering: its call node and the pivot it waited for.
struct Branch {
  std::string call;
  std::string pivot;
};

// Builds the nodes replacing one functional node `node_`.
class Lowering {
 public:
  Lowering(const NodeDef& node, const FunctionDefLibrary& library, GraphDef* out)
      : node_(node), library_(library), out_(out) {
    for (const std::string& input : node.input()) {
      (!input.empty() && input[0] == '^' ? control_inputs_ : data_inputs_).push_back(input);
    }
  }

  absl::Status LowerIf();
  absl::Status LowerCase();
  absl::Status LowerWhile();

 private:
  std::string Name(absl::string_view suffix) const { return absl::StrCat(node_.name(), "/", suffix); }

  NodeDef* Add(absl::string_view suffix, absl::string_view op, std::vector<std::string> inputs) {
    NodeDef* n = out_->add_node();
    n->set_name(Name(suffix));
    n->set_op(std::string(op));
    n->set_device(node_.device());
    for (std::string& input : inputs) n->add_input(std::move(input));
    return n;
  }

  // The node's control inputs, on a node that everything lowered depends on.
  void AddControlInputs(NodeDef* n) const {
    for (const std::string& c : control_inputs_) n->add_input(c);
  }

  absl::StatusOr<std::vector<DataType>> Types(const char* attr) const {
    auto it = node_.attr().find(attr);
    if (it == node_.attr().end()) return LoweringError(node_, absl::StrCat("no attr '", attr, "'"));
    std::vector<DataType> types;
    for (int t : it->second.list().type()) types.push_back(static_cast<DataType>(t));
    return types;
  }

  absl::StatusOr<NameAttrList> Function(const char* attr) const {
    auto it = node_.attr().find(attr);
    if (it == node_.attr().end() || !it->second.has_func()) {
      return LoweringError(node_, absl::StrCat("no function attr '", attr, "'"));
    }
    return Known(it->second.func(), attr);
  }

  // `f` when the library defines it.
  absl::StatusOr<NameAttrList> Known(const NameAttrList& f, absl::string_view role) const {
    for (const FunctionDef& def : library_.function()) {
      if (def.signature().name() == f.name()) return f;
    }
    return LoweringError(node_, absl::StrCat(role, " function '", f.name(),
                                             "' is not in the graph's function library"));
  }

  // A PartitionedCall of `f` that waits for `pivot` (the inliner gives that wait to every
  // body node without inputs, so constants are in the branch's or loop's frame).
  std::string AddCall(absl::string_view suffix, const NameAttrList& f,
                      std::vector<std::string> inputs, const std::vector<DataType>& tin,
                      const std::vector<DataType>& tout, const std::string& pivot) {
    inputs.push_back(absl::StrCat("^", pivot));
    NodeDef* call = Add(suffix, "StatefulPartitionedCall", std::move(inputs));
    *(*call->mutable_attr())["f"].mutable_func() = f;
    (*call->mutable_attr())["Tin"] = TypeListAttr(tin);
    (*call->mutable_attr())["Tout"] = TypeListAttr(tout);
    return call->name();
  }

  // A bool for `tensor` of `type`, as TF's If converts a non-bool cond (ToBool).
  std::string AsBool(const std::string& tensor, DataType type) {
    if (type == DT_BOOL) return tensor;
    NodeDef* to_bool = Add("_to_bool", "ToBool", {tensor});
    (*to_bool->mutable_attr())["T"] = TypeAttr(type);
    return to_bool->name();
  }

  absl::Status CheckInputCount(size_t expected, absl::string_view what) const {
    if (data_inputs_.size() == expected) return absl::OkStatus();
    return LoweringError(node_, absl::StrCat("it has ", data_inputs_.size(), " inputs but ",
                                             what, " says ", expected));
  }

  // Merges of the branches' outputs, "_branch_executed", and N as their IdentityN.
  void FinishConditional(const std::vector<Branch>& branches, DataType pivot_type,
                         const std::vector<DataType>& tout);

  const NodeDef& node_;
  const FunctionDefLibrary& library_;
  GraphDef* const out_;
  std::vector<std::string> data_inputs_, control_inputs_;
};

void Lowering::FinishConditional(const std::vector<Branch>& branches, DataType pivot_type,
                                 const std::vector<DataType>& tout) {
  const int n = static_cast<int>(branches.size());
  std::vector<std::string> outputs;
  for (size_t j = 0; j < tout.size(); ++j) {
    std::vector<std::string> inputs;
    for (const Branch& b : branches) inputs.push_back(Output(b.call, static_cast<int>(j)));
    NodeDef* merge = Add(absl::StrCat("_merge_", j), "Merge", std::move(inputs));
    (*merge->mutable_attr())["T"] = TypeAttr(tout[j]);
    (*merge->mutable_attr())["N"] = IntAttr(n);
    outputs.push_back(merge->name());
  }
  // Live only on the branch that ran, once its call (side effects included) is done.
  std::vector<std::string> done;
  for (int b = 0; b < n; ++b) {
    NodeDef* d = Add(absl::StrCat("_branch_", b, "_done"), "Identity",
                     {branches[b].pivot, absl::StrCat("^", branches[b].call)});
    (*d->mutable_attr())["T"] = TypeAttr(pivot_type);
    done.push_back(d->name());
  }
  NodeDef* executed = Add("_branch_executed", "Merge", done);
  (*executed->mutable_attr())["T"] = TypeAttr(pivot_type);
  (*executed->mutable_attr())["N"] = IntAttr(n);

  NodeDef* result = out_->add_node();
  result->set_name(node_.name());
  result->set_device(node_.device());
  result->set_op(tout.empty() ? "NoOp" : "IdentityN");
  for (const std::string& o : outputs) result->add_input(o);
  if (!tout.empty()) (*result->mutable_attr())["T"] = TypeListAttr(tout);
  result->add_input(absl::StrCat("^", executed->name()));
}

absl::Status Lowering::LowerIf() {
  DFLOW_ASSIGN_OR_RETURN(std::vector<DataType> tin, Types("Tin"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<DataType> tout, Types("Tout"));
  DFLOW_ASSIGN_OR_RETURN(NameAttrList then_f, Function("then_branch"));
  DFLOW_ASSIGN_OR_RETURN(NameAttrList else_f, Function("else_branch"));
  DFLOW_RETURN_IF_ERROR(CheckInputCount(tin.size() + 1, "cond + Tin"));
  auto tcond = node_.attr().find("Tcond");
  const DataType cond_type = tcond == node_.attr().end() ? DT_BOOL : tcond->second.type();
  const std::string pred = AsBool(data_inputs_[0], cond_type);

  NodeDef* switch_pred = Add("_switch_pred", "Switch", {pred, pred});
  (*switch_pred->mutable_attr())["T"] = TypeAttr(DT_BOOL);
  AddControlInputs(switch_pred);
  NodeDef* pivot_f = Add("_pivot_f", "Identity", {Output(switch_pred->name(), 0)});
  NodeDef* pivot_t = Add("_pivot_t", "Identity", {Output(switch_pred->name(), 1)});
  (*pivot_f->mutable_attr())["T"] = TypeAttr(DT_BOOL);
  (*pivot_t->mutable_attr())["T"] = TypeAttr(DT_BOOL);

  std::vector<std::string> false_inputs, true_inputs;
  for (size_t k = 0; k < tin.size(); ++k) {
    NodeDef* s = Add(absl::StrCat("_input_", k), "Switch", {data_inputs_[k + 1], pred});
    (*s->mutable_attr())["T"] = TypeAttr(tin[k]);
    AddControlInputs(s);
    false_inputs.push_back(Output(s->name(), 0));
    true_inputs.push_back(Output(s->name(), 1));
  }
  // Merge order (else, then) as TF's lowering: value_index 1 means the then branch ran.
  const std::string else_call = AddCall("_else", else_f, false_inputs, tin, tout, pivot_f->name());
  const std::string then_call = AddCall("_then", then_f, true_inputs, tin, tout, pivot_t->name());
  FinishConditional({{else_call, pivot_f->name()}, {then_call, pivot_t->name()}}, DT_BOOL, tout);
  return absl::OkStatus();
}

absl::Status Lowering::LowerCase() {
  DFLOW_ASSIGN_OR_RETURN(std::vector<DataType> tin, Types("Tin"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<DataType> tout, Types("Tout"));
  auto it = node_.attr().find("branches");
  if (it == node_.attr().end() || it->second.list().func_size() == 0) {
    return LoweringError(node_, "no branches");
  }
  const auto& functions = it->second.list().func();
  const int n = functions.size();
  DFLOW_RETURN_IF_ERROR(CheckInputCount(tin.size() + 1, "branch_index + Tin"));
  const std::string index = data_inputs_[0];

  NodeDef* switch_index = Add("_switch_index", "_SwitchN", {index, index});
  (*switch_index->mutable_attr())["T"] = TypeAttr(DT_INT32);
  (*switch_index->mutable_attr())["num_outs"] = IntAttr(n);
  AddControlInputs(switch_index);
  std::vector<std::vector<std::string>> inputs(n);
  for (size_t k = 0; k < tin.size(); ++k) {
    NodeDef* s = Add(absl::StrCat("_input_", k), "_SwitchN", {data_inputs_[k + 1], index});
    (*s->mutable_attr())["T"] = TypeAttr(tin[k]);
    (*s->mutable_attr())["num_outs"] = IntAttr(n);
    AddControlInputs(s);
    for (int b = 0; b < n; ++b) inputs[b].push_back(Output(s->name(), b));
  }
  std::vector<Branch> branches;
  for (int b = 0; b < n; ++b) {
    NodeDef* pivot = Add(absl::StrCat("_pivot_", b), "Identity", {Output(switch_index->name(), b)});
    (*pivot->mutable_attr())["T"] = TypeAttr(DT_INT32);
    DFLOW_ASSIGN_OR_RETURN(NameAttrList f, Known(functions[b], absl::StrCat("branch ", b)));
    branches.push_back({AddCall(absl::StrCat("_branch_", b), f, inputs[b], tin, tout,
                                pivot->name()),
                        pivot->name()});
  }
  FinishConditional(branches, DT_INT32, tout);
  return absl::OkStatus();
}

absl::Status Lowering::LowerWhile() {
  DFLOW_ASSIGN_OR_RETURN(std::vector<DataType> types, Types("T"));
  DFLOW_ASSIGN_OR_RETURN(NameAttrList cond_f, Function("cond"));
  DFLOW_ASSIGN_OR_RETURN(NameAttrList body_f, Function("body"));
  DFLOW_RETURN_IF_ERROR(CheckInputCount(types.size(), "T"));
  if (types.empty()) return LoweringError(node_, "a loop needs at least one loop variable");
  int64_t parallel_iterations = kDefaultParallelIterations;
  if (auto it = node_.attr().find("parallel_iterations"); it != node_.attr().end()) {
    parallel_iterations = it->second.i();
  }
  if (parallel_iterations <= 0) {
    return LoweringError(node_, absl::StrCat("parallel_iterations must be positive, not ",
                                             parallel_iterations));
  }
  // The cond function's result type (bool, unless the function returns something else).
  DataType cond_type = DT_BOOL;
  for (const FunctionDef& f : library_.function()) {
    if (f.signature().name() != cond_f.name()) continue;
    if (f.signature().output_arg_size() != 1) {
      return LoweringError(node_, absl::StrCat("cond function '", cond_f.name(), "' has ",
                                               f.signature().output_arg_size(),
                                               " outputs; it must have 1"));
    }
    const OpDef::ArgDef& result = f.signature().output_arg(0);
    if (result.type() != DT_INVALID) cond_type = result.type();
    if (auto bound = cond_f.attr().find(result.type_attr()); bound != cond_f.attr().end()) {
      cond_type = bound->second.type();
    }
  }
  const size_t n = types.size();
  std::vector<std::string> merges;
  for (size_t k = 0; k < n; ++k) {
    NodeDef* enter = Add(absl::StrCat("_enter_", k), "Enter", {data_inputs_[k]});
    (*enter->mutable_attr())["T"] = TypeAttr(types[k]);
    (*enter->mutable_attr())["frame_name"].set_s(node_.name());
    (*enter->mutable_attr())["is_constant"].set_b(false);
    (*enter->mutable_attr())["parallel_iterations"] = IntAttr(parallel_iterations);
    AddControlInputs(enter);
    NodeDef* merge = Add(absl::StrCat("_merge_", k), "Merge",
                         {enter->name(), Name(absl::StrCat("_next_iteration_", k))});
    (*merge->mutable_attr())["T"] = TypeAttr(types[k]);
    (*merge->mutable_attr())["N"] = IntAttr(2);
    merges.push_back(merge->name());
  }
  const std::string cond = AddCall("_cond", cond_f, merges, types, {cond_type}, merges[0]);
  NodeDef* loop_cond = Add("_loop_cond", "LoopCond", {AsBool(cond, cond_type)});
  std::vector<std::string> exits, body_inputs;
  for (size_t k = 0; k < n; ++k) {
    NodeDef* s = Add(absl::StrCat("_switch_", k), "Switch", {merges[k], loop_cond->name()});
    (*s->mutable_attr())["T"] = TypeAttr(types[k]);
    NodeDef* exit = Add(absl::StrCat("_exit_", k), "Exit", {Output(s->name(), 0)});
    (*exit->mutable_attr())["T"] = TypeAttr(types[k]);
    NodeDef* identity = Add(absl::StrCat("_identity_", k), "Identity", {Output(s->name(), 1)});
    (*identity->mutable_attr())["T"] = TypeAttr(types[k]);
    exits.push_back(exit->name());
    body_inputs.push_back(identity->name());
  }
  const std::string body = AddCall("_body", body_f, body_inputs, types, types, body_inputs[0]);
  for (size_t k = 0; k < n; ++k) {
    NodeDef* next = Add(absl::StrCat("_next_iteration_", k), "NextIteration",
                        {Output(body, static_cast<int>(k))});
    (*next->mutable_attr())["T"] = TypeAttr(types[k]);
  }
  NodeDef* result = out_->add_node();
  result->set_name(node_.name());
  result->set_op("IdentityN");
  result->set_device(node_.device());
  for (const std::string& e : exits) result->add_input(e);
  (*result->mutable_attr())["T"] = TypeListAttr(types);
  return absl::OkStatus();
}

}  // namespace

bool IsFunctionalControlFlow(const NodeDef& node) {
  const std::string& op = node.op();
  return op == "If" || op == "StatelessIf" || op == "Case" || op == "StatelessCase" ||
         op == "While" || op == "StatelessWhile";
}

absl::Status LowerFunctionalControlFlow(const NodeDef& node, const FunctionDefLibrary& library,
                                        GraphDef* out) {
  Lowering lowering(node, library, out);
  const std::string& op = node.op();
  if (op == "If" || op == "StatelessIf") return lowering.LowerIf();
  if (op == "Case" || op == "StatelessCase") return lowering.LowerCase();
  if (op == "While" || op == "StatelessWhile") return lowering.LowerWhile();
  return LoweringError(node, "not a functional control-flow op");
}

}  // namespace dflow
