#include "tools/bench_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/node_def_util.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "session/session.h"
#include "tools/bench_inputs.h"
#include "tools/cli_args.h"
#include "tools/feed_parser.h"
#include "tools/latency_stats.h"
#include "tools/model_run.h"
#include "tools/op_profile.h"
#include "tools/session_feeds.h"
#include "tools/tensor_printer.h"

namespace dflow {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kBenchHelp[] =
    "usage: dflow bench --graph=PATH | --saved_model=DIR [--signature=KEY] [--tag=serve]\n"
    "                   | --meta_graph=FILE --checkpoint=PREFIX\n"
    "         [--runs=50] [--warmup=5] [--threads=N] [--batch=1] [--shape=NAME=d0,d1,...]...\n"
    "         [--feed=NAME=VALUE]... [--fetch=NAME]... [--target=NAME]...\n"
    "         [--config=TEXTPROTO] [--run_options=TEXTPROTO] [--output=text|json]\n"
    "         [--profile[=N]] [--init=OP]...\n"
    "Runs the graph repeatedly and prints latency min/median/p90/max/mean and throughput.\n"
    "--init runs each OP once first (a training graph's variable initializer).\n"
    "--profile then traces --runs more runs and prints the time per op type and the N\n"
    "slowest nodes (default 15).\n"
    "Placeholders not fed get synthetic data of their shape (floats uniform in [0,1),\n"
    "integers 0); an unknown first dim is --batch; other unknown dims need --shape.\n"
    "Without --fetch/--target every output nothing consumes is fetched.\n";

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Feed tensors outlive the run; so must their allocator.
Allocator* BenchAllocator() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

struct BenchInput {
  std::string name;
  DataType dtype = DT_INVALID;
  TensorShape shape;
  bool synthetic = false;
};

// What the timed loop runs.
struct Workload {
  std::unique_ptr<Session> session;
  RunOptions run_options;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;  // as given to Session::Run
  std::vector<std::string> fetch_names;
  std::vector<std::string> targets;
  std::vector<BenchInput> inputs;
  double create_ms = 0;
};

struct BenchOptions {
  int runs = 50;
  int warmup = 5;
  int threads = 0;  // 0: the session's default
  int64_t batch = 1;
  std::map<std::string, std::vector<int64_t>> shapes;
  ConfigProto config;
  bool json = false;
  int profile_top = 0;  // 0: no --profile
};

absl::StatusOr<int64_t> PositiveFlag(const CliArgs& flags, const std::string& name,
                                     int64_t fallback, int64_t min) {
  if (!flags.Has(name)) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(flags.Get(name), &value) || value < min || value > (1 << 30)) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, "=", flags.Get(name),
                                                   ": expected an integer >= ", min));
  }
  return value;
}

absl::StatusOr<BenchOptions> ParseOptions(const CliArgs& flags) {
  BenchOptions options;
  DFLOW_ASSIGN_OR_RETURN(int64_t runs, PositiveFlag(flags, "runs", 50, 1));
  DFLOW_ASSIGN_OR_RETURN(int64_t warmup, PositiveFlag(flags, "warmup", 5, 0));
  DFLOW_ASSIGN_OR_RETURN(int64_t threads, PositiveFlag(flags, "threads", 0, 1));
  DFLOW_ASSIGN_OR_RETURN(options.batch, PositiveFlag(flags, "batch", 1, 0));
  options.runs = static_cast<int>(runs);
  options.warmup = static_cast<int>(warmup);
  options.threads = static_cast<int>(threads);
  DFLOW_ASSIGN_OR_RETURN(options.shapes, ParseShapeFlags(flags.GetAll("shape")));
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &options.config));
  }
  if (options.threads > 0) {
    options.config.set_intra_op_parallelism_threads(options.threads);
    options.config.set_inter_op_parallelism_threads(options.threads);
  }
  const std::string output = flags.Get("output", "text");
  if (output != "json" && output != "text") {
    return absl::InvalidArgumentError(
        absl::StrCat("--output=", output, ": expected json or text"));
  }
  options.json = output == "json";
  // A bare --profile parses as "true".
  if (flags.Has("profile") && flags.Get("profile") == "true") {
    options.profile_top = 15;
  } else {
    DFLOW_ASSIGN_OR_RETURN(int64_t top, PositiveFlag(flags, "profile", 0, 1));
    options.profile_top = static_cast<int>(top);
  }
  return options;
}

