#include "runtime/sim/sim_host_allocator.h"

#include <cstddef>
#include <memory>
#include <utility>

#include "runtime/sub_allocator.h"

namespace dflow::sim {

BfcAllocator* ProcessSimHostAllocator() {
  static BfcAllocator* const allocator = [] {
    BfcOptions options;
    options.name = "sim_gpu_host_bfc";
    options.memory_limit = size_t{64} << 30;
    options.allow_growth = true;
    return new BfcAllocator(std::make_unique<HostSubAllocator>(), std::move(options));
  }();
  return allocator;
}

}  // namespace dflow::sim
