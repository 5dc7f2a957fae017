// dflow: the command-line front end (contract in docs/CLI.md).
// Every error exits with status 1 and prints the status as "CODE: message" on stderr.
#include <exception>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/bench_command.h"
#include "tools/convert_command.h"
#include "tools/devices_command.h"
#include "tools/graph_command.h"
#include "tools/inspect_command.h"
#include "tools/place_command.h"
#include "tools/run_command.h"
#include "tools/trace_command.h"
#include "tools/train_command.h"

namespace {

constexpr char kUsage[] =
    "usage: dflow <command> [--flag=value]...\n"
    "commands:\n"
    "  run     --graph=PATH [--output=json|text] [--config=TEXTPROTO]\n"
    "          [--run_options=TEXTPROTO] [--run_metadata=PATH]\n"
    "          [--feed=NAME=VALUE]... [--fetch=NAME]... [--target=NAME]...\n"
    "                                       run once; VALUE is JSON ([[1,2],[3,4]]) or @file.npy\n"
    "  run     --saved_model=DIR [--tag=serve] [--signature=serving_default] [...]\n"
    "                                       a SavedModel; feeds/fetches are signature keys\n"
    "  run     --meta_graph=FILE --checkpoint=PREFIX [...]\n"
    "                                       a MetaGraphDef with a V2 checkpoint restored\n"
    "  bench   --graph=PATH|--saved_model=DIR [--runs=50] [--warmup=5] [--threads=N]\n"
    "          [--batch=N] [--shape=NAME=d0,d1,...] [--feed/--fetch/--config as run]\n"
    "          [--output=json|text]          time repeated runs: latency and throughput\n"
    "  train   --meta_graph=FILE|--graph=PATH [--init=OP] [--checkpoint=PREFIX]\n"
    "          --train_op=NAME [--loss=NAME] --data=TENSOR=FILE.npy|.idx...\n"
    "          [--batch=32] [--epochs=1|--steps=N] [--eval_data=...] [--eval_fetch=NAME]...\n"
    "          [--save=PREFIX] [--save_every=N] [--feed=...] [--output=json|text]\n"
    "                                       train N steps; V2 checkpoints TF reads\n"
    "  devices [--config=TEXTPROTO]         list the devices a session gets\n"
    "  place   --graph=PATH [--config=TEXTPROTO] [--explain]\n"
    "                                       where each node runs (and why, and every copy)\n"
    "  trace   --graph=PATH|--saved_model=DIR --out=trace.json [--warmup=1]\n"
    "          [--feed/--fetch/--config as run]  one step as a Chrome/Perfetto trace\n"
    "  graph   --graph=PATH [--config=TEXTPROTO] [--format=dot|svg] [--out=PATH]\n"
    "                                       draw the placed graph, a colour per device\n"
    "  inspect --graph=PATH                 report on a GraphDef and list every problem\n"
    "  convert --graph=PATH --out=PATH      rewrite as .pb (binary) or .pbtxt (text)\n";

// `command`'s lines of kUsage: its own line(s) and their continuations.
std::string CommandUsage(const std::string& command) {
  std::string usage, line;
  bool in_command = false;
  std::istringstream lines(kUsage);
  while (std::getline(lines, line)) {
    if (line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      in_command = line.compare(2, command.size() + 1, command + " ") == 0;
    }
    if (in_command) usage += line + "\n";
  }
  return usage;
}

absl::Status Dispatch(const std::string& command, const std::vector<std::string>& args) {
  // `dflow <command> --help` prints that command's usage (the contract's "--help for
  // itself"), whatever else is on the line.
  for (const std::string& arg : args) {
    if ((arg == "--help" || arg == "-h") && !CommandUsage(command).empty()) {
      std::cout << "usage: dflow " << command << " [--flag=value]...\n" << CommandUsage(command);
      return absl::OkStatus();
    }
  }
  if (command == "run") return dflow::RunRunCommand(args, std::cout);
  if (command == "bench") return dflow::RunBenchCommand(args, std::cout, std::cerr);
  if (command == "train") return dflow::RunTrainCommand(args, std::cout, std::cerr);
  if (command == "devices") return dflow::RunDevicesCommand(args, std::cout);
  if (command == "place") return dflow::RunPlaceCommand(args, std::cout);
  if (command == "inspect") return dflow::RunInspectCommand(args, std::cout);
  if (command == "convert") return dflow::RunConvertCommand(args, std::cout);
  if (command == "trace") return dflow::RunTraceCommand(args, std::cout);
  if (command == "graph") return dflow::RunGraphCommand(args, std::cout);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("unknown command '" + command + "'\n" + kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "INVALID_ARGUMENT: no command given\n" << kUsage;
    return 1;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  absl::Status status;
  // dflow's libraries never throw, but the standard library may (std::bad_alloc on an
  // absurd input): report it like every other error instead of aborting.
  try {
    status = Dispatch(argv[1], args);
  } catch (const std::bad_alloc&) {
    status = absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception& e) {
    status = absl::InternalError(e.what());
  }
  std::cout.flush();
  if (!status.ok()) {
    std::cerr << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}
