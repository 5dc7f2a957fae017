// The executor on its own: scheduling, errors annotated with the node, abort waking
// blocked receives, deadness, concurrency — with small test kernels.
#include <atomic>
#include <thread>

#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/graph_def_import.h"
#include "runtime/call_frame.h"
#include "runtime/executor.h"
#include "runtime/ref_slot.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

// Test kernels on real op names: Const gives its scalar, Add adds float scalars,
// Abort always fails, and _Send/_Recv/_Arg/_Retval move tensors.
class TestConst : public OpKernel {
 public:
  explicit TestConst(OpKernelConstruction* c) : OpKernel(c) {
    TensorProto proto;
    OP_REQUIRES_OK(c, c->GetAttr("value", &proto));
    value_ = proto.float_val_size() ? proto.float_val(0) : 0.f;
  }
  bool IsExpensive() const override { return false; }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<float>() = value_;
  }

 protected:
  float value() const { return value_; }

 private:
  float value_ = 0;
};

class TestAdd : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<float>() = ctx->input(0).scalar<float>() + ctx->input(1).scalar<float>();
  }
};

class TestAbort : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(absl::InvalidArgumentError("deliberate failure"));
  }
};

class TestRecv : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    ctx->rendezvous()->RecvAsync("key", [ctx, done](const absl::Status& s, const Tensor& t, bool dead) {
      if (!s.ok()) ctx->SetStatus(s);
      else if (dead) ctx->set_output_dead(0);
      else ctx->set_output(0, t);
      done();
    });
  }
};

class TestRetval : public OpKernel {
 public:
  explicit TestRetval(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    ctx->call_frame()->retvals[index_] = ctx->input(0);
    ctx->call_frame()->retval_set[index_] = 1;
  }

 private:
  int64_t index_ = 0;
};

// A "VariableV2" handing out a RefSlot owned by the test.
class TestVariable : public OpKernel {
 public:
  TestVariable(OpKernelConstruction* c, RefSlot* slot) : OpKernel(c), slot_(slot) {}
  bool IsExpensive() const override { return false; }
  void Compute(OpKernelContext* ctx) override { ctx->set_output_ref(0, slot_); }

 private:
  RefSlot* slot_;
};

// An "Assign" that checks it got the slot itself (ref-typed input 0, no value).
class TestAssign : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    RefSlot* ref = ctx->input_ref(0);
    OP_REQUIRES(ctx, ref != nullptr && !ctx->input(0).IsInitialized(),
                absl::InternalError("Assign did not get a bare ref input"));
    ref->Write(ctx->input(1));
    ctx->set_output_ref(0, ref);
  }
};

void RegisterTestKernels(KernelRegistry* r) {
  (void)r->Register<TestConst>(KernelDefBuilder("Const").Device("CPU"));
  (void)r->Register<TestAdd>(KernelDefBuilder("Add").Device("CPU"));
  (void)r->Register<TestAbort>(KernelDefBuilder("Abort").Device("CPU"));
  (void)r->Register<TestRecv>(KernelDefBuilder("_Recv").Device("CPU"));
  (void)r->Register<TestRetval>(KernelDefBuilder("_Retval").Device("CPU"));
  (void)r->Register<TestAssign>(KernelDefBuilder("Assign").Device("CPU"));
}

const KernelRegistry& TestKernels() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterTestKernels(r);
    return r;
  }();
  return *registry;
}

struct Fixture {
  CpuAllocator allocator;
  ThreadPool pool{2, "test"};
  CpuDevice device{0, &allocator, &pool};
};

std::string ConstNode(const std::string& name, float value) {
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }" +
         " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: " +
         std::to_string(value) + " } } } }\n";
}
std::string AddNode(const std::string& name, const std::string& a, const std::string& b) {
  return "node { name: '" + name + "' op: 'Add' input: '" + a + "' input: '" + b +
         "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
}
std::string RetvalNode(const std::string& input, int index) {
  return "node { name: 'ret" + std::to_string(index) + "' op: '_Retval' input: '" + input +
         "' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'index' value { i: " +
         std::to_string(index) + " } } }\n";
}

std::unique_ptr<Executor> Build(Fixture& f, const std::string& text,
                                const KernelRegistry& kernels = TestKernels()) {
  auto graph = ImportGraphDef(testing::GraphFromText(text));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  auto executor = Executor::Create(**graph, &f.device, kernels);
  INFO(executor.status().ToString());
  REQUIRE(executor.ok());
  return *std::move(executor);
}

