#include "session/session.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/function_inliner.h"
#include "graph/graph_def_import.h"
#include "graph/node_def_util.h"
#include "graph/subgraph.h"
#include "graph/types.h"
#include "graph/status_macros.h"
#include "runtime/call_frame.h"
#include "session/constant_folding.h"
#include "session/kernel_coverage.h"
#include "session/kernel_library.h"
#include "session/step_stats_collector.h"

namespace dflow {
namespace {

// What a feed of `name` (parsed as `id`) must be; TF's errors when `graph` has no such
// tensor.
absl::StatusOr<FeedSpec> FedTensorSpec(const Graph& graph, const std::string& name,
                                       const TensorId& id) {
  const Node* node = graph.FindNode(id.node);
  if (node == nullptr) return TensorNotInGraph(name);
  if (id.index >= node->num_outputs()) return NoSuchOutput(*node, id.index);
  return FeedSpec{BaseType(node->output_types()[id.index]), node->output_shapes()[id.index]};
}

std::atomic<int64_t> next_step_id{1};

// Collects the statuses of a step's executors; the first error wins.
class StepBarrier {
 public:
  explicit StepBarrier(int count) : remaining_(count) {}

  void Done(const absl::Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok() && !status.ok()) status_ = status;
    if (--remaining_ == 0) cv_.notify_all();
  }
  // False when `timeout_ms` (> 0) passed first.
  bool Wait(int64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    auto finished = [this] { return remaining_ == 0; };
    if (timeout_ms <= 0) {
      cv_.wait(lock, finished);
      return true;
    }
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), finished);
  }
  void WaitForever() { Wait(0); }
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int remaining_;
  absl::Status status_;
};

absl::StatusOr<PlanSignature> MakeSignature(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  PlanSignature signature;
  for (const auto& [name, tensor] : feeds) {
    DFLOW_ASSIGN_OR_RETURN(std::string canonical, CanonicalTensorName(name));
    signature.feeds.push_back(std::move(canonical));
  }
  for (const std::string& name : fetches) {
    DFLOW_ASSIGN_OR_RETURN(std::string canonical, CanonicalTensorName(name));
    signature.fetches.push_back(std::move(canonical));
  }
  signature.targets = targets;
  return signature;
}

// Feed `index` of tensor `name` against the dtype and shape the graph gives it.
absl::Status CheckFeed(size_t index, const std::string& name, DataType dtype,
                       const PartialShape& shape, const Tensor& value) {
  if (value.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat("Expects arg[", index, "] to be ",
                                                   DataTypeString(dtype), " but ",
                                                   DataTypeString(value.dtype()),
                                                   " is provided"));
  }
  // TF's C++ never checks fed shapes (only its Python client does); dflow checks here,
  // before anything runs, instead of failing deep inside a kernel.
  const PartialShape fed = value.shape().ToPartialShape();
  if (!shape.IsCompatibleWith(fed)) {
    return absl::InvalidArgumentError(absl::StrCat("Cannot feed value of shape ", fed.ToString(),
                                                   " for tensor '", name, "', which has shape ",
                                                   shape.ToString()));
  }
  return absl::OkStatus();
}

absl::Status CheckFeeds(const ExecutionPlan& plan, const std::vector<Tensor>& feeds) {
  if (feeds.size() != plan.feed_types().size()) {
    return absl::InvalidArgumentError(absl::StrCat("Expects ", plan.feed_types().size(),
                                                   " arguments, but ", feeds.size(),
                                                   " is provided"));
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    DFLOW_RETURN_IF_ERROR(CheckFeed(i, plan.feed_names()[i], plan.feed_types()[i],
                                    plan.feed_shapes()[i], feeds[i]));
  }
  return absl::OkStatus();
}

// For each fetch, the index of the feed of the same tensor, or -1; empty when no fetch
// is fed (the common case: it allocates nothing, and a Run has a handful of feeds and
// fetches, so comparing names pairwise is cheaper than hashing them).
std::vector<int> FetchesAnsweredByFeeds(const PlanSignature& signature) {
  std::vector<int> fed;
  if (signature.feeds.empty()) return fed;
  for (size_t i = 0; i < signature.fetches.size(); ++i) {
    const auto it =
        std::find(signature.feeds.begin(), signature.feeds.end(), signature.fetches[i]);
    if (it == signature.feeds.end()) continue;
    if (fed.empty()) fed.assign(signature.fetches.size(), -1);
    fed[i] = static_cast<int>(it - signature.feeds.begin());
  }
  return fed;
}

