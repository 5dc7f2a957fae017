// Helpers for the tests of the kernels that update variables (optimizer apply ops dense and
// sparse, scatter ops): resource variables on the test device for the Resource* forms
// (through OpTester), graphs of VariableV2s for the ref forms (through a Session), and a
// runner for the table cases TensorFlow's results were recorded for (record_tf_values.py).
#ifndef DFLOW_TESTS_KERNELS_IO_VARIABLE_OP_TESTING_H_
#define DFLOW_TESTS_KERNELS_IO_VARIABLE_OP_TESTING_H_

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/io/register_io_kernels.h"
#include "proto/graph.pb.h"
#include "runtime/variable_store.h"
#include "session/session.h"
#include "tests/testing/op_tester.h"

namespace dflow::testing {

inline const KernelRegistry& IoRegistry() { return TestKernelRegistry(RegisterIoKernels); }

// A new resource variable on TestCpuDevice() holding `value`; returns its unique name.
inline std::string NewResourceVariable(const std::string& base, const Tensor& value) {
  static int counter = 0;
  const std::string name = absl::StrCat(base, "_", ++counter);
  auto var = TestCpuDevice()->variables()->LookupOrCreateResource("", name, value.dtype());
  absl::MutexLock lock(&var->mu);
  var->value = value;
  return name;
}

inline Tensor HandleOf(const std::string& name) {
  ResourceHandleProto h;
  h.set_name(name);
  return MakeTensor<ResourceHandleProto>({}, {h});
}

// The resource variable's current value (sharing its buffer, as ReadVariableOp would).
inline Tensor ResourceValue(const std::string& name) {
  auto var = TestCpuDevice()->variables()->FindResource("", name);
  REQUIRE(var != nullptr);
  absl::MutexLock lock(&var->mu);
  return var->value;
}

inline void RequireOk(const absl::Status& status) {
  INFO(status.ToString());
  REQUIRE(status.ok());
}

// A GraphDef of ref variables and the ops that update them, run through a Session.
class RefGraph {
 public:
  // VariableV2 `name` of `value`'s dtype and shape, assigned `value` by Open().
  void Variable(const std::string& name, const Tensor& value) {
    NodeDef* v = Node(name, "VariableV2", {});
    (*v->mutable_attr())["dtype"].set_type(value.dtype());
    *(*v->mutable_attr())["shape"].mutable_shape() = value.shape().ToProto();
    Const(name + "/initial_value", value);
    (*Node(name + "/init", "Assign", {name, name + "/initial_value"})
          ->mutable_attr())["T"].set_type(value.dtype());
    inits_.push_back(name + "/init");
  }
  void Const(const std::string& name, const Tensor& value) {
    NodeDef* c = Node(name, "Const", {});
    (*c->mutable_attr())["dtype"].set_type(value.dtype());
    *(*c->mutable_attr())["value"].mutable_tensor() = value.ToProto();
  }
  void Placeholder(const std::string& name, DataType dtype) {
    (*Node(name, "Placeholder", {})->mutable_attr())["dtype"].set_type(dtype);
  }
  // Node `name` running `op`; set its attrs on the result.
  NodeDef* Node(const std::string& name, const std::string& op,
                const std::vector<std::string>& inputs) {
    NodeDef* n = graph_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const std::string& in : inputs) n->add_input(in);
    return n;
  }
  // A session on the graph with every variable assigned its value (all initialized when
  // `initialize`).
  std::unique_ptr<Session> Open(bool initialize = true) const {
    auto session = NewSession();
    RequireOk(session.status());
    RequireOk((*session)->Create(graph_));
    std::vector<Tensor> out;
    if (initialize && !inits_.empty()) RequireOk((*session)->Run({}, {}, inits_, &out));
    return *std::move(session);
  }

 private:
  GraphDef graph_;
  std::vector<std::string> inits_;
};

inline void SetAttr(NodeDef* node, const std::string& name, DataType dtype) {
  (*node->mutable_attr())[name].set_type(dtype);
}
inline void SetAttr(NodeDef* node, const std::string& name, bool value) {
  (*node->mutable_attr())[name].set_b(value);
}

// Session::Run that requires success; returns the fetched tensors.
inline std::vector<Tensor> RunOk(Session& session, const std::vector<std::string>& fetches,
                                 const std::vector<std::string>& targets = {},
                                 const std::vector<std::pair<std::string, Tensor>>& feeds = {}) {
  std::vector<Tensor> out;
  RequireOk(session.Run(feeds, fetches, targets, &out));
  return out;
}

// ---------------------------------------------------------------------------------
// Optimizer apply cases (float): the slots' values before, the op's other inputs in input
// order, and TensorFlow's slots after one step.

struct In {
  enum Kind { kScalar, kGrad, kIndices, kStep };
  Kind kind;
  float value = 0;
};
inline const In G{In::kGrad}, I{In::kIndices};
inline In S(float value) { return {In::kScalar, value}; }
// An int64 scalar (AdagradDA's global_step).
inline In Step(int64_t value) { return {In::kStep, static_cast<float>(value)}; }
inline Tensor StepTensor(const In& in) {
  return MakeTensor<int64_t>({}, {static_cast<int64_t>(in.value)});
}

