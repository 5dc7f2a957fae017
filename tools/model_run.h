// `dflow run` on a SavedModel or a MetaGraphDef + checkpoint instead of a GraphDef.
//
//   dflow run --saved_model=DIR [--tag=serve[,TAG...]] [--signature=serving_default]
//             [--feed=KEY=VALUE]... [--fetch=KEY]...
//   dflow run --meta_graph=FILE --checkpoint=PREFIX [--feed=NAME=VALUE]...
//             [--fetch=NAME]... [--target=NAME]...
//
// Rules:
//  1. A SavedModel is loaded as TF's loader does (session/saved_model.h): variables
//     restored, init op run, soft placement on.
//  2. With --saved_model, feeds and fetches are the signature's keys (`x`, `y`), converted
//     to the dtypes the signature declares; with no --fetch every output of the
//     signature is fetched, in key order. Results are named by key.
//  3. With --meta_graph, the checkpoint (a prefix, or a directory with a `checkpoint`
//     file) is restored through the saver_def, then feeds and fetches are tensor names
//     as for --graph.
//  4. --config, --run_options, --run_metadata and --output work as for --graph.
#ifndef DFLOW_TOOLS_MODEL_RUN_H_
#define DFLOW_TOOLS_MODEL_RUN_H_

#include "absl/status/statusor.h"
#include "tools/cli_args.h"
#include "tools/run_command.h"

namespace dflow {

// The flags `dflow run` accepts for models, beyond those for --graph.
inline constexpr const char* kModelRunFlags[] = {"saved_model", "signature", "tag",
                                                 "meta_graph", "checkpoint"};

// Whether the flags name a model (--saved_model or --meta_graph) rather than --graph.
bool IsModelRun(const CliArgs& flags);

// Loads the model the flags name and runs it once.
absl::StatusOr<RunResult> RunModel(const CliArgs& flags);

}  // namespace dflow

#endif  // DFLOW_TOOLS_MODEL_RUN_H_