std::string PlacementLogText(const PlacementResult& placement) {
  std::string text;
  for (const std::string& line : placement.log_lines) absl::StrAppend(&text, line, "\n");
  return text;
}

// RunMetadata.device_memory: each device of the plan, once, in plan order.
void AddDeviceMemory(const ExecutionPlan& plan, RunMetadata* metadata) {
  absl::flat_hash_set<const Device*> seen;
  for (const ExecutionPlan::Partition& partition : plan.partitions()) {
    if (!seen.insert(partition.device).second) continue;
    Allocator* allocator = partition.device->allocator();
    const AllocatorStats stats = allocator->GetStats();
    DeviceMemoryUsage* usage = metadata->add_device_memory();
    usage->set_device(partition.device->name());
    usage->set_allocator_name(allocator->Name());
    usage->set_bytes_in_use(stats.bytes_in_use);
    usage->set_peak_bytes_in_use(stats.peak_bytes_in_use);
    usage->set_bytes_limit(stats.bytes_limit);
    usage->set_largest_alloc_size(stats.largest_alloc_size);
  }
}

}  // namespace

std::string DeviceMappingText(const DeviceMgr& devices) {
  std::string lines;
  for (Device* device : devices.devices()) {
    const std::string& desc = device->attributes().physical_device_desc();
    if (!desc.empty()) absl::StrAppend(&lines, device->name(), " -> ", desc, "\n");
  }
  return lines.empty() ? "Device mapping: no known devices.\n"
                       : absl::StrCat("Device mapping:\n", lines);
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const ConfigProto& config,
                                                    std::shared_ptr<LogSink> log) {
  if (log == nullptr) log = StderrLogSink();
  DFLOW_ASSIGN_OR_RETURN(SessionLimits limits, ResolveSessionLimits(config));
  DFLOW_ASSIGN_OR_RETURN(SessionDevices devices, CreateSessionDevices(config));
  for (const std::string& warning : devices.warnings) {
    log->Write(LogKind::kWarning, absl::StrCat("dflow: warning: ", warning, "\n"));
  }
  std::unique_ptr<Session> session(
      new Session(config, limits, std::move(devices), DefaultKernelRegistry()));
  session->log_ = std::move(log);
  if (config.log_device_placement()) {
    session->log_->Write(LogKind::kDeviceMapping, DeviceMappingText(*session->devices_.devices));
  }
  return session;
}

Session::Session(ConfigProto config, SessionLimits limits, SessionDevices devices,
                 const KernelRegistry& kernels)
    : config_(std::move(config)),
      limits_(limits),
      devices_(std::move(devices)),
      kernels_(kernels) {}

class Session::CallInFlight {
 public:
  explicit CallInFlight(Session* session) : session_(session) {
    absl::MutexLock lock(&session_->mu_);
    if (session_->closed_) {
      status_ = absl::CancelledError("Session has been closed.");
    } else {
      ++session_->calls_in_flight_;
    }
  }
  ~CallInFlight() {
    if (!status_.ok()) return;
    absl::MutexLock lock(&session_->mu_);
    --session_->calls_in_flight_;
  }
  CallInFlight(const CallInFlight&) = delete;
  CallInFlight& operator=(const CallInFlight&) = delete;

  // CANCELLED when the session was closed before the call.
  const absl::Status& status() const { return status_; }

 private:
  Session* const session_;
  absl::Status status_;
};

Session::~Session() {
  Close().IgnoreError();
  // A step reports done from inside its last closure, which may still hold a received
  // device tensor while it unwinds: the devices (and their allocators) go only after.
  devices_.pool->WaitUntilIdle();
}

absl::Status Session::Create(const GraphDef& graph_def) { return Create(graph_def, {}); }

absl::Status Session::Create(const GraphDef& graph_def,
                             const std::vector<std::string>& fed_tensors) {
  CallInFlight call(this);
  DFLOW_RETURN_IF_ERROR(call.status());
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::CancelledError("Session has been closed.");
    if (state_ != nullptr) {
      return absl::AlreadyExistsError("A Graph has already been created for this session.");
    }
    fed_tensors_ = fed_tensors;
  }
  if (graph_def.node_size() == 0) return absl::OkStatus();
  return InstallGraph(graph_def);
}

