// TF v1 control flow in the executor: cond (Switch/Merge), while loops (frames and
// iterations, loop invariants, parallel_iterations), nesting, deadness, errors and
// cancellation inside loops — with the real CPU kernels — and a TensorFlow-built while
// loop run through a Session.
#include <atomic>
#include <functional>
#include <thread>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_def_import.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/call_frame.h"
#include "runtime/executor.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

// "Assert": fails when its condition is false (the real op's contract, test kernel).
class TestAssert : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->input(0).scalar<bool>(),
                absl::InvalidArgumentError("assertion failed"));
  }
};

const KernelRegistry& Kernels() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    (void)RegisterArrayKernels(r);
    (void)RegisterCwiseKernels(r);
    (void)RegisterSendRecvKernels(r);
    (void)RegisterControlFlowKernels(r);
    (void)r->Register<TestAssert>(KernelDefBuilder("Assert").Device("CPU"));
    return r;
  }();
  return *registry;
}

struct Fixture {
  CpuAllocator allocator;
  ThreadPool pool{2, "test"};
  CpuDevice device{0, &allocator, &pool};
};

// ---- GraphDef text builders (int32 unless said otherwise) ----

std::string TypeAttr(const char* key, const char* type = "DT_INT32") {
  return absl::StrCat(" attr { key: '", key, "' value { type: ", type, " } }");
}

std::string NodeText(const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs, const std::string& attrs = "") {
  std::string text = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const std::string& input : inputs) absl::StrAppend(&text, " input: '", input, "'");
  return absl::StrCat(text, attrs, " }\n");
}

std::string Const(const std::string& name, int value, const std::string& control = "") {
  return NodeText(name, "Const", control.empty() ? std::vector<std::string>{} : std::vector<std::string>{"^" + control},
                  TypeAttr("dtype") +
                      absl::StrCat(" attr { key: 'value' value { tensor { dtype: DT_INT32 "
                                   "tensor_shape {} int_val: ",
                                   value, " } } }"));
}

std::string BoolConst(const std::string& name, bool value) {
  return NodeText(name, "Const", {},
                  TypeAttr("dtype", "DT_BOOL") +
                      absl::StrCat(" attr { key: 'value' value { tensor { dtype: DT_BOOL "
                                   "tensor_shape {} bool_val: ",
                                   value ? "true" : "false", " } } }"));
}

std::string Binary(const std::string& name, const std::string& op, const std::string& a,
                   const std::string& b) {
  return NodeText(name, op, {a, b}, TypeAttr("T"));
}

std::string Unary(const std::string& name, const std::string& op, const std::string& input) {
  return NodeText(name, op, {input}, TypeAttr("T"));
}

std::string Enter(const std::string& name, const std::string& input, const std::string& frame,
                  bool constant, int parallel) {
  return NodeText(name, "Enter", {input},
                  TypeAttr("T") + absl::StrCat(" attr { key: 'frame_name' value { s: '", frame,
                                               "' } } attr { key: 'is_constant' value { b: ",
                                               constant ? "true" : "false",
                                               " } } attr { key: 'parallel_iterations' value "
                                               "{ i: ",
                                               parallel, " } }"));
}

std::string Merge(const std::string& name, const std::string& a, const std::string& b) {
  return NodeText(name, "Merge", {a, b}, TypeAttr("T") + " attr { key: 'N' value { i: 2 } }");
}

std::string Retval(const std::string& input, int index, const char* type = "DT_INT32") {
  return NodeText(absl::StrCat("ret", index), "_Retval", {input},
                  TypeAttr("T", type) + absl::StrCat(" attr { key: 'index' value { i: ", index,
                                                     " } }"));
}

// The body of a loop: given the names of i and acc inside it, appends its nodes and
// returns the name of the next acc.
using Body = std::function<std::string(const std::string& prefix, const std::string& i,
                                       const std::string& acc, std::string* text)>;

