// Function calls (Defun-style ops named after a library function, and
// PartitionedCall/StatefulPartitionedCall) are inlined, and run through a Session.
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/function_inliner.h"
#include "graph/graph_def_import.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using testing::GraphFromText;
using testing::ReadCorpusText;

// f(a, b) = (a + b) * b, T bound by the call; g(x) = f(x, x) calls f.
constexpr char kLibrary[] = R"pb(
  library {
    function {
      signature {
        name: "f"
        input_arg { name: "a" type_attr: "T" }
        input_arg { name: "b" type_attr: "T" }
        output_arg { name: "out" type_attr: "T" }
        attr { name: "T" type: "type" }
      }
      node_def { name: "sum" op: "Add" input: "a" input: "b" attr { key: "T" value { placeholder: "T" } } }
      node_def { name: "prod" op: "Mul" input: "sum:z:0" input: "b" attr { key: "T" value { placeholder: "T" } } }
      ret { key: "out" value: "prod:z:0" }
    }
    function {
      signature {
        name: "g"
        input_arg { name: "x" type: DT_FLOAT }
        output_arg { name: "y" type: DT_FLOAT }
      }
      node_def { name: "inner" op: "f" input: "x" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "y" value: "inner:out:0" }
    }
    function {
      signature { name: "loop" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
      node_def { name: "again" op: "loop" input: "x" }
      ret { key: "y" value: "again:y:0" }
    }
  }
)pb";

std::string Graph(const std::string& nodes) { return nodes + kLibrary; }

constexpr char kInputs[] = R"pb(
  node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "q" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
)pb";

float RunScalar(const GraphDef& graph, const std::string& fetch) {
  auto session = NewSession(ConfigProto());
  REQUIRE(session.ok());
  absl::Status created = (*session)->Create(graph);
  INFO(created.ToString());
  REQUIRE(created.ok());
  static CpuAllocator allocator;
  Tensor p = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({}));
  Tensor q = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({}));
  p.scalar<float>() = 2;
  q.scalar<float>() = 3;
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({{"p", p}, {"q", q}}, {fetch}, {}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return out[0].scalar<float>();
}

TEST_CASE("The corpus's Defun call runs as its body: func_call = x = [1]", "[function_inliner]") {
  GraphDef graph = GraphFromText(ReadCorpusText("pbtxt/tf_mlir_graph_function_call.pbtxt"));
  auto inlined = InlineFunctionCalls(graph);
  REQUIRE(inlined.ok());
  const NodeDef* call = nullptr;
  for (const NodeDef& node : inlined->node()) {
    if (node.name() == "func_call") call = &node;
  }
  REQUIRE(call != nullptr);
  CHECK(call->op() == "IdentityN");
  CHECK(call->input(0) == "x");
  CHECK(ImportGraphDef(*inlined).ok());

  auto session = NewSession(ConfigProto());
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(graph).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {"func_call"}, {}, &out).ok());
  REQUIRE(out[0].NumElements() == 1);
  CHECK(out[0].flat<int32_t>()[0] == 1);
}

TEST_CASE("Calls bind attr placeholders, map output args, and nest", "[function_inliner]") {
  // f(2, 3) = 15 as a Defun-style op and through StatefulPartitionedCall; g(2) = f(2,2) = 8.
  GraphDef graph = GraphFromText(Graph(std::string(kInputs) + R"pb(
    node { name: "direct" op: "f" input: "p" input: "q" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "partitioned" op: "StatefulPartitionedCall" input: "p" input: "q"
           attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "f" value { func { name: "f" attr { key: "T" value { type: DT_FLOAT } } } } } }
    node { name: "nested" op: "g" input: "p" }
    node { name: "after" op: "Neg" input: "nested" attr { key: "T" value { type: DT_FLOAT } } }
  )pb"));
  CHECK(RunScalar(graph, "direct") == 15.f);
  CHECK(RunScalar(graph, "partitioned:0") == 15.f);
  CHECK(RunScalar(graph, "nested") == 8.f);
  CHECK(RunScalar(graph, "after") == -8.f);

  auto inlined = InlineFunctionCalls(graph);
  REQUIRE(inlined.ok());
  bool renamed = false;
  for (const NodeDef& node : inlined->node()) renamed |= node.name() == "nested/inner/prod";
  CHECK(renamed);
}

