#include "graph/scope.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace dflow {
namespace {

constexpr absl::string_view kColocationAttr = "_class";
constexpr absl::string_view kColocationGroupPrefix = "loc:@";

// Literal values widened for conversion: every literal type fits one of the two exactly.
struct LiteralValues {
  std::vector<double> floats;  // from float/double
  std::vector<int64_t> ints;   // from int32/int64
};

std::optional<LiteralValues> ReadLiteral(const TensorProto& proto) {
  LiteralValues v;
  switch (proto.dtype()) {
    case DT_FLOAT:
      v.floats.assign(proto.float_val().begin(), proto.float_val().end());
      return v;
    case DT_DOUBLE:
      v.floats.assign(proto.double_val().begin(), proto.double_val().end());
      return v;
    case DT_INT32:
      v.ints.assign(proto.int_val().begin(), proto.int_val().end());
      return v;
    case DT_INT64:
      v.ints.assign(proto.int64_val().begin(), proto.int64_val().end());
      return v;
    default:
      return std::nullopt;  // bool and anything else never convert
  }
}

// `x` as an int64 when it is one exactly.
bool ExactInteger(double x, int64_t* out) {
  if (!(x >= -0x1p63 && x < 0x1p63) || std::trunc(x) != x) return false;
  *out = static_cast<int64_t>(x);
  return true;
}

bool WriteConverted(const LiteralValues& v, TensorProto* out) {
  const DataType type = out->dtype();
  if (type == DT_FLOAT || type == DT_DOUBLE) {
    auto add = [&](double x) {
      type == DT_FLOAT ? out->add_float_val(static_cast<float>(x)) : out->add_double_val(x);
    };
    for (double x : v.floats) add(x);
    for (int64_t x : v.ints) add(static_cast<double>(x));
    return true;
  }
  if (type != DT_INT32 && type != DT_INT64) return false;
  std::vector<int64_t> ints = v.ints;
  for (double x : v.floats) {
    if (!ExactInteger(x, &ints.emplace_back())) return false;
  }
  for (int64_t x : ints) {
    if (type == DT_INT64) {
      out->add_int64_val(x);
    } else if (x < std::numeric_limits<int32_t>::min() ||
               x > std::numeric_limits<int32_t>::max()) {
      return false;
    } else {
      out->add_int_val(static_cast<int32_t>(x));
    }
  }
  return true;
}

}  // namespace

// ---- Output, Operation, Input ---------------------------------------------------------

std::string Output::name() const {
  return node == nullptr ? "" : absl::StrCat(node->name(), ":", index);
}

DataType Output::dtype() const {
  if (node == nullptr || index < 0 || index >= node->num_outputs()) return DT_INVALID;
  return node->output_types()[index];
}

std::string Operation::name() const { return node == nullptr ? "" : node->name(); }

namespace scope_internal {
void AppendLiteral(float v, TensorProto* proto) { proto->add_float_val(v); }
void AppendLiteral(double v, TensorProto* proto) { proto->add_double_val(v); }
void AppendLiteral(int32_t v, TensorProto* proto) { proto->add_int_val(v); }
void AppendLiteral(int64_t v, TensorProto* proto) { proto->add_int64_val(v); }
void AppendLiteral(bool v, TensorProto* proto) { proto->add_bool_val(v); }
absl::Status RaggedListError() {
  return absl::InvalidArgumentError(
      "Initializer list components should all have the same shape");
}
}  // namespace scope_internal

void Input::Initializer::SetShape(const std::vector<int64_t>& shape, size_t num_values) {
  int64_t product = 1;
  for (int64_t d : shape) {
    proto_.mutable_tensor_shape()->add_dim()->set_size(d);
    product *= d;
  }
  if (product != static_cast<int64_t>(num_values)) {
    status_ = absl::InvalidArgumentError(absl::StrCat(
        "Literal has ", num_values, " values but its shape holds ", product));
  }
}

std::optional<TensorProto> Input::Initializer::ConvertTo(DataType type) const {
  if (type == proto_.dtype()) return proto_;
  std::optional<LiteralValues> values = ReadLiteral(proto_);
  if (!values) return std::nullopt;
  TensorProto out;
  out.set_dtype(type);
  *out.mutable_tensor_shape() = proto_.tensor_shape();
  if (!WriteConverted(*values, &out)) return std::nullopt;
  return out;
}

