// Functional control flow (graph/functional_control_flow.h) run through a Session: If with
// a bool and a non-bool cond, Case with an index out of range, While with zero trips and
// with a control input, lowering errors naming the node, and a branch's constant on a
// simulated GPU that must die with its branch (a dead control input across devices).
// TensorFlow-written graphs of the same ops (tf.cond, tf.switch_case, tf.while_loop,
// nested) are zoo goldens: tests/data/zoo/goldens/cf_*.json.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

std::string IntConst(const std::string& name, int value, const std::string& extra = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ", extra,
                      " attr { key: 'dtype' value { type: DT_INT32 } }"
                      " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} "
                      "int_val: ",
                      value, " } } } }\n");
}

std::string Placeholder(const std::string& name, const char* type = "DT_INT32") {
  return absl::StrCat("node { name: '", name, "' op: 'Placeholder' attr { key: 'dtype' value { type: ",
                      type, " } } }\n");
}

// f(x) = x <op> k, as a FunctionDef (a Const inside: it must live in the caller's frame).
std::string BinaryFunction(const std::string& name, const char* op, int k) {
  return absl::StrCat(
      "function { signature { name: '", name,
      "' input_arg { name: 'x' type: DT_INT32 } output_arg { name: 'y' type: DT_INT32 } }"
      " node_def { name: 'k' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
      "   attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: ",
      k, " } } } }"
      " node_def { name: 'r' op: '", op,
      "' input: 'x' input: 'k:output:0' attr { key: 'T' value { type: DT_INT32 } } }"
      " ret { key: 'y' value: 'r:z:0' } }\n");
}

// cond(x) = x < k
std::string LessFunction(const std::string& name, int k) {
  return absl::StrCat(
      "function { signature { name: '", name,
      "' input_arg { name: 'x' type: DT_INT32 } output_arg { name: 'y' type: DT_BOOL } }"
      " node_def { name: 'k' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
      "   attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: ",
      k, " } } } }"
      " node_def { name: 'r' op: 'Less' input: 'x' input: 'k:output:0'"
      "   attr { key: 'T' value { type: DT_INT32 } } }"
      " ret { key: 'y' value: 'r:z:0' } }\n");
}

std::string Library() {
  return absl::StrCat("library {\n", BinaryFunction("add10", "AddV2", 10),
                      BinaryFunction("times2", "Mul", 2), BinaryFunction("minus1", "Sub", 1),
                      LessFunction("below100", 100), "}\n");
}

constexpr char kIntList[] = "list { type: DT_INT32 }";

std::string If(const std::string& name, const std::string& cond, const char* tcond,
               const std::string& x) {
  return absl::StrCat("node { name: '", name, "' op: 'If' input: '", cond, "' input: '", x,
                      "' attr { key: 'Tcond' value { type: ", tcond, " } }",
                      " attr { key: 'Tin' value { ", kIntList, " } }",
                      " attr { key: 'Tout' value { ", kIntList, " } }",
                      " attr { key: 'then_branch' value { func { name: 'add10' } } }",
                      " attr { key: 'else_branch' value { func { name: 'times2' } } } }\n");
}

std::string While(const std::string& name, const std::string& x, const std::string& extra = "",
                  const std::string& body = "times2") {
  return absl::StrCat("node { name: '", name, "' op: 'While' input: '", x, "' ", extra,
                      " attr { key: 'T' value { ", kIntList, " } }",
                      " attr { key: 'cond' value { func { name: 'below100' } } }",
                      " attr { key: 'body' value { func { name: '", body, "' } } } }\n");
}

std::unique_ptr<Session> Open(const std::string& text, const ConfigProto& config = {}) {
  auto session = NewSession(config);
  REQUIRE(session.ok());
  absl::Status status = (*session)->Create(testing::GraphFromText(text));
  INFO(status.ToString());
  REQUIRE(status.ok());
  return *std::move(session);
}

Tensor Int(int v) {
  Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), DT_INT32, TensorShape());
  t.scalar<int32_t>() = v;
  return t;
}

