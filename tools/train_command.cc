#include "tools/train_command.h"

#include <unistd.h>

#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/train/replicate.h"
#include "graph/train/saver_builder.h"
#include "proto/meta_graph.pb.h"
#include "runtime/allocator.h"
#include "session/saved_model.h"
#include "session/session.h"
#include "session/training_loop.h"
#include "tools/cli_args.h"
#include "tools/feed_parser.h"
#include "tools/tensor_printer.h"
#include "tools/train_data.h"

namespace dflow {
namespace {

const std::vector<std::string> kFlags = {
    "meta_graph", "graph",     "checkpoint", "init",       "train_op",   "loss",
    "data",       "batch",     "epochs",     "steps",      "shuffle",    "seed",
    "feed",       "eval_data", "eval_fetch", "eval_feed",  "eval_every", "eval_batch",
    "save",       "save_every", "config",    "progress",   "output",     "rows",
    "eval_rows",  "devices"};

struct Graphs {
  GraphDef graph;
  std::optional<SaverDef> saver;
};

// Rule 1.
absl::StatusOr<Graphs> LoadGraph(const CliArgs& flags) {
  Graphs g;
  if (flags.Has("meta_graph") == flags.Has("graph")) {
    return absl::InvalidArgumentError("give exactly one of --meta_graph and --graph");
  }
  if (flags.Has("meta_graph")) {
    MetaGraphDef meta;
    DFLOW_RETURN_IF_ERROR(ReadProtoFile(flags.Get("meta_graph"), &meta));
    g.graph = meta.graph_def();
    if (meta.has_saver_def()) g.saver = meta.saver_def();
  } else {
    DFLOW_ASSIGN_OR_RETURN(g.graph, ReadGraphDef(flags.Get("graph")));
  }
  if (!g.saver && (flags.Has("checkpoint") || flags.Has("save"))) {
    absl::StatusOr<SaverDef> saver = AddSaver(&g.graph);
    if (!saver.ok()) return Annotate(saver.status(), "--save/--checkpoint: ");
    g.saver = *saver;
  }
  return g;
}

absl::StatusOr<int64_t> IntFlag(const CliArgs& flags, const char* name, int64_t fallback,
                                int64_t min) {
  if (!flags.Has(name)) return fallback;
  int64_t value;
  if (!absl::SimpleAtoi(flags.Get(name), &value) || value < min) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be an integer >= ", min, ", got '", flags.Get(name), "'"));
  }
  return value;
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> ConstantFeeds(
    const GraphDef& graph, const std::vector<std::string>& flags) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& flag : flags) {
    DFLOW_ASSIGN_OR_RETURN(FeedFlag f, SplitFeedFlag(flag));
    DFLOW_ASSIGN_OR_RETURN(FedTensorInfo info, FedTensor(graph, f.name));
    DFLOW_ASSIGN_OR_RETURN(Tensor t,
                           ParseFeedValue(f.name, f.value, info.dtype, ProcessCpuAllocator()));
    feeds.emplace_back(f.name, std::move(t));
  }
  return feeds;
}

// --rows=BEGIN:END keeps examples [BEGIN, END) of every column.
absl::Status SelectRows(const CliArgs& flags, const char* flag,
                        std::vector<TrainingColumn>* columns) {
  if (!flags.Has(flag) || columns->empty()) return absl::OkStatus();
  const std::string spec = flags.Get(flag);
  const size_t colon = spec.find(':');
  int64_t begin, end;
  if (colon == std::string::npos || !absl::SimpleAtoi(spec.substr(0, colon), &begin) ||
      !absl::SimpleAtoi(spec.substr(colon + 1), &end) || begin < 0 || end <= begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " must be BEGIN:END with 0 <= BEGIN < END, got '", spec, "'"));
  }
  const int64_t n = columns->front().data.shape().dims() == 0
                      ? 0
                      : columns->front().data.shape().dim_size(0);
  if (end > n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", spec, ": the data has only ", n, " examples"));
  }
  std::vector<int64_t> rows;
  for (int64_t r = begin; r < end; ++r) rows.push_back(r);
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> picked =
      GatherRows(*columns, rows);
  if (!picked.ok()) return Annotate(picked.status(), absl::StrCat("--", flag, ": "));
  for (size_t i = 0; i < columns->size(); ++i) (*columns)[i].data = (*picked)[i].second;
  return absl::OkStatus();
}

