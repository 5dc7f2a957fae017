#include "runtime/cuda/pinned_host_allocator.h"

#include <memory>
#include <utility>

#include "runtime/cuda/cuda_sub_allocator.h"

namespace dflow::cuda {

BfcAllocator* ProcessPinnedHostAllocator() {
  static BfcAllocator* const allocator = [] {
    BfcOptions options;
    options.name = "gpu_host_bfc";
    options.memory_limit = kPinnedHostMemoryLimit;
    options.allow_growth = true;
    return new BfcAllocator(std::make_unique<PinnedHostSubAllocator>(), std::move(options));
  }();
  return allocator;
}

}  // namespace dflow::cuda
