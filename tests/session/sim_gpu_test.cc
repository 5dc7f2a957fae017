// Graphs on simulated GPUs (DFLOW_SIMULATED_GPUS): placement prefers GPUs where a
// simulated kernel exists, towers on /gpu:N, fallbacks to the CPU with copies, missing
// devices, soft placement, Consts built once, kernels that only enqueue on the compute
// stream, and concurrent Runs. The environment variable is set only in
// this test binary (its own process), inside each test, and restored afterwards.
#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/testing/scoped_env.h"

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/sim/sim_copier.h"
#include "runtime/sim/sim_device.h"
#include "session/client_session.h"
#include "session/session.h"
#include "session/step_stats_collector.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using testing::ScopedEnv;

template <typename T>
std::vector<T> ValuesOf(const Tensor& t) {
  auto flat = t.flat<T>();
  return std::vector<T>(flat.begin(), flat.end());
}

std::string DeviceOf(Session* session, const std::string& node) {
  for (const auto& d : session->placement().decisions) {
    if (d.node == node) return d.device;
  }
  return "<not placed>";
}

constexpr char kGpuPrefix[] = "/job:localhost/replica:0/task:0/device:GPU:";
constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// Two towers c = a x b on /gpu:2 and /gpu:3, summed by AddN on /cpu:0.
struct TowerGraph {
  Scope root = Scope::NewRootScope();
  Output sum;
  explicit TowerGraph(const std::string& device_kind = "/gpu:") {
    std::vector<Output> towers;
    for (int d : {2, 3}) {
      Scope tower = root.NewSubScope("tower_" + std::to_string(d))
                        .WithDevice(device_kind + std::to_string(d));
      Output a = Const(tower.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
      Output b = Const(tower.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
      towers.push_back(MatMul(tower.WithOpName("c"), a, b));
    }
    sum = AddN(root.WithOpName("sum").WithDevice("/cpu:0"), towers);
  }
};

// The seed example: c = MatMul(a, b) of Consts a [2,3] and b [3,2], = [[22,28],[49,64]].
Output SeedMatMul(const Scope& root) {
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(root.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  return MatMul(root.WithOpName("c"), a, b);
}

TEST_CASE("MatMul prefers a simulated GPU and gives [[22,28],[49,64]]", "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:1024");
  Scope root = Scope::NewRootScope();
  Output c = SeedMatMul(root);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({c}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(out[0].shape() == TensorShape({2, 2}));
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
  CHECK(DeviceOf((*session)->session(), "c") == std::string(kGpuPrefix) + "0");
  CHECK(DeviceOf((*session)->session(), "a") == std::string(kGpuPrefix) + "0");
  // Again: the plan is reused and the result is the same.
  REQUIRE((*session)->Run({c}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
}

// The seed's manual placement: constants pinned to the CPU, the MatMul left to the
// placer. It goes to GPU:0 and each constant crosses once, as a _Recv on GPU:0.
TEST_CASE("Constants pinned to /cpu:0 feed a MatMul placed on GPU:0 through two _Recv",
          "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "1");
  Scope root = Scope::NewRootScope();
  Scope cpu = root.WithDevice("/cpu:0");
  Output a = Const(cpu.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(cpu.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Output c = MatMul(root.WithOpName("c"), a, b);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(options, {}, {c}, {}, &out, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(out[0].shape() == TensorShape({2, 2}));
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
  Session* s = (*session)->session();
  CHECK(DeviceOf(s, "a") == kCpu0);
  CHECK(DeviceOf(s, "b") == kCpu0);
  CHECK(DeviceOf(s, "c") == std::string(kGpuPrefix) + "0");

  const std::string gpu0 = std::string(kGpuPrefix) + "0";
  int gpu_partitions = 0, gpu_recvs = 0, gpu_matmuls = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    bool on_gpu0 = false;
    for (const NodeDef& node : partition.node()) on_gpu0 |= node.device() == gpu0;
    if (!on_gpu0) continue;
    ++gpu_partitions;
    for (const NodeDef& node : partition.node()) {
      CHECK(node.device() == gpu0);
      if (node.op() == "_Recv") {
        ++gpu_recvs;
        auto from = node.attr().find("send_device");
        REQUIRE(from != node.attr().end());
        CHECK(from->second.s() == kCpu0);
      }
      gpu_matmuls += node.op() == "MatMul";
    }
  }
  CHECK(gpu_partitions == 1);
  CHECK(gpu_recvs == 2);
  CHECK(gpu_matmuls == 1);
}

TEST_CASE("Towers on /gpu:2 and /gpu:3 summed on /cpu:0 give [[44,56],[98,128]]",
          "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:1024");
  TowerGraph g;
  auto session = ClientSession::Create(g.root);
  REQUIRE(session.ok());
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(options, {}, {g.sum}, {}, &out, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{44, 56, 98, 128});
  Session* s = (*session)->session();
  CHECK(DeviceOf(s, "tower_2/c") == std::string(kGpuPrefix) + "2");
  CHECK(DeviceOf(s, "tower_3/c") == std::string(kGpuPrefix) + "3");
  CHECK(DeviceOf(s, "sum") == kCpu0);
  // Three partitions; each GPU sends its tower to CPU:0.
  REQUIRE(metadata.partition_graphs_size() == 3);
  int gpu_sends = 0, cpu_recvs_from_gpu = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      if (node.op() == "_Send" && absl::StrContains(node.device(), "GPU")) ++gpu_sends;
      if (node.op() == "_Recv" && absl::StrContains(node.device(), "CPU")) {
        auto it = node.attr().find("send_device");
        if (it != node.attr().end() && absl::StrContains(it->second.s(), "GPU")) {
          ++cpu_recvs_from_gpu;
        }
      }
    }
  }
  CHECK(gpu_sends == 2);
  CHECK(cpu_recvs_from_gpu == 2);
}

// Runs the towers once with FULL_TRACE into `metadata`; the session stays usable.
std::unique_ptr<ClientSession> TracedTowerStep(const TowerGraph& g, RunMetadata* metadata) {
  auto session = ClientSession::Create(g.root);
  REQUIRE(session.ok());
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  std::vector<Tensor> out;
  REQUIRE((*session)->Run(options, {}, {g.sum}, {}, &out, metadata).ok());
  return *std::move(session);
}

TEST_CASE("RunMetadata reports each device's memory; FULL_TRACE adds TF's per-node memory",
          "[sim_gpu][memory]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:64");
  TowerGraph g;
  RunMetadata metadata;
  std::unique_ptr<ClientSession> session = TracedTowerStep(g, &metadata);
  std::vector<Tensor> out;

  std::map<std::string, DeviceMemoryUsage> by_device;
  for (const DeviceMemoryUsage& usage : metadata.device_memory()) by_device[usage.device()] = usage;
  REQUIRE(by_device.size() == 3);  // CPU:0, GPU:2, GPU:3: the step's devices, once each
  const DeviceMemoryUsage& gpu2 = by_device.at(std::string(kGpuPrefix) + "2");
  CHECK(gpu2.allocator_name() == "GPU_2_bfc");
  CHECK(gpu2.bytes_limit() == int64_t{64} << 20);
  // The tower's 2x2 product (16 bytes, rounded up by the allocator) was allocated there.
  CHECK(gpu2.peak_bytes_in_use() >= 16);
  CHECK(gpu2.peak_bytes_in_use() >= gpu2.bytes_in_use());
  CHECK(by_device.count(kCpu0) == 1);

  // Per node (TF's form): the MatMul on GPU:2 took 16 bytes from GPU_2_bfc.
  bool found = false;
  for (const DeviceStepStats& dev : metadata.step_stats().dev_stats()) {
    if (IsStreamStats(dev)) continue;  // the stream rows (next test)
    for (const NodeExecStats& node : dev.node_stats()) {
      if (node.node_name() != "tower_2/c") continue;
      found = true;
      REQUIRE(node.memory_size() == 1);
      CHECK(node.memory(0).allocator_name() == "GPU_2_bfc");
      CHECK(node.memory(0).total_bytes() == 16);
      CHECK(node.memory(0).peak_bytes() >= 16);
    }
  }
  CHECK(found);

  // Without RunMetadata nothing is collected, and a plain Run still works.
  REQUIRE(session->Run({g.sum}, &out).ok());
}

// `dflow trace` draws these as a row per stream: the tower's MatMul ran on GPU:2's
// compute stream, and the towers' results went to the CPU on the device-to-host streams.
TEST_CASE("FULL_TRACE adds a row per accelerator stream with what it ran", "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:64");
  TowerGraph g;
  RunMetadata metadata;
  std::unique_ptr<ClientSession> session = TracedTowerStep(g, &metadata);

  std::map<std::string, const DeviceStepStats*> rows;
  for (const DeviceStepStats& dev : metadata.step_stats().dev_stats()) rows[dev.device()] = &dev;
  const std::string compute = std::string(kGpuPrefix) + "2/stream:compute";
  REQUIRE(rows.count(compute) == 1);
  bool matmul = false;
  for (const NodeExecStats& node : rows.at(compute)->node_stats()) {
    if (node.node_name() != "tower_2/c") continue;
    matmul = true;
    CHECK(absl::StrContains(node.timeline_label(), "tower_2/c kernel on "));
    CHECK(node.all_start_nanos() > 0);
    CHECK(node.all_end_rel_nanos() >= 0);
  }
  CHECK(matmul);
  int64_t copied = 0;
  for (const auto& [device, row] : rows) {
    if (!absl::EndsWith(device, "/stream:device_to_host")) continue;
    for (const NodeExecStats& node : row->node_stats()) {
      CHECK(absl::StrContains(node.timeline_label(), "memcpy"));
      copied += 1;
    }
  }
  CHECK(copied >= 1);

  // Untraced runs add nothing.
  RunMetadata plain;
  std::vector<Tensor> out;
  REQUIRE(session->Run(RunOptions(), {}, {g.sum}, {}, &out, &plain).ok());
  CHECK(plain.step_stats().dev_stats_size() == 0);
}

TEST_CASE("An op without a GPU kernel falls back to the CPU with copies", "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:1024");
  Scope root = Scope::NewRootScope();
  Output c = SeedMatMul(root);
  // Floor has no GPU kernel (Transpose had one until the training ops came).
  Output t = AddOp(root.WithOpName("t"), "Floor", {c}).output(0);
  Output n = Neg(root.WithOpName("n"), t);  // back on the GPU: a CPU -> GPU copy
  Output r = Relu(root.WithOpName("r"), Neg(root.WithOpName("m"), n));
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(options, {}, {r, t}, {}, &out, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
  CHECK(ValuesOf<float>(out[1]) == std::vector<float>{22, 28, 49, 64});
  Session* s = (*session)->session();
  CHECK(DeviceOf(s, "c") == std::string(kGpuPrefix) + "0");
  CHECK(DeviceOf(s, "t") == kCpu0);
  CHECK(DeviceOf(s, "n") == std::string(kGpuPrefix) + "0");
  int gpu_recvs = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      gpu_recvs += node.op() == "_Recv" && absl::StrContains(node.device(), "GPU");
    }
  }
  CHECK(gpu_recvs >= 1);
}

