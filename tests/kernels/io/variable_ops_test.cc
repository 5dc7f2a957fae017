// Variable kernels run through a Session: values persist across Run calls, are private
// to each session, and follow TF's error texts.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

std::string Variable(const std::string& name, const std::string& shape,
                     const std::string& shared_name = "") {
  return "node { name: '" + name + "' op: 'VariableV2'"
         " attr { key: 'dtype' value { type: DT_FLOAT } }"
         " attr { key: 'shape' value { shape { " + shape + " } } }"
         " attr { key: 'shared_name' value { s: '" + shared_name + "' } } }\n";
}

std::string Const(const std::string& name, const std::vector<float>& values) {
  std::string text = "node { name: '" + name + "' op: 'Const'"
                     " attr { key: 'dtype' value { type: DT_FLOAT } }"
                     " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {";
  if (values.size() != 1) text += " dim { size: " + std::to_string(values.size()) + " }";
  text += " }";
  for (float v : values) text += " float_val: " + std::to_string(v);
  return text + " } } } }\n";
}

std::string Update(const std::string& name, const std::string& op,
                   const std::vector<std::string>& inputs, const std::string& extra = "") {
  std::string text = "node { name: '" + name + "' op: '" + op + "'";
  for (const std::string& in : inputs) text += " input: '" + in + "'";
  return text + " attr { key: 'T' value { type: DT_FLOAT } }" + extra + " }\n";
}

const std::string kVector2 = "dim { size: 2 }";
// A float placeholder of unknown shape: graph-time shape inference cannot see what is fed,
// so the kernels' own checks are what reject it.
const std::string kPlaceholder =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n";

Tensor Floats(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  static CpuAllocator* allocator = new CpuAllocator();
  Tensor t = *Tensor::Allocate(allocator, DT_FLOAT, TensorShape(absl::MakeConstSpan(dims)));
  for (size_t i = 0; i < values.size(); ++i) t.flat<float>()[i] = values[i];
  return t;
}

std::unique_ptr<Session> MakeSession(const std::string& graph) {
  auto session = NewSession();
  REQUIRE(session.ok());
  absl::Status status = (*session)->Create(testing::GraphFromText(graph));
  INFO(status.ToString());
  REQUIRE(status.ok());
  return *std::move(session);
}

