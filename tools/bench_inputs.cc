#include "tools/bench_inputs.h"

#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/node_def_util.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "tools/feed_parser.h"

namespace dflow {
namespace {

// The node a tensor or node name (`x`, `x:1`, `^x`) refers to.
std::string NodeOf(const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  return id.ok() ? id->node : name;
}

constexpr uint32_t kSyntheticSeed = 20261125;

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseShapeFlags(
    const std::vector<std::string>& flags) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& flag : flags) {
    const size_t eq = flag.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shape ", flag, ": expected NAME=d0,d1,... (e.g. x=16,224,224,3)"));
    }
    std::vector<int64_t> dims;
    for (absl::string_view text : absl::StrSplit(flag.substr(eq + 1), ',', absl::SkipEmpty())) {
      int64_t dim = 0;
      if (!absl::SimpleAtoi(text, &dim) || dim < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--shape ", flag, ": '", text, "' is not a non-negative integer dimension"));
      }
      dims.push_back(dim);
    }
    shapes[flag.substr(0, eq)] = std::move(dims);
  }
  return shapes;
}

absl::StatusOr<TensorShape> ResolveBenchShape(
    const std::string& name, const TensorShapeProto& declared,
    const std::map<std::string, std::vector<int64_t>>& overrides, int64_t batch) {
  auto given = overrides.find(name);
  if (given == overrides.end()) given = overrides.find(NodeOf(name));
  std::vector<int64_t> dims;
  if (given != overrides.end()) {
    dims = given->second;
  } else {
    if (declared.unknown_rank()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", name, " has an unknown rank: give its shape with --shape=", name,
          "=d0,d1,..."));
    }
    for (int i = 0; i < declared.dim_size(); ++i) {
      int64_t dim = declared.dim(i).size();
      if (dim < 0 && i == 0) dim = batch;
      if (dim < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", name, " has an unknown dimension ", i,
            ": give its shape with --shape=", name, "=d0,d1,..."));
      }
      dims.push_back(dim);
    }
  }
  TensorShapeProto proto;
  for (int64_t dim : dims) proto.add_dim()->set_size(dim);
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", name, ": ", shape.status().message()));
  }
  return shape;
}

absl::StatusOr<Tensor> SyntheticFeed(const std::string& name, DataType dtype,
                                     const TensorShape& shape, Allocator* allocator) {
  const bool floating = dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_HALF ||
                        dtype == DT_BFLOAT16;
  if (floating) {
    DFLOW_ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(allocator, DT_FLOAT, shape));
    std::mt19937 engine(kSyntheticSeed);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (float& value : values.flat<float>()) value = uniform(engine);
    return ConvertTensor(values, dtype, allocator);
  }
  const bool synthesizable = dtype == DT_STRING || DispatchNumeric(dtype, [](auto) {});
  if (!synthesizable) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", name, " has dtype ", DataTypeString(dtype),
        ", which bench cannot synthesize: feed it with --feed=", name, "=@file.npy"));
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(allocator, dtype, shape));
  DispatchNumeric(dtype, [&](auto zero) {  // strings are allocated empty
    using T = decltype(zero);
    for (T& value : tensor.flat<T>()) value = T{};
  });
  return tensor;
}

std::vector<const NodeDef*> UnfedPlaceholders(const GraphDef& graph_def,
                                              const std::vector<std::string>& fetches,
                                              const std::vector<std::string>& targets,
                                              const std::vector<std::string>& fed_nodes) {
  absl::flat_hash_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& node : graph_def.node()) by_name[node.name()] = &node;
  absl::flat_hash_set<std::string> fed(fed_nodes.begin(), fed_nodes.end());
  absl::flat_hash_set<std::string> reached;
  std::vector<std::string> stack;
  for (const auto* names : {&fetches, &targets}) {
    for (const std::string& name : *names) stack.push_back(NodeOf(name));
  }
  while (!stack.empty()) {
    std::string name = std::move(stack.back());
    stack.pop_back();
    if (!reached.insert(name).second || fed.contains(name)) continue;
    auto it = by_name.find(name);
    if (it == by_name.end()) continue;
    for (const std::string& input : it->second->input()) stack.push_back(NodeOf(input));
  }
  std::vector<const NodeDef*> placeholders;
  for (const NodeDef& node : graph_def.node()) {
    if (node.op() == "Placeholder" && reached.contains(node.name()) &&
        !fed.contains(node.name())) {
      placeholders.push_back(&node);
    }
  }
  return placeholders;
}

std::vector<std::string> SinkFetches(const GraphDef& graph_def, const Graph& graph) {
  absl::flat_hash_set<std::string> consumed;
  for (const NodeDef& node : graph_def.node()) {
    for (const std::string& input : node.input()) consumed.insert(NodeOf(input));
  }
  std::vector<std::string> fetches;
  for (const NodeDef& node : graph_def.node()) {
    if (consumed.contains(node.name()) || node.op() == "Placeholder" ||
        IsConstantOp(node.op())) {
      continue;
    }
    const Node* imported = graph.FindNode(node.name());
    if (imported == nullptr) continue;
    for (int i = 0; i < imported->num_outputs(); ++i) {
      fetches.push_back(absl::StrCat(node.name(), ":", i));
    }
  }
  return fetches;
}

}  // namespace dflow
