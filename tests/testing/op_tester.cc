#include "tests/testing/op_tester.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"

namespace dflow::testing {
namespace {

template <typename T>
void CheckElementsNear(const std::vector<T>& got, const std::vector<T>& want, double eps) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else {
      CHECK(got[i] == Approx(want[i]).epsilon(eps).margin(eps));
    }
  }
}

}  // namespace

Device* TestCpuDevice() {
  static CpuAllocator* allocator = new CpuAllocator();
  static ThreadPool* pool = new ThreadPool(2, "test");
  static CpuDevice* device = new CpuDevice(0, allocator, pool);
  return device;
}

const KernelRegistry& TestKernelRegistry(RegisterKernelsFn register_kernels) {
  static absl::Mutex mu(absl::kConstInit);
  using Registries = absl::flat_hash_map<RegisterKernelsFn, std::unique_ptr<KernelRegistry>>;
  static Registries* registries = new Registries();
  absl::MutexLock lock(&mu);
  auto it = registries->find(register_kernels);
  if (it != registries->end()) return *it->second;
  auto registry = std::make_unique<KernelRegistry>();
  absl::Status status = register_kernels(registry.get());
  if (!status.ok()) FAIL(status.ToString());
  return *registries->emplace(register_kernels, std::move(registry)).first->second;
}

void CheckNear(const std::vector<float>& got, const std::vector<float>& want, double eps) {
  CheckElementsNear(got, want, eps);
}

void CheckNear(const std::vector<double>& got, const std::vector<double>& want, double eps) {
  CheckElementsNear(got, want, eps);
}

OpTester::OpTester(std::string op, const KernelRegistry& registry) : registry_(registry) {
  node_.set_name("test_node");
  node_.set_op(std::move(op));
}

OpTester& OpTester::Attr(const std::string& name, const AttrValue& value) {
  (*node_.mutable_attr())[name] = value;
  return *this;
}

OpTester& OpTester::Attr(const std::string& name, DataType value) {
  AttrValue v;
  v.set_type(value);
  return Attr(name, v);
}

OpTester& OpTester::Attr(const std::string& name, int64_t value) {
  AttrValue v;
  v.set_i(value);
  return Attr(name, v);
}

OpTester& OpTester::Attr(const std::string& name, bool value) {
  AttrValue v;
  v.set_b(value);
  return Attr(name, v);
}

OpTester& OpTester::Attr(const std::string& name, float value) {
  AttrValue v;
  v.set_f(value);
  return Attr(name, v);
}

OpTester& OpTester::Attr(const std::string& name, const char* value) {
  AttrValue v;
  v.set_s(value);
  return Attr(name, v);
}

OpTester& OpTester::Attr(const std::string& name, const std::vector<int64_t>& value) {
  AttrValue v;
  for (int64_t x : value) v.mutable_list()->add_i(x);
  if (value.empty()) v.mutable_list();
  return Attr(name, v);
}

OpTester& OpTester::Attr(const std::string& name, const Tensor& value) {
  AttrValue v;
  *v.mutable_tensor() = value.ToProto();
  return Attr(name, v);
}

OpTester& OpTester::Step(StepResources* resources, int64_t step_id) {
  step_resources_ = resources;
  step_id_ = step_id;
  return *this;
}

OpTester& OpTester::Input(Tensor tensor) {
  inputs_.push_back(std::move(tensor));
  return *this;
}

absl::StatusOr<std::vector<Tensor>> OpTester::Run() {
  const OpDef* op_def = OpRegistry::Global().Find(node_.op());
  if (op_def == nullptr) return absl::NotFoundError("unknown op " + node_.op());
  NodeDef node = node_;
  AddDefaultAttrs(*op_def, &node);
  DataTypeVector in, out;
  DFLOW_RETURN_IF_ERROR(InOutTypesForNode(node, *op_def, &in, &out));
  if (in.size() != inputs_.size()) {
    return absl::InvalidArgumentError("OpTester: wrong number of inputs for " + node.op());
  }
  Device* device = TestCpuDevice();
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                         registry_.CreateKernel(node, *op_def, in, out, device));
  OpKernelContext::Params params;
  params.kernel = kernel.get();
  params.device = device;
  params.step_resources = step_resources_;
  params.step_id = step_id_;
  std::vector<Tensor> inputs = inputs_;  // kernels may forward (consume) their inputs
  params.inputs = absl::MakeSpan(inputs);
  OpKernelContext context(params, static_cast<int>(out.size()));
  kernel->Compute(&context);
  DFLOW_RETURN_IF_ERROR(context.status());
  std::vector<Tensor> outputs;
  for (int i = 0; i < context.num_outputs(); ++i) outputs.push_back(*context.mutable_output(i));
  return outputs;
}

absl::StatusOr<Tensor> OpTester::RunOne() {
  DFLOW_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, Run());
  if (outputs.size() != 1) return absl::InternalError("OpTester: expected one output");
  return outputs[0];
}

}  // namespace dflow::testing
