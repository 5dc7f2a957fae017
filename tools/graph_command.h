// `dflow graph`: draw a GraphDef as placed on this machine's devices.
//
//   dflow graph --graph=PATH [--config=TEXTPROTO] [--format=dot|svg] [--out=PATH]
//
// Rules:
//  1. The placement is the Session's own, as for `dflow place` (same devices, kernels and
//     ConfigProto switches); its errors are returned as they are.
//  2. `--format=dot` (the default) writes tools/graph_dot.h's DOT: a cluster and a colour
//     per device, copies between devices in red with their size.
//  3. `--format=svg` renders that DOT with Graphviz's `dot` (Debian's graphviz,
//     tools/setup.sh); FAILED_PRECONDITION naming the package when it is missing.
//  4. The drawing goes to `--out` when given, else to stdout.
#ifndef DFLOW_TOOLS_GRAPH_COMMAND_H_
#define DFLOW_TOOLS_GRAPH_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dflow {

// Rule 3: `dot` run through Graphviz's `dot -Tsvg`.
absl::StatusOr<std::string> RenderDotAsSvg(const std::string& dot);

// The subcommand: args are the flags after "graph".
absl::Status RunGraphCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_GRAPH_COMMAND_H_
