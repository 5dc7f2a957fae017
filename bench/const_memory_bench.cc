// How many copies of a big constant dflow holds, and what its first Run costs.
//
// Builds a graph with one Const of --mib MiB (float32) feeding Sum and Neg, then prints
// the process's resident memory (VmRSS) after each stage: the user's GraphDef, Create,
// the first Run (plan built, kernels made), a Run of a second signature (a second plan),
// and after the user drops their GraphDef. Each stage's growth divided by the constant's
// size is the number of copies that stage added.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/scope.h"
#include "session/session.h"

namespace dflow {
namespace {

double ResidentMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

int Main(int argc, char** argv) {
  int mib = 256;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--mib=", 0) == 0) mib = std::atoi(argv[i] + 6);
  }
  const int64_t n = int64_t{mib} << 18;  // floats
  GraphDef graph_def;
  {
    Scope root = Scope::NewRootScope();
    Output a = Const(root.WithOpName("a"), Input::Initializer(std::vector<float>(n, 1.f), {n}));
    Output s = Sum(root.WithOpName("s"), a, Const(root.WithOpName("axis"), 0));
    Neg(root.WithOpName("n"), s);
    if (!root.ToGraphDef(&graph_def).ok()) return 1;
  }
  std::printf("| stage | resident MiB | growth / constant | seconds |\n|---|---|---|---|\n");
  double last = ResidentMiB();
  auto row = [&](const char* stage, double seconds) {
    const double now = ResidentMiB();
    std::printf("| %s | %.0f | %+.2f | %.3f |\n", stage, now, (now - last) / mib, seconds);
    last = now;
  };
  row("user GraphDef built", 0);
  auto timed = [](auto&& fn) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = fn();
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      std::exit(1);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  if (!session.ok()) return 1;
  row("Create", timed([&] { return (*session)->Create(graph_def); }));
  std::vector<Tensor> out;
  row("first Run (plan 1)", timed([&] { return (*session)->Run({}, {"n"}, {}, &out); }));
  row("second Run (plan 1)", timed([&] { return (*session)->Run({}, {"n"}, {}, &out); }));
  row("Run of another signature (plan 2)",
      timed([&] { return (*session)->Run({}, {"s"}, {}, &out); }));
  graph_def.Clear();
  row("user GraphDef dropped", 0);
  return 0;
}

}  // namespace
}  // namespace dflow

int main(int argc, char** argv) { return dflow::Main(argc, argv); }