TEST_CASE("A chain and a diamond compute their values", "[runtime][executor]") {
  Fixture f;
  std::string text = ConstNode("a", 1) + ConstNode("b", 2);
  std::string prev = "a";
  for (int i = 0; i < 100; ++i) {  // a + b + b + ... (chain of 100 Adds)
    text += AddNode("add" + std::to_string(i), prev, "b");
    prev = "add" + std::to_string(i);
  }
  text += AddNode("diamond", prev, prev) + RetvalNode("diamond", 0);
  std::unique_ptr<Executor> executor = Build(f, text);
  CallFrame frame(1);
  Executor::Args args;
  args.call_frame = &frame;
  args.runner = &f.pool;
  REQUIRE(executor->Run(args).ok());
  REQUIRE(frame.retval_set[0]);
  CHECK(frame.retvals[0].scalar<float>() == 2 * (1 + 2 * 100));
}

// A "Const" that reads `value` while constructed and, when run, reports what its kept
// def holds: value + 1000 if the def still has `value`, + 100 per input it lists.
class TestKeptDefProbe : public TestConst {
 public:
  using TestConst::TestConst;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    const NodeDef& kept = def();
    out->scalar<float>() = value() + (kept.attr().count("value") ? 1000.f : 0.f) +
                           100.f * static_cast<float>(kept.input_size()) +
                           (kept.attr().count("dtype") ? 0.f : 10000.f);
  }
};

TEST_CASE("A Const kernel keeps its def without the value it decoded, inputs included",
          "[runtime][executor]") {
  Fixture f;
  KernelRegistry kernels;
  REQUIRE(kernels.Register<TestKeptDefProbe>(KernelDefBuilder("Const").Device("CPU")).ok());
  REQUIRE(kernels.Register<TestRetval>(KernelDefBuilder("_Retval").Device("CPU")).ok());
  std::string a = ConstNode("a", 5);
  a.insert(a.find(" attr"), " input: '^b'");  // a control input, kept in the def
  std::unique_ptr<Executor> executor = Build(f, a + ConstNode("b", 1) + RetvalNode("a", 0), kernels);
  CallFrame frame(1);
  Executor::Args args;
  args.call_frame = &frame;
  args.runner = &f.pool;
  REQUIRE(executor->Run(args).ok());
  REQUIRE(frame.retval_set[0]);
  // 5 decoded at construction; no `value` kept; one input ("^b"); dtype kept.
  CHECK(frame.retvals[0].scalar<float>() == 105.f);
}

TEST_CASE("A kernel error comes back annotated with its node", "[runtime][executor]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, ConstNode("a", 1) + "node { name: 'boom' op: 'Abort' input: '^a' }\n");
  Executor::Args args;
  args.runner = &f.pool;
  absl::Status status = executor->Run(args);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message() == "deliberate failure [[{{node boom}}]]");
}

// Kernels that throw instead of setting a status, as a container does when an input asks
// for a huge size (std::bad_alloc, std::length_error) or a bug does.
class TestThrow : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {
    std::vector<float> huge;
    huge.resize(huge.max_size() + 1ull);  // throws std::length_error
  }
};

class TestThrowAsync : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext*, DoneCallback) override {
    throw std::runtime_error("not implemented");
  }
};

class TestDoneThenThrow : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext*, DoneCallback done) override {
    done();  // the executor may free the context here
    throw std::runtime_error("after done");
  }
};

