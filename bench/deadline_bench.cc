// Deadlines inside long kernels (issue 15: "deadlines are met within 20 ms"): how late
// Session::Run returns DEADLINE_EXCEEDED when `timeout_in_ms` passes during a 4096^3
// MatMul, and what the tiles that make it cancellable cost (steps with a deadline pay it;
// steps without one keep the one-call product).
//
//   deadline_bench [--threads=N] [--size=4096] [--reps=5]
//
// Prints one JSON line per measurement: the product through blas::ParallelGemm untiled
// (no token) and tiled (a token), the full Session::Run median time and GFLOP/s, and for
// each timeout the median and max lateness (return time - timeout) in ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/scope.h"
#include "kernels/cpu/blas.h"
#include "runtime/cancellation.h"
#include "runtime/thread_pool.h"
#include "session/session.h"

namespace dflow {
namespace {

Tensor RandomMatrix(int64_t n, uint32_t seed) {
  static CpuAllocator allocator;
  Tensor t = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({n, n}));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The same product straight through blas::ParallelGemm, with and without a token (the
// tiled and the one-call paths), on a pool of `threads`.
void CompareGemmPaths(const Tensor& a, const Tensor& b, int threads, int reps) {
  static CpuAllocator allocator;
  const int64_t n = a.shape().dim_size(0);
  Tensor c = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({n, n}));
  blas::GemmArgs<float> args;
  args.m = args.n = args.k = n;
  args.a = a.data<float>();
  args.b = b.data<float>();
  args.c = c.data<float>();
  args.lda = args.ldb = args.ldc = n;
  ThreadPool pool(threads, "bench");
  CancellationToken token;
  token.set_checked_in_kernels(true);
  for (const bool tiled : {false, true, false, true}) {
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const absl::Status status =
          blas::ParallelGemm(&pool, threads, args, tiled ? &token : nullptr);
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start).count());
      if (!status.ok()) std::fprintf(stderr, "deadline_bench: %s\n", status.ToString().c_str());
    }
    std::printf("{\"bench\":\"gemm_%lld_%s\",\"threads\":%d,\"median_ms\":%.1f,"
                "\"gflops\":%.1f}\n", static_cast<long long>(n), tiled ? "tiled" : "one_call",
                threads, Median(ms), 2.0 * n * n * n / (Median(ms) * 1e6));
  }
}

int Main(int argc, char** argv) {
  int threads = 2;
  int64_t size = 4096;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--size=", 7) == 0) size = std::atoll(argv[i] + 7);
    if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::atoi(argv[i] + 7);
  }
  Scope root = Scope::NewRootScope();
  MatMul(root.WithOpName("Y"), Placeholder(root.WithOpName("A"), DT_FLOAT),
         Placeholder(root.WithOpName("B"), DT_FLOAT));
  ConfigProto config;
  config.set_inter_op_parallelism_threads(threads);
  config.set_intra_op_parallelism_threads(threads);
  auto session = NewSession(config);
  GraphDef graph_def;
  if (!session.ok() || !root.ToGraphDef(&graph_def).ok() || !(*session)->Create(graph_def).ok()) {
    std::fprintf(stderr, "deadline_bench: cannot build the graph\n");
    return 1;
  }
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"A", RandomMatrix(size, 1)},
                                                             {"B", RandomMatrix(size, 2)}};
  CompareGemmPaths(feeds[0].second, feeds[1].second, threads, reps);
  using Clock = std::chrono::steady_clock;
  auto run = [&](int64_t timeout_ms, absl::Status* status) {
    RunOptions options;
    options.set_timeout_in_ms(timeout_ms);
    std::vector<Tensor> out;
    const Clock::time_point start = Clock::now();
    *status = (*session)->Run(options, feeds, {"Y"}, {}, &out, nullptr);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  absl::Status status;
  run(0, &status);  // warm-up
  // The full product with a deadline it meets: the tiled path inside Session::Run.
  std::vector<double> full_tiled;
  for (int r = 0; r < reps; ++r) full_tiled.push_back(run(100000, &status));
  std::vector<double> full;
  for (int r = 0; r < reps; ++r) full.push_back(run(0, &status));
  const double full_ms = Median(full);
  std::printf("{\"bench\":\"matmul_%lld_full\",\"threads\":%d,\"median_ms\":%.1f,"
              "\"gflops\":%.1f}\n", static_cast<long long>(size), threads, full_ms,
              2.0 * size * size * size / (full_ms * 1e6));
  std::printf("{\"bench\":\"matmul_%lld_full_with_deadline\",\"threads\":%d,"
              "\"median_ms\":%.1f}\n", static_cast<long long>(size), threads,
              Median(full_tiled));
  for (int64_t timeout : {20, 100, 300}) {
    if (timeout >= full_ms) continue;
    std::vector<double> late;
    for (int r = 0; r < reps; ++r) {
      const double ms = run(timeout, &status);
      if (status.code() != absl::StatusCode::kDeadlineExceeded) {
        std::fprintf(stderr, "deadline_bench: expected DEADLINE_EXCEEDED, got %s\n",
                     status.ToString().c_str());
        return 1;
      }
      late.push_back(ms - static_cast<double>(timeout));
    }
    std::printf("{\"bench\":\"matmul_%lld_deadline\",\"threads\":%d,\"timeout_ms\":%lld,"
                "\"late_median_ms\":%.1f,\"late_max_ms\":%.1f}\n",
                static_cast<long long>(size), threads, static_cast<long long>(timeout),
                Median(late), *std::max_element(late.begin(), late.end()));
  }
  return 0;
}

}  // namespace
}  // namespace dflow

int main(int argc, char** argv) { return dflow::Main(argc, argv); }
