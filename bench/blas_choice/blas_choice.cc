// blas_choice: which BLAS should dflow's CPU MatMul call, and how close does the kernel
// come to it? Measures fp32 GEMM on the 1024^3 square and on the three GEMMs of the
// MLP 784-512-512-10 at batch 64 (64x784x512, 64x512x512, 64x512x10), on 1 and 2 threads:
//
//   onednn          dnnl_sgemm, oneDNN's own OpenMP threading (the peers' setup)
//   onednn-passive  the same with OMP_WAIT_POLICY=PASSIVE (2 threads only): library
//                   threading whose workers sleep instead of spinning between calls
//   openblas        cblas_sgemm, OpenBLAS's own pthreads, kernel chosen by OpenBLAS's
//                   CPU detection (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from
//                   the child's environment)
//   openblas-haswell the same forced to its AVX2 "Haswell" kernels, which is what this
//                   sandbox's environment (OPENBLAS_CORETYPE=Haswell) gives every process
//   dflow           the MatMul kernel as the executor runs it: created through the
//                   KernelRegistry, Compute()d on a thread of a ThreadPool(T) (output
//                   allocation included), i.e. single-threaded oneDNN calls sharded over
//                   the pool by kernels/cpu/blas.cc
//
// Every (implementation, threads) pair runs in its own process (this binary re-executes
// itself with --child) so that the libraries' thread pools never meet; the whole set is
// repeated --rounds times, interleaved, and the table shows the median of the per-round
// medians. Usage:
//   bazel run -c opt //bench/blas_choice -- [--rounds=3] [--seconds=1]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cblas.h>
#include <dnnl.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"

extern "C" {
void openblas_set_num_threads(int num_threads);
char* openblas_get_corename(void);
}
extern char** environ;

namespace dflow {
namespace {

struct Shape {
  int64_t m, k, n;
  std::string Name() const { return absl::StrCat(m, "x", k, "x", n); }
  double Flops() const { return 2.0 * m * n * k; }
};
const std::vector<Shape>& Shapes() {
  static const auto* shapes =
      new std::vector<Shape>{{1024, 1024, 1024}, {64, 784, 512}, {64, 512, 512}, {64, 512, 10}};
  return *shapes;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<float> RandomFloats(int64_t n, unsigned seed) {
  std::vector<float> v(n);
  srand(seed);
  for (float& x : v) x = static_cast<float>(rand()) / RAND_MAX - 0.5f;
  return v;
}

// Times `run` (which returns the seconds one call took) for about `seconds` after a
// warm-up; prints one RESULT line.
template <typename Fn>
void Measure(const std::string& impl, int threads, const Shape& s, double seconds, Fn run) {
  double warm = 0;
  int calls = 0;
  while (calls < 3 || warm < 0.1) {
    warm += run();
    ++calls;
  }
  const int reps = std::clamp(static_cast<int>(seconds / (warm / calls)), 15, 3000);
  std::vector<double> t(reps);
  for (double& x : t) x = run();
  std::sort(t.begin(), t.end());
  std::printf("RESULT impl=%s threads=%d shape=%s med_us=%.2f min_us=%.2f max_us=%.2f reps=%d\n",
              impl.c_str(), threads, s.Name().c_str(), t[reps / 2] * 1e6, t[0] * 1e6,
              t[reps - 1] * 1e6, reps);
  std::fflush(stdout);
}

int RunLibraryChild(const std::string& impl, int threads, double seconds) {
  const bool onednn = impl.rfind("onednn", 0) == 0;
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  if (onednn) {
    std::printf("INFO %s: oneDNN ISA %d (dnnl_cpu_isa_t)\n", impl.c_str(),
                static_cast<int>(dnnl_get_effective_cpu_isa()));
  } else {
    std::printf("INFO %s: OpenBLAS core %s\n", impl.c_str(), openblas_get_corename());
  }
  for (const Shape& s : Shapes()) {
    const std::vector<float> a = RandomFloats(s.m * s.k, 1), b = RandomFloats(s.k * s.n, 2);
    std::vector<float> c(s.m * s.n);
    Measure(impl, threads, s, seconds, [&] {
      const double start = Now();
      if (onednn) {
        dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(),
                   s.n);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(),
                    s.k, b.data(), s.n, 0.0f, c.data(), s.n);
      }
      return Now() - start;
    });
  }
  return 0;
}

int RunKernelChild(int threads, double seconds) {
  CpuAllocator allocator;
  ThreadPool pool(threads, "bench");
  CpuDevice device(0, &allocator, &pool);
  KernelRegistry registry;
  absl::Status status = RegisterMatMulKernels(&registry);
  const OpDef* op_def = OpRegistry::Global().Find("MatMul");
  if (!status.ok() || op_def == nullptr) {
    std::fprintf(stderr, "setup failed: %s\n", status.ToString().c_str());
    return 1;
  }
  NodeDef node;
  node.set_name("matmul");
  node.set_op("MatMul");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  AddDefaultAttrs(*op_def, &node);
  DataTypeVector in, out;
  status = InOutTypesForNode(node, *op_def, &in, &out);
  absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
      status.ok() ? registry.CreateKernel(node, *op_def, in, out, &device)
                  : absl::StatusOr<std::unique_ptr<OpKernel>>(status);
  if (!kernel.ok()) {
    std::fprintf(stderr, "kernel: %s\n", kernel.status().ToString().c_str());
    return 1;
  }
  for (const Shape& s : Shapes()) {
    std::vector<Tensor> inputs = {
        *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({s.m, s.k})),
        *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({s.k, s.n}))};
    const std::vector<float> a = RandomFloats(s.m * s.k, 1), b = RandomFloats(s.k * s.n, 2);
    std::copy(a.begin(), a.end(), inputs[0].data<float>());
    std::copy(b.begin(), b.end(), inputs[1].data<float>());
    OpKernelContext::Params params;
    params.kernel = kernel->get();
    params.device = &device;
    params.inputs = absl::MakeSpan(inputs);
    // As the executor runs an expensive kernel: on a pool thread, which here makes the
    // calls back to back (like the library columns), so only the kernel's own work and
    // its shards' hand-offs to the other pool threads are timed.
    std::promise<void> done;
    pool.Schedule([&] {
      Measure("dflow", threads, s, seconds, [&] {
        const double start = Now();
        OpKernelContext context(params, 1);
        (*kernel)->Compute(&context);
        const double elapsed = Now() - start;
        if (!context.status().ok()) {
          std::fprintf(stderr, "MatMul failed: %s\n", context.status().ToString().c_str());
          std::exit(1);
        }
        return elapsed;
      });
      done.set_value();
    });
    done.get_future().wait();
  }
  return 0;
}

