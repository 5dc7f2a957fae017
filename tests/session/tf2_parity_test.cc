// Codes and texts of errors as TensorFlow 2.21 gives them (tests/data/tf2_21/errors: what
// TF's C++ session said through its C API, and what tf.compat.v1.Session did), through
// `dflow run`'s own path (RunGraph); and attrs a newer TensorFlow adds, accepted and
// warned about.
#include <filesystem>

#include <catch2/catch.hpp>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_def_import.h"
#include "graph/proto_io.h"
#include "tools/run_command.h"

namespace dflow {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

const std::string kRoot = "tests/data/tf2_21/";

Struct ReadJson(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  REQUIRE(text.ok());
  Struct doc;
  REQUIRE(google::protobuf::util::JsonStringToMessage(*text, &doc).ok());
  return doc;
}

const Value& Field(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  INFO("missing field " << key);
  REQUIRE(it != s.fields().end());
  return it->second;
}

// The JSON text of a feed's values, nested by its shape, as `--feed=x=...` takes it.
std::string FeedText(const Struct& feed) {
  const auto& values = Field(feed, "value").list_value().values();
  const auto& shape = Field(feed, "shape").list_value().values();
  REQUIRE(shape.size() <= 1);  // the error cases feed scalars and vectors
  std::string text;
  for (const Value& v : values) {
    absl::StrAppend(&text, text.empty() ? "" : ",", v.number_value());
  }
  return shape.empty() ? text : absl::StrCat("[", text, "]");
}

absl::StatusOr<RunResult> RunCase(const Struct& doc) {
  RunRequest request;
  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(kRoot + Field(doc, "file").string_value());
  REQUIRE(graph_def.ok());
  request.graph_def = *graph_def;
  for (const auto& [name, feed] : Field(doc, "feeds").struct_value().fields()) {
    request.feeds.push_back({name, FeedText(feed.struct_value())});
  }
  for (const Value& fetch : Field(doc, "fetches").list_value().values()) {
    request.fetches.push_back(fetch.string_value());
  }
  return RunGraph(request);
}

std::string CodeName(absl::StatusCode code) {
  return absl::StatusCodeToString(code);
}

// What dflow's message must hold, per case: TF's own text where dflow gives it verbatim,
// else the part that names the fault (dflow lists import problems with their node).
std::string ExpectedText(const std::string& name, const Struct& tf) {
  const std::string tf_message = Field(tf, "message").string_value();
  if (name == "unknown_op") return "Op type not registered 'FooBarOp'";
  if (name == "missing_control_input") return "input '^nothere' refers to a node that is not";
  if (name == "concat_dimension_mismatch") {
    return "Dimension 1 in both shapes must be equal, but are 3 and 4. Shapes are [2,3] and "
           "[2,4]";
  }
  return tf_message;  // unknown feed/fetch, output out of range: TF's words exactly
}

TEST_CASE("Errors have TensorFlow 2.21's codes, and texts that name the fault",
          "[session][tf2]") {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "errors")) {
    const std::string name = entry.path().stem().string();
    DYNAMIC_SECTION(name) {
      const Struct doc = ReadJson(entry.path().string());
      const Struct& tf_c = Field(doc, "tf_c_api").struct_value();
      const Struct& tf_py = Field(doc, "tf_python_session").struct_value();
      absl::StatusOr<RunResult> result = RunCase(doc);
      INFO(result.status().ToString());
      if (name == "fetch_fed_tensor") {
        // TF's C++ session refuses; its Python Session, which users call, returns the fed
        // value. dflow does what the Python Session does.
        CHECK(Field(tf_c, "code").string_value() == "INVALID_ARGUMENT");
        REQUIRE(Field(tf_py, "code").string_value() == "OK");
        REQUIRE(result.ok());
        CHECK(result->outputs[0].scalar<float>() ==
              Field(tf_py, "values").list_value().values(0).list_value().values(0).number_value());
      } else {
        REQUIRE_FALSE(result.ok());
        CHECK(CodeName(result.status().code()) == Field(tf_c, "code").string_value());
        CHECK_THAT(std::string(result.status().message()),
                   Catch::Contains(ExpectedText(name, tf_c)));
      }
    }
    ++cases;
  }
  CHECK(cases == 8);
}

TEST_CASE("An attr a newer TensorFlow adds is dropped with a warning, as TF 2.21 does",
          "[session][tf2]") {
  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(kRoot + "graphs/unknown_attr.pbtxt");
  REQUIRE(graph_def.ok());
  const GraphReport report = CheckGraphDef(*graph_def);
  CHECK(report.problems.empty());
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0].node == "y");
  CHECK_THAT(report.warnings[0].message,
             Catch::Contains("Node 'y' (MatMul): attr 'attr_from_the_future' is not in the "
                             "op's definition; ignored"));
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(*graph_def);
  REQUIRE(graph.ok());
  CHECK((*graph)->FindNode("y")->def().attr().count("attr_from_the_future") == 0);
  CHECK((*graph)->import_warnings().size() == 1);
  CHECK_THAT(FormatUnknownAttrWarnings((*graph)->import_warnings()),
             Catch::StartsWith("dflow: warning: 1 attr is not in dflow's op definitions "
                               "(TensorFlow 2.21's) and will be ignored"));

  // A declared attr of the wrong type stays an error.
  GraphDef wrong = *graph_def;
  for (NodeDef& node : *wrong.mutable_node()) {
    if (node.op() == "MatMul") (*node.mutable_attr())["transpose_a"].set_i(1);
  }
  const GraphReport wrong_report = CheckGraphDef(wrong);
  REQUIRE(wrong_report.problems.size() == 1);
  CHECK_THAT(wrong_report.problems[0].message, Catch::Contains("attr 'transpose_a'"));
}

}  // namespace
}  // namespace dflow
