#include "kernels/cpu/kernel_util.h"

namespace dflow {

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
