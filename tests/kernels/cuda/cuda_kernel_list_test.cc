// Runs everywhere (the lists are plain data): the CUDA op list equals the simulated-GPU op
// list, so placement on simulated GPUs predicts placement on real ones.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/sim/sim_kernel_list.h"

namespace dflow {
namespace {

TEST_CASE("The CUDA kernel list equals the simulated-GPU kernel list", "[cuda_kernel_list]") {
  const std::set<std::string> cuda(std::begin(cuda::kCudaKernelOps), std::end(cuda::kCudaKernelOps));
  const std::set<std::string> sim(std::begin(sim::kGpuKernelOps), std::end(sim::kGpuKernelOps));
  for (const std::string& op : sim) {
    INFO(op << " has a simulated-GPU kernel but no CUDA kernel");
    CHECK(cuda.count(op) == 1);
  }
  for (const std::string& op : cuda) {
    INFO(op << " has a CUDA kernel but no simulated-GPU kernel");
    CHECK(sim.count(op) == 1);
  }
  // No duplicates either.
  CHECK(cuda.size() == std::size(cuda::kCudaKernelOps));
}

}  // namespace
}  // namespace dflow