int RunInt(Session& session, const std::vector<std::pair<std::string, Tensor>>& feeds,
           const std::string& fetch) {
  std::vector<Tensor> out;
  absl::Status status = session.Run(feeds, {fetch}, {}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return out[0].scalar<int32_t>();
}

TEST_CASE("If runs the branch its cond selects; a non-bool cond converts as ToBool",
          "[session][control_flow]") {
  const std::string text = Placeholder("p", "DT_BOOL") + Placeholder("n") + Placeholder("x") +
                           If("if_bool", "p", "DT_BOOL", "x") + If("if_int", "n", "DT_INT32", "x") +
                           Library();
  std::unique_ptr<Session> session = Open(text);
  Tensor yes = *Tensor::Allocate(ProcessCpuAllocator(), DT_BOOL, TensorShape());
  Tensor no = yes;
  yes.scalar<bool>() = true;
  no = *Tensor::Allocate(ProcessCpuAllocator(), DT_BOOL, TensorShape());
  no.scalar<bool>() = false;
  CHECK(RunInt(*session, {{"p", yes}, {"x", Int(5)}}, "if_bool") == 15);
  CHECK(RunInt(*session, {{"p", no}, {"x", Int(5)}}, "if_bool") == 10);
  // Non-zero int32 is true, zero false (TF's If on a non-bool scalar).
  CHECK(RunInt(*session, {{"n", Int(-3)}, {"x", Int(5)}}, "if_int") == 15);
  CHECK(RunInt(*session, {{"n", Int(0)}, {"x", Int(5)}}, "if_int") == 10);
}

TEST_CASE("Case runs branch_index's branch, and the last branch when it is out of range",
          "[session][control_flow]") {
  const std::string text =
      Placeholder("i") + Placeholder("x") + Library() +
      absl::StrCat("node { name: 'case' op: 'Case' input: 'i' input: 'x'",
                   " attr { key: 'Tin' value { ", kIntList, " } }",
                   " attr { key: 'Tout' value { ", kIntList, " } }",
                   " attr { key: 'branches' value { list { func { name: 'add10' }",
                   " func { name: 'times2' } func { name: 'minus1' } } } } }\n");
  std::unique_ptr<Session> session = Open(text);
  CHECK(RunInt(*session, {{"i", Int(0)}, {"x", Int(7)}}, "case") == 17);
  CHECK(RunInt(*session, {{"i", Int(1)}, {"x", Int(7)}}, "case") == 14);
  CHECK(RunInt(*session, {{"i", Int(2)}, {"x", Int(7)}}, "case") == 6);
  CHECK(RunInt(*session, {{"i", Int(9)}, {"x", Int(7)}}, "case") == 6);
  CHECK(RunInt(*session, {{"i", Int(-1)}, {"x", Int(7)}}, "case") == 6);
}

TEST_CASE("While doubles until the cond fails, runs zero times, and waits for its control inputs",
          "[session][control_flow]") {
  // The control input's Assign-like effect is modelled by a node that must run first: the
  // loop's Enter waits for `gate`, an Identity of x, so fetching the loop runs it.
  const std::string text = Placeholder("x") + Library() +
                           "node { name: 'gate' op: 'Identity' input: 'x' attr { key: 'T' value "
                           "{ type: DT_INT32 } } }\n" +
                           While("loop", "x", "input: '^gate'");
  std::unique_ptr<Session> session = Open(text);
  CHECK(RunInt(*session, {{"x", Int(3)}}, "loop") == 192);  // 3, 6, ..., 96 -> 192
  CHECK(RunInt(*session, {{"x", Int(500)}}, "loop") == 500);   // zero trips
  CHECK(RunInt(*session, {{"x", Int(99)}}, "loop") == 198);
}

TEST_CASE("Functional control flow that cannot be lowered is refused naming the node",
          "[session][control_flow]") {
  auto create = [](const std::string& text) {
    auto session = NewSession();
    REQUIRE(session.ok());
    return (*session)->Create(testing::GraphFromText(text));
  };
  // A body the library lacks.
  absl::Status status = create(Placeholder("x") + Library() + While("loop", "x", "", "nowhere"));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(status.message(), "loop"));
  CHECK(absl::StrContains(status.message(), "nowhere"));
  // Inputs that disagree with T.
  status = create(Placeholder("x") + Library() +
                  "node { name: 'bad' op: 'While' input: 'x' input: 'x'"
                  " attr { key: 'T' value { list { type: DT_INT32 } } }"
                  " attr { key: 'cond' value { func { name: 'below100' } } }"
                  " attr { key: 'body' value { func { name: 'times2' } } } }\n");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(status.message(), "Cannot lower 'bad' (While)"));
}

TEST_CASE("A branch constant on a simulated GPU dies with its branch (dead control input)",
          "[session][control_flow][sim_gpu]") {
  testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:1024");
  // pred false: the then-side pivot is dead; `c` on the GPU hangs off it by a control edge
  // only, so it must be dead as well, and fetching it must fail instead of returning 42.
  const std::string text =
      "node { name: 'pred' op: 'Placeholder' device: '/cpu:0' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
      "node { name: 's' op: 'Switch' device: '/cpu:0' input: 'x' input: 'pred'"
      "  attr { key: 'T' value { type: DT_INT32 } } }\n"
      "node { name: 'pivot_t' op: 'Identity' device: '/gpu:0' input: 's:1'"
      "  attr { key: 'T' value { type: DT_INT32 } } }\n" +
      IntConst("x", 1, "device: '/cpu:0'") +
      IntConst("c", 42, "device: '/gpu:0' input: '^pivot_t'") +
      IntConst("e", 7, "device: '/cpu:0' input: '^s'") +
      "node { name: 'm' op: 'Merge' device: '/cpu:0' input: 'e' input: 'c'"
      "  attr { key: 'T' value { type: DT_INT32 } } attr { key: 'N' value { i: 2 } } }\n";
  std::unique_ptr<Session> session = Open(text);
  Tensor no = *Tensor::Allocate(ProcessCpuAllocator(), DT_BOOL, TensorShape());
  no.scalar<bool>() = false;
  for (int run = 0; run < 20; ++run) {
    std::vector<Tensor> out;
    REQUIRE(session->Run({{"pred", no}}, {"m", "m:1"}, {}, &out).ok());
    CHECK(out[0].scalar<int32_t>() == 7);
    CHECK(out[1].scalar<int32_t>() == 0);
  }
  std::vector<Tensor> out;
  CHECK_FALSE(session->Run({{"pred", no}}, {"c"}, {}, &out).ok());
}

}  // namespace
}  // namespace dflow
