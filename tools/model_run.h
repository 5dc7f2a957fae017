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

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/node_def_util.h"
#include "proto/meta_graph.pb.h"
#include "tools/cli_args.h"
#include "tools/run_command.h"

namespace dflow {

// The flags `dflow run` accepts for models, beyond those for --graph.
inline constexpr const char* kModelRunFlags[] = {"saved_model", "signature", "tag",
                                                 "meta_graph", "checkpoint"};

// Whether the flags name a model (--saved_model or --meta_graph) rather than --graph.
bool IsModelRun(const CliArgs& flags);

// A model loaded and ready to run (rules 1-3), for `run` (once) and `bench` (repeatedly).
struct LoadedModelRun {
  std::unique_ptr<Session> session;
  RunOptions run_options;
  std::vector<std::pair<std::string, Tensor>> feeds;  // tensor names
  std::vector<std::string> fetches;                   // tensor names
  std::vector<std::string> fetch_names;               // as results are reported
  std::vector<std::string> targets;
  // The signature's inputs no --feed gave, by key (--saved_model only).
  std::vector<std::pair<std::string, TensorInfo>> unfed_inputs;
};

// Loads the model the flags name into a session configured by `config` (the caller
// parses --config), with its feeds parsed and its fetches resolved.
absl::StatusOr<LoadedModelRun> LoadModelRun(const CliArgs& flags, const ConfigProto& config);

// Loads the model the flags name and runs it once.
absl::StatusOr<RunResult> RunModel(const CliArgs& flags);

}  // namespace dflow

#endif  // DFLOW_TOOLS_MODEL_RUN_H_
