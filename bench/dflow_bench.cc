// dflow's side of bench/run_bench.sh's peer benchmarks: the same workloads, measured the
// same way (warm-up, then R repeats of `inner` back-to-back Session::Run calls; median,
// min, max of the per-call mean), printed as JSON lines in the peers' schema so
// summarize.py merges them into one table.
//
//   dflow_bench --threads N [--quick]
//
// Workloads: add_chain_1 / add_chain_1000 (x[1] -> k chained Adds of a constant [1]) and
// dispatch_per_op = (T1000 - T1) / 999; one_node_run (fixed cost of Session::Run on a
// one-node graph); matmul_1024 (A and B both fed); mlp_infer_b64 (784-512-512-10, ReLU,
// weights as constants, x[64,784] fed); sim_gpu_chain_1000 / sim_gpu_per_node (the 1000-Add
// chain on a simulated GPU: issue 4's per-node launch target, simulated).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/scope.h"
#include "session/session.h"

namespace dflow {
namespace {

struct Stats {
  double median, min, max;
  int n;
};

Stats Measure(const std::function<void()>& fn, int warmup, int reps, int inner) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) fn();
    std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    per_call.push_back(dt.count() / inner);
  }
  std::sort(per_call.begin(), per_call.end());
  return {per_call[per_call.size() / 2], per_call.front(), per_call.back(),
          static_cast<int>(per_call.size())};
}

void Emit(const char* bench, const char* variant, int threads, const Stats& s,
          double flops = 0) {
  std::printf("{\"suite\":\"peers\",\"peer\":\"dflow 0.1\",\"bench\":\"%s\",\"variant\":\"%s\","
              "\"threads\":%d,\"unit\":\"us\",\"median\":%.4f,\"min\":%.4f,\"max\":%.4f,\"n\":%d",
              bench, variant, threads, s.median, s.min, s.max, s.n);
  if (flops > 0) std::printf(",\"gflops_median\":%.1f", flops / (s.median * 1e3));
  std::printf("}\n");
  std::fflush(stdout);
}

Tensor RandomTensor(TensorShape shape, uint32_t seed) {
  static CpuAllocator allocator;
  Tensor t = *Tensor::Allocate(&allocator, DT_FLOAT, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 0.05f);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

TensorProto RandomProto(TensorShape shape, uint32_t seed) {
  return RandomTensor(shape, seed).ToProto();
}

std::unique_ptr<Session> MakeSession(const Scope& root, int threads) {
  ConfigProto config;
  config.set_inter_op_parallelism_threads(threads);
  config.set_intra_op_parallelism_threads(threads);
  auto session = NewSession(config);
  GraphDef graph_def;
  if (!session.ok() || !root.ToGraphDef(&graph_def).ok() || !(*session)->Create(graph_def).ok()) {
    std::fprintf(stderr, "dflow_bench: cannot build the benchmark graph\n");
    std::exit(1);
  }
  return *std::move(session);
}

void RunOrDie(Session& session, const std::vector<std::pair<std::string, Tensor>>& feeds,
              const std::string& fetch, std::vector<Tensor>* out) {
  absl::Status status = session.Run(feeds, {fetch}, {}, out);
  if (!status.ok()) {
    std::fprintf(stderr, "dflow_bench: %s\n", status.ToString().c_str());
    std::exit(1);
  }
}

// x[1] -> k Adds of the constant c[1] (on `device`, default placement when empty);
// returns the per-call time.
Stats AddChain(int k, int threads, int reps, int inner, const std::string& device = "") {
  Scope root = Scope::NewRootScope();
  Scope on = device.empty() ? root : root.WithDevice(device);
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output c = Const(on.WithOpName("c"), {1.f});
  Output prev = x;
  for (int i = 0; i < k; ++i) prev = Add(on.WithOpName("add" + std::to_string(i)), prev, c);
  std::unique_ptr<Session> session = MakeSession(root, threads);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor(TensorShape({1}), 1)}};
  std::vector<Tensor> out;
  const std::string fetch = prev.name();
  return Measure([&] { RunOrDie(*session, feeds, fetch, &out); }, 20, reps, inner);
}

Stats OneNodeRun(int threads, int reps, int inner) {
  Scope root = Scope::NewRootScope();
  Const(root.WithOpName("c"), {1.f});
  std::unique_ptr<Session> session = MakeSession(root, threads);
  std::vector<Tensor> out;
  return Measure([&] { RunOrDie(*session, {}, "c", &out); }, 100, reps, inner);
}

Stats MatMul1024(int threads, int reps, int inner) {
  Scope root = Scope::NewRootScope();
  Output a = Placeholder(root.WithOpName("A"), DT_FLOAT);
  Output b = Placeholder(root.WithOpName("B"), DT_FLOAT);
  MatMul(root.WithOpName("Y"), a, b);
  std::unique_ptr<Session> session = MakeSession(root, threads);
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"A", RandomTensor(TensorShape({1024, 1024}), 1)},
      {"B", RandomTensor(TensorShape({1024, 1024}), 2)}};
  std::vector<Tensor> out;
  return Measure([&] { RunOrDie(*session, feeds, "Y", &out); }, 3, reps, inner);
}