// while (i < limit) { acc = body(i, acc); i += 1 } as tf.while_loop builds it, in frame
// "<prefix>/". `limit` is entered as a loop invariant. Outputs: <prefix>/Exit_i and
// <prefix>/Exit_acc.
std::string WhileLoop(const std::string& p, const std::string& i_init,
                      const std::string& acc_init, const std::string& limit, int parallel,
                      const Body& body) {
  const std::string frame = p + "/";
  std::string text = Enter(p + "/Enter_i", i_init, frame, false, parallel) +
                     Enter(p + "/Enter_acc", acc_init, frame, false, parallel) +
                     Enter(p + "/Enter_n", limit, frame, true, parallel) +
                     Merge(p + "/Merge_i", p + "/Enter_i", p + "/Next_i") +
                     Merge(p + "/Merge_acc", p + "/Enter_acc", p + "/Next_acc") +
                     Binary(p + "/Less", "Less", p + "/Merge_i", p + "/Enter_n") +
                     NodeText(p + "/Cond", "LoopCond", {p + "/Less"}) +
                     Binary(p + "/Switch_i", "Switch", p + "/Merge_i", p + "/Cond") +
                     Binary(p + "/Switch_acc", "Switch", p + "/Merge_acc", p + "/Cond") +
                     Unary(p + "/i", "Identity", p + "/Switch_i:1") +
                     Unary(p + "/acc", "Identity", p + "/Switch_acc:1") +
                     Const(p + "/one", 1, p + "/i") +
                     Binary(p + "/i_next", "Add", p + "/i", p + "/one");
  const std::string next_acc = body(p, p + "/i", p + "/acc", &text);
  return text + Unary(p + "/Next_i", "NextIteration", p + "/i_next") +
         Unary(p + "/Next_acc", "NextIteration", next_acc) +
         Unary(p + "/Exit_i", "Exit", p + "/Switch_i") +
         Unary(p + "/Exit_acc", "Exit", p + "/Switch_acc");
}

// acc += i
std::string SumBody(const std::string& p, const std::string& i, const std::string& acc,
                    std::string* text) {
  *text += Binary(p + "/sum", "Add", acc, i);
  return p + "/sum";
}

std::unique_ptr<Executor> Build(Fixture& f, const std::string& text) {
  auto graph = ImportGraphDef(testing::GraphFromText(text));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  auto executor = Executor::Create(**graph, &f.device, Kernels());
  INFO(executor.status().ToString());
  REQUIRE(executor.ok());
  return *std::move(executor);
}

absl::Status RunSteps(Fixture& f, const Executor& executor, CallFrame* frame,
                      ExecutorObserver* observer = nullptr, CancellationToken* token = nullptr) {
  Executor::Args args;
  args.call_frame = frame;
  args.runner = &f.pool;
  args.observer = observer;
  args.cancellation = token;
  return executor.Run(args);
}

int Int(const CallFrame& frame, int index) { return frame.retvals[index].scalar<int32_t>(); }

// ---- cond ----

std::string CondGraph(bool pred) {
  // pred ? x + 10 : x * 2, with x = 7; value_index says which branch.
  return Const("x", 7) + BoolConst("pred", pred) + Binary("s", "Switch", "x", "pred") +
         Const("ten", 10) + Const("two", 2) + Binary("then", "Add", "s:1", "ten") +
         Binary("else", "Mul", "s:0", "two") + Merge("m", "else", "then") + Retval("m", 0) +
         Retval("m:1", 1) + Retval("then", 2) + Retval("else", 3);
}

TEST_CASE("A cond takes the branch its predicate selects; the other is dead",
          "[runtime][control_flow]") {
  Fixture f;
  for (bool pred : {true, false}) {
    std::unique_ptr<Executor> executor = Build(f, CondGraph(pred));
    CallFrame frame(4);
    REQUIRE(RunSteps(f, *executor, &frame).ok());
    REQUIRE(frame.retval_set[0]);
    CHECK(Int(frame, 0) == (pred ? 17 : 14));
    CHECK(Int(frame, 1) == (pred ? 1 : 0));
    CHECK(static_cast<bool>(frame.retval_set[2]) == pred);  // the dead branch fetches nothing
    CHECK(static_cast<bool>(frame.retval_set[3]) == !pred);
  }
}

// ---- while loops ----