TEST_CASE("Bad calls are errors naming the call", "[function_inliner]") {
  auto wrong_arity = InlineFunctionCalls(GraphFromText(Graph(std::string(kInputs) + R"pb(
    node { name: "c" op: "f" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
  )pb")));
  CHECK(wrong_arity.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(wrong_arity.status().message(),
                          "Cannot inline the function call 'c' (f): the function takes 2 inputs"));

  auto unbound = InlineFunctionCalls(GraphFromText(Graph(std::string(kInputs) + R"pb(
    node { name: "c" op: "f" input: "p" input: "q" }
  )pb")));
  CHECK(absl::StrContains(unbound.status().message(), "needs attr 'T'"));

  auto recursive = InlineFunctionCalls(GraphFromText(Graph(std::string(kInputs) + R"pb(
    node { name: "r" op: "loop" input: "p" }
  )pb")));
  CHECK(absl::StrContains(recursive.status().message(),
                          "Cannot inline the function call 'r' (loop): function 'loop' is "
                          "recursive (loop -> loop)"));

  auto bad_index = InlineFunctionCalls(GraphFromText(std::string(kInputs) + R"pb(
    node { name: "c" op: "bad" input: "p" }
    library { function {
      signature { name: "bad" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
      node_def { name: "n" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
      ret { key: "y" value: "n:y:zz" } } }
  )pb"));
  CHECK(bad_index.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(bad_index.status().message(),
                          "Cannot inline the function call 'c' (bad): the body refers to "
                          "'n:y:zz', but output 'y' of Neg has indices 0 to 0"));
}

// f0 calls f1 twice, f1 calls f2 twice, ...: 2^30 nodes if inlined. Refused from the
// call graph alone, before inlining anything (it took 5.5 s and 1.5 GB to reach the
// budget by inlining).
TEST_CASE("Calls that fan out exponentially are refused at the node budget",
          "[function_inliner]") {
  std::string library = "library {\n";
  const int kLevels = 30;  // under the default depth limit of 32
  for (int i = 0; i < kLevels; ++i) {
    const std::string name = absl::StrCat("f", i);
    absl::StrAppend(&library, "function { signature { name: '", name,
                    "' input_arg { name: 'x' type: DT_FLOAT } output_arg { name: 'y' type: "
                    "DT_FLOAT } }\n");
    if (i + 1 < kLevels) {
      const std::string callee = absl::StrCat("f", i + 1);
      absl::StrAppend(&library, " node_def { name: 'a' op: '", callee, "' input: 'x' }",
                      " node_def { name: 'b' op: '", callee, "' input: 'a:y:0' }",
                      " ret { key: 'y' value: 'b:y:0' } }\n");
    } else {
      absl::StrAppend(&library, " node_def { name: 'n' op: 'Neg' input: 'x'",
                      " attr { key: 'T' value { type: DT_FLOAT } } }",
                      " ret { key: 'y' value: 'n:y:0' } }\n");
    }
  }
  absl::StrAppend(&library, "}\n");
  auto exploded = InlineFunctionCalls(
      GraphFromText(std::string(kInputs) + "node { name: 'c' op: 'f0' input: 'p' }\n" + library));
  CHECK(exploded.status().code() == absl::StatusCode::kInvalidArgument);
  INFO(exploded.status().message());
  CHECK(absl::StrContains(exploded.status().message(),
                          "Cannot inline the function call 'c' (f0): inlining would make the "
                          "graph larger than 1000000 nodes (function 'f0' alone becomes at "
                          "least 1610612734"));  // 3 * 2^29 - 2
  // A smaller budget, and a library that stays under it, inline as before.
  const GraphDef two_calls = GraphFromText(std::string(kInputs) + R"pb(
    node { name: "c" op: "twice" input: "p" }
    node { name: "d" op: "twice" input: "c" }
    library {
      function { signature { name: "twice" input_arg { name: "x" type: DT_FLOAT }
                             output_arg { name: "y" type: DT_FLOAT } }
                 node_def { name: "a" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
                 node_def { name: "b" op: "Neg" input: "a:y:0" attr { key: "T" value { type: DT_FLOAT } } }
                 ret { key: "y" value: "b:y:0" } }
    })pb");
  InlineLimits small;
  small.max_nodes = 10;
  auto over = InlineFunctionCalls(two_calls, OpRegistry::Global(), small);
  CHECK(over.ok());  // p, q and per call its gate, its results and 2 body nodes: 10
  small.max_nodes = 9;
  auto refused = InlineFunctionCalls(two_calls, OpRegistry::Global(), small);
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(refused.status().message(), "Cannot inline the function call 'd'"));
}

}  // namespace
}  // namespace dflow
