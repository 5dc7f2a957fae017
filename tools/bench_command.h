// `dflow bench`: run a graph or a SavedModel signature repeatedly and report its speed,
// as TF's benchmark_model and ONNX Runtime's perf_test do.
//
//   dflow bench --graph=PATH | --saved_model=DIR [--signature=K] | --meta_graph=F --checkpoint=P
//               [--runs=N] [--warmup=N] [--threads=N] [--batch=N] [--shape=NAME=d0,d1,...]...
//               [--feed=NAME=VALUE]... [--fetch=NAME]... [--target=NAME]...
//               [--config=TEXTPROTO] [--run_options=TEXTPROTO] [--output=json|text]
//               [--profile[=N]]
//
// Rules:
//  1. Feeds, fetches and targets work as for `dflow run` (tools/run_command.h,
//     tools/model_run.h); whatever is not fed, and the default fetches, follow
//     tools/bench_inputs.h (synthetic data of the placeholder's shape, --batch for an
//     unknown first dim, --shape to override).
//  2. One session is created (timed), then --warmup runs (default 5; the first one is
//     timed on its own: it builds the plan and packs weights), then --runs timed runs
//     (default 50), each Session::Run with the same feeds. Fetched outputs are dropped.
//  3. --threads=N sizes the session's pool (intra_op and inter_op_parallelism_threads,
//     over --config); without it the session's default (every core).
//  4. The report: latency min/median/p90/max/mean over the timed runs (nearest-rank,
//     tools/latency_stats.h), throughput in runs/s and, when the first feed has a batch
//     dimension, items/s. `--output=json` prints exactly one JSON document on stdout
//     (fields in bench_command.cc's BenchJson); text is for people.
//  5. Runs lasting over 2 s in all print progress on stderr about once a second.
//  6. Any failed run stops the benchmark with that run's status (exit 1).
//  7. --profile[=N] (N >= 1, default 15): after the timed runs, which it leaves untraced,
//     --runs more runs with trace_level FULL_TRACE (over --run_options); the report adds
//     per op type the nodes per run, summed node µs per run, % and cumulative %, and the
//     N slowest nodes (tools/op_profile.h); JSON gains "profile": {"traced_runs", "ops":
//     [{op, count, avg_us, percent}], "nodes": [{name, op, device, avg_us}]}, time
//     descending. Without it the output is unchanged.
#ifndef DFLOW_TOOLS_BENCH_COMMAND_H_
#define DFLOW_TOOLS_BENCH_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dflow {

// The subcommand: args are the flags after "bench"; the report goes to `out`, progress
// to `progress` (stderr in the binary).
absl::Status RunBenchCommand(const std::vector<std::string>& args, std::ostream& out,
                             std::ostream& progress);

}  // namespace dflow

#endif  // DFLOW_TOOLS_BENCH_COMMAND_H_
