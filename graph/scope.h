// The C++ graph-building API (TensorFlow's cc/framework Scope, Output, Input).
//
// A Scope is a cheap value naming where the next op goes: which Graph, under which name
// prefix, on which device, after which control dependencies and colocated with what.
// Every `With*` call returns a modified copy; all scopes derived from one
// `NewRootScope()` share the Graph and one status. Op functions (ops.h) add nodes
// through a Scope and return handles (Output, Operation) to them.
//
// Errors never abort and never throw. The first misuse (unknown op, wrong input dtype or
// arity, malformed device spec, an Output from another graph, ...) is recorded in the
// shared status; from then on every op function is a no-op returning a null handle, and
// `ToGraphDef()` returns that first error. Check `status()` once at the end.
//
// Naming follows TensorFlow exactly: within one scope level the first use of a base
// name returns it unchanged, later uses give `base_1`, `base_2`, ..., skipping names
// already taken; `NewSubScope("a")` uniquifies "a" the same way and starts a fresh name
// map for the child, joining names with '/'. One addition: a candidate that is already
// a node of the graph (created through another name map) is skipped as well, so two
// scopes can never produce one name twice.
//
// Ownership: the Graph is owned jointly by the scopes (shared_ptr); Node* held in
// Output/Operation are borrowed from it and valid while any scope of the tree lives.
// Thread-safety: a Scope tree is not thread-safe; build a graph from one thread.
#ifndef DFLOW_GRAPH_SCOPE_H_
#define DFLOW_GRAPH_SCOPE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/types.h"
#include "proto/graph.pb.h"
#include "proto/tensor.pb.h"

namespace dflow {

// One output tensor of a node. `node` is null for the result of a failed op.
struct Output {
  Output() = default;
  Output(Node* n, int i = 0) : node(n), index(i) {}  // NOLINT: implicit like TF

  // "node:index", always with the index (TF's Output::name()); "" for a null Output.
  std::string name() const;
  // The output's dtype; DT_INVALID for a null Output or an index out of range.
  DataType dtype() const;

  friend bool operator==(const Output& a, const Output& b) {
    return a.node == b.node && a.index == b.index;
  }
  friend bool operator!=(const Output& a, const Output& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Output& o) {
    return H::combine(std::move(h), o.node, o.index);
  }

  Node* node = nullptr;
  int index = 0;
};

using OutputList = std::vector<Output>;

// A node, used as a control dependency or for ops without outputs (NoOp).
struct Operation {
  Operation() = default;
  explicit Operation(Node* n) : node(n) {}
  // Implicit from Output, like TF: the node producing it.
  Operation(const Output& out) : node(out.node) {}  // NOLINT

  // The node's name; "" for a null Operation.
  std::string name() const;
  int num_outputs() const { return node == nullptr ? 0 : node->num_outputs(); }
  // Output `i`; a null Output when the Operation is null.
  Output output(int i) const { return Output(node, i); }

  Node* node = nullptr;
};

// The element types a literal may have (the implicit Const's dtype follows the C++ type:
// float -> DT_FLOAT, double -> DT_DOUBLE, int32_t -> DT_INT32, int64_t -> DT_INT64,
// bool -> DT_BOOL).
template <typename T>
inline constexpr bool kIsLiteralType =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, bool>;
template <typename T>
using EnableIfLiteral = std::enable_if_t<kIsLiteralType<T>, int>;

// Something an op consumes: an existing Output, or a literal value that becomes a Const
// node (named "Const", uniquified) in the consuming op's scope when the op is built.
//
// Literal dtypes: a literal takes the dtype the op expects for it when that is already
// known (a fixed arg type, an explicit type attr, or one inferred from a non-literal
// input) and the values convert (see ConvertTo), so `Add(s, x_float, 1)` adds 1.0f.
// Otherwise it keeps its C++ type's dtype. (TF's C++ API always keeps the C++ type;
// Python converts like this.)
class Input {
 public:
  // A literal tensor: a scalar, a 1-D or 2-D nested braced list, or flat values with a
  // shape. A ragged nested list gives a non-OK status, reported when used.
  class Initializer {
   public:
    template <typename T, EnableIfLiteral<T> = 0>
    Initializer(T v) : Initializer(std::vector<T>{v}, {}) {}  // NOLINT
    template <typename T, EnableIfLiteral<T> = 0>
    Initializer(std::initializer_list<T> v)  // NOLINT
        : Initializer(std::vector<T>(v), {static_cast<int64_t>(v.size())}) {}
    template <typename T, EnableIfLiteral<T> = 0>
    Initializer(std::initializer_list<std::initializer_list<T>> rows);  // NOLINT
    // REQUIRES: the product of `shape` equals values.size() (else status() is an error).
    template <typename T, EnableIfLiteral<T> = 0>
    Initializer(const std::vector<T>& values, std::vector<int64_t> shape);
    // Any tensor; checked with CheckTensorProto when used.
    explicit Initializer(TensorProto proto) : proto_(std::move(proto)) {}