TEST_CASE("A while loop runs 1000 iterations with a loop invariant", "[runtime][control_flow]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 0) + Const("acc0", 0) + Const("n", 1000) +
                   WhileLoop("w", "i0", "acc0", "n", 10, SumBody) + Retval("w/Exit_i", 0) +
                   Retval("w/Exit_acc", 1));
  CallFrame frame(2);
  REQUIRE(RunSteps(f, *executor, &frame).ok());
  CHECK(Int(frame, 0) == 1000);
  CHECK(Int(frame, 1) == 499500);  // 0 + 1 + ... + 999
}

TEST_CASE("parallel_iterations 1 defers each iteration until the previous one ends",
          "[runtime][control_flow]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 0) + Const("acc0", 5) + Const("n", 100) +
                   WhileLoop("w", "i0", "acc0", "n", 1, SumBody) + Retval("w/Exit_i", 0) +
                   Retval("w/Exit_acc", 1));
  CallFrame frame(2);
  REQUIRE(RunSteps(f, *executor, &frame).ok());
  CHECK(Int(frame, 0) == 100);
  CHECK(Int(frame, 1) == 5 + 4950);
}

TEST_CASE("A loop that never runs its body passes the initial values out",
          "[runtime][control_flow]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 3) + Const("acc0", 42) + Const("n", 0) +
                   WhileLoop("w", "i0", "acc0", "n", 10, SumBody) + Retval("w/Exit_i", 0) +
                   Retval("w/Exit_acc", 1));
  CallFrame frame(2);
  REQUIRE(RunSteps(f, *executor, &frame).ok());
  CHECK(Int(frame, 0) == 3);
  CHECK(Int(frame, 1) == 42);
}

TEST_CASE("Nested while loops see the outer iteration's values", "[runtime][control_flow]") {
  Fixture f;
  // for i in 0..n: for j in 0..n: acc += i + j   (n = 4: 4*4*3 = 48)
  Body outer = [](const std::string& p, const std::string& i, const std::string& acc,
                  std::string* text) {
    *text += Const(p + "/j0", 0, i);
    *text += WhileLoop(
        p + "/inner", p + "/j0", acc, p + "/Enter_n", 10,
        [&](const std::string& q, const std::string& j, const std::string& inner_acc,
            std::string* inner_text) {
          *inner_text += Enter(q + "/Enter_outer_i", i, q + "/", true, 10);
          *inner_text += Binary(q + "/i_plus_j", "Add", j, q + "/Enter_outer_i");
          *inner_text += Binary(q + "/sum", "Add", inner_acc, q + "/i_plus_j");
          return q + "/sum";
        });
    return p + "/inner/Exit_acc";
  };
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 0) + Const("acc0", 0) + Const("n", 4) +
                   WhileLoop("outer", "i0", "acc0", "n", 10, outer) + Retval("outer/Exit_i", 0) +
                   Retval("outer/Exit_acc", 1));
  for (int step = 0; step < 20; ++step) {  // each step must rebuild its frames
    CallFrame fresh(2);
    REQUIRE(RunSteps(f, *executor, &fresh).ok());
    CHECK(Int(fresh, 0) == 4);
    CHECK(Int(fresh, 1) == 48);
  }
}

TEST_CASE("Concurrent steps run their loops independently", "[runtime][control_flow]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 0) + Const("acc0", 0) + Const("n", 200) +
                   WhileLoop("w", "i0", "acc0", "n", 4, SumBody) + Retval("w/Exit_acc", 0));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        CallFrame frame(1);
        if (!RunSteps(f, *executor, &frame).ok() || Int(frame, 0) != 19900) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong.load() == 0);
}

// ---- deadness ----

TEST_CASE("A while loop on an untaken cond branch is dead and its Exits say so",
          "[runtime][control_flow]") {
  Fixture f;
  for (bool pred : {true, false}) {
    // pred ? loop(sum of 0..4 added to x) : x * 2, with x = 7.
    std::unique_ptr<Executor> executor = Build(
        f, Const("x", 7) + BoolConst("pred", pred) + Binary("s", "Switch", "x", "pred") +
               Const("two", 2) + Const("n", 5) + Binary("else", "Mul", "s:0", "two") +
               Unary("then_i0", "Identity", "s:1") + Const("zero", 0, "then_i0") +
               WhileLoop("w", "zero", "then_i0", "n", 10, SumBody) +
               Merge("m", "else", "w/Exit_acc") + Retval("m", 0) + Retval("m:1", 1) +
               Retval("w/Exit_acc", 2));
    CallFrame frame(3);
    REQUIRE(RunSteps(f, *executor, &frame).ok());
    REQUIRE(frame.retval_set[0]);
    CHECK(Int(frame, 0) == (pred ? 7 + 10 : 14));
    CHECK(Int(frame, 1) == (pred ? 1 : 0));
    CHECK(static_cast<bool>(frame.retval_set[2]) == pred);
  }
}

