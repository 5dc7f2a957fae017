// ListDiff(x, y) -> (out, idx): the elements of vector x that are not in vector y, in x's
// order, and their positions in x (tf.compat.v1.setdiff1d; TF's Prod gradient uses it).
// TF 2.21's dtypes and texts (list_diff_op.cc). Values compare as Unique's do (==, with
// 16-bit floats as floats).
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/element_key.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

template <typename T, typename Index>
absl::Status DiffInto(OpKernelContext* ctx, const Tensor& x, const Tensor& y) {
  const T* xs = x.data<T>();
  const T* ys = y.data<T>();
  using Key = decltype(ElementKey(xs[0]));
  std::unordered_set<Key> drop;
  for (int64_t i = 0; i < y.NumElements(); ++i) drop.insert(ElementKey(ys[i]));
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    if (drop.count(ElementKey(xs[i])) == 0) kept.push_back(i);
  }
  const int64_t n = static_cast<int64_t>(kept.size());
  DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape{n}));
  DFLOW_ASSIGN_OR_RETURN(Tensor * idx, ctx->allocate_output(1, TensorShape{n}));
  for (int64_t j = 0; j < n; ++j) {
    out->data<T>()[j] = xs[kept[j]];
    idx->data<Index>()[j] = static_cast<Index>(kept[j]);
  }
  return absl::OkStatus();
}

template <typename T>
class ListDiffOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    OP_REQUIRES(ctx, x.shape().dims() == 1, KernelError(*ctx, "x should be a 1D vector."));
    OP_REQUIRES(ctx, y.shape().dims() == 1, KernelError(*ctx, "y should be a 1D vector."));
    if (output_type(1) == DT_INT64) {
      OP_REQUIRES_OK(ctx, (DiffInto<T, int64_t>(ctx, x, y)));
      return;
    }
    OP_REQUIRES_OK(ctx, (DiffInto<T, int32_t>(ctx, x, y)));
  }
};

template <typename T>
absl::Status RegisterListDiff(KernelRegistry* registry) {
  return registry->Register<ListDiffOp<T>>(
      CpuKernel("ListDiff").TypeConstraint<T>("T").TypeConstraint("out_idx", IndexTypes()));
}

}  // namespace

absl::Status RegisterListDiffKernels(KernelRegistry* registry) {
  // TF 2.21 registers every real number type, bool and string on the CPU.
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<int64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<int16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<int8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<uint8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<uint16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<bool>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<Half>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiff<Bfloat16>(registry));
  return RegisterListDiff<std::string>(registry);
}

}  // namespace dflow