// Synthetic data for `name`, recorded in `workload`.
absl::Status AddSyntheticFeed(const std::string& name, DataType dtype,
                              const TensorShapeProto& declared, const BenchOptions& options,
                              Workload* workload) {
  DFLOW_ASSIGN_OR_RETURN(TensorShape shape,
                         ResolveBenchShape(name, declared, options.shapes, options.batch));
  DFLOW_ASSIGN_OR_RETURN(Tensor tensor, SyntheticFeed(name, dtype, shape, BenchAllocator()));
  workload->inputs.push_back({name, dtype, shape, /*synthetic=*/true});
  workload->feeds.emplace_back(name, std::move(tensor));
  return absl::OkStatus();
}

void RecordGivenFeeds(Workload* workload) {
  for (const auto& [name, tensor] : workload->feeds) {
    workload->inputs.push_back({name, tensor.dtype(), tensor.shape(), /*synthetic=*/false});
  }
}

absl::StatusOr<Workload> LoadGraphWorkload(const CliArgs& flags, const BenchOptions& options) {
  Workload workload;
  DFLOW_ASSIGN_OR_RETURN(std::string path, flags.Require("graph"));
  DFLOW_ASSIGN_OR_RETURN(GraphDef graph_def, ReadGraphDef(path));
  if (flags.Has("run_options")) {
    DFLOW_RETURN_IF_ERROR(
        ParseTextProto(flags.Get("run_options"), "--run_options", &workload.run_options));
  }
  std::vector<FeedFlag> feeds;
  for (const std::string& flag : flags.GetAll("feed")) {
    DFLOW_ASSIGN_OR_RETURN(FeedFlag feed, SplitFeedFlag(flag));
    feeds.push_back(std::move(feed));
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<std::string> fed, FedTensorNames(feeds));
  // The session imports the graph once; feeds and synthetic inputs are read from it.
  const Clock::time_point start = Clock::now();
  DFLOW_ASSIGN_OR_RETURN(workload.session, NewSession(options.config));
  DFLOW_RETURN_IF_ERROR(workload.session->Create(graph_def, fed));
  workload.create_ms = MillisSince(start);
  std::shared_ptr<const Graph> graph = workload.session->graph();
  if (graph == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the graph has no nodes"));
  }

  std::vector<std::string> fed_nodes;
  for (const FeedFlag& feed : feeds) {
    DFLOW_ASSIGN_OR_RETURN(auto parsed,
                           ParseSessionFeed(*workload.session, feed, BenchAllocator()));
    workload.feeds.emplace_back(feed.name, std::move(parsed.second));
    fed_nodes.push_back(parsed.first.node);
  }
  RecordGivenFeeds(&workload);
  workload.targets = flags.GetAll("target");
  workload.fetches = flags.GetAll("fetch");
  if (workload.fetches.empty() && workload.targets.empty()) {
    workload.fetches = SinkFetches(graph_def, *graph);
    if (workload.fetches.empty()) {
      return absl::InvalidArgumentError(
          "the graph has no output to fetch: name one with --fetch or --target");
    }
  }
  for (const std::string& fetch : workload.fetches) {
    absl::StatusOr<TensorId> id = ParseTensorName(fetch);
    workload.fetch_names.push_back(id.ok() && !id->IsControl() ? id->ToString() : fetch);
  }
  for (const NodeDef* placeholder :
       UnfedPlaceholders(graph_def, workload.fetches, workload.targets, fed_nodes)) {
    DFLOW_ASSIGN_OR_RETURN(DataType dtype, GetTypeAttr(*placeholder, "dtype"));
    const AttrValue* shape = FindAttr(*placeholder, "shape");
    TensorShapeProto declared;
    if (shape != nullptr && shape->has_shape()) {
      declared = shape->shape();
    } else {
      declared.set_unknown_rank(true);
    }
    DFLOW_RETURN_IF_ERROR(
        AddSyntheticFeed(placeholder->name(), dtype, declared, options, &workload));
  }
  return workload;
}

absl::StatusOr<Workload> LoadModelWorkload(const CliArgs& flags, const BenchOptions& options) {
  const Clock::time_point start = Clock::now();
  DFLOW_ASSIGN_OR_RETURN(LoadedModelRun loaded, LoadModelRun(flags, options.config));
  Workload workload;
  workload.create_ms = MillisSince(start);
  workload.session = std::move(loaded.session);
  workload.run_options = std::move(loaded.run_options);
  workload.feeds = std::move(loaded.feeds);
  workload.fetches = std::move(loaded.fetches);
  workload.fetch_names = std::move(loaded.fetch_names);
  workload.targets = std::move(loaded.targets);
  RecordGivenFeeds(&workload);
  for (const auto& [key, info] : loaded.unfed_inputs) {
    DFLOW_RETURN_IF_ERROR(
        AddSyntheticFeed(info.name(), info.dtype(), info.tensor_shape(), options, &workload));
    workload.inputs.back().name = key;  // report signature keys, as `run` does
  }
  return workload;
}

