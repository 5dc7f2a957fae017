// dflow: the command-line front end (contract in ../shared/DESIGN.md, "Contract").
// Every error exits with status 1 and prints the status as "CODE: message" on stderr.
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/convert_command.h"
#include "tools/inspect_command.h"

namespace {

constexpr char kUsage[] =
    "usage: dflow <command> [--flag=value]...\n"
    "commands:\n"
    "  inspect --graph=PATH                 report on a GraphDef and list every problem\n"
    "  convert --graph=PATH --out=PATH      rewrite as .pb (binary) or .pbtxt (text)\n";

absl::Status Dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "inspect") return dflow::RunInspectCommand(args, std::cout);
  if (command == "convert") return dflow::RunConvertCommand(args, std::cout);
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
  absl::Status status = Dispatch(argv[1], args);
  std::cout.flush();
  if (!status.ok()) {
    std::cerr << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}
