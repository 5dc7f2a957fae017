// What the example programs share: running a graph built with the C++ API and printing
// its results, so that each program shows only its graph and its ConfigProto.
#ifndef DFLOW_EXAMPLES_EXAMPLE_UTIL_H_
#define DFLOW_EXAMPLES_EXAMPLE_UTIL_H_

#include <vector>

#include "graph/scope.h"
#include "proto/config.pb.h"

namespace dflow::examples {

// Runs `fetches` of the graph built in `root` in a new ClientSession made with `config`
// and prints them on stdout the way `dflow run` does (tools/tensor_printer.h). An error
// of `root`, of creating the session or of the run is printed on stderr as
// "<CODE>: <message>". Returns the exit code for main: 0, or 1 after an error.
int RunAndPrint(const Scope& root, const ConfigProto& config,
                const std::vector<Output>& fetches);

}  // namespace dflow::examples

#endif  // DFLOW_EXAMPLES_EXAMPLE_UTIL_H_
