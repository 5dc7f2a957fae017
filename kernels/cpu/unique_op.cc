// Unique(x) -> (y, idx): the distinct elements of a vector in order of first
// occurrence, and for every element the index of its value in y; TF 2.21's
// dtypes and texts (unique_op.cc). Values compare with ==, as TF's hash map
// does: -0 equals 0 (the first one seen is kept) and every NaN is distinct.
// Half and bfloat16 compare as floats.
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/element_key.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

template <typename T, typename Index>
absl::Status UniqueInto(OpKernelContext* ctx, const Tensor& input) {
  const int64_t n = input.NumElements();
  const T* x = input.data<T>();
  DFLOW_ASSIGN_OR_RETURN(Tensor * idx, ctx->allocate_output(1, input.shape()));
  Index* idx_data = idx->data<Index>();
  using Key = decltype(ElementKey(x[0]));
  std::unordered_map<Key, Index> first_seen;
  std::vector<int64_t> positions;  // where each unique value first occurs
  for (int64_t i = 0; i < n; ++i) {
    auto [it, inserted] =
        first_seen.emplace(ElementKey(x[i]), static_cast<Index>(positions.size()));
    if (inserted) positions.push_back(i);
    idx_data[i] = it->second;
  }
  const int64_t unique = static_cast<int64_t>(positions.size());
  DFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape{unique}));
  T* y_data = y->data<T>();
  for (int64_t j = 0; j < unique; ++j) y_data[j] = x[positions[j]];
  return absl::OkStatus();
}

template <typename T>
class UniqueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.shape().dims() == 1, KernelError(*ctx, "unique expects a 1D vector."));
    // TF numbers elements in int32 internally whatever out_idx is.
    OP_REQUIRES(ctx, input.NumElements() <= std::numeric_limits<int32_t>::max(),
                KernelError(*ctx, "unique does not support input tensors larger than ",
                            std::numeric_limits<int32_t>::max(), " elements"));
    if (output_type(1) == DT_INT64) {
      OP_REQUIRES_OK(ctx, (UniqueInto<T, int64_t>(ctx, input)));
      return;
    }
    OP_REQUIRES_OK(ctx, (UniqueInto<T, int32_t>(ctx, input)));
  }
};

template <typename T>
absl::Status RegisterUnique(KernelRegistry* registry) {
  return registry->Register<UniqueOp<T>>(
      CpuKernel("Unique").TypeConstraint<T>("T").TypeConstraint("out_idx", IndexTypes()));
}

}  // namespace

absl::Status RegisterUniqueKernels(KernelRegistry* registry) {
  // TF 2.21's CPU list: the real number types, bool and string (no complex).
  DFLOW_RETURN_IF_ERROR(RegisterUnique<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<int64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<int16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<int8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<uint8_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<uint16_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<uint32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<uint64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<bool>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<Half>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnique<Bfloat16>(registry));
  return RegisterUnique<std::string>(registry);
}

}  // namespace dflow
