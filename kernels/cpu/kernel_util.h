// Helpers shared by CPU kernels: errors that name the node, and cost hints.
#ifndef DFLOW_KERNELS_CPU_KERNEL_UTIL_H_
#define DFLOW_KERNELS_CPU_KERNEL_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/op_kernel.h"

namespace dflow {

// INVALID_ARGUMENT "<op> <what>" — the executor adds the node name.
template <typename... Args>
absl::Status KernelError(const OpKernelContext& ctx, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(ctx.kernel().type_string(), ": ", args...));
}

// True when data input `index` holds the same tensor in every step (a Const, possibly
// read through Identity; graph/constant_inputs.h), so the kernel may prepare it once,
// e.g. reorder weights into a library's blocked layout.
bool IsConstantInput(const OpKernelConstruction& construction, int index);

// The context's pool's thread count, 1 without a pool.
int NumThreads(OpKernelContext* ctx);

// MatMul's output rows m, inner size k and output columns n for `a` and `b` transposed
// as the flags say, or TF's INVALID_ARGUMENT: "In[i] is not a matrix. Instead it has
// shape ..." or "Matrix size-incompatible: In[0]: ..., In[1]: ...".
struct MatMulDims {
  int64_t m = 0, k = 0, n = 0;
};
absl::StatusOr<MatMulDims> GetMatMulDims(const TensorShape& a, const TensorShape& b,
                                         bool transpose_a, bool transpose_b);
// TF's "Matrix size-incompatible: In[0]: <a>, In[1]: <b>" (MatMul, BatchMatMul).
absl::Status MatrixSizeIncompatible(const TensorShape& a, const TensorShape& b);

// A kernel that does no arithmetic (moves or aliases buffers): run inline.
class CheapOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }
};

// Below this much work (cycles) a loop runs inline: no std::function, no pool.
inline constexpr int64_t kInlineWorkCycles = 40000;

void ParallelForElementsOnPool(OpKernelContext* ctx, int64_t n, int64_t cycles_per_element,
                               const std::function<void(int64_t, int64_t)>& fn);

// Runs `fn(begin, end)` over [0, n), sharded on the context's pool when the work is
// large; small loops (the common case in graphs of tiny tensors) run inline for free.
template <typename Fn>
void ParallelForElements(OpKernelContext* ctx, int64_t n, int64_t cycles_per_element, Fn&& fn) {
  if (n * cycles_per_element < kInlineWorkCycles) {
    fn(int64_t{0}, n);
    return;
  }
  ParallelForElementsOnPool(ctx, n, cycles_per_element, std::forward<Fn>(fn));
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_KERNEL_UTIL_H_