// ---- errors and cancellation ----

TEST_CASE("An error inside a loop body ends the step naming the node",
          "[runtime][control_flow]") {
  Fixture f;
  Body checked = [](const std::string& p, const std::string& i, const std::string& acc,
                    std::string* text) {
    *text += Const(p + "/five", 5, i) + NodeText(p + "/small", "Less", {i, p + "/five"}, TypeAttr("T"));
    *text += NodeText(p + "/assert", "Assert", {p + "/small", i},
                      " attr { key: 'T' value { list { type: DT_INT32 } } }");
    *text += NodeText(p + "/sum", "Add", {acc, i, "^" + p + "/assert"}, TypeAttr("T"));
    return p + "/sum";
  };
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 0) + Const("acc0", 0) + Const("n", 1000) +
                   WhileLoop("w", "i0", "acc0", "n", 10, checked) + Retval("w/Exit_acc", 0));
  CallFrame frame(1);
  absl::Status status = RunSteps(f, *executor, &frame);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(status.message() == "assertion failed [[{{node w/assert}}]]");
  CHECK_FALSE(frame.retval_set[0]);
}

// Cancels the step once node `name` has run `count` times.
class CancelAfter : public ExecutorObserver {
 public:
  CancelAfter(std::string name, int count, CancellationToken* token)
      : name_(std::move(name)), count_(count), token_(token) {}
  void NodeDone(const OpKernel& kernel, const OpKernelContext&, int64_t, int64_t,
                int64_t) override {
    if (kernel.name() == name_ && ++seen_ == count_) {
      token_->Cancel(absl::DeadlineExceededError("Timed out waiting for notification"));
    }
  }
  int seen() const { return seen_.load(); }

 private:
  std::string name_;
  int count_;
  CancellationToken* token_;
  std::atomic<int> seen_{0};
};

TEST_CASE("Cancelling a step stops an endless loop", "[runtime][control_flow]") {
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, Const("i0", 0) + Const("acc0", 0) + Const("n", 2147483647) +
                   WhileLoop("w", "i0", "acc0", "n", 10, SumBody) + Retval("w/Exit_acc", 0));
  CancellationToken token;
  CancelAfter observer("w/i_next", 50, &token);
  CallFrame frame(1);
  absl::Status status = RunSteps(f, *executor, &frame, &observer, &token);
  CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(status.message() == "Timed out waiting for notification");
  CHECK_FALSE(frame.retval_set[0]);
  CHECK(observer.seen() < 50 + 20);  // stopped within the iterations already running
}

TEST_CASE("Malformed control flow fails at Create", "[runtime][control_flow]") {
  Fixture f;
  auto graph = ImportGraphDef(testing::GraphFromText(Const("x", 1) + Unary("e", "Exit", "x")));
  REQUIRE(graph.ok());
  auto executor = Executor::Create(**graph, &f.device, Kernels());
  CHECK(executor.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(executor.status().message(), "Exit node 'e' is not inside"));
}

// ---- a loop TensorFlow built, through a Session ----

