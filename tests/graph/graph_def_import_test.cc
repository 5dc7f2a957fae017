// The import "doctor": every kind of bad GraphDef is rejected with a message naming the
// node at fault, and all problems are reported at once.
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "google/protobuf/util/message_differencer.h"
#include "graph/graph_def_import.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using testing::GraphFromText;

constexpr char kConstA[] = R"(
  node { name: "a" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                         float_val: 1 float_val: 2 } } } }
)";

std::vector<GraphProblem> Problems(const std::string& text) {
  return ValidateGraphDef(GraphFromText(text));
}

// Asserts exactly one problem, at `node`, whose message names the node and contains `what`.
void RequireSingleProblem(const std::string& text, const std::string& node,
                          const std::string& what) {
  std::vector<GraphProblem> problems = Problems(text);
  REQUIRE(problems.size() == 1);
  INFO(problems[0].message);
  CHECK(problems[0].node == node);
  CHECK(absl::StrContains(problems[0].message, "'" + node + "'"));
  CHECK(absl::StrContains(problems[0].message, what));
}

TEST_CASE("A valid graph imports with edges, dtypes and default attrs", "[graph][import]") {
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(GraphFromText(std::string(kConstA) + R"(
    node { name: "b" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "m" op: "MatMul" input: "a2" input: "a2" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "a2" op: "Const" input: "^b"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
                                           float_val: 1 } } } }
  )"));
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  Graph& g = **graph;
  REQUIRE(g.num_nodes() == 4);
  Node* m = g.FindNode("m");
  REQUIRE(m != nullptr);
  CHECK(m->input_types() == DataTypeVector{DT_FLOAT, DT_FLOAT});
  CHECK(m->input_edge(0)->src->name() == "a2");
  // Defaults from TF's OpDef are filled in.
  REQUIRE(m->attr("transpose_a") != nullptr);
  CHECK(m->attr("transpose_a")->b() == false);
  // Control edge kept, and shapes inferred.
  CHECK(g.FindNode("a2")->in_edges().front()->IsControlEdge());
  CHECK(m->output_shapes()[0].ToString() == "[2,2]");
  GraphDef back = g.ToGraphDef();
  CHECK(back.node(3).input(0) == "^b");
}

TEST_CASE("Import reports an unknown op naming the node", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "x" op: "NoSuchOp" })", "x",
                       "Op type not registered 'NoSuchOp'");
}

TEST_CASE("Import reports a dangling input naming the node", "[graph][import]") {
  RequireSingleProblem(std::string(kConstA) + R"(
    node { name: "y" op: "Identity" input: "missing" attr { key: "T" value { type: DT_FLOAT } } })",
                       "y", "'missing' refers to a node that is not in the graph");
}

TEST_CASE("Import reports a duplicate node name", "[graph][import]") {
  RequireSingleProblem(std::string(kConstA) + kConstA, "a", "not unique");
}

// A library of functions y = op(x), one per (name, op).
std::string Library(const std::vector<std::pair<std::string, std::string>>& functions) {
  std::string text = "library {\n";
  for (const auto& [name, op] : functions) {
    text += "function { signature { name: '" + name +
            "' input_arg { name: 'x' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT } }"
            " node_def { name: 'n' op: '" + op + "' input: 'x' attr { key: 'T' value { type: "
            "DT_FLOAT } } } ret { key: 'y' value: 'n:y:0' } }\n";
  }
  return text + "}\n";
}

TEST_CASE("Import refuses a library that defines a function twice or shadows an op",
          "[graph][import]") {
  // TF's FunctionLibraryDefinition texts; before, the last definition silently won and a
  // function named like an op was silently ignored.
  std::vector<GraphProblem> twice = Problems(Library({{"f", "Neg"}, {"f", "Abs"}}));
  REQUIRE(twice.size() == 1);
  CHECK(twice[0].message ==
        "Cannot add function 'f' because a different function with the same name already "
        "exists.");
  CHECK(Problems(Library({{"f", "Neg"}, {"f", "Neg"}})).empty());  // an identical repeat
  std::vector<GraphProblem> shadow = Problems(Library({{"Neg", "Abs"}}));
  REQUIRE(shadow.size() == 1);
  CHECK(shadow[0].message ==
        "Cannot add function 'Neg' because an op with the same name already exists.");
}

