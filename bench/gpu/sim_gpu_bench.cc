// Issue 4's GPU benchmarks on a simulated GPU (DFLOW_SIMULATED_GPUS), for machines with no
// CUDA GPU: the same three workloads as gpu_bench, through a Session on /gpu:0, each beside
// a bare baseline that does what the simulated GPU does underneath, timed the same way in
// the same process:
//   1. MatMul 4096^3 float (two GPU Consts) vs blas::ParallelGemm on two 4096x4096
//      buffers with the same thread count: the routine the simulated GPU's MatMul kernel
//      (the CPU kernel, run on the compute stream) calls                 (target >= 97%)
//   2. 256 MiB host -> device (a fed Placeholder consumed by Identity) and device -> host
//      (fetching a GPU Const) through _Send/_Recv vs std::memcpy between two pre-touched
//      host buffers: the simulated bus is a memcpy on a copy stream's thread (>= 90%)
//   3. a 1000-node chain of element-wise Adds on the GPU, us per node incl. launch (<= 5)
// So what is measured is dflow's overhead around the work (scheduling, streams, events,
// allocation, copies), not a GPU's speed.
//
//   sim_gpu_bench [--threads N] [--iterations K]
//
// Protocol, table and JSON lines as gpu_bench (bench_util.h), with "suite":"sim_gpu".
// Exit status 1 when a step fails, a result is wrong, or /gpu:0 is not a simulated GPU
// (a machine with a real one uses it instead: run gpu_bench there).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "bench/gpu/bench_util.h"
#include "kernels/cpu/blas.h"
#include "runtime/allocator.h"
#include "runtime/sim/sim_device.h"
#include "runtime/thread_pool.h"

namespace dflow::gpu_bench {
namespace {

using Clock = std::chrono::steady_clock;

// One simulated GPU with room for the largest workload (3 x 64 MiB for the MatMul,
// 256 MiB plus staging for the copies) under the default reservation (card minus
// 300 MiB), and none of the test knobs (delays, chaos ordering, faults).
constexpr char kSimulatedGpus[] = "1:2048";

void UseOneSimulatedGpu() {
  setenv("DFLOW_SIMULATED_GPUS", kSimulatedGpus, 1);
  unsetenv("DFLOW_SIMULATED_GPU_OPTIONS");
}

// Dies unless sessions get a /gpu:0 that is simulated (a machine with a real GPU gets the
// real one: these baselines would then compare it with the CPU).
void CheckGpuIsSimulated(const BenchContext& b) {
  ConfigProto config;
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  Check(b, session.status(), "NewSession");
  for (const DeviceAttributes& device : (*session)->ListDevices()) {
    if (device.device_type() != "GPU") continue;
    if (absl::StrContains(device.physical_device_desc(), "(simulated)")) return;
    Die(b, "/gpu:0 is a real GPU (" + device.physical_device_desc() + "): run gpu_bench");
  }
  Die(b, std::string("DFLOW_SIMULATED_GPUS=") + kSimulatedGpus + " gave no GPU");
}

// Milliseconds per call of blas::ParallelGemm on an n x n x n float product, on a pool of
// b.threads threads as the session's (the calling thread takes part, as the simulated
// GPU's compute stream thread does); one warm-up call, then b.iterations calls.
double TimeBareGemmMs(const BenchContext& b, int64_t n) {
  std::vector<float> a(n * n, 0.5f), bm(n * n, 0.5f), c(n * n, 0.f);
  ThreadPool pool(b.threads, "bare_gemm");
  blas::GemmArgs<float> args;
  args.m = args.n = args.k = n;
  args.a = a.data();
  args.lda = n;
  args.b = bm.data();
  args.ldb = n;
  args.c = c.data();
  args.ldc = n;
  Check(b, blas::ParallelGemm(&pool, b.threads, args), "warm-up bare gemm");
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < b.iterations; ++i) {
    Check(b, blas::ParallelGemm(&pool, b.threads, args), "bare gemm");
  }
  const double ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count() / b.iterations;
  // 0.5 * 0.5 summed n times: a wrong baseline would make any ratio meaningless.
  if (c[0] != 0.25f * static_cast<float>(n) || c[n * n - 1] != c[0]) {
    Die(b, "bare gemm result is wrong");
  }
  return ms;
}

// Milliseconds per std::memcpy of `bytes` between two host buffers touched beforehand
// (no page faults timed); one warm-up copy, then b.iterations copies.
double TimeBareMemcpyMs(const BenchContext& b, int64_t bytes) {
  std::unique_ptr<char[]> src(new char[bytes]);
  std::unique_ptr<char[]> dst(new char[bytes]);
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 0, bytes);
  std::memcpy(dst.get(), src.get(), bytes);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < b.iterations; ++i) {
    src[i % bytes] = static_cast<char>(i);  // each copy reads fresh data
    std::memcpy(dst.get(), src.get(), bytes);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count() / b.iterations;
  // Reading the destination keeps the copies observable (never optimized away).
  if (dst[bytes - 1] != 1) Die(b, "bare memcpy result is wrong");
  return ms;
}

void MatMul4096(const BenchContext& b) {
  constexpr int kN = 4096;
  const double dflow = TimeSessionMatMul(b, kN);
  const double bare = TimeBareGemmMs(b, kN);
  Report(b, "matmul_4096_ms", "ms", dflow, bare, bare / dflow, ">=0.97", bare / dflow >= 0.97);
}

void Transfers(const BenchContext& b) {
  constexpr int64_t kBytes = int64_t{256} << 20;
  // Host -> device: a fed 256 MiB host tensor (touched beforehand, as the baseline's).
  {
    const double bare = TimeBareMemcpyMs(b, kBytes);
    absl::StatusOr<Tensor> host =
        Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({kBytes / 4}));
    Check(b, host.status(), "host tensor");
    std::memset(host->raw_data(), 0, kBytes);
    const double dflow = TimeSessionHostToDevice(b, *host);
    Report(b, "h2d_256MiB_ms", "ms", dflow, bare, bare / dflow, ">=0.90", bare / dflow >= 0.90);
  }
  // Device -> host: fetching a 256 MiB GPU Const (built once, no compute per step).
  const double dflow = TimeSessionDeviceToHost(b, kBytes);
  const double bare = TimeBareMemcpyMs(b, kBytes);
  Report(b, "d2h_256MiB_ms", "ms", dflow, bare, bare / dflow, ">=0.90", bare / dflow >= 0.90);
}

}  // namespace
}  // namespace dflow::gpu_bench

int main(int argc, char** argv) {
  using namespace dflow::gpu_bench;
  BenchContext b{"sim_gpu_bench", "sim_gpu", dflow::sim::kSimGpuName, /*threads=*/1,
                 /*iterations=*/5};
  ParseArgs(argc, argv, &b);
  // This program's own environment, read when each session creates its devices.
  UseOneSimulatedGpu();
  CheckGpuIsSimulated(b);
  PrintHeader(b);
  MatMul4096(b);
  Transfers(b);
  RunAddChain(b);
  return 0;
}
