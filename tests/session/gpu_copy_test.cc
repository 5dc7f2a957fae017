// Cross-device copies through a Session on simulated GPUs (runtime/device_copier.h,
// kernels/cpu/sendrecv_ops.h): GPU -> CPU on the device_to_host stream, GPU -> GPU as a
// peer copy or staged through the host, one copy per (tensor, destination device), chaos
// ordering, and a fault and a timeout in the middle of a copy. DFLOW_SIMULATED_GPUS and
// DFLOW_SIMULATED_GPU_OPTIONS are set per test (this binary is its own process).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/sim/sim_copier.h"
#include "runtime/sim/sim_device.h"
#include "runtime/sim/sim_host_allocator.h"
#include "session/session.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

using testing::ScopedEnv;

std::vector<float> Floats(const Tensor& t) {
  auto flat = t.flat<float>();
  return std::vector<float>(flat.begin(), flat.end());
}

// Copies enqueued by GPU:<id>'s copier so far.
int64_t CopiesOn(Session& session, int id) {
  absl::StatusOr<Device*> device = session.devices().Lookup("GPU:" + std::to_string(id));
  REQUIRE(device.ok());
  return static_cast<sim::SimGpuCopier*>((*device)->copier())->copies_enqueued();
}

std::unique_ptr<Session> SessionFor(const Scope& root) {
  GraphDef graph_def;
  REQUIRE(root.ToGraphDef(&graph_def).ok());
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  REQUIRE(session.ok());
  absl::Status created = (*session)->Create(graph_def);
  INFO(created.ToString());
  REQUIRE(created.ok());
  return *std::move(session);
}

// b = -a on GPU:0 feeds two consumers on GPU:1 (one GPU -> GPU copy, deduplicated); their
// sum is fetched (one GPU -> CPU copy).
Scope TwoGpuGraph() {
  Scope root = Scope::NewRootScope();
  Scope gpu0 = root.WithDevice("/gpu:0");
  Scope gpu1 = root.WithDevice("/gpu:1");
  Output a = Const(gpu0.WithOpName("a"), {{1.f, -2.f}, {3.f, -4.f}});
  Output b = Neg(gpu0.WithOpName("b"), a);
  Output sq = Square(gpu1.WithOpName("sq"), b);
  Output ab = Abs(gpu1.WithOpName("ab"), b);
  AddN(gpu1.WithOpName("sum"), {sq, ab});
  return root;
}
const std::vector<float> kTwoGpuSum = {2, 6, 12, 20};  // x^2 + |x|

TEST_CASE("A GPU result reaches the CPU through the GPU's device_to_host copy",
          "[gpu_copy]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", std::nullopt);
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f}, {3.f, 4.f}});
  MatMul(root.WithOpName("c"), a, a);
  std::unique_ptr<Session> session = SessionFor(root);
  std::vector<Tensor> out;
  REQUIRE(session->Run({}, {"c"}, {}, &out).ok());
  CHECK(Floats(out[0]) == std::vector<float>{7, 10, 15, 22});
  // The fetched tensor is host memory, not the GPU's: the GPUs' page-locked host memory
  // (its stand-in), as a CUDA fetch lands there in one DMA.
  CHECK(out[0].buffer()->allocator() == sim::ProcessSimHostAllocator());
  CHECK(CopiesOn(*session, 0) == 1);
  REQUIRE(session->Run({}, {"c"}, {}, &out).ok());
  CHECK(CopiesOn(*session, 0) == 2);
}

TEST_CASE("A fetched GPU result outlives its session and returns its memory when dropped",
          "[gpu_copy]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", std::nullopt);
  BfcAllocator* host = sim::ProcessSimHostAllocator();
  const int64_t in_use_before = host->GetStats().bytes_in_use;
  std::vector<Tensor> out;
  {
    Scope root = Scope::NewRootScope();
    Output a = Const(root.WithDevice("/gpu:1").WithOpName("a"),
                     Input::Initializer(std::vector<float>(1 << 16, 0.5f), {256, 256}));
    MatMul(root.WithDevice("/gpu:1").WithOpName("c"), a, a);
    std::unique_ptr<Session> session = SessionFor(root);
    REQUIRE(session->Run({}, {"c"}, {}, &out).ok());
    REQUIRE(session->Close().ok());
  }  // the session and its simulated GPUs are gone
  REQUIRE(out.size() == 1);
  CHECK(out[0].buffer()->allocator() == host);
  CHECK(host->GetStats().bytes_in_use >= in_use_before + 256 * 256 * 4);
  for (float v : Floats(out[0])) REQUIRE(v == 64.f);  // 256 * 0.5 * 0.5
  out.clear();
  CHECK(host->GetStats().bytes_in_use == in_use_before);
}