TEST_CASE("Import reports a cycle naming its nodes", "[graph][import]") {
  std::vector<GraphProblem> problems = Problems(R"(
    node { name: "p" op: "Identity" input: "q" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "q" op: "Identity" input: "p" attr { key: "T" value { type: DT_FLOAT } } })");
  REQUIRE(problems.size() == 1);
  CHECK(absl::StrContains(problems[0].message, "cycle"));
  CHECK(absl::StrContains(problems[0].message, "p, q"));
}

TEST_CASE("Import accepts the NextIteration back edge of a while loop", "[graph][import]") {
  std::vector<GraphProblem> problems = ValidateGraphDef(
      GraphFromText(testing::ReadCorpusText("pbtxt/tf_grappler_while_loop_const.pbtxt")));
  for (const auto& p : problems) INFO(p.message);
  CHECK(problems.empty());
}

TEST_CASE("Import reports a wrong number of inputs", "[graph][import]") {
  RequireSingleProblem(std::string(kConstA) + R"(
    node { name: "s" op: "Add" input: "a" attr { key: "T" value { type: DT_FLOAT } } })",
                       "s", "expects 2 data inputs but has 1");
}

TEST_CASE("Import reports a missing required attr", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "p" op: "Placeholder" })", "p",
                       "missing required attr 'dtype'");
}

TEST_CASE("Import reports an attr of the wrong type", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "p" op: "Placeholder" attr { key: "dtype" value { i: 3 } } })",
                       "p", "attr 'dtype' has type int, expected type");
}

TEST_CASE("Import reports a disallowed attr value", "[graph][import]") {
  RequireSingleProblem(R"(
    node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
      attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }
    node { name: "r" op: "Relu" input: "b" attr { key: "T" value { type: DT_BOOL } } })",
                       "r", "not in the list of allowed values");
}

TEST_CASE("An attr the op does not declare is dropped with a warning, as TF 2.21 does",
          "[graph][import]") {
  const GraphDef graph_def = GraphFromText(R"(node { name: "p" op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "colour" value { s: "red" } } })");
  const GraphReport report = CheckGraphDef(graph_def);
  CHECK(report.problems.empty());
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0].node == "p");
  CHECK(report.warnings[0].message ==
        "Node 'p' (Placeholder): attr 'colour' is not in the op's definition; ignored "
        "(written by a TensorFlow newer than 2.21?)");
  // Both import paths drop it before any kernel could see it, and keep the warning.
  for (bool moved : {false, true}) {
    GraphDef copy = graph_def;
    absl::StatusOr<std::unique_ptr<Graph>> graph =
        moved ? ImportGraphDef(std::move(copy)) : ImportGraphDef(graph_def);
    REQUIRE(graph.ok());
    CHECK((*graph)->FindNode("p")->def().attr().count("colour") == 0);
    CHECK((*graph)->FindNode("p")->def().attr().count("dtype") == 1);
    CHECK((*graph)->import_warnings() == std::vector<std::string>{report.warnings[0].message});
  }
  // `_`-prefixed attrs are kept without a warning (TF's internal attrs, e.g. _class).
  CHECK(CheckGraphDef(GraphFromText(R"(node { name: "p" op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "_colour" value { s: "red" } } })"))
            .warnings.empty());
}