// --- parent ---

struct Config {
  std::string impl;
  int threads;
  // Changes to the child's environment: "NAME=VALUE" sets NAME, "-NAME" removes it.
  std::vector<std::string> env;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string CpuInfoField(const std::string& cpuinfo, const std::string& field) {
  size_t pos = cpuinfo.find(field);
  if (pos == std::string::npos) return "?";
  pos = cpuinfo.find(':', pos);
  const size_t end = cpuinfo.find('\n', pos);
  return cpuinfo.substr(pos + 2, end - pos - 2);
}

std::string LoadAvg() {
  std::string s = ReadFile("/proc/loadavg");
  return s.substr(0, s.find(' ', s.find(' ', s.find(' ') + 1) + 1));
}

// Runs this binary with `args` and `config.env` added to the environment; returns stdout.
std::string RunChild(const Config& config, double seconds) {
  std::vector<std::string> args = {"/proc/self/exe", "--child=" + config.impl,
                                   absl::StrCat("--threads=", config.threads),
                                   absl::StrCat("--seconds=", seconds)};
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool changed = false;
    for (const std::string& change : config.env) {
      changed |= change == "-" + name || change.rfind(name + "=", 0) == 0;
    }
    if (!changed) env_strings.push_back(entry);
  }
  for (const std::string& change : config.env) {
    if (change[0] != '-') env_strings.push_back(change);
  }
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) output.append(buf, n);
  close(fds[0]);
  if (rc == 0) waitpid(pid, nullptr, 0);
  return output;
}

