// `dflow trace`: run a graph (or SavedModel signature) and write one step's Chrome trace.
//
//   dflow trace --graph=PATH [--feed/--fetch/--target/--config/--run_options as run]
//               --out=trace.json [--warmup=N]
//   dflow trace --saved_model=DIR [--signature=...] ... --out=trace.json
//
// Rules:
//  1. Feeds, fetches, targets and config work exactly as for `dflow run`.
//  2. `--warmup` runs (default 1, untraced) come first, so the traced step is a steady
//     one: the first Run of a signature also builds its plan and uploads constants.
//  3. The traced step runs with FULL_TRACE and the partition graphs (so copies can be
//     joined send to receive); `--out` gets tools/chrome_trace.h's JSON, which
//     chrome://tracing and ui.perfetto.dev open.
//  4. stdout gets one line: the file, how many node runs on how many devices, and the
//     step's length from its first node start to its last node end.
#ifndef DFLOW_TOOLS_TRACE_COMMAND_H_
#define DFLOW_TOOLS_TRACE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dflow {

// The subcommand: args are the flags after "trace".
absl::Status RunTraceCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_TRACE_COMMAND_H_
