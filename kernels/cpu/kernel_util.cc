#include "kernels/cpu/kernel_util.h"

#include <utility>

#include "graph/constant_inputs.h"
#include "graph/node_def_util.h"

namespace dflow {

bool IsConstantInput(const OpKernelConstruction& construction, int index) {
  const AttrValue* attr = FindAttr(construction.def(), kConstantInputsAttr);
  if (attr == nullptr) return false;
  for (int64_t i : attr->list().i()) {
    if (i == index) return true;
  }
  return false;
}

int NumThreads(OpKernelContext* ctx) {
  return ctx->pool() == nullptr ? 1 : ctx->pool()->NumThreads();
}

absl::StatusOr<MatMulDims> GetMatMulDims(const TensorShape& a, const TensorShape& b,
                                         bool transpose_a, bool transpose_b) {
  for (const auto& [i, shape] : {std::pair<int, const TensorShape*>{0, &a}, {1, &b}}) {
    if (shape->dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "In[", i, "] is not a matrix. Instead it has shape ", shape->DebugString()));
    }
  }
  MatMulDims dims;
  dims.m = a.dim_size(transpose_a ? 1 : 0);
  dims.k = a.dim_size(transpose_a ? 0 : 1);
  dims.n = b.dim_size(transpose_b ? 0 : 1);
  if (dims.k != b.dim_size(transpose_b ? 1 : 0)) return MatrixSizeIncompatible(a, b);
  return dims;
}

absl::Status MatrixSizeIncompatible(const TensorShape& a, const TensorShape& b) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Matrix size-incompatible: In[0]: ", a.DebugString(), ", In[1]: ", b.DebugString()));
}

void ParallelForElementsOnPool(OpKernelContext* ctx, int64_t n, int64_t cycles_per_element,
                               const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool* pool = ctx->pool();
  if (pool == nullptr) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, cycles_per_element, fn);
}

}  // namespace dflow