TEST_CASE("An exception thrown inside a kernel is a status naming the node",
          "[runtime][executor]") {
  Fixture f;
  const std::string graph = ConstNode("a", 1) + "node { name: 'boom' op: 'Abort' input: '^a' }\n";
  SECTION("synchronous: a container's length_error is RESOURCE_EXHAUSTED") {
    KernelRegistry kernels;
    REQUIRE(kernels.Register<TestConst>(KernelDefBuilder("Const").Device("CPU")).ok());
    REQUIRE(kernels.Register<TestThrow>(KernelDefBuilder("Abort").Device("CPU")).ok());
    std::unique_ptr<Executor> executor = Build(f, graph, kernels);
    for (int run = 0; run < 3; ++run) {  // the executor stays usable
      Executor::Args args;
      args.runner = &f.pool;
      absl::Status status = executor->Run(args);
      CHECK(status.code() == absl::StatusCode::kResourceExhausted);
      CHECK(absl::StrContains(status.message(), "OOM inside the kernel"));
      CHECK(absl::StrContains(status.message(), "[[{{node boom}}]]"));
    }
  }
  SECTION("asynchronous: anything else is INTERNAL, and done is called once") {
    KernelRegistry kernels;
    REQUIRE(kernels.Register<TestConst>(KernelDefBuilder("Const").Device("CPU")).ok());
    REQUIRE(kernels.Register<TestThrowAsync>(KernelDefBuilder("Abort").Device("CPU")).ok());
    std::unique_ptr<Executor> executor = Build(f, graph, kernels);
    Executor::Args args;
    args.runner = &f.pool;
    absl::Status status = executor->Run(args);
    CHECK(status.code() == absl::StatusCode::kInternal);
    CHECK(status.message() ==
          "The kernel threw an exception: not implemented [[{{node boom}}]]");
  }
  SECTION("asynchronous, after calling done: the step already moved on; nothing is touched") {
    KernelRegistry kernels;
    REQUIRE(kernels.Register<TestConst>(KernelDefBuilder("Const").Device("CPU")).ok());
    REQUIRE(kernels.Register<TestDoneThenThrow>(KernelDefBuilder("Abort").Device("CPU")).ok());
    std::unique_ptr<Executor> executor = Build(f, graph, kernels);
    Executor::Args args;
    args.runner = &f.pool;
    CHECK(executor->Run(args).ok());
  }
}