absl::Status Session::Extend(const GraphDef& graph_def) {
  CallInFlight call(this);
  DFLOW_RETURN_IF_ERROR(call.status());
  std::shared_ptr<const GraphState> state;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::CancelledError("Session has been closed.");
    state = state_;
  }
  if (state == nullptr) return Create(graph_def);
  GraphDef merged = state->Definition();
  absl::flat_hash_set<std::string> existing;
  for (const NodeDef& node : merged.node()) existing.insert(node.name());
  for (const NodeDef& node : graph_def.node()) {
    if (existing.contains(node.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GraphDef argument to Extend includes node '", node.name(),
          "', which was created by a previous call to Create or Extend in this session."));
    }
    *merged.add_node() = node;
  }
  merged.mutable_library()->MergeFrom(graph_def.library());
  return InstallGraph(std::move(merged));
}

void Session::WarnAboutDroppedAttrs(const std::vector<std::string>& warnings) {
  std::vector<std::string> fresh;
  {
    absl::MutexLock lock(&mu_);
    for (const std::string& w : warnings) {
      if (warned_.insert(w).second) fresh.push_back(w);
    }
  }
  if (fresh.empty()) return;
  log_->Write(LogKind::kWarning, FormatUnknownAttrWarnings(fresh) + "\n");
}

absl::Status Session::InstallGraph(GraphDef graph_def) {
  auto state = std::make_shared<GraphState>();
  // Library function calls run as their inlined bodies (graph/function_inliner.h); the
  // session keeps the caller's GraphDef for Extend.
  ImportOptions import_options;
  {
    absl::MutexLock lock(&mu_);
    import_options.fed_tensors = fed_tensors_;
  }
  if (HasFunctionCalls(graph_def)) {
    DFLOW_ASSIGN_OR_RETURN(GraphDef inlined,
                           InlineFunctionCalls(graph_def, OpRegistry::Global(), limits_.inlining));
    DFLOW_ASSIGN_OR_RETURN(state->graph, ImportGraphDef(std::move(inlined), import_options));
    state->caller_graph_def = std::move(graph_def);
  } else {
    // The graph is the only copy the session keeps: Extend rebuilds the GraphDef from it.
    DFLOW_ASSIGN_OR_RETURN(state->graph, ImportGraphDef(std::move(graph_def), import_options));
  }
  WarnAboutDroppedAttrs(state->graph->import_warnings());
  PlacementOptions options;
  options.allow_soft_placement = config_.allow_soft_placement();
  options.log_device_placement = config_.log_device_placement();
  // Nodes no device can run are placed on the client's device type anyway; a step that
  // needs one is refused with the full list (kernel_coverage.h).
  const PermissiveKernelSupport placement_kernels(
      kernels_, devices_.devices->client_device()->device_type());
  DFLOW_ASSIGN_OR_RETURN(state->placement,
                         PlaceGraph(options, devices_.devices->ListAttributes(),
                                    placement_kernels, state->graph.get()));
  if (options.log_device_placement) {
    log_->Write(LogKind::kPlacement, PlacementLogText(state->placement));
  }
  absl::MutexLock lock(&mu_);
  state_ = std::move(state);
  plans_.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const ExecutionPlan>> Session::GetPlan(
    const PlanSignature& signature) {
  const std::string key = signature.Key();
  std::shared_ptr<const GraphState> state;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::CancelledError("Session has been closed.");
    if (state_ == nullptr) {
      return absl::InvalidArgumentError("Session was not created with a graph before Run()!");
    }
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    state = state_;
  }
  // Compile outside the lock; if two threads race, the first inserted plan wins.
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionPlan> built,
                         ExecutionPlan::Build(state->graph, signature, *devices_.devices,
                                              kernels_, config_, stateful_kernels_.get()));
  std::shared_ptr<const ExecutionPlan> plan = std::move(built);
  absl::MutexLock lock(&mu_);
  if (state_ != state) return plan;  // graph changed meanwhile: use once, don't cache
  return plans_.emplace(key, std::move(plan)).first->second;
}