struct ApplyCase {
  std::string op;  // the ref form's name ("SparseApplyAdagrad"); Resource + op is the other
  std::vector<std::pair<std::string, bool>> attrs;
  std::vector<int64_t> shape;  // of every slot
  std::vector<std::vector<float>> slots;
  std::vector<In> rest;
  std::vector<int64_t> grad_shape;
  std::vector<float> grad;
  std::vector<int64_t> indices;  // empty for dense ops
  std::vector<std::vector<float>> want;
  double eps = 1e-6;
};

// TF's Keras momentum ops have resource forms only.
inline bool ResourceOnly(const ApplyCase& c) {
  return c.op.find("KerasMomentum") != std::string::npos;
}

inline Tensor Shaped(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  return Filled<float>(shape, values);
}

inline Tensor IndexTensor(const std::vector<int64_t>& indices, DataType dtype) {
  const std::vector<int64_t> shape = {static_cast<int64_t>(indices.size())};
  if (dtype == DT_INT64) return Filled<int64_t>(shape, indices);
  return Filled<int32_t>(shape, std::vector<int32_t>(indices.begin(), indices.end()));
}

// The case's resource form on new resource variables; the slots' values after.
inline std::vector<std::vector<float>> RunResourceApply(const ApplyCase& c, DataType index_type,
                                                        bool use_locking) {
  OpTester t("Resource" + c.op, IoRegistry());
  t.Attr("T", DT_FLOAT).Attr("use_locking", use_locking);
  if (!c.indices.empty()) t.Attr("Tindices", index_type);
  for (const auto& [name, value] : c.attrs) t.Attr(name, value);
  std::vector<std::string> names;
  for (const std::vector<float>& s : c.slots) {
    names.push_back(NewResourceVariable("slot", Shaped(c.shape, s)));
    t.Input(HandleOf(names.back()));
  }
  for (const In& in : c.rest) {
    if (in.kind == In::kGrad) t.Input(Shaped(c.grad_shape, c.grad));
    if (in.kind == In::kIndices) t.Input(IndexTensor(c.indices, index_type));
    if (in.kind == In::kScalar) t.Input(MakeTensor<float>({}, {in.value}));
    if (in.kind == In::kStep) t.Input(StepTensor(in));
  }
  RequireOk(t.Run().status());
  std::vector<std::vector<float>> after;
  for (const std::string& name : names) after.push_back(Values<float>(ResourceValue(name)));
  return after;
}

// The case's ref form through a Session on VariableV2s; the slots' values after, and the
// op's output (the variable) as the last entry.
inline std::vector<std::vector<float>> RunRefApply(const ApplyCase& c, DataType index_type,
                                                   bool use_locking) {
  RefGraph g;
  std::vector<std::string> inputs, reads;
  for (size_t i = 0; i < c.slots.size(); ++i) {
    const std::string name = absl::StrCat("slot", i);
    g.Variable(name, Shaped(c.shape, c.slots[i]));
    inputs.push_back(name);
    reads.push_back(name);
  }
  for (size_t i = 0; i < c.rest.size(); ++i) {
    const In& in = c.rest[i];
    const std::string name = absl::StrCat("in", i);
    if (in.kind == In::kGrad) g.Const(name, Shaped(c.grad_shape, c.grad));
    if (in.kind == In::kIndices) g.Const(name, IndexTensor(c.indices, index_type));
    if (in.kind == In::kScalar) g.Const(name, MakeTensor<float>({}, {in.value}));
    if (in.kind == In::kStep) g.Const(name, StepTensor(in));
    inputs.push_back(name);
  }
  NodeDef* op = g.Node("apply", c.op, inputs);
  SetAttr(op, "T", DT_FLOAT);
  SetAttr(op, "use_locking", use_locking);
  if (!c.indices.empty()) SetAttr(op, "Tindices", index_type);
  for (const auto& [name, value] : c.attrs) SetAttr(op, name, value);
  auto session = g.Open();
  const std::vector<Tensor> applied = RunOk(*session, {"apply"});
  std::vector<std::vector<float>> after;
  for (const Tensor& t : RunOk(*session, reads)) after.push_back(Values<float>(t));
  after.push_back(Values<float>(applied[0]));
  return after;
}

// Runs the case's resource form (int32 indices without use_locking, int64 with it) and,
// where TF has one, its ref form (int32, use_locking), each from the case's initial
// values; every slot must be TF's within the case's eps.
inline void CheckApplyCase(const ApplyCase& c) {
  std::string attrs;
  for (const auto& [name, value] : c.attrs) absl::StrAppend(&attrs, name, "=", value, " ");
  INFO(c.op << " " << attrs);
  for (const DataType index_type : {DT_INT32, DT_INT64}) {
    CAPTURE(DataTypeString(index_type));
    const auto after = RunResourceApply(c, index_type, index_type == DT_INT64);
    REQUIRE(after.size() == c.want.size());
    for (size_t i = 0; i < after.size(); ++i) {
      CAPTURE(i);
      CheckNear(after[i], c.want[i], c.eps);
    }
  }
  if (ResourceOnly(c)) return;
  const auto after = RunRefApply(c, DT_INT32, true);
  REQUIRE(after.size() == c.want.size() + 1);
  for (size_t i = 0; i < c.want.size(); ++i) {
    CAPTURE("ref", i);
    CheckNear(after[i], c.want[i], c.eps);
  }
  CheckNear(after.back(), c.want[0], c.eps);  // the ref output is the variable
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_KERNELS_IO_VARIABLE_OP_TESTING_H_
