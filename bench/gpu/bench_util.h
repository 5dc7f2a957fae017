// What gpu_bench (a real CUDA GPU) and sim_gpu_bench (a simulated GPU) share: options,
// the Session timing protocol, the report format and the three workloads' dflow side, so
// both programs measure exactly the same graphs the same way; each adds its own bare
// baselines (cuBLAS / cudaMemcpyAsync, or the simulated GPU's own CPU routines).
//
// Protocol: kernels only enqueue, so a step that fetches nothing may return before the
// GPU is done. Timed loops therefore run K steps with targets only (each enqueues on the
// GPU's compute stream, in order) and one final step that fetches a 4-byte value computed
// on that stream after them. Every failure exits with status 1 and a message naming the
// program, never a silent pass.
#ifndef DFLOW_BENCH_GPU_BENCH_UTIL_H_
#define DFLOW_BENCH_GPU_BENCH_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "graph/scope.h"
#include "runtime/tensor.h"
#include "session/session.h"

namespace dflow::gpu_bench {

// One benchmark program's identity and command-line options.
struct BenchContext {
  std::string program;  // prefixes error messages and the header line: "gpu_bench"
  std::string suite;    // the JSON lines' "suite": "gpu"
  std::string gpu;      // the JSON lines' "gpu" and the header's device name
  int threads = 1;
  int iterations = 20;
};

[[noreturn]] void Die(const BenchContext& b, const std::string& what);
void Check(const BenchContext& b, const absl::Status& status, const std::string& what);

// Reads `--threads N` and `--iterations K` into `b` (whose fields hold the defaults);
// dies with the usage on anything else.
void ParseArgs(int argc, char** argv, BenchContext* b);

// "<program> on <gpu>, N thread(s), K iterations" and the table's column names (stderr).
void PrintHeader(const BenchContext& b);

// One table row on stderr and one JSON line on stdout.
void Report(const BenchContext& b, const char* bench, const char* unit, double dflow,
            double baseline, double ratio, const char* target, bool met);

// A session running `root`'s graph with b.threads inter- and intra-op threads.
std::unique_ptr<Session> MakeSession(const BenchContext& b, const Scope& root);

// Milliseconds per step: b.iterations target-only steps, then one step fetching `sync`
// (after one untimed run of that same loop).
double TimeSteps(const BenchContext& b, Session& session,
                 const std::vector<std::pair<std::string, Tensor>>& feeds,
                 const std::string& target, const std::string& sync);

// Milliseconds per step of steps that fetch `fetch` (a device -> host copy each).
double TimeFetches(const BenchContext& b, Session& session, const std::string& fetch);

// A float Const [n] filled with `value`, on `s`'s device.
Output GpuConst(const Scope& s, int64_t n, float value);

// --- The workloads' dflow side (all on /gpu:0) ---

// MatMul n x n x n of two GPU Consts (0.5 everywhere): ms per step.
double TimeSessionMatMul(const BenchContext& b, int64_t n);

// `host` fed to a Placeholder consumed by Identity on the GPU (host -> device through
// _Send/_Recv, no compute): ms per step.
double TimeSessionHostToDevice(const BenchContext& b, const Tensor& host);

// Fetching a GPU Const of `bytes` bytes (uploaded once; device -> host per step): ms.
double TimeSessionDeviceToHost(const BenchContext& b, int64_t bytes);

// 1000 chained Adds of two [1000] GPU Consts, then a Sum fetched: checks the result and
// reports us per node (incl. launch) against the <= 5 us target.
void RunAddChain(const BenchContext& b);

}  // namespace dflow::gpu_bench

#endif  // DFLOW_BENCH_GPU_BENCH_UTIL_H_