absl::StatusOr<TrainingLoopOptions> LoopOptions(const CliArgs& flags, const Graphs& g) {
  TrainingLoopOptions o;
  DFLOW_ASSIGN_OR_RETURN(o.train_op, flags.Require("train_op"));
  o.loss = flags.Get("loss");
  if (!flags.Has("data")) return absl::InvalidArgumentError("--data=TENSOR=FILE is required");
  for (const std::string& d : flags.GetAll("data")) {
    DFLOW_ASSIGN_OR_RETURN(TrainingColumn c, ReadTrainingColumn(g.graph, d));
    o.train_data.push_back(std::move(c));
  }
  for (const std::string& d : flags.GetAll("eval_data")) {
    DFLOW_ASSIGN_OR_RETURN(TrainingColumn c, ReadTrainingColumn(g.graph, d));
    o.eval_data.push_back(std::move(c));
  }
  DFLOW_RETURN_IF_ERROR(SelectRows(flags, "rows", &o.train_data));
  DFLOW_RETURN_IF_ERROR(SelectRows(flags, "eval_rows", &o.eval_data));
  o.eval_fetches = flags.GetAll("eval_fetch");
  if (o.eval_fetches.empty() != o.eval_data.empty()) {
    return absl::InvalidArgumentError("--eval_data and --eval_fetch go together");
  }
  DFLOW_ASSIGN_OR_RETURN(o.constant_feeds, ConstantFeeds(g.graph, flags.GetAll("feed")));
  DFLOW_ASSIGN_OR_RETURN(o.eval_constant_feeds,
                         ConstantFeeds(g.graph, flags.GetAll("eval_feed")));
  DFLOW_ASSIGN_OR_RETURN(o.batch, IntFlag(flags, "batch", 32, 1));
  DFLOW_ASSIGN_OR_RETURN(int64_t epochs, IntFlag(flags, "epochs", 1, 1));
  o.epochs = static_cast<int>(std::min<int64_t>(epochs, 1 << 30));
  DFLOW_ASSIGN_OR_RETURN(o.steps, IntFlag(flags, "steps", 0, 1));
  DFLOW_ASSIGN_OR_RETURN(int64_t seed, IntFlag(flags, "seed", 0, 0));
  o.seed = static_cast<uint64_t>(seed);
  const std::string shuffle = flags.Get("shuffle", "true");
  if (shuffle != "true" && shuffle != "false") {
    return absl::InvalidArgumentError("--shuffle must be true or false");
  }
  o.shuffle = shuffle == "true";
  DFLOW_ASSIGN_OR_RETURN(o.eval_every, IntFlag(flags, "eval_every", 0, 1));
  DFLOW_ASSIGN_OR_RETURN(o.eval_batch, IntFlag(flags, "eval_batch", 500, 1));
  o.save_prefix = flags.Get("save");
  DFLOW_ASSIGN_OR_RETURN(o.save_every, IntFlag(flags, "save_every", 0, 1));
  o.saver = g.saver;
  return o;
}

// Rule 2.
absl::Status InitializeVariables(const CliArgs& flags, const Graphs& g, Session* session) {
  if (!flags.Has("init") && !flags.Has("checkpoint")) {
    return absl::InvalidArgumentError(
        "give --init=OP (e.g. init) and/or --checkpoint=PREFIX to set the variables");
  }
  if (flags.Has("init")) {
    std::vector<Tensor> out;
    absl::Status status = session->Run({}, {}, {flags.Get("init")}, &out);
    if (!status.ok()) return Annotate(status, "--init: ");
  }
  if (flags.Has("checkpoint")) {
    DFLOW_ASSIGN_OR_RETURN(std::string prefix, ResolveCheckpoint(flags.Get("checkpoint")));
    absl::Status status = RestoreCheckpoint(session, *g.saver, prefix);
    if (!status.ok()) return Annotate(status, "--checkpoint: ");
  }
  return absl::OkStatus();
}

