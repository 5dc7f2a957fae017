// `dflow run`: run a GraphDef once and print the fetched tensors.
//
//   dflow run --graph=PATH [--output=json|text] [--config=TEXTPROTO]
//             [--run_options=TEXTPROTO] [--run_metadata=PATH]
//             [--feed=NAME=VALUE]... [--fetch=NAME]... [--target=NAME]...
//
// Contract (docs/CLI.md):
//  1. The graph is binary or text, told apart by content.
//  2. A feed NAME is `node` or `node:index`; any tensor may be fed. VALUE (JSON or
//     @file, tools/feed_parser.h) is converted to the fed tensor's dtype: the node's
//     output dtype, learnt by importing the graph. A fed tensor of a node the GraphDef
//     lacks (TF's tfcompile feeds, e.g. `y_shape`) gets a Placeholder of the dtype its
//     consumer expects, so such graphs run.
//  3. stdout holds only the result: one JSON document (`--output=json`) or the text
//     rendering (tools/tensor_printer.h). Fetch names print canonically (`c:0`).
//     log_device_placement lines go to stderr (the Session prints them).
//  4. `--run_metadata=PATH` writes the step's RunMetadata in text format.
//  5. Every error is returned as a Status (the caller prints `CODE: message` and exits
//     1); nothing is printed to stdout then. Unknown feeds give the Session's own
//     NOT_FOUND/INVALID_ARGUMENT texts (`FeedInputs: ...`).
#ifndef DFLOW_TOOLS_RUN_COMMAND_H_
#define DFLOW_TOOLS_RUN_COMMAND_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "runtime/tensor.h"
#include "session/session.h"
#include "tools/cli_args.h"
#include "tools/feed_parser.h"

namespace dflow {

// One run, parsed from the flags.
struct RunRequest {
  GraphDef graph_def;
  ConfigProto config;
  RunOptions run_options;
  std::vector<FeedFlag> feeds;  // NAME and VALUE text, in flag order
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  bool collect_metadata = false;
  // Runs before the one whose outputs and metadata are returned, without tracing
  // (`dflow trace --warmup`): the first Run also builds the plan.
  int warmup_runs = 0;
};

struct RunResult {
  // The outputs' buffers come from the session's allocators, so the session lives as
  // long as they do (declared first: destroyed last).
  std::unique_ptr<Session> session;
  std::vector<std::string> fetch_names;  // canonical ("c:0"), in fetch order
  std::vector<Tensor> outputs;           // in fetch order
  RunMetadata metadata;                  // filled when collect_metadata
};

// The request --graph, --config, --run_options, --feed, --fetch, --target and
// --run_metadata describe (shared with `dflow trace`).
absl::StatusOr<RunRequest> RunRequestFromFlags(const CliArgs& flags);

// Rules 2 and 5: creates a session for `request.config`, runs once, returns the outputs.
absl::StatusOr<RunResult> RunGraph(const RunRequest& request);

// The subcommand: args are the flags after "run"; results go to `out`.
absl::Status RunRunCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_RUN_COMMAND_H_