    const TensorProto& proto() const { return proto_; }
    const absl::Status& status() const { return status_; }
    // The same values as dtype `type` (float, double, int32 or int64), converted like
    // Python's convert_to_tensor: any number converts to a float type, a number to an
    // integer type only when it is integral and in range. nullopt otherwise, and always
    // for bool.
    std::optional<TensorProto> ConvertTo(DataType type) const;

   private:
    void SetShape(const std::vector<int64_t>& shape, size_t num_values);

    TensorProto proto_;
    absl::Status status_;
  };

  Input(const Output& out) : output_(out) {}  // NOLINT
  Input(Initializer init) : literal_(std::move(init)) {}  // NOLINT
  template <typename T, EnableIfLiteral<T> = 0>
  Input(T v) : literal_(Initializer(v)) {}  // NOLINT
  template <typename T, EnableIfLiteral<T> = 0>
  Input(std::initializer_list<T> v) : literal_(Initializer(v)) {}  // NOLINT
  template <typename T, EnableIfLiteral<T> = 0>
  Input(std::initializer_list<std::initializer_list<T>> v)  // NOLINT
      : literal_(Initializer(v)) {}

  bool is_literal() const { return literal_.has_value(); }
  // REQUIRES: !is_literal().
  const Output& output() const { return output_; }
  // REQUIRES: is_literal().
  const Initializer& literal() const { return *literal_; }

 private:
  Output output_;
  std::optional<Initializer> literal_;
};

// A list of inputs for a list-typed op argument (AddN, ConcatV2, Pack, IdentityN).
struct InputList {
  InputList(std::initializer_list<Input> in) : inputs(in) {}  // NOLINT
  InputList(std::vector<Input> in) : inputs(std::move(in)) {}  // NOLINT
  InputList(const std::vector<Output>& outs) : inputs(outs.begin(), outs.end()) {}  // NOLINT

  std::vector<Input> inputs;
};

class Scope {
 public:
  // A new empty Graph with an OK status, no name prefix, device or dependencies.
  static Scope NewRootScope();
  // A root scope that builds onto `graph`, e.g. one ImportGraphDef read from a file
  // TensorFlow wrote (TF's ImportGraphDef into scope.graph()): its nodes can be read by
  // name (graph()->FindNode) and differentiated; new ops' names avoid its nodes'.
  static Scope NewRootScope(std::unique_ptr<Graph> graph);

  // The next op built in the returned scope is named `name` (uniquified as usual).
  Scope WithOpName(absl::string_view name) const;
  // Ops get `spec` verbatim as their requested device, replacing the current one ("" for
  // none). A spec that ParseDeviceName rejects is reported, naming the op, when an op is
  // built with it.
  Scope WithDevice(absl::string_view spec) const;
  // Ops get control edges from `deps` in addition to the current ones.
  Scope WithControlDependencies(const std::vector<Operation>& deps) const;
  Scope WithControlDependencies(const Operation& dep) const;
  Scope WithNoControlDependencies() const;
  // A child scope whose ops are named "<this prefix>/<unique child>/<op>", with its own
  // name map. `name` is uniquified among this level's names; "" keeps the prefix and
  // shares this level's name map. A pending WithOpName is not inherited.
  Scope NewSubScope(absl::string_view name) const;
  // Ops are colocated with `op`: its `loc:@` groups (from its `_class` attr), or its name
  // when it has none, join the scope's set, written as a sorted `_class` list attr.
  // A null `op` is recorded as an INVALID_ARGUMENT error.
  Scope ColocateWith(const Operation& op) const;
  Scope ClearColocation() const;

