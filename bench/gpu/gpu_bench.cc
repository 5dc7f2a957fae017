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
// Protocol: kernels only enqueue, so a step that fetches nothing returns before the GPU is
// done. Timed loops therefore run K steps with targets only (each enqueues on the GPU's
// compute stream, in order) and one final step that fetches a 4-byte value computed on
// that stream after them; the baselines enqueue K calls and synchronize once. A table goes
// to stderr and one JSON line per result to stdout. Exit status 1 when there is no GPU or
// a step fails (the error is printed), never a silent pass.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/allocator.h"
#include "runtime/bfc_allocator.h"
#include "runtime/cuda/cuda_baselines.h"
#include "runtime/cuda/cuda_sub_allocator.h"
#include "runtime/cuda/cuda_gpus.h"
#include "session/session.h"

namespace dflow {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int threads = 1;
  int iterations = 20;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "gpu_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const absl::Status& status, const std::string& what) {
  if (!status.ok()) Die(what + ": " + status.ToString());
}

std::unique_ptr<Session> MakeSession(const Scope& root, int threads) {
  ConfigProto config;
  config.set_inter_op_parallelism_threads(threads);
  config.set_intra_op_parallelism_threads(threads);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  Check(session.status(), "NewSession");
  GraphDef graph_def;
  Check(root.ToGraphDef(&graph_def), "building the graph");
  Check((*session)->Create(graph_def), "Session::Create");
  return *std::move(session);
}

// Milliseconds per step: `iterations` target-only steps, then one step fetching `sync`.
double TimeSteps(Session& session, const std::vector<std::pair<std::string, Tensor>>& feeds,
                 const std::string& target, const std::string& sync, int iterations) {
  std::vector<Tensor> out;
  Check(session.Run(feeds, {}, {target}, &out), "warm-up " + target);
  Check(session.Run({}, {sync}, {}, &out), "warm-up " + sync);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) Check(session.Run(feeds, {}, {target}, &out), target);
  Check(session.Run({}, {sync}, {}, &out), sync);
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / iterations;
}

// Milliseconds per step of steps that fetch `fetch` (a device -> host copy each).
double TimeFetches(Session& session, const std::string& fetch, int iterations) {
  std::vector<Tensor> out;
  Check(session.Run({}, {fetch}, {}, &out), "warm-up " + fetch);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) Check(session.Run({}, {fetch}, {}, &out), fetch);
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / iterations;
}

void Report(const Options& o, const char* bench, const char* unit, double dflow, double baseline,
            double ratio, const char* target, bool met) {
  std::fprintf(stderr, "%-28s %12.3f %12.3f %8.3f  %-8s %s\n", bench, dflow, baseline, ratio,
               target, met ? "met" : "NOT MET");
  std::printf("{\"suite\":\"gpu\",\"gpu\":\"%s\",\"bench\":\"%s\",\"threads\":%d,\"unit\":\"%s\","
              "\"dflow\":%.4f,\"baseline\":%.4f,\"ratio\":%.4f,\"target\":\"%s\",\"met\":%s}\n",
              cuda::GpuName(0).c_str(), bench, o.threads, unit, dflow, baseline, ratio, target,
              met ? "true" : "false");
  std::fflush(stdout);
}

Output GpuConst(const Scope& s, int64_t n, float value) {
  return Const(s, Input::Initializer(std::vector<float>(n, value), {n}));
}

// A 4-byte value computed on GPU:0's compute stream, for the final synchronizing fetch.
void AddSyncNode(const Scope& root) {
  Scope gpu = root.WithDevice("/gpu:0");
  Sum(gpu.WithOpName("sync"), GpuConst(gpu, 4, 1.f), Const(root, 0));
}

void MatMul4096(const Options& o) {
  constexpr int kN = 4096;
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Input::Initializer ones(std::vector<float>(int64_t{kN} * kN, 0.5f), {kN, kN});
  MatMul(gpu.WithOpName("c"), Const(gpu.WithOpName("a"), ones), Const(gpu.WithOpName("b"), ones));
  AddSyncNode(root);
  std::unique_ptr<Session> session = MakeSession(root, o.threads);
  const double dflow = TimeSteps(*session, {}, "c", "sync", o.iterations);
  absl::StatusOr<double> bare = cuda::TimeBareSgemmMs(0, kN, o.iterations);
  Check(bare.status(), "bare cublasSgemm");
  Report(o, "matmul_4096_ms", "ms", dflow, *bare, *bare / dflow, ">=0.97", *bare / dflow >= 0.97);
}

