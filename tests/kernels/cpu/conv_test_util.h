// Helpers shared by the Conv2D and pooling kernel tests: TF's window arithmetic written
// out independently of the kernels, NHWC<->NCHW transposes, deterministic inputs, and a
// runner that keeps one kernel across several Computes (to exercise its caches).
#ifndef DFLOW_TESTS_KERNELS_CPU_CONV_TEST_UTIL_H_
#define DFLOW_TESTS_KERNELS_CPU_CONV_TEST_UTIL_H_

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"
#include "runtime/op_kernel.h"
#include "tests/testing/op_tester.h"

namespace dflow::testing {

// One spatial dim as TF sizes it: output size and the pad before the first window.
struct RefWindow {
  int64_t out = 0;
  int64_t pad_before = 0;
};

// padding: "SAME", "VALID" or "EXPLICIT" (then pad_before/pad_after are used).
inline RefWindow RefWindowFor(const std::string& padding, int64_t in, int64_t size, int64_t stride,
                              int64_t dilation, int64_t pad_before = 0, int64_t pad_after = 0) {
  const int64_t eff = (size - 1) * dilation + 1;
  if (padding == "SAME") {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + eff - in, 0);
    return {out, total / 2};
  }
  if (padding == "VALID") return {in >= eff ? (in - eff) / stride + 1 : 0, 0};
  const int64_t padded = in + pad_before + pad_after;
  return {padded >= eff ? (padded - eff) / stride + 1 : 0, pad_before};
}

inline std::vector<float> RandomValues(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  return v;
}

// The sequence ((i*a) % m - off) * scale, used to recreate the TF reference inputs.
inline std::vector<float> Sequence(int64_t count, int a, int m, int off, float scale) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>((i * a) % m - off) * scale;
  return v;
}

inline std::vector<float> NhwcToNchw(const std::vector<float>& x, int64_t n, int64_t h, int64_t w,
                                     int64_t c) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        for (int64_t k = 0; k < c; ++k)
          y[((b * c + k) * h + i) * w + j] = x[((b * h + i) * w + j) * c + k];
  return y;
}

inline std::vector<float> NchwToNhwc(const std::vector<float>& x, int64_t n, int64_t c, int64_t h,
                                     int64_t w) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j)
          y[((b * h + i) * w + j) * c + k] = x[((b * c + k) * h + i) * w + j];
  return y;
}

// Builds one kernel for `node` (defaults filled in) and runs it on several inputs.
class KernelRunner {
 public:
  KernelRunner(NodeDef node, const KernelRegistry& registry) {
    const OpDef* op_def = OpRegistry::Global().Find(node.op());
    REQUIRE(op_def != nullptr);
    AddDefaultAttrs(*op_def, &node);
    DataTypeVector in, out;
    REQUIRE(InOutTypesForNode(node, *op_def, &in, &out).ok());
    num_outputs_ = static_cast<int>(out.size());
    auto kernel = registry.CreateKernel(node, *op_def, in, out, TestCpuDevice());
    REQUIRE(kernel.ok());
    kernel_ = *std::move(kernel);
  }

  absl::StatusOr<Tensor> Run(std::vector<Tensor> inputs) const {
    OpKernelContext::Params params;
    params.kernel = kernel_.get();
    params.device = TestCpuDevice();
    params.inputs = absl::MakeSpan(inputs);
    OpKernelContext context(params, num_outputs_);
    kernel_->Compute(&context);
    if (!context.status().ok()) return context.status();
    return *context.mutable_output(0);
  }

 private:
  std::unique_ptr<OpKernel> kernel_;
  int num_outputs_ = 1;
};

inline AttrValue IntList(const std::vector<int64_t>& values) {
  AttrValue v;
  v.mutable_list();
  for (int64_t x : values) v.mutable_list()->add_i(x);
  return v;
}

inline AttrValue StringAttr(const std::string& s) {
  AttrValue v;
  v.set_s(s);
  return v;
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_KERNELS_CPU_CONV_TEST_UTIL_H_
