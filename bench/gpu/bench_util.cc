#include "bench/gpu/bench_util.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "graph/ops.h"

namespace dflow::gpu_bench {
namespace {

using Clock = std::chrono::steady_clock;

// A 4-byte value computed on GPU:0's compute stream, for the final synchronizing fetch.
void AddSyncNode(const Scope& root) {
  Scope gpu = root.WithDevice("/gpu:0");
  Sum(gpu.WithOpName("sync"), GpuConst(gpu, 4, 1.f), Const(root, 0));
}

}  // namespace

void Die(const BenchContext& b, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", b.program.c_str(), what.c_str());
  std::exit(1);
}

void Check(const BenchContext& b, const absl::Status& status, const std::string& what) {
  if (!status.ok()) Die(b, what + ": " + status.ToString());
}

void ParseArgs(int argc, char** argv, BenchContext* b) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      b->threads = std::atoi(argv[++i]);
    } else if (arg == "--iterations" && i + 1 < argc) {
      b->iterations = std::atoi(argv[++i]);
    } else {
      Die(*b, "usage: " + b->program + " [--threads N] [--iterations K]; unknown argument " +
                  arg);
    }
  }
  if (b->threads < 1 || b->iterations < 1) Die(*b, "--threads and --iterations must be >= 1");
}

void PrintHeader(const BenchContext& b) {
  std::fprintf(stderr, "%s on %s, %d thread(s), %d iterations\n", b.program.c_str(),
               b.gpu.c_str(), b.threads, b.iterations);
  std::fprintf(stderr, "%-28s %12s %12s %8s  %-8s %s\n", "bench", "dflow", "baseline", "ratio",
               "target", "verdict");
}

void Report(const BenchContext& b, const char* bench, const char* unit, double dflow,
            double baseline, double ratio, const char* target, bool met) {
  std::fprintf(stderr, "%-28s %12.3f %12.3f %8.3f  %-8s %s\n", bench, dflow, baseline, ratio,
               target, met ? "met" : "NOT MET");
  std::printf("{\"suite\":\"%s\",\"gpu\":\"%s\",\"bench\":\"%s\",\"threads\":%d,\"unit\":\"%s\","
              "\"dflow\":%.4f,\"baseline\":%.4f,\"ratio\":%.4f,\"target\":\"%s\",\"met\":%s}\n",
              b.suite.c_str(), b.gpu.c_str(), bench, b.threads, unit, dflow, baseline, ratio,
              target, met ? "true" : "false");
  std::fflush(stdout);
}

std::unique_ptr<Session> MakeSession(const BenchContext& b, const Scope& root) {
  ConfigProto config;
  config.set_inter_op_parallelism_threads(b.threads);
  config.set_intra_op_parallelism_threads(b.threads);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  Check(b, session.status(), "NewSession");
  GraphDef graph_def;
  Check(b, root.ToGraphDef(&graph_def), "building the graph");
  Check(b, (*session)->Create(graph_def), "Session::Create");
  return *std::move(session);
}

double TimeSteps(const BenchContext& b, Session& session,
                 const std::vector<std::pair<std::string, Tensor>>& feeds,
                 const std::string& target, const std::string& sync) {
  std::vector<Tensor> out;
  // The warm-up is the timed loop itself: steps that only enqueue overlap, so each of
  // the K in flight has a buffer of its own, and every buffer is first touched (and, on
  // a simulated GPU, its pages faulted in) before the clock starts.
  auto run_steps = [&] {
    for (int i = 0; i < b.iterations; ++i) {
      Check(b, session.Run(feeds, {}, {target}, &out), target);
    }
    Check(b, session.Run({}, {sync}, {}, &out), sync);
  };
  run_steps();
  const Clock::time_point start = Clock::now();
  run_steps();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / b.iterations;
}

double TimeFetches(const BenchContext& b, Session& session, const std::string& fetch) {
  std::vector<Tensor> out;
  // Twice: `out` holds one result while the next Run fills another buffer, so the steady
  // state alternates between two host buffers, and the second one's pages are first
  // touched in the second warm-up, not in the timed loop.
  for (int i = 0; i < 2; ++i) Check(b, session.Run({}, {fetch}, {}, &out), "warm-up " + fetch);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < b.iterations; ++i) Check(b, session.Run({}, {fetch}, {}, &out), fetch);
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / b.iterations;
}

Output GpuConst(const Scope& s, int64_t n, float value) {
  return Const(s, Input::Initializer(std::vector<float>(n, value), {n}));
}

double TimeSessionMatMul(const BenchContext& b, int64_t n) {
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Input::Initializer halves(std::vector<float>(n * n, 0.5f), {n, n});
  MatMul(gpu.WithOpName("c"), Const(gpu.WithOpName("a"), halves),
         Const(gpu.WithOpName("b"), halves));
  AddSyncNode(root);
  std::unique_ptr<Session> session = MakeSession(b, root);
  return TimeSteps(b, *session, {}, "c", "sync");
}

double TimeSessionHostToDevice(const BenchContext& b, const Tensor& host) {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Identity(root.WithDevice("/gpu:0").WithOpName("on_gpu"), x);
  AddSyncNode(root);
  std::unique_ptr<Session> session = MakeSession(b, root);
  return TimeSteps(b, *session, {{"x", host}}, "on_gpu", "sync");
}

double TimeSessionDeviceToHost(const BenchContext& b, int64_t bytes) {
  Scope root = Scope::NewRootScope();
  GpuConst(root.WithDevice("/gpu:0").WithOpName("big"), bytes / 4, 1.f);
  std::unique_ptr<Session> session = MakeSession(b, root);
  return TimeFetches(b, *session, "big");
}

void RunAddChain(const BenchContext& b) {
  constexpr int kNodes = 1000;
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Output c = GpuConst(gpu.WithOpName("c"), 1000, 1.f);
  Output y = GpuConst(gpu.WithOpName("x"), 1000, 0.f);
  for (int i = 0; i < kNodes; ++i) y = Add(gpu.WithOpName("add" + std::to_string(i)), y, c);
  Sum(gpu.WithOpName("total"), y, Const(root, 0));
  std::unique_ptr<Session> session = MakeSession(b, root);
  std::vector<Tensor> out;
  const double ms = TimeFetches(b, *session, "total");
  Check(b, session->Run({}, {"total"}, {}, &out), "chain result");
  if (out[0].scalar<float>() != 1000.f * 1000.f) Die(b, "chain result is wrong");
  const double us_per_node = ms * 1000.0 / kNodes;
  Report(b, "add_chain_1000_us_per_node", "us", us_per_node, 5.0, us_per_node / 5.0, "<=5",
         us_per_node <= 5.0);
}

}  // namespace dflow::gpu_bench