int64_t Session::TimeoutMs(const RunOptions& options) const {
  // A timeout past ~35 years never ends a step; waiting for it would overflow the clock
  // (INT64_MAX ms gave DEADLINE_EXCEEDED at once, issue 15), so it means no timeout.
  constexpr int64_t kForeverMs = int64_t{1} << 40;
  int64_t timeout = options.timeout_in_ms() > 0 ? options.timeout_in_ms()
                                                 : config_.operation_timeout_in_ms();
  return timeout > 0 && timeout < kForeverMs ? timeout : 0;
}

absl::Status Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets,
                          std::vector<Tensor>* outputs) {
  return Run(RunOptions(), feeds, fetches, targets, outputs, nullptr);
}

absl::Status Session::Run(const RunOptions& options,
                          const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets,
                          std::vector<Tensor>* outputs, RunMetadata* metadata) {
  CallInFlight call(this);
  DFLOW_RETURN_IF_ERROR(call.status());
  DFLOW_ASSIGN_OR_RETURN(PlanSignature signature, MakeSignature(feeds, fetches, targets));
  if (std::vector<int> fed = FetchesAnsweredByFeeds(signature); !fed.empty()) {
    return RunWithFedFetches(options, feeds, signature, fed, outputs, metadata);
  }
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionPlan> plan, GetPlan(signature));
  std::vector<Tensor> feed_values;
  feed_values.reserve(feeds.size());
  for (const auto& feed : feeds) feed_values.push_back(feed.second);
  DFLOW_RETURN_IF_ERROR(CheckFeeds(*plan, feed_values));
  return RunPlan(*plan, options, std::move(feed_values), outputs, metadata);
}

absl::Status Session::RunWithFedFetches(
    const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& feeds,
    const PlanSignature& signature, const std::vector<int>& fed, std::vector<Tensor>* outputs,
    RunMetadata* metadata) {
  PlanSignature computed = signature;
  computed.fetches.clear();
  for (size_t i = 0; i < fed.size(); ++i) {
    if (fed[i] < 0) computed.fetches.push_back(signature.fetches[i]);
  }
  std::vector<Tensor> values;
  values.reserve(feeds.size());
  for (const auto& feed : feeds) values.push_back(feed.second);
  std::vector<Tensor> computed_outputs;
  if (!computed.fetches.empty() || !computed.targets.empty()) {
    DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionPlan> plan, GetPlan(computed));
    DFLOW_RETURN_IF_ERROR(CheckFeeds(*plan, values));
    DFLOW_RETURN_IF_ERROR(RunPlan(*plan, options, values, &computed_outputs, metadata));
  } else {
    // Nothing to run (TF's Python Session does not run either); the feeds must still
    // name tensors of the graph, of their dtypes.
    DFLOW_RETURN_IF_ERROR(CheckFedTensorsExist(signature.feeds, values));
  }
  outputs->clear();
  size_t next_computed = 0;
  for (int source : fed) {
    outputs->push_back(source >= 0 ? values[source] : computed_outputs[next_computed++]);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Session::GraphState>> Session::CurrentState() const {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::CancelledError("Session has been closed.");
  if (state_ == nullptr) {
    return absl::InvalidArgumentError("Session was not created with a graph before Run()!");
  }
  return state_;
}

absl::StatusOr<FeedSpec> Session::GetFeedSpec(const std::string& name) const {
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const GraphState> state, CurrentState());
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->IsControl()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' is not a tensor name (expected node or node:index)"));
  }
  return FedTensorSpec(*state->graph, name, *id);
}

std::shared_ptr<const Graph> Session::graph() const {
  absl::MutexLock lock(&mu_);
  return state_ == nullptr ? nullptr : state_->graph;
}

absl::Status Session::CheckFedTensorsExist(const std::vector<std::string>& names,
                                           const std::vector<Tensor>& values) {
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const GraphState> state, CurrentState());
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!seen.insert(names[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Endpoint \"", names[i], "\" fed more than once."));
    }
    DFLOW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(names[i]));
    DFLOW_ASSIGN_OR_RETURN(FeedSpec spec, FedTensorSpec(*state->graph, names[i], id));
    DFLOW_RETURN_IF_ERROR(CheckFeed(i, names[i], spec.dtype, spec.shape, values[i]));
  }
  return absl::OkStatus();
}

