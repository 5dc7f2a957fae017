#include "graph/train/saver_builder.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/node_def_util.h"
#include "graph/ops.h"

namespace dflow {
namespace {

struct VariableNode {
  std::string name;
  DataType dtype;
  bool resource;
};

AttrValue StringListAttr(const std::vector<std::string>& values) {
  AttrValue v;
  TensorProto* t = v.mutable_tensor();
  t->set_dtype(DT_STRING);
  t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (const std::string& s : values) t->add_string_val(s);
  return v;
}

NodeDef* AddStringConst(GraphDef* graph, const std::string& name,
                        const std::vector<std::string>& values, bool scalar) {
  NodeDef* node = AddNodeDef(graph, name, "Const", {});
  AttrValue value = StringListAttr(values);
  if (scalar) value.mutable_tensor()->clear_tensor_shape();
  (*node->mutable_attr())["value"] = value;
  (*node->mutable_attr())["dtype"] = TypeAttr(DT_STRING);
  node->set_device("/device:CPU:0");
  return node;
}

absl::StatusOr<std::vector<VariableNode>> FindVariables(const GraphDef& graph) {
  std::vector<VariableNode> vars;
  for (const NodeDef& node : graph.node()) {
    const bool resource = node.op() == "VarHandleOp";
    if (!resource && node.op() != "VariableV2" && node.op() != "Variable") continue;
    auto it = node.attr().find("dtype");
    if (it == node.attr().end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable '", node.name(), "' (", node.op(), ") has no dtype attr"));
    }
    vars.push_back({node.name(), it->second.type(), resource});
  }
  if (vars.empty()) {
    return absl::InvalidArgumentError("the graph has no variables to save");
  }
  return vars;
}

// "save", else "save_1", ...: the first prefix no existing node name starts with.
std::string FreePrefix(const GraphDef& graph) {
  auto taken = [&](const std::string& prefix) {
    for (const NodeDef& node : graph.node()) {
      if (node.name() == prefix || absl::StartsWith(node.name(), prefix + "/")) return true;
    }
    return false;
  };
  std::string prefix = "save";
  for (int i = 1; taken(prefix); ++i) prefix = absl::StrCat("save_", i);
  return prefix;
}

}  // namespace

absl::StatusOr<SaverDef> AddSaver(GraphDef* graph) {
  absl::StatusOr<std::vector<VariableNode>> vars = FindVariables(*graph);
  if (!vars.ok()) return vars.status();
  const std::string p = FreePrefix(*graph);
  std::vector<std::string> keys, slices;
  AttrValue dtypes;
  for (const VariableNode& v : *vars) {
    keys.push_back(v.name);
    slices.push_back("");
    dtypes.mutable_list()->add_type(v.dtype);
  }
  AddStringConst(graph, p + "/filename/input", {"model"}, true);
  NodeDef* filename = AddNodeDef(graph, p + "/Const", "PlaceholderWithDefault",
                              {p + "/filename/input"});
  (*filename->mutable_attr())["dtype"] = TypeAttr(DT_STRING);
  (*filename->mutable_attr())["shape"] = ShapeAttr(PartialShape::Scalar());
  AddStringConst(graph, p + "/SaveV2/tensor_names", keys, false);
  AddStringConst(graph, p + "/SaveV2/shape_and_slices", slices, false);
  NodeDef* save = AddNodeDef(graph, p + "/SaveV2", "SaveV2",
                          {p + "/Const", p + "/SaveV2/tensor_names",
                           p + "/SaveV2/shape_and_slices"});
  save->set_device("/device:CPU:0");
  (*save->mutable_attr())["dtypes"] = dtypes;
  NodeDef* restore = AddNodeDef(graph, p + "/RestoreV2", "RestoreV2",
                             {p + "/Const", p + "/SaveV2/tensor_names",
                              p + "/SaveV2/shape_and_slices"});
  restore->set_device("/device:CPU:0");
  (*restore->mutable_attr())["dtypes"] = dtypes;
  NodeDef* restore_all = AddNodeDef(graph, p + "/restore_all", "NoOp", {});
  for (size_t i = 0; i < vars->size(); ++i) {
    const VariableNode& v = (*vars)[i];
    AttrValue colocate;
    colocate.mutable_list()->add_s("loc:@" + v.name);
    const std::string restored = absl::StrCat(p + "/RestoreV2:", i);
    const std::string assign = absl::StrCat(p + "/Assign", i == 0 ? "" : absl::StrCat("_", i));
    if (v.resource) {
      NodeDef* read = AddNodeDef(graph, absl::StrCat(p + "/Read_", i, "/ReadVariableOp"),
                              "ReadVariableOp", {v.name});
      (*read->mutable_attr())["dtype"] = TypeAttr(v.dtype);
      (*read->mutable_attr())["_class"] = colocate;
      save->add_input(read->name());
      NodeDef* a = AddNodeDef(graph, assign, "AssignVariableOp", {v.name, restored});
      (*a->mutable_attr())["dtype"] = TypeAttr(v.dtype);
      (*a->mutable_attr())["_class"] = colocate;
    } else {
      save->add_input(v.name);
      NodeDef* a = AddNodeDef(graph, assign, "Assign", {v.name, restored});
      (*a->mutable_attr())["T"] = TypeAttr(v.dtype);
      (*a->mutable_attr())["validate_shape"] = BoolAttr(true);
      (*a->mutable_attr())["use_locking"] = BoolAttr(true);
      (*a->mutable_attr())["_class"] = colocate;
    }
    restore_all->add_input("^" + assign);
  }
  NodeDef* done = AddNodeDef(graph, p + "/control_dependency", "Identity",
                          {p + "/Const", "^" + p + "/SaveV2"});
  (*done->mutable_attr())["T"] = TypeAttr(DT_STRING);
  (*done->mutable_attr())["_class"] = [&] {
    AttrValue v;
    v.mutable_list()->add_s("loc:@" + p + "/Const");
    return v;
  }();
  SaverDef saver;
  saver.set_filename_tensor_name(p + "/Const:0");
  saver.set_save_tensor_name(p + "/control_dependency:0");
  saver.set_restore_op_name(p + "/restore_all");
  saver.set_version(SaverDef::V2);
  saver.set_max_to_keep(5);
  saver.set_keep_checkpoint_every_n_hours(10000.0f);
  return saver;
}

}  // namespace dflow
