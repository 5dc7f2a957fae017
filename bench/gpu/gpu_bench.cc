// GPU benchmarks of issue 4, on a real CUDA GPU (GPU:0), each beside a bare CUDA baseline
// timed the same way in the same process (runtime/cuda/cuda_baselines.h):
//   1. MatMul 4096^3 float through a Session vs a bare cublasSgemm        (target >= 97%)
//   2. 256 MiB host -> device and device -> host through _Send/_Recv vs
//      cudaMemcpyAsync on pinned memory                                    (target >= 90%)
//      (host -> device twice: a pageable feed, staged, and a pinned feed, one DMA)
//   3. a 1000-node chain of element-wise Adds on one GPU, us per node      (target <= 5)
//
//   gpu_bench [--threads N] [--iterations K]
//
// Protocol (bench_util.h, shared with sim_gpu_bench): kernels only enqueue, so a step that
// fetches nothing returns before the GPU is done. Timed loops therefore run K steps with
// targets only (each enqueues on the GPU's compute stream, in order) and one final step
// that fetches a 4-byte value computed on that stream after them; the baselines enqueue K
// calls and synchronize once. A table goes to stderr and one JSON line per result to
// stdout. Exit status 1 when there is no GPU or a step fails (the error is printed), never
// a silent pass.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "bench/gpu/bench_util.h"
#include "runtime/allocator.h"
#include "runtime/cuda/cuda_baselines.h"
#include "runtime/cuda/pinned_host_allocator.h"
#include "runtime/cuda/cuda_gpus.h"

namespace dflow::gpu_bench {
namespace {

void MatMul4096(const BenchContext& b) {
  constexpr int kN = 4096;
  const double dflow = TimeSessionMatMul(b, kN);
  absl::StatusOr<double> bare = cuda::TimeBareSgemmMs(0, kN, b.iterations);
  Check(b, bare.status(), "bare cublasSgemm");
  Report(b, "matmul_4096_ms", "ms", dflow, *bare, *bare / dflow, ">=0.97", *bare / dflow >= 0.97);
}

void Transfers(const BenchContext& b) {
  constexpr int64_t kBytes = int64_t{256} << 20;
  constexpr int64_t kFloats = kBytes / 4;
  // Host -> device: a fed 256 MiB tensor consumed on the GPU (Identity: no compute), fed
  // from ordinary (pageable) host memory, as a user's feed usually is, and from pinned
  // memory (a direct DMA, what the baseline measures).
  absl::StatusOr<double> bare_h2d =
      cuda::TimePinnedCopyMs(0, kBytes, /*to_device=*/true, b.iterations);
  Check(b, bare_h2d.status(), "bare host->device copy");
  // The process's pinned host memory, where a user allocates feeds to skip staging.
  Allocator* pinned = cuda::ProcessPinnedHostAllocator();
  for (Allocator* allocator : {static_cast<Allocator*>(ProcessCpuAllocator()),
                               pinned}) {
    absl::StatusOr<Tensor> host = Tensor::Allocate(allocator, DT_FLOAT, TensorShape({kFloats}));
    Check(b, host.status(), "host tensor");
    std::memset(host->raw_data(), 0, kBytes);
    const double dflow = TimeSessionHostToDevice(b, *host);
    const bool is_pinned = allocator == pinned;
    Report(b, is_pinned ? "h2d_256MiB_pinned_feed_ms" : "h2d_256MiB_ms", "ms", dflow, *bare_h2d,
           *bare_h2d / dflow, ">=0.90", *bare_h2d / dflow >= 0.90);
  }
  // Device -> host: fetching a 256 MiB GPU Const (uploaded once, no compute per step).
  const double dflow = TimeSessionDeviceToHost(b, kBytes);
  absl::StatusOr<double> bare =
      cuda::TimePinnedCopyMs(0, kBytes, /*to_device=*/false, b.iterations);
  Check(b, bare.status(), "bare device->host copy");
  Report(b, "d2h_256MiB_ms", "ms", dflow, *bare, *bare / dflow, ">=0.90", *bare / dflow >= 0.90);
}

}  // namespace
}  // namespace dflow::gpu_bench

int main(int argc, char** argv) {
  using namespace dflow;
  using namespace dflow::gpu_bench;
  BenchContext b{"gpu_bench", "gpu", "", /*threads=*/1, /*iterations=*/20};
  ParseArgs(argc, argv, &b);
  absl::StatusOr<int> gpus = cuda::RealGpuCount();
  if (!gpus.ok() || *gpus == 0) {
    Die(b, "needs a CUDA GPU and found none (" +
               (gpus.ok() ? std::string("0 devices") : gpus.status().ToString()) + ")");
  }
  b.gpu = cuda::GpuName(0);
  PrintHeader(b);
  MatMul4096(b);
  Transfers(b);
  RunAddChain(b);
  return 0;
}