TEST_CASE("A missing /gpu:5 fails placement; soft placement runs it", "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:1024");
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a").WithDevice("/gpu:5"), {{1.f, 2.f}, {3.f, 4.f}});
  MatMul(root.WithOpName("b").WithDevice("/gpu:5"), a, a);
  GraphDef graph_def;
  REQUIRE(root.ToGraphDef(&graph_def).ok());
  {
    auto session = NewSession();
    REQUIRE(session.ok());
    absl::Status status = (*session)->Create(graph_def);
    INFO(status.ToString());
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(status.message(), "Cannot assign a device for operation"));
  }
  ConfigProto soft;
  soft.set_allow_soft_placement(true);
  auto session = NewSession(soft);
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(graph_def).ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({}, {"b"}, {}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{7, 10, 15, 22});
  // Soft placement keeps the device type: both nodes land on the first GPU, not the CPU.
  CHECK(DeviceOf(session->get(), "a") == std::string(kGpuPrefix) + "0");
  CHECK(DeviceOf(session->get(), "b") == std::string(kGpuPrefix) + "0");
}

// The simulated GPU behind `session`'s GPU:0.
sim::SimGpuDevice* SimGpu0(Session* session) {
  absl::StatusOr<Device*> gpu = session->devices().Lookup("GPU:0");
  REQUIRE(gpu.ok());
  auto* sim_gpu = dynamic_cast<sim::SimGpuDevice*>(*gpu);
  REQUIRE(sim_gpu != nullptr);
  return sim_gpu;
}