TEST_CASE("The first error aborts the rendezvous so a blocked receive wakes",
          "[runtime][executor]") {
  Fixture f;
  // Partition A waits for a tensor that never comes; partition B fails.
  std::unique_ptr<Executor> waiting = Build(f, R"(
    node { name: 'r' op: '_Recv' attr { key: 'tensor_type' value { type: DT_FLOAT } }
      attr { key: 'tensor_name' value { s: 'x' } } attr { key: 'send_device' value { s: 'a' } }
      attr { key: 'send_device_incarnation' value { i: 1 } } attr { key: 'recv_device' value { s: 'b' } } }
  )" + RetvalNode("r", 0));
  std::unique_ptr<Executor> failing = Build(f, "node { name: 'boom' op: 'Abort' }\n");
  Rendezvous rendezvous;
  CallFrame frame(1);
  Executor::Args args;
  args.rendezvous = &rendezvous;
  args.call_frame = &frame;
  args.runner = &f.pool;
  std::atomic<int> done{0};
  absl::Status waiting_status;
  waiting->RunAsync(args, [&](const absl::Status& s) { waiting_status = s; ++done; });
  CHECK(done.load() == 0);  // blocked in _Recv
  absl::Status failing_status = failing->Run(args);
  CHECK(failing_status.message() == "deliberate failure [[{{node boom}}]]");
  for (int i = 0; i < 1000 && done.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(done.load() == 1);
  CHECK(waiting_status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(waiting_status.message(), "deliberate failure"));
  CHECK_FALSE(frame.retval_set[0]);
}

TEST_CASE("A dead input makes its consumers dead; nothing is fetched", "[runtime][executor]") {
  Fixture f;
  std::unique_ptr<Executor> executor = Build(f, R"(
    node { name: 'r' op: '_Recv' attr { key: 'tensor_type' value { type: DT_FLOAT } }
      attr { key: 'tensor_name' value { s: 'x' } } attr { key: 'send_device' value { s: 'a' } }
      attr { key: 'send_device_incarnation' value { i: 1 } } attr { key: 'recv_device' value { s: 'b' } } }
  )" + AddNode("sum", "r", "r") + RetvalNode("sum", 0));
  Rendezvous rendezvous;
  REQUIRE(rendezvous.Send("key", Tensor(), /*is_dead=*/true).ok());
  CallFrame frame(1);
  Executor::Args args;
  args.rendezvous = &rendezvous;
  args.call_frame = &frame;
  REQUIRE(executor->Run(args).ok());
  CHECK_FALSE(frame.retval_set[0]);
}

TEST_CASE("Concurrent steps on one executor keep their own state", "[runtime][executor]") {
  Fixture f;
  std::unique_ptr<Executor> executor = Build(
      f, ConstNode("a", 3) + ConstNode("b", 4) + AddNode("s", "a", "b") + RetvalNode("s", 0));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        CallFrame frame(1);
        Executor::Args args;
        args.call_frame = &frame;
        args.runner = &f.pool;
        if (!executor->Run(args).ok() || frame.retvals[0].scalar<float>() != 7) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("A cancelled step stops with the cancellation reason", "[runtime][executor]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, ConstNode("a", 1) + AddNode("s", "a", "a") + RetvalNode("s", 0));
  CancellationToken token;
  token.Cancel(absl::DeadlineExceededError("too slow"));
  CallFrame frame(1);
  Executor::Args args;
  args.call_frame = &frame;
  args.cancellation = &token;
  absl::Status status = executor->Run(args);
  CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK_FALSE(frame.retval_set[0]);
}

TEST_CASE("A node with no kernel fails at Create naming the node", "[runtime][executor]") {
  Fixture f;
  auto graph = ImportGraphDef(testing::GraphFromText("node { name: 'n' op: 'NoOp' }"));
  REQUIRE(graph.ok());
  auto executor = Executor::Create(**graph, &f.device, TestKernels());
  CHECK(executor.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(executor.status().message(), "{{node n}}"));
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

// Kernels of TestKernels() plus a VariableV2 whose value is `slot`.
struct RefKernels {
  explicit RefKernels(RefSlot* slot) {
    RegisterTestKernels(&registry);
    (void)registry.Register(KernelDefBuilder("VariableV2").Device("CPU"),
                            [slot](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                              return std::make_unique<TestVariable>(c, slot);
                            });
  }
  KernelRegistry registry;
};

const char kVariable[] =
    "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } }"
    " attr { key: 'shape' value { shape {} } } }\n";

Tensor Scalar(Fixture& f, float value) {
  Tensor t = *Tensor::Allocate(&f.allocator, DT_FLOAT, TensorShape());
  t.scalar<float>() = value;
  return t;
}

TEST_CASE("A ref output is read into ordinary inputs when the consumer runs",
          "[runtime][executor][ref]") {
  Fixture f;
  RefSlot slot("v");
  slot.Write(Scalar(f, 3));
  RefKernels kernels(&slot);
  std::unique_ptr<Executor> executor = Build(
      f, kVariable + ConstNode("c", 2) + AddNode("sum", "v", "c") + RetvalNode("sum", 0) +
             RetvalNode("v", 1),
      kernels.registry);
  CallFrame frame(2);
  Executor::Args args;
  args.call_frame = &frame;
  args.runner = &f.pool;
  REQUIRE(executor->Run(args).ok());
  CHECK(frame.retvals[0].scalar<float>() == 5);
  // Fetching the variable itself gives its value, sharing the buffer (no copy).
  absl::StatusOr<Tensor> held = slot.Read();
  REQUIRE(held.ok());
  CHECK(frame.retvals[1].SharesBufferWith(*held));
}

TEST_CASE("A read ordered after an Assign sees the assigned value",
          "[runtime][executor][ref]") {
  Fixture f;
  RefSlot slot("v");  // uninitialized: reading at delivery time would fail
  RefKernels kernels(&slot);
  std::unique_ptr<Executor> executor = Build(
      f, kVariable + ConstNode("c", 4) +
             "node { name: 'assign' op: 'Assign' input: 'v' input: 'c'"
             " attr { key: 'T' value { type: DT_FLOAT } } }\n"
             "node { name: 'twice' op: 'Add' input: 'v' input: 'v' input: '^assign'"
             " attr { key: 'T' value { type: DT_FLOAT } } }\n" +
             RetvalNode("twice", 0) + RetvalNode("assign", 1),
      kernels.registry);
  CallFrame frame(2);
  Executor::Args args;
  args.call_frame = &frame;
  args.runner = &f.pool;
  absl::Status status = executor->Run(args);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(frame.retvals[0].scalar<float>() == 8);
  CHECK(frame.retvals[1].scalar<float>() == 4);  // Assign's output_ref, read by _Retval
  REQUIRE(slot.initialized());
  CHECK(slot.Read()->scalar<float>() == 4);
}

TEST_CASE("Reading an uninitialized ref fails the step naming value and consumer",
          "[runtime][executor][ref]") {
  Fixture f;
  RefSlot slot("v");
  RefKernels kernels(&slot);
  std::unique_ptr<Executor> executor =
      Build(f, kVariable + ConstNode("c", 2) + AddNode("sum", "v", "c") + RetvalNode("sum", 0),
            kernels.registry);
  CallFrame frame(1);
  Executor::Args args;
  args.call_frame = &frame;
  absl::Status status = executor->Run(args);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(status.message() == "Attempting to use uninitialized value v [[{{node sum}}]]");
  CHECK_FALSE(frame.retval_set[0]);
}

}  // namespace
}  // namespace dflow
