// The host-side planning the CUDA kernels rely on, checked without a GPU: the broadcast
// plan (the exact offset arithmetic BinaryBroadcastKernel performs) against naive NumPy
// broadcasting, the multi-pass reduction plan (replayed on the host) against a direct
// reduction, and index tensors in host memory read without touching CUDA.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/types/span.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "runtime/allocator.h"

namespace dflow::cuda {
namespace {

// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

// The offset of output element `i` in an input of shape `in` under NumPy broadcasting.
int64_t NaiveOffset(int64_t i, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  const std::vector<int64_t> out_strides = Strides(out), in_strides = Strides(in);
  int64_t offset = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t index = (i / out_strides[d]) % out[d];
    const int in_d = static_cast<int>(d) - static_cast<int>(out.size() - in.size());
    if (in_d >= 0 && in[in_d] != 1) offset += index * in_strides[in_d];
  }
  return offset;
}

TEST_CASE("The broadcast plan gives NumPy's offsets for every output element",
          "[cuda_host_logic]") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4, 5}, {4, 5}},    {{4, 1, 3}, {2, 1}},       {{}, {7}},        {{7}, {}},
      {{2, 3, 4, 5}, {5}}, {{6, 1}, {1, 6}},          {{1, 1, 3}, {3}}, {{2, 1, 5, 1, 4}, {5, 3, 1}},
      {{3, 1}, {3, 4}},    {{1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1}}};
  for (const auto& [xs, ys] : cases) {
    const TensorShape x(absl::MakeConstSpan(xs)), y(absl::MakeConstSpan(ys));
    INFO(x.DebugString() << " vs " << y.DebugString());
    absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(x, y);
    REQUIRE(plan.ok());
    const std::vector<int64_t> out(plan->output.dim_sizes().begin(), plan->output.dim_sizes().end());
    const BroadcastIndex& b = plan->index;
    int64_t product = 1;
    for (int d = 0; d < b.rank; ++d) product *= b.dims[d];
    CHECK(product == plan->output.num_elements());
    for (int64_t i = 0; i < plan->output.num_elements(); ++i) {
      int64_t rest = i, xo = 0, yo = 0;  // as BinaryBroadcastKernel does
      for (int d = b.rank - 1; d >= 0; --d) {
        const int64_t index = rest % b.dims[d];
        rest /= b.dims[d];
        xo += index * b.x_strides[d];
        yo += index * b.y_strides[d];
      }
      REQUIRE(xo == NaiveOffset(i, out, xs));
      REQUIRE(yo == NaiveOffset(i, out, ys));
    }
  }
}

TEST_CASE("Incompatible shapes are TF's INVALID_ARGUMENT", "[cuda_host_logic]") {
  absl::StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(TensorShape({2, 3}), TensorShape({4}));
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(plan.status().message() == "Incompatible shapes: [2,3] vs. [4]");
}

// Replays `passes` on the host (sums) and compares with summing the flagged dims directly.
void CheckReductionPlan(const std::vector<int64_t>& dims, const std::vector<bool>& reduced) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> data(n);
  for (int64_t i = 0; i < n; ++i) data[i] = (i * 7919) % 101;
  // Direct: accumulate every element into its output coordinate.
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d]) out_dims.push_back(dims[d]);
  }
  int64_t out_n = 1;
  for (int64_t d : out_dims) out_n *= d;
  std::vector<int64_t> expected(out_n, 0);
  const std::vector<int64_t> strides = Strides(dims);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!reduced[d]) o = o * dims[d] + (i / strides[d]) % dims[d];
    }
    expected[o] += data[i];
  }
  std::vector<int64_t> current = data;
  for (const ReducePass& p : PlanReduction(dims, reduced)) {
    REQUIRE(static_cast<int64_t>(current.size()) == p.outer * p.extent * p.inner);
    std::vector<int64_t> next(p.outer * p.inner, 0);
    for (int64_t a = 0; a < p.outer; ++a) {
      for (int64_t r = 0; r < p.extent; ++r) {
        for (int64_t c = 0; c < p.inner; ++c) next[a * p.inner + c] += current[(a * p.extent + r) * p.inner + c];
      }
    }
    current = std::move(next);
  }
  CHECK(current == expected);
}

TEST_CASE("Multi-pass reduction plans reduce exactly the flagged dims", "[cuda_host_logic]") {
  CheckReductionPlan({6, 5, 4}, {true, false, false});
  CheckReductionPlan({6, 5, 4}, {false, true, false});
  CheckReductionPlan({6, 5, 4}, {false, false, true});
  CheckReductionPlan({6, 5, 4}, {true, false, true});
  CheckReductionPlan({6, 5, 4}, {true, true, true});
  CheckReductionPlan({2, 3, 4, 5, 6}, {false, true, false, true, false});
  CheckReductionPlan({2, 3, 4, 5, 6}, {true, true, false, true, true});
  CheckReductionPlan({3, 1, 4}, {false, true, false});
  CHECK(PlanReduction({6, 5}, {false, false}).empty());
}

TEST_CASE("Index tensors in host memory are read without CUDA", "[cuda_host_logic]") {
  Tensor ints = *Tensor::Allocate(ProcessCpuAllocator(), DT_INT32, TensorShape({3}));
  ints.data<int32_t>()[0] = 2;
  ints.data<int32_t>()[1] = -1;
  ints.data<int32_t>()[2] = 7;
  absl::StatusOr<std::vector<int64_t>> values = ReadIndexTensor(nullptr, ints);
  INFO(values.status().ToString());
  REQUIRE(values.ok());
  CHECK(*values == std::vector<int64_t>{2, -1, 7});
  Tensor floats = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({1}));
  CHECK(ReadIndexTensor(nullptr, floats).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow::cuda