TEST_CASE("Closing a session gives back the pinned host memory no tensor uses",
          "[gpu_copy]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", std::nullopt);
  BfcAllocator* host = sim::ProcessSimHostAllocator();
  auto fetch_big = [](std::vector<Tensor>* out) {
    Scope root = Scope::NewRootScope();
    Output a = Const(root.WithDevice("/gpu:0").WithOpName("a"),
                     Input::Initializer(std::vector<float>(1 << 20, 1.f), {1 << 20}));
    Neg(root.WithDevice("/gpu:0").WithOpName("n"), a);
    std::unique_ptr<Session> session = SessionFor(root);
    REQUIRE(session->Run({}, {"n"}, {}, out).ok());
    return session;
  };
  std::vector<Tensor> kept;
  {
    std::unique_ptr<Session> session = fetch_big(&kept);
    CHECK(host->RegionBytes() >= size_t{4} << 20);  // the 4 MiB result is pinned memory
  }
  // Closed, but the fetched tensor lives on: its region stays, and stays valid.
  CHECK(host->RegionBytes() >= size_t{4} << 20);
  CHECK(kept[0].flat<float>()[12345] == -1.f);
  kept.clear();
  {
    std::vector<Tensor> dropped;
    std::unique_ptr<Session> session = fetch_big(&dropped);
    dropped.clear();
  }  // its result dropped before the session closed: nothing in use any more
  CHECK(host->GetStats().bytes_in_use == 0);
  CHECK(host->RegionBytes() == 0);
}

TEST_CASE("GPU to GPU: one copy per destination, peer or staged through the host",
          "[gpu_copy][d2d]") {
  const bool peer = GENERATE(true, false);
  INFO("peer access " << peer);
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", peer ? "" : "peer_access=0");
  std::unique_ptr<Session> session = SessionFor(TwoGpuGraph());
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = session->Run(options, {}, {"sum"}, {}, &out, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(Floats(out[0]) == kTwoGpuSum);
  int recvs_on_gpu1 = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      recvs_on_gpu1 += node.op() == "_Recv" && absl::EndsWith(node.device(), "GPU:1");
    }
  }
  CHECK(recvs_on_gpu1 == 1);  // b crosses once although two nodes read it
  // Peer: GPU:0 copies b to GPU:1; GPU:1 copies the sum to the host.
  // Staged: GPU:0 copies b to the host, GPU:1 copies it in and the sum out.
  CHECK(CopiesOn(*session, 0) == 1);
  CHECK(CopiesOn(*session, 1) == (peer ? 1 : 2));
}

TEST_CASE("Chaos ordering on every stream: copies in all directions still give the answer",
          "[gpu_copy][chaos]") {
  const int seed = GENERATE(1, 2, 3, 4, 5);
  const bool peer = GENERATE(true, false);
  INFO("chaos seed " << seed << ", peer access " << peer);
  // 1 MiB cards: freed buffers are reused at once, so a copy reading a buffer after its
  // owner let go would see another tensor's data.
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2:1");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS",
                  "chaos_seed=" + std::to_string(seed) + (peer ? "" : ",peer_access=0"));
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x").WithDevice("/cpu:0"), DT_FLOAT);
  Output y = Square(root.WithOpName("y").WithDevice("/gpu:0"), x);         // CPU -> GPU:0
  Output z = Neg(root.WithOpName("z").WithDevice("/gpu:1"), y);            // GPU:0 -> GPU:1
  Output t = Transpose(root.WithOpName("t").WithDevice("/cpu:0"), z, {1, 0});  // -> CPU
  Add(root.WithOpName("w").WithDevice("/gpu:0"), t, y);                    // CPU -> GPU:0
  std::unique_ptr<Session> session = SessionFor(root);
  for (int step = 0; step < 4; ++step) {
    INFO("step " << step);
    Tensor feed = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({64, 64}));
    auto flat = feed.flat<float>();
    for (int i = 0; i < 64 * 64; ++i) flat[i] = static_cast<float>((i + step) % 7);
    std::vector<Tensor> out;
    absl::Status status = session->Run({{"x", feed}}, {"w", "z"}, {}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    auto w = out[0].flat<float>();
    auto z_out = out[1].flat<float>();
    bool right = true;
    for (int r = 0; r < 64; ++r) {
      for (int c = 0; c < 64; ++c) {
        const float xy = flat[r * 64 + c] * flat[r * 64 + c];
        const float yx = flat[c * 64 + r] * flat[c * 64 + r];
        right = right && z_out[r * 64 + c] == -xy && w[r * 64 + c] == xy - yx;
      }
    }
    CHECK(right);
  }
}