Stats Mlp(int threads, int reps, int inner) {
  Scope root = Scope::NewRootScope();
  const int64_t dims[] = {784, 512, 512, 10};
  Output h = Placeholder(root.WithOpName("x"), DT_FLOAT);
  for (int layer = 0; layer < 3; ++layer) {
    const std::string l = std::to_string(layer);
    Output w = Const(root.WithOpName("W" + l), RandomProto(TensorShape({dims[layer], dims[layer + 1]}), 10 + layer));
    Output b = Const(root.WithOpName("b" + l), RandomProto(TensorShape({dims[layer + 1]}), 20 + layer));
    h = BiasAdd(root.WithOpName("fc" + l), MatMul(root.WithOpName("mm" + l), h, w), b);
    if (layer < 2) h = Relu(root.WithOpName("relu" + l), h);
  }
  std::unique_ptr<Session> session = MakeSession(root, threads);
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor(TensorShape({64, 784}), 3)}};
  std::vector<Tensor> out;
  const std::string fetch = h.name();
  return Measure([&] { RunOrDie(*session, feeds, fetch, &out); }, 20, reps, inner);
}

int Main(int argc, char** argv) {
  int threads = 1;
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
    else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strncmp(argv[i], "--only=", 7) == 0) only = argv[i] + 7;
  }
  const int reps = quick ? 5 : 30;
  // Single workloads, for profiling; "a,b" runs several in order.
  if (only.find(',') != std::string::npos) {
    for (size_t start = 0; start <= only.size();) {
      size_t end = only.find(',', start);
      if (end == std::string::npos) end = only.size();
      std::string one = "--only=" + only.substr(start, end - start);
      char* args[] = {argv[0], const_cast<char*>("--threads"),
                      const_cast<char*>(std::to_string(threads).c_str()), one.data()};
      std::string t = std::to_string(threads);
      args[2] = t.data();
      Main(4, args);
      start = end + 1;
    }
    return 0;
  }
  if (only == "one_node_run") {
    Emit("one_node_run", "C++ Session::Run, one Const fetched", threads, OneNodeRun(threads, reps, 5000));
    return 0;
  }
  if (only == "add_chain_1") {
    Emit("add_chain_1", "session.run", threads, AddChain(1, threads, reps, 2000));
    return 0;
  }
  if (only == "add_chain_1000") {
    Emit("add_chain_1000", "session.run", threads, AddChain(1000, threads, reps, 20));
    return 0;
  }
  if (only == "sim_gpu_chain_1000") {
    // Issue 4's "1000-node elementwise chain on one GPU, per node including launch", on a
    // simulated GPU (each kernel enqueued on the compute stream's worker thread). This
    // program's own environment: the variable must be set before the session exists.
    setenv("DFLOW_SIMULATED_GPUS", "1", 1);
    Stats one = AddChain(1, threads, reps, 200, "/gpu:0");
    Stats chain = AddChain(1000, threads, reps, 3, "/gpu:0");
    Emit("sim_gpu_chain_1000", "session.run, 1000 Adds on a simulated GPU", threads, chain);
    Emit("sim_gpu_per_node", "(T1000-T1)/999 on a simulated GPU", threads,
         Stats{(chain.median - one.median) / 999, (chain.min - one.median) / 999,
               (chain.max - one.median) / 999, chain.n});
    return 0;
  }
  if (only == "matmul_1024") {
    Emit("matmul_1024", "session.run, A and B fed", threads, MatMul1024(threads, reps, 3),
         2.0 * 1024 * 1024 * 1024);
    return 0;
  }
  if (only == "mlp_infer_b64") {
    Emit("mlp_infer_b64", "session.run, weights as Const", threads, Mlp(threads, reps, 50),
         2.0 * 64 * (784 * 512 + 512 * 512 + 512 * 10));
    return 0;
  }
  Stats one = AddChain(1, threads, reps, 2000);
  Stats chain = AddChain(1000, threads, reps, 20);
  Emit("add_chain_1", "session.run", threads, one);
  Emit("add_chain_1000", "session.run", threads, chain);
  Stats per_op{(chain.median - one.median) / 999, (chain.min - one.median) / 999,
               (chain.max - one.median) / 999, chain.n};
  Emit("dispatch_per_op", "session.run, (T1000-T1)/999", threads, per_op);
  Emit("one_node_run", "C++ Session::Run, one Const fetched", threads, OneNodeRun(threads, reps, 5000));
  Emit("matmul_1024", "session.run, A and B fed", threads, MatMul1024(threads, quick ? 5 : 15, 3),
       2.0 * 1024 * 1024 * 1024);
  Emit("mlp_infer_b64", "session.run, weights as Const", threads, Mlp(threads, reps, 50),
       2.0 * 64 * (784 * 512 + 512 * 512 + 512 * 10));
  std::string sim = "--only=sim_gpu_chain_1000";
  std::string t = std::to_string(threads);
  char* sim_args[] = {argv[0], const_cast<char*>("--threads"), t.data(), sim.data()};
  return Main(4, sim_args);  // last: it adds simulated GPUs to this process
}

}  // namespace
}  // namespace dflow

int main(int argc, char** argv) { return dflow::Main(argc, argv); }