TEST_CASE("Problems come in the file's node order with the first one's code",
          "[graph][import]") {
  // The second node's attr problem is found in the first pass, the first node's dangling
  // input in the second; the report still follows the file.
  GraphDef graph_def = GraphFromText(R"(
    node { name: "first" op: "Identity" input: "nowhere" input: "^ghost"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "second" op: "Placeholder" }
    node { name: "third" op: "NoSuchOp" })");
  std::vector<GraphProblem> problems = ValidateGraphDef(graph_def);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0].node == "first");
  CHECK(problems[1].node == "first");
  CHECK(problems[2].node == "second");
  CHECK(problems[3].node == "third");
  // A missing control input keeps its '^', as TF writes it.
  CHECK_THAT(problems[0].message + problems[1].message,
             Catch::Contains("input '^ghost' refers to a node that is not in the graph"));
  CHECK(problems[3].code == absl::StatusCode::kNotFound);
  // An unregistered op anywhere makes it NOT_FOUND: TF looks every op up first.
  CHECK(ImportGraphDef(graph_def).status().code() == absl::StatusCode::kNotFound);
  // Otherwise the first problem's code.
  graph_def.mutable_node()->RemoveLast();
  CHECK(ImportGraphDef(graph_def).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Import reports an input dtype mismatch", "[graph][import]") {
  RequireSingleProblem(std::string(kConstA) + R"(
    node { name: "i" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 } } } }
    node { name: "s" op: "Add" input: "a" input: "i" attr { key: "T" value { type: DT_FLOAT } } })",
                       "s", "input 1 expects float but 'i:0' produces int32");
}

TEST_CASE("Import reports an output index out of range", "[graph][import]") {
  RequireSingleProblem(std::string(kConstA) + R"(
    node { name: "y" op: "Identity" input: "a:3" attr { key: "T" value { type: DT_FLOAT } } })",
                       "y", "asks for output 3 but node 'a' has 1 outputs");
}

TEST_CASE("Import reports a data input after a control input", "[graph][import]") {
  RequireSingleProblem(std::string(kConstA) + R"(
    node { name: "y" op: "Identity" input: "^a" input: "a" attr { key: "T" value { type: DT_FLOAT } } })",
                       "y", "comes after a control input");
}

TEST_CASE("Import reports invalid node names", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "bad name!" op: "NoOp" })", "bad name!",
                       "invalid characters");
}

TEST_CASE("Import reports a malformed device string", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "n" op: "NoOp" device: "/gpu:x" })", "n",
                       "Malformed device specification '/gpu:x'");
}

TEST_CASE("Import reports tensor content that disagrees with the shape", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                         tensor_content: "\000\000\200?" } } } })",
                       "c", "tensor_content holds 4 bytes but shape [3] of float needs 3 x 4 bytes");
}

TEST_CASE("Import rejects bool tensor_content bytes other than 0 and 1", "[graph][import]") {
  // Loading the byte 2 as a bool is undefined behaviour (LogicalNot(2) was true); TF
  // refuses such a constant too.
  RequireSingleProblem(R"(node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
    attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { dim { size: 3 } }
                                         tensor_content: "\001\000\002" } } } })",
                       "b", "bool tensor_content holds byte value 2 at element 2 (a bool is 0 or 1)");
}

TEST_CASE("Import reports more tensor values than the shape holds", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } }
                                         float_val: 1 float_val: 2 } } } })",
                       "c", "has 2 values but its shape [1] holds only 1 elements");
}

TEST_CASE("Import reports negative tensor dims", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: -5 } } } } } })",
                       "c", "negative dimension -5");
}

TEST_CASE("Import rejects element counts that overflow without allocating", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT
      tensor_shape { dim { size: 4294967296 } dim { size: 4294967296 } } float_val: 1 } } } })",
                       "c", "more elements than fit in int64");
}

TEST_CASE("Import reports an invalid tensor dtype", "[graph][import]") {
  RequireSingleProblem(R"(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_INVALID tensor_shape { } } } } })",
                       "c", "invalid dtype 0");
}

