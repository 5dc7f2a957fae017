// OpTester: runs one kernel on a CPU device with given inputs and attrs, for kernel
// tests. Fills default attrs from the op registry and computes dtypes like the graph
// importer does, so a test states only what matters:
//
//   auto out = OpTester("MatMul", registry).Attr("T", DT_FLOAT)
//                  .Input(MakeTensor<float>({2, 3}, {...})).Input(...).Run();
#ifndef DFLOW_TESTS_TESTING_OP_TESTER_H_
#define DFLOW_TESTS_TESTING_OP_TESTER_H_

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/attr_value.pb.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"
#include "runtime/step_resources.h"
#include "runtime/tensor.h"

namespace dflow::testing {

// A process-wide CPU device for kernel tests (2 pool threads).
Device* TestCpuDevice();

// A function that adds a group of kernels to a registry, e.g. RegisterCwiseKernels.
using RegisterKernelsFn = absl::Status (*)(KernelRegistry*);

// A process-wide registry holding only the kernels `register_kernels` adds, built on the
// first call for each function and kept for the rest of the process. If registration
// fails, the calling test fails (Catch2 FAIL) with the status, and the next call tries
// again. Must be called from inside a Catch2 test.
const KernelRegistry& TestKernelRegistry(RegisterKernelsFn register_kernels);

// A tensor of `shape` holding `values` in row-major order (extra values are ignored;
// elements without a value are left as allocated).
template <typename T>
Tensor MakeTensor(std::initializer_list<int64_t> shape, std::vector<T> values);

// Like MakeTensor, for a shape computed at run time. REQUIRES: values.size() is at most
// the number of elements.
template <typename T>
Tensor Filled(std::vector<int64_t> shape, const std::vector<T>& values) {
  Tensor t = *Tensor::Allocate(TestCpuDevice()->allocator(), DataTypeOf<T>(),
                               TensorShape(absl::MakeConstSpan(shape)));
  std::copy(values.begin(), values.end(), t.flat<T>().begin());
  return t;
}

// A 1-D tensor of `values`.
template <typename T>
Tensor Vec(const std::vector<T>& values) {
  return Filled<T>({static_cast<int64_t>(values.size())}, values);
}

// A tensor of `shape` holding 0, 1, 2, ... in row-major order.
template <typename T>
Tensor Iota(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<T> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<T>(i);
  return Filled<T>(shape, values);
}

// A tensor's dimensions as a vector, for comparing shapes in CHECKs.
inline std::vector<int64_t> DimsOf(const Tensor& tensor) {
  absl::Span<const int64_t> dims = tensor.shape().dim_sizes();
  return std::vector<int64_t>(dims.begin(), dims.end());
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  absl::Span<T> flat = tensor.flat<T>();
  return std::vector<T>(flat.begin(), flat.end());
}

// Catch2 checks that `got` has as many elements as `want` (REQUIRE) and that each element
// equals the wanted one within `eps`, both relative and absolute (Approx with epsilon and
// margin `eps`); a NaN wanted matches only a NaN. Failures name the element index.
void CheckNear(const std::vector<float>& got, const std::vector<float>& want,
               double eps = 1e-6);
void CheckNear(const std::vector<double>& got, const std::vector<double>& want,
               double eps = 1e-6);

class OpTester {
 public:
  // `registry` must outlive the tester.
  OpTester(std::string op, const KernelRegistry& registry);

  OpTester& Attr(const std::string& name, const AttrValue& value);
  OpTester& Attr(const std::string& name, DataType value);
  OpTester& Attr(const std::string& name, int64_t value);
  OpTester& Attr(const std::string& name, int value) { return Attr(name, int64_t{value}); }
  OpTester& Attr(const std::string& name, bool value);
  OpTester& Attr(const std::string& name, float value);
  OpTester& Attr(const std::string& name, const char* value);
  OpTester& Attr(const std::string& name, const std::vector<int64_t>& value);
  OpTester& Attr(const std::string& name, const Tensor& value);
  OpTester& Input(Tensor tensor);
  // Runs the kernel inside step `step_id` holding `resources` (borrowed), so a test can
  // chain the ops of a TensorArray or stack through one step's resources.
  OpTester& Step(StepResources* resources, int64_t step_id = 1);

  // Creates the kernel (errors from its constructor come back here) and runs it once.
  absl::StatusOr<std::vector<Tensor>> Run();
  // Run() expecting exactly one output.
  absl::StatusOr<Tensor> RunOne();

 private:
  NodeDef node_;
  std::vector<Tensor> inputs_;
  const KernelRegistry& registry_;
  StepResources* step_resources_ = nullptr;
  int64_t step_id_ = 0;
};

// --- implementation details of MakeTensor ---
template <typename T>
Tensor MakeTensor(std::initializer_list<int64_t> shape, std::vector<T> values) {
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(TestCpuDevice()->allocator(), DataTypeOf<T>(), TensorShape(shape));
  Tensor tensor = *std::move(t);
  absl::Span<T> flat = tensor.flat<T>();
  for (size_t i = 0; i < flat.size() && i < values.size(); ++i) flat[i] = values[i];
  return tensor;
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_TESTING_OP_TESTER_H_