// Runs each --init op once, untimed, before the warm-up runs (as `dflow train --init`).
absl::Status RunInitOps(Workload& workload, const std::vector<std::string>& ops) {
  for (const std::string& op : ops) {
    std::vector<Tensor> outputs;
    absl::Status status =
        workload.session->Run(workload.run_options, {}, {}, {op}, &outputs, nullptr);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("--init=", op, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

struct Measurement {
  double first_run_ms = 0;
  std::vector<double> run_ms;
  // The whole process over the timed runs, per run (getrusage): context switches of all
  // its threads (a sleeping thread woken costs 50-80 us on a VM) and CPU time (spinning
  // included), to tell where a step's wall time goes besides its kernels.
  double context_switches_per_run = 0;
  double cpu_ms_per_run = 0;
};

// The process's context switches (voluntary and involuntary) and CPU time so far.
struct ProcessUsage {
  int64_t context_switches = 0;
  double cpu_ms = 0;
};

ProcessUsage CurrentUsage() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return {static_cast<int64_t>(usage.ru_nvcsw + usage.ru_nivcsw),
          ms(usage.ru_utime) + ms(usage.ru_stime)};
}

// Rule 5: a progress line about once a second once the runs have taken 2 s.
class Progress {
 public:
  Progress(std::ostream& out, int total) : out_(out), total_(total), start_(Clock::now()) {
    tty_ = isatty(STDERR_FILENO) == 1;
  }
  ~Progress() {
    if (printed_ && tty_) out_ << "\n";
  }
  void Update(int done, const std::vector<double>& samples) {
    const double elapsed = MillisSince(start_);
    if (elapsed < 2000 || elapsed - last_ms_ < 1000) return;
    last_ms_ = elapsed;
    printed_ = true;
    const LatencyStats stats = SummarizeLatencies(samples);
    out_ << absl::StrFormat("bench: %d/%d runs, median %.3f ms%s", done, total_, stats.median,
                            tty_ ? "\r" : "\n");
    out_.flush();
  }

 private:
  std::ostream& out_;
  int total_;
  Clock::time_point start_;
  double last_ms_ = 0;
  bool tty_ = false;
  bool printed_ = false;
};

absl::StatusOr<Measurement> Measure(Workload& workload, const BenchOptions& options,
                                    std::ostream& progress_out) {
  Measurement measurement;
  auto run_once = [&]() -> absl::StatusOr<double> {
    std::vector<Tensor> outputs;
    const Clock::time_point start = Clock::now();
    DFLOW_RETURN_IF_ERROR(workload.session->Run(workload.run_options, workload.feeds,
                                                 workload.fetches, workload.targets, &outputs,
                                                 nullptr));
    return MillisSince(start);
  };
  Progress progress(progress_out, options.warmup + options.runs);
  for (int i = 0; i < options.warmup; ++i) {
    DFLOW_ASSIGN_OR_RETURN(double ms, run_once());
    if (i == 0) measurement.first_run_ms = ms;
    progress.Update(i + 1, {ms});
  }
  measurement.run_ms.reserve(options.runs);
  const ProcessUsage before = CurrentUsage();
  for (int i = 0; i < options.runs; ++i) {
    DFLOW_ASSIGN_OR_RETURN(double ms, run_once());
    if (options.warmup == 0 && i == 0) measurement.first_run_ms = ms;
    measurement.run_ms.push_back(ms);
    progress.Update(options.warmup + i + 1, measurement.run_ms);
  }
  const ProcessUsage after = CurrentUsage();
  measurement.context_switches_per_run =
      static_cast<double>(after.context_switches - before.context_switches) / options.runs;
  measurement.cpu_ms_per_run = (after.cpu_ms - before.cpu_ms) / options.runs;
  return measurement;
}

// Runs `--runs` more times with FULL_TRACE, after the timed runs so that tracing never
// slows the latencies reported.
absl::StatusOr<OpProfile> Profile(Workload& workload, const BenchOptions& options) {
  RunOptions traced = workload.run_options;
  traced.set_trace_level(RunOptions::FULL_TRACE);
  OpProfiler profiler;
  for (int i = 0; i < options.runs; ++i) {
    std::vector<Tensor> outputs;
    RunMetadata metadata;
    DFLOW_RETURN_IF_ERROR(workload.session->Run(traced, workload.feeds, workload.fetches,
                                                 workload.targets, &outputs, &metadata));
    profiler.Add(metadata.step_stats());
  }
  return profiler.Summarize(options.profile_top);
}

// The batch size items/s counts: dim 0 of the first input with rank >= 1, else 0.
int64_t BatchOf(const Workload& workload) {
  for (const BenchInput& input : workload.inputs) {
    if (input.shape.dims() >= 1) return input.shape.dim_size(0);
  }
  return 0;
}

std::string ShapeJson(const TensorShape& shape) {
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.dims(); ++i) dims.push_back(shape.dim_size(i));
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string ShapeText(const TensorShape& shape) {
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.dims(); ++i) dims.push_back(shape.dim_size(i));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string Number(double value) { return FormatDouble(value); }

// `profile`: the "profile" member's value (ProfileJson), or empty for none.
std::string BenchJson(const std::string& model, const Workload& workload,
                      const BenchOptions& options, const Measurement& measurement,
                      const std::string& profile = "") {
  const LatencyStats stats = SummarizeLatencies(measurement.run_ms);
  const int64_t batch = BatchOf(workload);
  const double runs_per_s = stats.mean > 0 ? 1000.0 / stats.mean : 0;
  std::vector<std::string> inputs;
  for (const BenchInput& input : workload.inputs) {
    inputs.push_back(absl::StrCat("{\"name\": ", JsonString(input.name),
                                  ", \"dtype\": ", JsonString(DataTypeNumpyName(input.dtype)),
                                  ", \"shape\": ", ShapeJson(input.shape), ", \"source\": ",
                                  input.synthetic ? "\"synthetic\"" : "\"feed\"", "}"));
  }
  std::vector<std::string> fetches;
  for (const std::string& name : workload.fetch_names) fetches.push_back(JsonString(name));
  std::vector<std::string> samples;
  for (double ms : measurement.run_ms) samples.push_back(Number(ms));
  return absl::StrCat(
      "{\"model\": ", JsonString(model), ", \"runs\": ", options.runs,
      ", \"warmup\": ", options.warmup, ", \"threads\": ",
      options.threads > 0 ? absl::StrCat(options.threads) : "null", ", \"batch\": ", batch,
      ", \"inputs\": [", absl::StrJoin(inputs, ", "), "], \"fetches\": [",
      absl::StrJoin(fetches, ", "), "], \"create_ms\": ", Number(workload.create_ms),
      ", \"first_run_ms\": ", Number(measurement.first_run_ms),
      ", \"latency_ms\": {\"min\": ", Number(stats.min), ", \"median\": ", Number(stats.median),
      ", \"p90\": ", Number(stats.p90), ", \"max\": ", Number(stats.max),
      ", \"mean\": ", Number(stats.mean), "}, \"throughput\": {\"runs_per_s\": ",
      Number(runs_per_s), ", \"items_per_s\": ", Number(runs_per_s * batch),
      "}, \"process_per_run\": {\"context_switches\": ",
      Number(measurement.context_switches_per_run), ", \"cpu_ms\": ",
      Number(measurement.cpu_ms_per_run), "}, \"samples_ms\": [",
      absl::StrJoin(samples, ", "), "]",
      profile.empty() ? "" : absl::StrCat(", \"profile\": ", profile), "}\n");
}

std::string ProfileJson(const OpProfile& profile) {
  std::vector<std::string> ops;
  for (const OpTypeRow& row : profile.ops) {
    ops.push_back(absl::StrCat("{\"op\": ", JsonString(row.op), ", \"count\": ",
                               Number(row.count), ", \"avg_us\": ", Number(row.avg_us),
                               ", \"percent\": ", Number(row.percent), "}"));
  }
  std::vector<std::string> nodes;
  for (const NodeRow& row : profile.nodes) {
    nodes.push_back(absl::StrCat("{\"name\": ", JsonString(row.name),
                                 ", \"op\": ", JsonString(row.op),
                                 ", \"device\": ", JsonString(row.device),
                                 ", \"avg_us\": ", Number(row.avg_us), "}"));
  }
  return absl::StrCat("{\"traced_runs\": ", profile.traced_runs, ", \"ops\": [",
                      absl::StrJoin(ops, ", "), "], \"nodes\": [",
                      absl::StrJoin(nodes, ", "), "]}");
}

std::string ProfileText(const OpProfile& profile) {
  std::string text = absl::StrFormat(
      "op profile (%d traced runs, summed node time per run %.3f ms; nodes on parallel "
      "threads overlap)\n",
      profile.traced_runs, profile.total_us / 1000.0);
  absl::StrAppend(&text, absl::StrFormat("  %-28s %8s %12s %7s %7s\n", "op", "count",
                                         "avg us", "%", "cum %"));
  for (const OpTypeRow& row : profile.ops) {
    absl::StrAppend(&text, absl::StrFormat("  %-28s %8g %12.1f %6.2f%% %6.2f%%\n", row.op,
                                           row.count, row.avg_us, row.percent,
                                           row.cumulative_percent));
  }
  absl::StrAppend(&text, absl::StrFormat("top %d nodes:\n", profile.nodes.size()),
                  absl::StrFormat("  %12s  %-24s %s  (%s)\n", "avg us", "op", "name",
                                  "device"));
  for (const NodeRow& row : profile.nodes) {
    absl::StrAppend(&text, absl::StrFormat("  %12.1f  %-24s %s  (%s)\n", row.avg_us, row.op,
                                           row.name, row.device));
  }
  return text;
}

std::string BenchText(const std::string& model, const Workload& workload,
                      const BenchOptions& options, const Measurement& measurement) {
  const LatencyStats stats = SummarizeLatencies(measurement.run_ms);
  const int64_t batch = BatchOf(workload);
  const double runs_per_s = stats.mean > 0 ? 1000.0 / stats.mean : 0;
  std::string text = absl::StrCat("model: ", model, "\n");
  for (const BenchInput& input : workload.inputs) {
    absl::StrAppend(&text, "input: ", input.name, " ", DataTypeNumpyName(input.dtype), " ",
                    ShapeText(input.shape), input.synthetic ? " (synthetic)" : " (fed)", "\n");
  }
  absl::StrAppend(&text, "fetch: ", absl::StrJoin(workload.fetch_names, ", "), "\n");
  absl::StrAppend(&text,
                  absl::StrFormat("threads: %s, warmup: %d, runs: %d\n",
                                  options.threads > 0 ? absl::StrCat(options.threads)
                                                      : std::string("default"),
                                  options.warmup, options.runs),
                  absl::StrFormat("session create: %.3f ms, first run: %.3f ms\n",
                                  workload.create_ms, measurement.first_run_ms),
                  absl::StrFormat("latency ms: min %.3f  median %.3f  p90 %.3f  max %.3f  "
                                  "mean %.3f\n",
                                  stats.min, stats.median, stats.p90, stats.max, stats.mean),
                  absl::StrFormat("throughput: %.2f runs/s", runs_per_s));
  if (batch > 0) absl::StrAppend(&text, absl::StrFormat(", %.2f items/s (batch %d)",
                                                        runs_per_s * batch, batch));
  absl::StrAppend(&text, "\n",
                  absl::StrFormat("process per run: %.1f context switches, %.3f ms CPU\n",
                                  measurement.context_switches_per_run,
                                  measurement.cpu_ms_per_run));
  return text;
}

}  // namespace

absl::Status RunBenchCommand(const std::vector<std::string>& args, std::ostream& out,
                             std::ostream& progress) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      out << kBenchHelp;
      return absl::OkStatus();
    }
  }
  std::vector<std::string> known = {"graph", "output", "config", "run_options", "feed",
                                    "fetch", "target", "runs",   "warmup",      "threads",
                                    "batch", "shape",  "profile", "init"};
  known.insert(known.end(), std::begin(kModelRunFlags), std::end(kModelRunFlags));
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, known));
  DFLOW_ASSIGN_OR_RETURN(BenchOptions options, ParseOptions(flags));
  Workload workload;
  std::string model;
  if (IsModelRun(flags)) {
    DFLOW_ASSIGN_OR_RETURN(workload, LoadModelWorkload(flags, options));
    model = flags.Has("saved_model") ? flags.Get("saved_model") : flags.Get("meta_graph");
  } else {
    DFLOW_ASSIGN_OR_RETURN(workload, LoadGraphWorkload(flags, options));
    model = flags.Get("graph");
  }
  DFLOW_RETURN_IF_ERROR(RunInitOps(workload, flags.GetAll("init")));
  DFLOW_ASSIGN_OR_RETURN(Measurement measurement, Measure(workload, options, progress));
  if (options.profile_top == 0) {
    out << (options.json ? BenchJson(model, workload, options, measurement)
                         : BenchText(model, workload, options, measurement));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(OpProfile profile, Profile(workload, options));
  if (options.json) {
    out << BenchJson(model, workload, options, measurement, ProfileJson(profile));
  } else {
    out << BenchText(model, workload, options, measurement) << ProfileText(profile);
  }
  return absl::OkStatus();
}

}  // namespace dflow