std::string Field(const std::string& line, const std::string& key) {
  const size_t pos = line.find(" " + key + "=");
  if (pos == std::string::npos) return "";
  const size_t start = pos + key.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int RunParent(int rounds, double seconds) {
  const std::string cpuinfo = ReadFile("/proc/cpuinfo");
  const bool avx512 = cpuinfo.find(" avx512f") != std::string::npos;
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::printf("# blas_choice %s\n", date);
  std::printf("machine: %s, %ld CPUs, avx512f=%s, L1d/L2/L3 per /proc/cpuinfo cache size %s\n",
              CpuInfoField(cpuinfo, "model name").c_str(), sysconf(_SC_NPROCESSORS_ONLN),
              avx512 ? "yes" : "no", CpuInfoField(cpuinfo, "cache size").c_str());
  std::printf("libraries: %s\n", blas::Describe().c_str());
  std::printf("environment: OPENBLAS_CORETYPE=%s\n", coretype == nullptr ? "(unset)" : coretype);
  std::printf("rounds=%d seconds/shape=%.2g, loadavg at start %s\n\n", rounds, seconds,
              LoadAvg().c_str());

  const std::vector<std::string> impls = {"onednn", "onednn-passive", "openblas",
                                           "openblas-haswell", "dflow"};
  std::vector<Config> configs;
  for (int threads : {1, 2}) {
    configs.push_back({"onednn", threads, {}});
    if (threads > 1) configs.push_back({"onednn-passive", threads, {"OMP_WAIT_POLICY=PASSIVE"}});
    configs.push_back({"openblas", threads, {"-OPENBLAS_CORETYPE", "-OPENBLAS_L2_SIZE"}});
    configs.push_back({"openblas-haswell", threads, {"OPENBLAS_CORETYPE=Haswell"}});
    configs.push_back({"dflow", threads, {}});
  }
  // (impl, threads, shape) -> per-round medians (us)
  std::map<std::tuple<std::string, int, std::string>, std::vector<double>> medians;
  std::vector<std::string> raw, info;
  for (int round = 0; round < rounds; ++round) {
    for (const Config& config : configs) {
      std::istringstream out(RunChild(config, seconds));
      for (std::string line; std::getline(out, line);) {
        if (line.rfind("INFO ", 0) == 0 && std::find(info.begin(), info.end(), line) == info.end()) {
          info.push_back(line);
        }
        if (line.rfind("RESULT ", 0) != 0) continue;
        raw.push_back(absl::StrCat("round=", round, " ", line));
        medians[{Field(line, "impl"), std::stoi(Field(line, "threads")), Field(line, "shape")}]
            .push_back(std::stod(Field(line, "med_us")));
      }
    }
  }

  for (const std::string& line : info) std::printf("%s\n", line.c_str());
  std::printf("\n");
  for (int threads : {1, 2}) {
    std::printf("## %d thread%s: median us (GFLOP/s)\n\n| shape |", threads,
                threads > 1 ? "s" : "");
    for (const std::string& impl : impls) std::printf(" %s |", impl.c_str());
    std::printf(" dflow / best library |\n|---|");
    for (size_t i = 0; i <= impls.size(); ++i) std::printf("---|");
    std::printf("\n");
    std::map<std::string, double> mlp_total;
    auto row = [&](const std::string& name, double flops,
                   const std::map<std::string, double>& us) {
      std::printf("| %s |", name.c_str());
      double best = 0;
      for (const std::string& impl : impls) {
        auto it = us.find(impl);
        if (it == us.end() || it->second <= 0) {
          std::printf(" - |");
          continue;
        }
        std::printf(" %.1f (%.0f) |", it->second, flops / it->second / 1e3);
        if (impl != "dflow") best = best == 0 ? it->second : std::min(best, it->second);
      }
      auto dflow = us.find("dflow");
      if (dflow != us.end() && best > 0) {
        std::printf(" %.0f%% |\n", 100.0 * best / dflow->second);
      } else {
        std::printf(" - |\n");
      }
    };
    for (const Shape& s : Shapes()) {
      std::map<std::string, double> us;
      for (const std::string& impl : impls) {
        auto it = medians.find({impl, threads, s.Name()});
        if (it == medians.end()) continue;
        us[impl] = Median(it->second);
        if (s.m == 64) mlp_total[impl] += us[impl];
      }
      row(s.Name(), s.Flops(), us);
    }
    row("MLP GEMMs (sum of 3)", Shapes()[1].Flops() + Shapes()[2].Flops() + Shapes()[3].Flops(),
        mlp_total);
    std::printf("\n");
  }
  std::printf("loadavg at end %s\n\n## raw (per round, per process)\n\n```\n", LoadAvg().c_str());
  for (const std::string& line : raw) std::printf("%s\n", line.c_str());
  std::printf("```\n");
  return 0;
}

}  // namespace
}  // namespace dflow

int main(int argc, char** argv) {
  std::string child;
  int threads = 1, rounds = 3;
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--child=", 0) == 0) child = arg.substr(8);
    else if (arg.rfind("--threads=", 0) == 0) threads = std::atoi(arg.c_str() + 10);
    else if (arg.rfind("--rounds=", 0) == 0) rounds = std::atoi(arg.c_str() + 9);
    else if (arg.rfind("--seconds=", 0) == 0) seconds = std::atof(arg.c_str() + 10);
    else {
      std::fprintf(stderr, "usage: %s [--rounds=N] [--seconds=S]\n", argv[0]);
      return 2;
    }
  }
  if (child.empty()) return dflow::RunParent(rounds, seconds);
  if (child == "dflow") return dflow::RunKernelChild(threads, seconds);
  return dflow::RunLibraryChild(child, threads, seconds);
}