// The seed MatMul on simulated GPU:0 (a ClientSession), run once so that its plan and its
// Consts' tensors exist before a test watches the device.
struct WarmSeedOnGpu0 {
  ScopedEnv env{"DFLOW_SIMULATED_GPUS", "1:1024"};
  Scope root = Scope::NewRootScope();
  Output c = SeedMatMul(root);
  std::unique_ptr<ClientSession> client;
  Session* s = nullptr;
  sim::SimGpuDevice* gpu = nullptr;

  WarmSeedOnGpu0() {
    auto created = ClientSession::Create(root);
    REQUIRE(created.ok());
    client = *std::move(created);
    s = client->session();
    std::vector<Tensor> warm;
    REQUIRE(client->Run({c}, &warm).ok());
    REQUIRE(DeviceOf(s, "c") == std::string(kGpuPrefix) + "0");
    gpu = SimGpu0(s);
  }
};

TEST_CASE("A Const on a simulated GPU is built once, not uploaded or allocated per Run",
          "[sim_gpu]") {
  WarmSeedOnGpu0 seed;  // built the plan and the Consts' tensors
  REQUIRE(DeviceOf(seed.s, "a") == std::string(kGpuPrefix) + "0");
  REQUIRE(DeviceOf(seed.s, "b") == std::string(kGpuPrefix) + "0");
  sim::SimGpuDevice* gpu = seed.gpu;
  std::vector<Tensor> out;
  auto* copier = dynamic_cast<sim::SimGpuCopier*>(gpu->copier());
  REQUIRE(copier != nullptr);

  for (int run = 0; run < 3; ++run) {
    INFO("run " << run);
    const int64_t allocs_before = gpu->allocator()->GetStats().num_allocs;
    const int64_t copies_before = copier->copies_enqueued();
    absl::Status status = seed.client->Run({seed.c}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
    // Per Run: MatMul's output is the only GPU allocation and the fetch (GPU -> host)
    // the only copy; the Consts' tensors are reused, never re-made nor re-uploaded.
    CHECK(gpu->allocator()->GetStats().num_allocs - allocs_before == 1);
    CHECK(copier->copies_enqueued() - copies_before == 1);
  }
}

// Blocks `stream` (on its worker) until Open(). The worker shares the notification: it
// may still be inside WaitForNotification when the gate is destroyed (found by TSan).
class StreamGate {
 public:
  explicit StreamGate(Stream* stream) {
    enqueued_ = stream->EnqueueHostFunction([open = open_] {
      open->WaitForNotification();
      return absl::OkStatus();
    });
  }
  ~StreamGate() { Open(); }
  const absl::Status& enqueued() const { return enqueued_; }
  void Open() {
    if (!open_->HasBeenNotified()) open_->Notify();
  }

 private:
  absl::Status enqueued_;
  std::shared_ptr<absl::Notification> open_ = std::make_shared<absl::Notification>();
};

TEST_CASE("GPU kernels only enqueue on the compute stream; Run waits for it",
          "[sim_gpu]") {
  WarmSeedOnGpu0 seed;  // plan and Consts built before the gate
  sim::SimGpuDevice* gpu = seed.gpu;
  const int64_t allocs_before = gpu->allocator()->GetStats().num_allocs;

  StreamGate gate(gpu->compute_stream());
  REQUIRE(gate.enqueued().ok());
  std::atomic<bool> returned{false};
  absl::Status status;
  std::vector<Tensor> out;
  std::thread runner([&] {
    status = seed.client->Run({seed.c}, &out);
    returned = true;
  });
  // Not a timing assertion: the pause only gives a kernel that wrongly runs on the
  // executor's thread (or a Run that returns before the stream) the chance to show.
  absl::SleepFor(absl::Milliseconds(50));
  CHECK_FALSE(returned.load());
  // MatMul has not run: its output was never allocated on the GPU.
  CHECK(gpu->allocator()->GetStats().num_allocs == allocs_before);
  gate.Open();
  runner.join();
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
  CHECK(gpu->allocator()->GetStats().num_allocs == allocs_before + 1);
}

TEST_CASE("Concurrent Runs on simulated GPUs give the right answers", "[sim_gpu]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:1024");
  TowerGraph g;
  GraphDef graph_def;
  REQUIRE(g.root.ToGraphDef(&graph_def).ok());
  auto session = NewSession();
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(graph_def).ok());
  Session* s = session->get();
  std::vector<int> failures(8, 0);
  std::vector<std::string> first_error(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([s, t, &failures, &first_error] {
      for (int i = 0; i < 50; ++i) {
        std::vector<Tensor> out;
        absl::Status status = s->Run({}, {"sum"}, {}, &out);
        if (!status.ok() || out.size() != 1 ||
            ValuesOf<float>(out[0]) != std::vector<float>{44, 56, 98, 128}) {
          if (failures[t]++ == 0) first_error[t] = status.ToString();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    INFO(first_error[t]);
    CHECK(failures[t] == 0);
  }
}

// A step reports done from inside its last closure; that closure may still hold a tensor
// received from a GPU while it unwinds. Closing the session at once must wait for it
// before the GPUs' allocators go. The race needs a pool thread preempted in a window of
// a few hundred ns: before the fix this failed about once in 30 runs of this test (and
// goldens_test about once in 80 under load); ThreadPool's own test checks the wait itself.
TEST_CASE("A session closed right after Run outlives its last closures", "[sim_gpu][teardown]") {
  ScopedEnv env("DFLOW_SIMULATED_GPUS", "4:64");
  // A feed copied to GPU:0, x + x on GPU:0 and copied to GPU:1, squared there, fetched.
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output doubled = Add(root.WithOpName("doubled").WithDevice("/gpu:0"), x, x);
  Mul(root.WithOpName("squared").WithDevice("/gpu:1"), doubled, doubled);
  GraphDef graph_def;
  REQUIRE(root.ToGraphDef(&graph_def).ok());
  Tensor feed = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({4}));
  for (int i = 0; i < 4; ++i) feed.flat<float>()[i] = static_cast<float>(i);
  // More threads than cores, so that a pool thread is often preempted while unwinding.
  std::vector<std::string> errors(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&graph_def, &feed, &error = errors[t]] {
      for (int i = 0; i < 100 && error.empty(); ++i) {
        auto session = NewSession();
        absl::Status status = session.status();
        if (status.ok()) status = (*session)->Create(graph_def);
        std::vector<Tensor> out;
        if (status.ok()) status = (*session)->Run({{"x", feed}}, {"squared"}, {}, &out);
        session = absl::InternalError("closed");  // while the pool may still be unwinding
        if (!status.ok()) {
          error = status.ToString();
        } else if (ValuesOf<float>(out[0]) != std::vector<float>{0, 4, 16, 36}) {
          error = "wrong result";
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) CHECK(error.empty());
}

TEST_CASE("Close waits for a Run in flight; later calls are CANCELLED", "[sim_gpu][close]") {
  WarmSeedOnGpu0 seed;  // plan built before the gate
  sim::SimGpuDevice* gpu = seed.gpu;
  Session* s = seed.s;

  StreamGate gate(gpu->compute_stream());
  REQUIRE(gate.enqueued().ok());
  absl::Status run_status;
  std::vector<Tensor> out;
  std::thread runner([&] { run_status = seed.client->Run({seed.c}, &out); });
  absl::SleepFor(absl::Milliseconds(20));  // lets the step reach the gated stream
  std::atomic<bool> closed{false};
  absl::Status close_status;
  std::thread closer([&] {
    close_status = s->Close();
    closed = true;
  });
  // Not a timing assertion: the pause gives a Close that does not wait the chance to show.
  absl::SleepFor(absl::Milliseconds(50));
  CHECK_FALSE(closed.load());  // the fetch's copy is still queued behind the gate
  gate.Open();
  closer.join();
  runner.join();
  CHECK(close_status.ok());
  INFO(run_status.ToString());
  CHECK((run_status.ok() || run_status.code() == absl::StatusCode::kCancelled));
  CHECK(s->Run({}, {"c"}, {}, &out).code() == absl::StatusCode::kCancelled);
  CHECK(s->Extend(GraphDef()).code() == absl::StatusCode::kCancelled);
  CHECK(s->Close().ok());  // again: nothing in flight, returns at once
}

}  // namespace
}  // namespace dflow