void Transfers(const Options& o) {
  constexpr int64_t kBytes = int64_t{256} << 20;
  constexpr int64_t kFloats = kBytes / 4;
  // Host -> device: a fed 256 MiB tensor consumed on the GPU (Identity: no compute), fed
  // from ordinary (pageable) host memory, as a user's feed usually is, and from pinned
  // memory (a direct DMA, what the baseline measures).
  absl::StatusOr<double> bare_h2d = cuda::TimePinnedCopyMs(0, kBytes, /*to_device=*/true, o.iterations);
  Check(bare_h2d.status(), "bare host->device copy");
  BfcOptions pinned_options;
  pinned_options.name = "bench_pinned";
  pinned_options.memory_limit = size_t{1} << 30;
  pinned_options.allow_growth = true;
  BfcAllocator pinned(std::make_unique<cuda::PinnedHostSubAllocator>(), pinned_options);
  for (Allocator* allocator : {static_cast<Allocator*>(ProcessCpuAllocator()),
                               static_cast<Allocator*>(&pinned)}) {
    Scope root = Scope::NewRootScope();
    Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
    Identity(root.WithDevice("/gpu:0").WithOpName("on_gpu"), x);
    AddSyncNode(root);
    std::unique_ptr<Session> session = MakeSession(root, o.threads);
    absl::StatusOr<Tensor> host = Tensor::Allocate(allocator, DT_FLOAT, TensorShape({kFloats}));
    Check(host.status(), "host tensor");
    std::memset(host->raw_data(), 0, kBytes);
    const double dflow = TimeSteps(*session, {{"x", *host}}, "on_gpu", "sync", o.iterations);
    const bool is_pinned = allocator == &pinned;
    Report(o, is_pinned ? "h2d_256MiB_pinned_feed_ms" : "h2d_256MiB_ms", "ms", dflow, *bare_h2d,
           *bare_h2d / dflow, ">=0.90", *bare_h2d / dflow >= 0.90);
  }
  // Device -> host: fetching a 256 MiB GPU Const (uploaded once, no compute per step).
  {
    Scope root = Scope::NewRootScope();
    GpuConst(root.WithDevice("/gpu:0").WithOpName("big"), kFloats, 1.f);
    std::unique_ptr<Session> session = MakeSession(root, o.threads);
    const double dflow = TimeFetches(*session, "big", o.iterations);
    absl::StatusOr<double> bare = cuda::TimePinnedCopyMs(0, kBytes, /*to_device=*/false, o.iterations);
    Check(bare.status(), "bare device->host copy");
    Report(o, "d2h_256MiB_ms", "ms", dflow, *bare, *bare / dflow, ">=0.90", *bare / dflow >= 0.90);
  }
}

void AddChain(const Options& o) {
  constexpr int kNodes = 1000;
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Output c = GpuConst(gpu.WithOpName("c"), 1000, 1.f);
  Output y = GpuConst(gpu.WithOpName("x"), 1000, 0.f);
  for (int i = 0; i < kNodes; ++i) y = Add(gpu.WithOpName("add" + std::to_string(i)), y, c);
  Sum(gpu.WithOpName("total"), y, Const(root, 0));
  std::unique_ptr<Session> session = MakeSession(root, o.threads);
  std::vector<Tensor> out;
  const double ms = TimeFetches(*session, "total", o.iterations);
  Check(session->Run({}, {"total"}, {}, &out), "chain result");
  if (out[0].scalar<float>() != 1000.f * 1000.f) Die("chain result is wrong");
  const double us_per_node = ms * 1000.0 / kNodes;
  Report(o, "add_chain_1000_us_per_node", "us", us_per_node, 5.0, us_per_node / 5.0, "<=5",
         us_per_node <= 5.0);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      o.threads = std::atoi(argv[++i]);
    } else if (arg == "--iterations" && i + 1 < argc) {
      o.iterations = std::atoi(argv[++i]);
    } else {
      Die("usage: gpu_bench [--threads N] [--iterations K]; unknown argument " + arg);
    }
  }
  if (o.threads < 1 || o.iterations < 1) Die("--threads and --iterations must be >= 1");
  return o;
}

}  // namespace
}  // namespace dflow

int main(int argc, char** argv) {
  using namespace dflow;
  const Options options = ParseArgs(argc, argv);
  absl::StatusOr<int> gpus = cuda::RealGpuCount();
  if (!gpus.ok() || *gpus == 0) {
    Die("needs a CUDA GPU and found none (" +
        (gpus.ok() ? std::string("0 devices") : gpus.status().ToString()) + ")");
  }
  std::fprintf(stderr, "gpu_bench on %s, %d thread(s), %d iterations\n",
               cuda::GpuName(0).c_str(), options.threads, options.iterations);
  std::fprintf(stderr, "%-28s %12s %12s %8s  %-8s %s\n", "bench", "dflow", "baseline", "ratio",
               "target", "verdict");
  MatMul4096(options);
  Transfers(options);
  AddChain(options);
  return 0;
}
