#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/proto_io.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

TEST_CASE("Format is told apart by content, not by extension", "[graph][proto_io]") {
  GraphDef graph_def = testing::GraphFromText(R"(node { name: "n" op: "NoOp" })");
  const std::string binary = graph_def.SerializeAsString();
  CHECK(SniffProtoFormat(binary) == ProtoFormat::kBinary);
  CHECK(SniffProtoFormat("node { name: \"n\" op: \"NoOp\" }\n") == ProtoFormat::kText);
  // A binary file misnamed .pbtxt still loads.
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/misnamed.pbtxt";
  REQUIRE(WriteStringToFile(path, binary).ok());
  absl::StatusOr<GraphDef> read = ReadGraphDef(path);
  REQUIRE(read.ok());
  CHECK(read->node(0).name() == "n");
}

TEST_CASE("A text syntax error names the file, line and column", "[graph][proto_io]") {
  GraphDef graph_def;
  absl::Status status = ParseProto("node {\n  name: \"n\"\n  opp: \"NoOp\"\n}\n", "g.pbtxt", &graph_def);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  INFO(status.message());
  CHECK(absl::StrContains(status.message(), "g.pbtxt"));
  CHECK(absl::StrContains(status.message(), ": 3:"));  // line 3
  CHECK(absl::StrContains(status.message(), "opp"));
}

TEST_CASE("Random bytes are rejected as a GraphDef without crashing", "[graph][proto_io]") {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919 + 13) % 251));
  GraphDef graph_def;
  absl::Status status = ParseProto(garbage, "garbage", &graph_def);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(graph_def.node_size() == 0);
}

// A GraphDef whose attr value nests `depth` func attrs inside one another.
std::string NestedAttrGraph(int depth) {
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += "func { name: \"f\" attr { key: \"k\" value { ";
    close += "} } } ";
  }
  return "node { name: \"n\" op: \"NoOp\" attr { key: \"a\" value { " + open + "i: 1 " +
         close + "} } }";
}

TEST_CASE("Text deeper than 100 messages is refused, not a stack overflow",
          "[graph][proto_io]") {
  GraphDef graph;
  CHECK(ParseTextProto(NestedAttrGraph(20), "g", &graph).ok());
  for (int depth : {40, 5000, 100000}) {  // 5,000 overflowed the stack before
    const absl::Status status = ParseTextProto(NestedAttrGraph(depth), "g", &graph);
    INFO(depth << ": " << status.ToString());
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(status.message(), "recursion limit"));
  }
}

TEST_CASE("Missing files and directories give clear errors", "[graph][proto_io]") {
  CHECK(ReadGraphDef("/no/such/file.pb").status().code() == absl::StatusCode::kNotFound);
  absl::Status dir = ReadGraphDef(getenv("TEST_TMPDIR")).status();
  CHECK(dir.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(dir.message(), "is a directory"));
}

TEST_CASE("Output format follows the file extension", "[graph][proto_io]") {
  CHECK(*FormatFromPath("a/b.pb") == ProtoFormat::kBinary);
  CHECK(*FormatFromPath("a/b.pbtxt") == ProtoFormat::kText);
  CHECK_FALSE(FormatFromPath("a/b.json").ok());
}

}  // namespace
}  // namespace dflow