std::vector<float> Fetch(Session& session, const std::string& fetch) {
  std::vector<Tensor> out;
  absl::Status status = session.Run({}, {fetch}, {}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  auto flat = out[0].flat<float>();
  return std::vector<float>(flat.begin(), flat.end());
}

absl::Status RunTarget(Session& session, const std::string& target) {
  std::vector<Tensor> out;
  return session.Run({}, {}, {target}, &out);
}

bool Initialized(Session& session) {
  std::vector<Tensor> out;
  REQUIRE(session.Run({}, {"is_init"}, {}, &out).ok());
  return out[0].scalar<bool>();
}

const std::string kCounterGraph =
    Variable("v", kVector2) + Const("init_value", {1, 2}) + Const("step", {10, 10}) +
    Update("init", "Assign", {"v", "init_value"}) + Update("inc", "AssignAdd", {"v", "step"}) +
    Update("dec", "AssignSub", {"v", "step"}) +
    "node { name: 'is_init' op: 'IsVariableInitialized' input: 'v'"
    " attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'read' op: 'Identity' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }\n";

TEST_CASE("a variable keeps its value across runs and sessions keep their own") {
  auto first = MakeSession(kCounterGraph);
  auto second = MakeSession(kCounterGraph);
  CHECK_FALSE(Initialized(*first));
  REQUIRE(RunTarget(*first, "init").ok());
  CHECK(Initialized(*first));
  CHECK(Fetch(*first, "inc") == std::vector<float>{11, 12});
  CHECK(Fetch(*first, "inc") == std::vector<float>{21, 22});
  CHECK(Fetch(*first, "dec") == std::vector<float>{11, 12});
  CHECK(Fetch(*first, "read") == std::vector<float>{11, 12});
  CHECK(Fetch(*first, "v") == std::vector<float>{11, 12});

  // The second session's v was never assigned.
  CHECK_FALSE(Initialized(*second));
  std::vector<Tensor> out;
  absl::Status status = second->Run({}, {"read"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("Attempting to use uninitialized value v"));
  status = second->Run({}, {"inc"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a fetched value is a snapshot: later updates do not change it") {
  auto session = MakeSession(kCounterGraph);
  REQUIRE(RunTarget(*session, "init").ok());
  std::vector<Tensor> before;
  REQUIRE(session->Run({}, {"read"}, {}, &before).ok());
  CHECK(Fetch(*session, "inc") == std::vector<float>{11, 12});
  CHECK(before[0].flat<float>()[0] == 1);
  CHECK(before[0].flat<float>()[1] == 2);
  // The Const the variable was initialised from is untouched too.
  CHECK(Fetch(*session, "init_value") == std::vector<float>{1, 2});
}

TEST_CASE("Assign checks shapes unless validate_shape is false") {
  const std::string graph =
      Variable("v", kVector2) + kPlaceholder + Update("assign", "Assign", {"v", "x"}) +
      Update("reshape", "Assign", {"v", "x"},
             " attr { key: 'validate_shape' value { b: false } }");
  auto session = MakeSession(graph);
  std::vector<Tensor> out;
  // Before the first assignment the declared shape [2] is what must match.
  absl::Status status = session->Run({{"x", Floats({3}, {1, 2, 3})}}, {}, {"assign"}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("Assign requires shapes of both tensors to match. lhs shape= [2] "
                             "rhs shape= [3]"));
  REQUIRE(session->Run({{"x", Floats({3}, {1, 2, 3})}}, {"reshape"}, {}, &out).ok());
  CHECK(out[0].shape() == TensorShape({3}));
  // Now holding a [3], a validated Assign of [3] is fine and one of [2] is not.
  CHECK(session->Run({{"x", Floats({3}, {4, 5, 6})}}, {}, {"assign"}, &out).ok());
  status = session->Run({{"x", Floats({2}, {1, 2})}}, {}, {"assign"}, &out);
  CHECK_THAT(std::string(status.message()), Catch::Contains("lhs shape= [3] rhs shape= [2]"));
}

TEST_CASE("AssignAdd refuses a delta of another shape, in TF's words") {
  const std::string graph = Variable("v", kVector2) + Const("init_value", {1, 2}) +
                            kPlaceholder + Update("init", "Assign", {"v", "init_value"}) +
                            Update("inc", "AssignAdd", {"v", "x"});
  auto session = MakeSession(graph);
  REQUIRE(RunTarget(*session, "init").ok());
  std::vector<Tensor> out;
  absl::Status status = session->Run({{"x", Floats({}, {1})}}, {}, {"inc"}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("Cannot update variable with shape [2] using a Tensor with shape "
                             "[], shapes must be equal."));
  REQUIRE(session->Run({{"x", Floats({2}, {0.5f, 0.25f})}}, {"inc"}, {}, &out).ok());
  CHECK(out[0].flat<float>()[0] == 1.5f);
  CHECK(out[0].flat<float>()[1] == 2.25f);
}

TEST_CASE("ApplyGradientDescent computes var - alpha * delta") {
  const std::string graph =
      Variable("w", kVector2) + Const("w0", {1, 2}) + Const("alpha", {0.1f}) +
      Const("grad", {3, -4}) + Update("init", "Assign", {"w", "w0"}) +
      Update("sgd", "ApplyGradientDescent", {"w", "alpha", "grad"});
  auto session = MakeSession(graph);
  REQUIRE(RunTarget(*session, "init").ok());
  // float arithmetic like TF's: w - alpha * grad.
  const float alpha = 0.1f;
  CHECK(Fetch(*session, "sgd") == std::vector<float>{1.0f - alpha * 3.0f, 2.0f - alpha * -4.0f});
}

TEST_CASE("variables with one shared_name share a value; mismatched shapes are refused") {
  const std::string graph = Variable("a", kVector2, "shared") + Variable("b", kVector2, "shared") +
                            Variable("c", "dim { size: 3 }", "shared") +
                            Const("init_value", {5, 6}) +
                            Update("init", "Assign", {"a", "init_value"}) +
                            "node { name: 'read_b' op: 'Identity' input: 'b'"
                            " attr { key: 'T' value { type: DT_FLOAT } } }\n"
                            "node { name: 'read_c' op: 'Identity' input: 'c'"
                            " attr { key: 'T' value { type: DT_FLOAT } } }\n";
  auto session = MakeSession(graph);
  REQUIRE(RunTarget(*session, "init").ok());
  CHECK(Fetch(*session, "read_b") == std::vector<float>{5, 6});
  std::vector<Tensor> out;
  absl::Status status = session->Run({}, {"read_c"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()),
             Catch::Contains("Trying to share variable shared, but specified shape [3] and "
                             "found shape [2]."));
}

}  // namespace
}  // namespace dflow