// ---- Scope ----------------------------------------------------------------------------

Scope Scope::NewRootScope() {
  Scope scope;
  scope.shared_ = std::make_shared<Shared>();
  scope.shared_->graph = std::make_shared<Graph>();
  scope.name_map_ = std::make_shared<NameMap>();
  return scope;
}

Scope Scope::NewRootScope(std::unique_ptr<Graph> graph) {
  Scope scope = NewRootScope();
  if (graph != nullptr) scope.shared_->graph = std::move(graph);
  return scope;
}

Scope Scope::WithOpName(absl::string_view name) const {
  Scope scope = *this;
  scope.op_name_ = std::string(name);
  return scope;
}

Scope Scope::WithDevice(absl::string_view spec) const {
  Scope scope = *this;
  scope.device_ = std::string(spec);
  return scope;
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& deps) const {
  Scope scope = *this;
  scope.control_deps_.insert(scope.control_deps_.end(), deps.begin(), deps.end());
  return scope;
}

Scope Scope::WithControlDependencies(const Operation& dep) const {
  return WithControlDependencies(std::vector<Operation>{dep});
}

Scope Scope::WithNoControlDependencies() const {
  Scope scope = *this;
  scope.control_deps_.clear();
  return scope;
}

Scope Scope::NewSubScope(absl::string_view name) const {
  Scope scope = *this;
  scope.op_name_.clear();
  if (name.empty()) return scope;  // same prefix, shared name map (as TF)
  scope.name_ = Prefixed(UniqueName(name, /*check_graph=*/false));
  scope.name_map_ = std::make_shared<NameMap>();
  return scope;
}

Scope Scope::ColocateWith(const Operation& op) const {
  Scope scope = *this;
  if (op.node == nullptr) {
    UpdateStatus(absl::InvalidArgumentError("ColocateWith() was given a null Operation"));
    return scope;
  }
  bool has_group = false;
  if (const AttrValue* groups = op.node->attr(kColocationAttr)) {
    for (absl::string_view entry : groups->list().s()) {
      if (absl::ConsumePrefix(&entry, kColocationGroupPrefix)) {
        scope.colocation_.emplace(entry);
        has_group = true;
      }
    }
  }
  if (!has_group) scope.colocation_.insert(op.node->name());
  return scope;
}

Scope Scope::ClearColocation() const {
  Scope scope = *this;
  scope.colocation_.clear();
  return scope;
}

void Scope::UpdateStatus(const absl::Status& status) const {
  if (shared_->status.ok()) shared_->status = status;
}

absl::Status Scope::ToGraphDef(GraphDef* graph_def) const {
  if (!ok()) return status();
  *graph_def = graph()->ToGraphDef();
  return absl::OkStatus();
}

std::string Scope::GetUniqueNameForOp(absl::string_view default_name) const {
  return Prefixed(UniqueName(op_name_.empty() ? default_name : op_name_, true));
}

std::vector<std::string> Scope::ColocationClass() const {
  std::vector<std::string> entries;  // std::set iterates sorted
  for (const std::string& group : colocation_) {
    entries.push_back(absl::StrCat(kColocationGroupPrefix, group));
  }
  return entries;
}

std::string Scope::UniqueName(absl::string_view base, bool check_graph) const {
  auto in_graph = [&](const std::string& name) {
    return check_graph && graph()->FindNode(Prefixed(name)) != nullptr;
  };
  std::string name(base);
  auto [it, inserted] = name_map_->try_emplace(name, 0);
  if (inserted && !in_graph(name)) return name;
  int& counter = it->second;  // stays valid: nothing is inserted inside the loop
  do {
    name = absl::StrCat(base, "_", ++counter);
  } while (name_map_->contains(name) || in_graph(name));
  name_map_->emplace(name, 0);
  return name;
}

std::string Scope::Prefixed(absl::string_view name) const {
  if (name_.empty() || name.empty()) return absl::StrCat(name_, name);
  return absl::StrCat(name_, "/", name);
}

}  // namespace dflow
