#include "kernels/cpu/kernel_util.h"

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