  // The first error recorded by any scope of this tree (OK if none).
  const absl::Status& status() const { return shared_->status; }
  bool ok() const { return shared_->status.ok(); }
  // Records `status` unless an earlier error is already recorded or it is OK.
  void UpdateStatus(const absl::Status& status) const;

  // The shared graph (borrowed; valid while any scope of the tree lives).
  Graph* graph() const { return shared_->graph.get(); }
  std::shared_ptr<Graph> graph_as_shared_ptr() const { return shared_->graph; }
  // The first recorded error, else the graph as a GraphDef in `*graph_def`.
  absl::Status ToGraphDef(GraphDef* graph_def) const;

  // For op builders (AddOp): the name the next op gets, uniquified and prefixed.
  // Consumes the name (a second call gives the next unique name).
  std::string GetUniqueNameForOp(absl::string_view default_name) const;
  const std::string& device() const { return device_; }
  // The prefix of this scope's op names ("" at the root), e.g. "tower_2/dense".
  const std::string& name_prefix() const { return name_; }
  const std::vector<Operation>& control_deps() const { return control_deps_; }
  // The `_class` list for new ops: sorted "loc:@<group>" entries; empty for none.
  std::vector<std::string> ColocationClass() const;

 private:
  struct Shared {
    std::shared_ptr<Graph> graph;
    absl::Status status;
  };
  // Counters per base name of one scope level (TF's NameMap).
  using NameMap = absl::flat_hash_map<std::string, int>;

  Scope() = default;
  // A name unique in this level's map; when `check_graph`, also not a node's full name.
  std::string UniqueName(absl::string_view base, bool check_graph) const;
  std::string Prefixed(absl::string_view name) const;

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<NameMap> name_map_;
  std::string name_;     // prefix, e.g. "tower_2"
  std::string op_name_;  // name for the next op; "" for the op type
  std::string device_;
  std::vector<Operation> control_deps_;
  std::set<std::string> colocation_;  // groups, without "loc:@"
};

// ---- Implementation details of the Initializer templates --------------------------

namespace scope_internal {
void AppendLiteral(float v, TensorProto* proto);
void AppendLiteral(double v, TensorProto* proto);
void AppendLiteral(int32_t v, TensorProto* proto);
void AppendLiteral(int64_t v, TensorProto* proto);
void AppendLiteral(bool v, TensorProto* proto);
template <typename T>
DataType LiteralDataType() {
  if constexpr (std::is_same_v<T, float>) {
    return DT_FLOAT;
  } else if constexpr (std::is_same_v<T, double>) {
    return DT_DOUBLE;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return DT_INT32;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return DT_INT64;
  } else {
    return DT_BOOL;
  }
}
absl::Status RaggedListError();
}  // namespace scope_internal

template <typename T, EnableIfLiteral<T>>
Input::Initializer::Initializer(const std::vector<T>& values, std::vector<int64_t> shape) {
  proto_.set_dtype(scope_internal::LiteralDataType<T>());
  for (T v : values) scope_internal::AppendLiteral(v, &proto_);
  SetShape(shape, values.size());
}

template <typename T, EnableIfLiteral<T>>
Input::Initializer::Initializer(std::initializer_list<std::initializer_list<T>> rows) {
  const size_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
  std::vector<T> flat;
  bool ragged = false;
  for (const auto& row : rows) {
    ragged = ragged || row.size() != cols;
    flat.insert(flat.end(), row.begin(), row.end());
  }
  *this = Initializer(flat, {static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols)});
  if (ragged) status_ = scope_internal::RaggedListError();
}

}  // namespace dflow

// So Output can key std::unordered_map (e.g. a session's feeds).
namespace std {
template <>
struct hash<dflow::Output> {
  size_t operator()(const dflow::Output& o) const {
    return hash<const void*>()(o.node) * 31 + hash<int>()(o.index);
  }
};
}  // namespace std

#endif  // DFLOW_GRAPH_SCOPE_H_