// Rule 6: the state file tf.train.latest_checkpoint reads.
absl::Status WriteCheckpointState(const std::vector<std::string>& checkpoints) {
  if (checkpoints.empty()) return absl::OkStatus();
  const std::string& latest = checkpoints.back();
  const size_t slash = latest.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : latest.substr(0, slash);
  auto base = [](const std::string& p) {
    const size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
  };
  std::string state = absl::StrCat("model_checkpoint_path: ", JsonString(base(latest)), "\n");
  for (const std::string& c : checkpoints) {
    absl::StrAppend(&state, "all_model_checkpoint_paths: ", JsonString(base(c)), "\n");
  }
  return WriteStringToFile(dir + "/checkpoint", state);
}

// Rule 5.
class Progress {
 public:
  Progress(std::ostream& out, const std::string& mode, bool has_loss)
      : out_(out), has_loss_(has_loss) {
    bar_ = mode == "bar" || (mode == "auto" && isatty(STDERR_FILENO) == 1);
    quiet_ = mode == "none";
  }

  void Step(const TrainingProgress& p) {
    if (quiet_ || !has_loss_) return;
    if (bar_) {
      const int width = 30;
      const int filled = static_cast<int>(width * p.step / std::max<int64_t>(1, p.total_steps));
      out_ << absl::StrFormat("\rstep %d/%d [%s%s] loss %.4f  %.1f steps/s", p.step,
                              p.total_steps, std::string(filled, '='),
                              std::string(width - filled, ' '), p.loss, p.steps_per_second);
      if (p.step == p.total_steps) out_ << "\n";
      out_.flush();
      return;
    }
    const int64_t every = std::max<int64_t>(1, p.total_steps / 10);
    if (p.step % every == 0 || p.step == p.total_steps || p.step == 1) {
      out_ << absl::StrFormat("step %d/%d (epoch %d): loss %.4f, %.1f steps/s\n", p.step,
                              p.total_steps, p.epoch, p.loss, p.steps_per_second);
    }
  }

  void Eval(const EvalResult& r, const std::vector<std::string>& fetches) {
    if (quiet_) return;
    std::vector<std::string> parts;
    for (size_t i = 0; i < fetches.size(); ++i) {
      parts.push_back(absl::StrFormat("%s = %.4f", fetches[i], r.means[i]));
    }
    out_ << (bar_ ? "\n" : "") << "eval at step " << r.step << ": "
         << absl::StrJoin(parts, ", ") << "\n";
  }

 private:
  std::ostream& out_;
  bool has_loss_, bar_ = false, quiet_ = false;
};

void PrintReport(const TrainingReport& r, const TrainingLoopOptions& o, bool json,
                 std::ostream& out) {
  const double sps = r.seconds > 0 ? r.steps / r.seconds : 0;
  const double eps = r.seconds > 0 ? r.examples / r.seconds : 0;
  const double first = r.losses.empty() ? NAN : r.losses.front();
  const double last = r.losses.empty() ? NAN : r.losses.back();
  if (!json) {
    out << absl::StrFormat("%d steps in %.3f s (%.1f steps/s, %.0f examples/s)\n", r.steps,
                           r.seconds, sps, eps);
    if (!r.losses.empty()) out << absl::StrFormat("loss %.6g -> %.6g\n", first, last);
    for (const EvalResult& e : r.evals) {
      out << "eval at step " << e.step << ":";
      for (size_t i = 0; i < e.means.size(); ++i) {
        out << " " << o.eval_fetches[i] << " = " << absl::StrFormat("%.6g", e.means[i]);
      }
      out << "\n";
    }
    for (const std::string& c : r.checkpoints) out << "saved " << c << "\n";
    return;
  }
  std::vector<std::string> losses, evals, ckpts;
  for (double l : r.losses) losses.push_back(FormatDouble(l));
  for (const EvalResult& e : r.evals) {
    std::string item = absl::StrCat("{\"step\": ", e.step);
    for (size_t i = 0; i < e.means.size(); ++i) {
      absl::StrAppend(&item, ", ", JsonString(o.eval_fetches[i]), ": ", FormatDouble(e.means[i]));
    }
    evals.push_back(item + "}");
  }
  for (const std::string& c : r.checkpoints) ckpts.push_back(JsonString(c));
  out << "{\"steps\": " << r.steps << ", \"seconds\": " << FormatDouble(r.seconds)
      << ", \"steps_per_second\": " << FormatDouble(sps)
      << ", \"examples_per_second\": " << FormatDouble(eps)
      << ", \"first_loss\": " << (r.losses.empty() ? "null" : FormatDouble(first))
      << ", \"final_loss\": " << (r.losses.empty() ? "null" : FormatDouble(last))
      << ", \"losses\": [" << absl::StrJoin(losses, ", ") << "], \"evals\": ["
      << absl::StrJoin(evals, ", ") << "], \"checkpoints\": [" << absl::StrJoin(ckpts, ", ")
      << "]}\n";
}