TEST_CASE("A fault in the middle of a copy fails the step clearly; the session keeps working",
          "[gpu_copy][fault]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", "fail_copy=1");
  std::unique_ptr<Session> session = SessionFor(TwoGpuGraph());
  std::vector<Tensor> out;
  // Each GPU's first copy fails: step 1 at GPU:0's copy of b to GPU:1 (so GPU:1 never
  // gets to copy), step 2 at GPU:1's copy of the sum to the host.
  for (const char* failing : {"GPU:0/device_to_device copy of 16 bytes, failed half-way",
                              "GPU:1/device_to_host copy of 16 bytes, failed half-way"}) {
    absl::Status status = session->Run({}, {"sum"}, {}, &out);
    INFO(status.ToString());
    CHECK(status.code() == absl::StatusCode::kInternal);
    CHECK(absl::StrContains(status.message(), "injected copy fault"));
    CHECK(absl::StrContains(status.message(), failing));
  }
  for (int i = 0; i < 3; ++i) {
    absl::Status status = session->Run({}, {"sum"}, {}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    CHECK(Floats(out[0]) == kTwoGpuSum);
  }
}

TEST_CASE("A timeout while a copy is in flight ends the step; the session keeps working",
          "[gpu_copy][timeout]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2:64");
  // Every copy takes 300 ms: a 50 ms deadline strikes while the first one is on the bus.
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", "copy_delay_us=300000");
  std::unique_ptr<Session> session = SessionFor(TwoGpuGraph());
  RunOptions hurried;
  hurried.set_timeout_in_ms(50);
  std::vector<Tensor> out;
  absl::Status status = session->Run(hurried, {}, {"sum"}, {}, &out, nullptr);
  INFO(status.ToString());
  CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(out.empty());
  status = session->Run({}, {"sum"}, {}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(Floats(out[0]) == kTwoGpuSum);
}

TEST_CASE("HostMemory args cross devices without a device copy", "[gpu_copy][host_memory]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", std::nullopt);
  Scope root = Scope::NewRootScope();
  Scope cpu = root.WithDevice("/cpu:0");
  Scope gpu = root.WithDevice("/gpu:0");
  Output x = Placeholder(cpu.WithOpName("x"), DT_FLOAT);
  Output shape = Const(cpu.WithOpName("shape"), {3, 2});
  Output r = Reshape(gpu.WithOpName("r"), x, shape);  // Reshape's shape: HostMemory
  Shape(gpu.WithOpName("s"), r);                       // Shape's output: HostMemory
  std::unique_ptr<Session> session = SessionFor(root);
  Tensor feed = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({6}));
  for (int i = 0; i < 6; ++i) feed.flat<float>()[i] = static_cast<float>(i);
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = session->Run(options, {{"x", feed}}, {"r", "s"}, {}, &out, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(out[0].shape() == TensorShape({3, 2}));
  CHECK(Floats(out[0]) == std::vector<float>{0, 1, 2, 3, 4, 5});
  REQUIRE(out[1].dtype() == DT_INT32);
  CHECK(out[1].flat<int32_t>()[0] == 3);
  CHECK(out[1].flat<int32_t>()[1] == 2);
  // Device copies: x into the GPU and r out of it. Not the shape (received into host
  // memory by _HostRecv) and not s (sent from host memory by _HostSend).
  CHECK(CopiesOn(*session, 0) == 2);
  std::map<std::string, std::string> gpu_copy_ops;  // op -> dtype of what it moves
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      if (!absl::EndsWith(node.device(), "GPU:0")) continue;
      if (node.op() == "_HostRecv" || node.op() == "_Recv") {
        gpu_copy_ops[node.op()] = DataTypeString(node.attr().at("tensor_type").type());
      }
      if (node.op() == "_HostSend" || node.op() == "_Send") {
        gpu_copy_ops[node.op()] = DataTypeString(node.attr().at("T").type());
      }
    }
  }
  CHECK(gpu_copy_ops == std::map<std::string, std::string>{{"_HostRecv", "int32"},
                                                           {"_Recv", "float"},
                                                           {"_HostSend", "int32"},
                                                           {"_Send", "float"}});
}

TEST_CASE("A malformed DFLOW_SIMULATED_GPU_OPTIONS is an error naming the entry",
          "[gpu_copy]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", "chaos_seed=3,peer_acess=0");
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  REQUIRE_FALSE(session.ok());
  CHECK(session.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(session.status().message(), "'peer_acess=0'"));
}

}  // namespace
}  // namespace dflow