TEST_CASE("Import reports incompatible constant shapes found by shape inference",
          "[graph][import]") {
  std::vector<GraphProblem> problems = Problems(std::string(kConstA) + R"(
    node { name: "m" op: "MatMul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } })");
  REQUIRE(problems.size() == 1);
  CHECK(absl::StrContains(problems[0].message, "'m'"));
}

TEST_CASE("Import reports graph version problems", "[graph][import]") {
  std::vector<GraphProblem> problems =
      Problems(R"(versions { producer: -1 min_consumer: 9999 } node { name: "n" op: "NoOp" })");
  REQUIRE(problems.size() == 2);
  CHECK(absl::StrContains(problems[0].message, "producer version -1 below min producer 0"));
  CHECK(absl::StrContains(problems[1].message, "min consumer version 9999 above current version 134"));
}

TEST_CASE("Import lists every problem of a broken graph at once", "[graph][import]") {
  GraphDef broken = GraphFromText(R"(
    node { name: "x" op: "NoSuchOp" }
    node { name: "p" op: "Placeholder" }
    node { name: "n" op: "NoOp" device: "/gpu:x" }
    node { name: "y" op: "Identity" input: "ghost" attr { key: "T" value { type: DT_FLOAT } } })");
  std::vector<GraphProblem> problems = ValidateGraphDef(broken);
  REQUIRE(problems.size() == 4);
  CHECK(problems[0].node == "x");
  CHECK(problems[1].node == "p");
  CHECK(problems[2].node == "n");
  CHECK(problems[3].node == "y");
  absl::Status status = ImportGraphDef(broken).status();
  CHECK(status.code() == absl::StatusCode::kNotFound);  // x's unknown op comes first
  CHECK(absl::StartsWith(status.message(), "GraphDef has 4 problems:"));
}

TEST_CASE("A fed tensor of a node the GraphDef lacks becomes a placeholder", "[graph][import]") {
  GraphDef graph_def = GraphFromText(testing::ReadCorpusText("pbtxt/tf_aot_test_graph_tfadd.pbtxt"));
  CHECK(ValidateGraphDef(graph_def).size() == 1);  // y_shape dangles when not fed
  ImportOptions options;
  options.fed_tensors = {"y_shape:0"};
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(graph_def, options);
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  Node* stand_in = (*graph)->FindNode("y_shape");
  REQUIRE(stand_in != nullptr);
  CHECK(stand_in->op() == "Placeholder");
  CHECK(stand_in->output_types()[0] == DT_INT32);
}

TEST_CASE("Importing a GraphDef given up moves its nodes: same graph, value not copied",
          "[graph][import]") {
  const std::string text = std::string(kConstA) + R"(
    node { name: "big" op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4096 } } } } } }
    node { name: "s" op: "Add" input: "big" input: "big" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "i" op: "Identity" input: "a" input: "^s" attr { key: "T" value { type: DT_FLOAT } } })";
  GraphDef given = GraphFromText(text);
  std::string* content = given.mutable_node(1)->mutable_attr()->at("value")
                             .mutable_tensor()->mutable_tensor_content();
  content->assign(4096 * sizeof(float), '\x01');
  const GraphDef kept = given;
  const char* bytes = content->data();

  absl::StatusOr<std::unique_ptr<Graph>> copied = ImportGraphDef(kept);
  absl::StatusOr<std::unique_ptr<Graph>> moved = ImportGraphDef(std::move(given));
  REQUIRE(copied.ok());
  REQUIRE(moved.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals((*moved)->ToGraphDef(),
                                                           (*copied)->ToGraphDef()));
  const Node* big = (*moved)->FindNode("big");
  REQUIRE(big != nullptr);
  CHECK(big->attr("value")->tensor().tensor_content().data() == bytes);  // the same buffer
  CHECK((*moved)->FindNode("i")->input_edge(0)->src->name() == "a");

  // Problems are found and named the same way on both paths.
  GraphDef broken = GraphFromText(text + R"(
    node { name: "y" op: "Identity" input: "ghost" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "z" op: "Identity" input: "a:3" attr { key: "T" value { type: DT_FLOAT } } })");
  const absl::Status from_copy = ImportGraphDef(broken).status();
  const absl::Status from_move = ImportGraphDef(std::move(broken)).status();
  INFO(from_move.ToString());
  CHECK(from_move.code() == absl::StatusCode::kInvalidArgument);
  CHECK(from_move == from_copy);
  CHECK(absl::StrContains(from_move.message(), "Node 'y' (Identity)"));
  CHECK(absl::StrContains(from_move.message(), "Node 'z' (Identity)"));
}

}  // namespace
}  // namespace dflow