// `depth` one-trip while loops nested in each other, the innermost adding 1 to the value
// carried in (bench/nested_loops/gen.py's graph, int32). With `constant_limits`, each
// loop's limit is a constant Enter of the enclosing loop's (as TF writes a limit read
// from outside), instead of a Const inside the loop.
std::string NestedOneTripLoops(int depth, bool constant_limits = false) {
  std::string text = Const("x0", 0) + Const("lim_outside", 1);
  std::string value = "x0", ctl;
  for (int k = 0; k < depth; ++k) {
    const std::string p = absl::StrCat("L", k);
    text += Const(p + "/zero", 0, ctl) + Const(p + "/one", 1, p + "/ii");
    text += constant_limits
                ? Enter(p + "/lim", k == 0 ? "lim_outside" : absl::StrCat("L", k - 1, "/lim"),
                        p, true, 10)
                : Const(p + "/lim", 1, p + "/mi");
    text += Enter(p + "/ei", p + "/zero", p, false, 10) + Enter(p + "/ex", value, p, false, 10);
    text += Merge(p + "/mi", p + "/ei", p + "/ni") + Merge(p + "/mx", p + "/ex", p + "/nx");
    text += Binary(p + "/less", "Less", p + "/mi", p + "/lim");
    text += NodeText(p + "/cond", "LoopCond", {p + "/less"});
    text += Binary(p + "/si", "Switch", p + "/mi", p + "/cond");
    text += Binary(p + "/sx", "Switch", p + "/mx", p + "/cond");
    text += Unary(p + "/ii", "Identity", p + "/si:1") + Unary(p + "/ix", "Identity", p + "/sx:1");
    text += Binary(p + "/add", "Add", p + "/ii", p + "/one");
    text += Unary(p + "/ni", "NextIteration", p + "/add") + Unary(p + "/exit", "Exit", p + "/sx");
    text += Unary(p + "/nx", "NextIteration",
                  k + 1 < depth ? absl::StrCat("L", k + 1, "/exit") : "inner/add");
    value = p + "/ix";
    ctl = p + "/ii";
  }
  return text + Const("inner/one", 1, ctl) + Binary("inner/add", "Add", value, "inner/one");
}

TEST_CASE("2,000 nested loops run: dead inner frames are never built",
          "[runtime][control_flow]") {
  // The dead last iteration of loop k feeds only dead Enters to loop k+1; building that
  // frame would run a dead chain of all the loops inside it (2 million frames in all,
  // issue 15). Such frames are skipped and their Exits delivered dead.
  Fixture f;
  std::unique_ptr<Executor> executor = Build(f, NestedOneTripLoops(2000) + Retval("L0/exit", 0));
  for (int step = 0; step < 2; ++step) {
    CallFrame frame(1);
    REQUIRE(RunSteps(f, *executor, &frame).ok());
    CHECK(Int(frame, 0) == 1);
  }
}

TEST_CASE("2,000 nested loops with constant-Enter limits run: inert frames are skipped",
          "[runtime][control_flow]") {
  // Each dead inner loop still gets its live limit (a loop invariant) through a constant
  // Enter, so "every Enter dead" never held and each level built its dead chain: 4,000
  // such loops built 8 million frames and aborted at 6.8 GB (issue 15's held-out graphs).
  // These frames are inert (graph/inert_frames.h): skipped once their loop variables are
  // dead, whatever their invariants.
  Fixture f;
  std::unique_ptr<Executor> executor =
      Build(f, NestedOneTripLoops(2000, /*constant_limits=*/true) + Retval("L0/exit", 0));
  for (int step = 0; step < 2; ++step) {
    CallFrame frame(1);
    REQUIRE(RunSteps(f, *executor, &frame).ok());
    CHECK(Int(frame, 0) == 1);
  }
}

TEST_CASE("TensorFlow's while_loop graph runs through a Session", "[runtime][control_flow]") {
  absl::StatusOr<GraphDef> graph_def =
      ReadGraphDef(testing::CorpusPath("pbtxt/tf_grappler_while_loop_const.pbtxt"));
  REQUIRE(graph_def.ok());
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  REQUIRE(session.ok());
  absl::Status created = (*session)->Create(*graph_def);
  INFO(created.ToString());
  REQUIRE(created.ok());
  std::vector<Tensor> outputs;
  absl::Status status =
      (*session)->Run({}, {"while/Exit:0", "while/Exit_1:0"}, {}, &outputs);
  INFO(status.ToString());
  REQUIRE(status.ok());
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[0].scalar<int32_t>() == 10);
  REQUIRE(outputs[1].shape() == TensorShape({2048, 2}));
  int ones = 0;
  for (float v : outputs[1].flat<float>()) ones += v == 1.0f ? 1 : 0;
  CHECK(ones == 4096);
}

}  // namespace
}  // namespace dflow
