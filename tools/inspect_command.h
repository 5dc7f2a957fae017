// `dflow inspect --graph=F`: a one-screen report on a GraphDef and every problem in it.
#ifndef DFLOW_TOOLS_INSPECT_COMMAND_H_
#define DFLOW_TOOLS_INSPECT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/graph.pb.h"

namespace dflow {

// Writes the report for `graph_def` to `out`: node count, op histogram, placeholders
// with dtype and shape, outputs nothing consumes, requested devices, and every
// validation problem. Returns INVALID_ARGUMENT listing the problems when there are any.
absl::Status InspectGraphDef(const GraphDef& graph_def, std::ostream& out);

// The subcommand: args are the flags after "inspect".
absl::Status RunInspectCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_INSPECT_COMMAND_H_