absl::Status Session::RunPlan(const ExecutionPlan& plan, const RunOptions& options,
                              std::vector<Tensor> feeds, std::vector<Tensor>* outputs,
                              RunMetadata* metadata) {
  CallFrame frame(plan.num_fetches());
  frame.args = std::move(feeds);
  CancellationToken cancellation;
  std::unique_ptr<Rendezvous> rendezvous;
  if (plan.needs_rendezvous()) rendezvous = std::make_unique<Rendezvous>();
  StepHandle handle{&cancellation, rendezvous.get()};
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::CancelledError("Session has been closed.");
    active_steps_.insert(&handle);
  }
  std::unique_ptr<StepStatsCollector> stats;
  if (metadata != nullptr && options.trace_level() == RunOptions::FULL_TRACE) {
    stats = std::make_unique<StepStatsCollector>();
  }
  Executor::Args args;
  args.step_id = next_step_id.fetch_add(1, std::memory_order_relaxed);
  args.rendezvous = rendezvous.get();
  args.call_frame = &frame;
  args.cancellation = &cancellation;
  args.runner = devices_.pool.get();
  args.limits = &limits_.allocation;
  StepBarrier barrier(static_cast<int>(plan.partitions().size()));
  // Without a deadline the step starts on this thread (cheapest); with one it starts on
  // the pool so this thread can stop waiting when the deadline passes, and long kernels
  // check for it inside.
  const int64_t timeout_ms = TimeoutMs(options);
  cancellation.set_checked_in_kernels(timeout_ms > 0);
  for (const ExecutionPlan::Partition& partition : plan.partitions()) {
    Executor::Args partition_args = args;
    if (stats) partition_args.observer = stats->ForDevice(partition.device->name());
    const Executor* executor = partition.executor.get();
    auto start = [executor, partition_args, &barrier] {
      executor->RunAsync(partition_args, [&barrier](const absl::Status& s) { barrier.Done(s); });
    };
    if (timeout_ms > 0) {
      devices_.pool->Schedule(start);
    } else {
      start();
    }
  }
  absl::Status status;
  if (!barrier.Wait(timeout_ms)) {
    status = absl::DeadlineExceededError("Timed out waiting for notification");
    cancellation.Cancel(status);
    if (rendezvous) rendezvous->StartAbort(status);
    barrier.WaitForever();  // executors drain before the step's state goes away
  } else {
    status = barrier.status();
  }
  {
    absl::MutexLock lock(&mu_);
    active_steps_.erase(&handle);
  }
  if (stats) {
    // Traced stream work reports when its stream passes it, which nothing in the step
    // need wait for (a GPU update run as a target): drain the accelerators first.
    for (const ExecutionPlan::Partition& partition : plan.partitions()) {
      if (partition.device->IsAccelerator()) partition.device->Sync().IgnoreError();
    }
    stats->Finish(metadata->mutable_step_stats());
  }
  if (metadata != nullptr) AddDeviceMemory(plan, metadata);
  if (metadata != nullptr && options.output_partition_graphs()) {
    for (const auto& partition : plan.partitions()) {
      *metadata->add_partition_graphs() = plan.PartitionGraphDef(partition);
    }
  }
  DFLOW_RETURN_IF_ERROR(status);
  for (int i = 0; i < plan.num_fetches(); ++i) {
    if (!frame.retval_set[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Retval[", i, "] does not have value: '", plan.fetch_names()[i],
          "' was not computed (it is on an untaken branch of a conditional)"));
    }
  }
  *outputs = std::move(frame.retvals);
  return absl::OkStatus();
}

absl::Status Session::Close() {
  absl::MutexLock lock(&mu_);
  if (!closed_) {
    closed_ = true;
    const absl::Status cancelled = absl::CancelledError("Run call was cancelled");
    for (StepHandle* step : active_steps_) {
      step->cancellation->Cancel(cancelled);
      if (step->rendezvous != nullptr) step->rendezvous->StartAbort(cancelled);
    }
  }
  // A cancelled step still waits for copies already on a bus, and a Run may be building
  // its plan: the devices must outlive them all.
  mu_.Await(absl::Condition(this, &Session::NoCallsInFlight));
  return absl::OkStatus();
}

std::vector<DeviceAttributes> Session::ListDevices() const {
  return devices_.devices->ListAttributes();
}

PlacementResult Session::placement() const {
  absl::MutexLock lock(&mu_);
  return state_ == nullptr ? PlacementResult() : state_->placement;
}

}  // namespace dflow