// Sets `device` on every node that names none; INVALID_ARGUMENT for an empty device.
absl::Status PinToDevice(const std::string& device, GraphDef* graph) {
  if (device.empty()) return absl::InvalidArgumentError("--devices: the device is empty");
  for (NodeDef& node : *graph->mutable_node()) {
    if (node.device().empty()) node.set_device(device);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTrainCommand(const std::vector<std::string>& args, std::ostream& out,
                             std::ostream& progress) {
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, kFlags));
  const std::string output = flags.Get("output", "text");
  if (output != "text" && output != "json") {
    return absl::InvalidArgumentError("--output must be text or json");
  }
  const std::string mode = flags.Get("progress", "auto");
  if (mode != "auto" && mode != "bar" && mode != "lines" && mode != "none") {
    return absl::InvalidArgumentError("--progress must be auto, bar, lines or none");
  }
  DFLOW_ASSIGN_OR_RETURN(Graphs g, LoadGraph(flags));
  DFLOW_ASSIGN_OR_RETURN(TrainingLoopOptions options, LoopOptions(flags, g));
  std::vector<std::string> devices;
  if (flags.Has("devices")) devices = absl::StrSplit(flags.Get("devices"), ',');
  if (devices.size() == 1) {
    // One device: the whole graph there, as `with tf.device(d):` around it (nodes that
    // name a device keep it), not replicated.
    DFLOW_RETURN_IF_ERROR(PinToDevice(devices[0], &g.graph));
    progress << "dflow: the graph on " << devices[0] << "\n";
  } else if (!devices.empty()) {
    // Rule 9: the graph replicated into one tower per device.
    std::vector<std::string> data;
    for (const TrainingColumn& c : options.train_data) data.push_back(c.tensor);
    DFLOW_ASSIGN_OR_RETURN(ReplicatedGraph towers,
                           ReplicateForTowers(g.graph, data, options.loss, options.train_op,
                                              devices));
    g.graph = std::move(towers.graph);
    if (!options.loss.empty()) options.loss = towers.loss;
    options.tower_tensors = std::move(towers.data_tensors);
    options.tower_weights = std::move(towers.tower_weights);
    progress << "dflow: " << devices.size() << " towers of " << towers.replicated_nodes
             << " nodes each; gradients averaged over the towers\n";
  }
  ConfigProto config;
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &config));
  }
  // Ops without a kernel on the chosen devices (an initializer's random op, int32 shape
  // arithmetic on a GPU) fall back to the CPU, as under MirroredStrategy.
  // An explicit allow_soft_placement in --config wins.
  if (!devices.empty() && !absl::StrContains(flags.Get("config", ""), "allow_soft_placement")) {
    config.set_allow_soft_placement(true);
  }
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config));
  DFLOW_RETURN_IF_ERROR(session->Create(g.graph));
  DFLOW_RETURN_IF_ERROR(InitializeVariables(flags, g, session.get()));
  Progress bar(progress, mode, !options.loss.empty());
  options.on_step = [&](const TrainingProgress& p) { bar.Step(p); };
  options.on_eval = [&](const EvalResult& r) { bar.Eval(r, options.eval_fetches); };
  DFLOW_ASSIGN_OR_RETURN(TrainingReport report, RunTrainingLoop(session.get(), options));
  DFLOW_RETURN_IF_ERROR(WriteCheckpointState(report.checkpoints));
  PrintReport(report, options, output == "json", out);
  return absl::OkStatus();
}

}  // namespace dflow
