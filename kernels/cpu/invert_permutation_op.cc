// InvertPermutation: y[x[i]] = i for a permutation x of [0, N) (transpose gradients),
// with TF 2.21's checks: a vector, every value in range, none repeated.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

template <typename T>
class InvertPermutationOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "invert_permutation expects a 1D vector, got shape ", x.shape().DebugString())));
    const int64_t n = x.NumElements();
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, x.shape()));
    const T* in = x.data<T>();
    T* y = out->data<T>();
    std::fill(y, y + n, T(-1));
    for (int64_t i = 0; i < n; ++i) {
      const T d = in[i];
      OP_REQUIRES(ctx, d >= 0 && d < n,
                  absl::InvalidArgumentError(absl::StrCat(d, " is not between 0 and ", n)));
      OP_REQUIRES(ctx, y[d] == T(-1),
                  absl::InvalidArgumentError(absl::StrCat(d, " is duplicated in the input.")));
      y[d] = static_cast<T>(i);
    }
  }
};

}  // namespace

absl::Status RegisterInvertPermutationKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register<InvertPermutationOp<int32_t>>(
      CpuKernel("InvertPermutation").TypeConstraint<int32_t>("T")));
  return r->Register<InvertPermutationOp<int64_t>>(
      CpuKernel("InvertPermutation").TypeConstraint<int64_t>("T"));
}

}  // namespace dflow
