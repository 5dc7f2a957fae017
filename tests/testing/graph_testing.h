// Test helpers: GraphDefs from text, corpus paths, status assertions.
#ifndef DFLOW_TESTS_TESTING_GRAPH_TESTING_H_
#define DFLOW_TESTS_TESTING_GRAPH_TESTING_H_

#include <string>

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "graph/proto_io.h"
#include "proto/graph.pb.h"

namespace dflow::testing {

// Path of a file in the vendored TF corpus (tests run from the runfiles root).
inline std::string CorpusPath(const std::string& relative) {
  return "tests/data/tf_graphs/" + relative;
}

// Parses a text-format GraphDef; fails the test on a syntax error.
// Contents of a corpus text file; fails the test when unreadable.
inline std::string ReadCorpusText(const std::string& relative) {
  absl::StatusOr<std::string> text = ReadFileToString(CorpusPath(relative));
  INFO(text.status().ToString());
  REQUIRE(text.ok());
  return *text;
}

inline GraphDef GraphFromText(const std::string& text) {
  GraphDef graph_def;
  absl::Status status = ParseTextProto(text, "test GraphDef", &graph_def);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return graph_def;
}

inline std::string StatusText(const absl::Status& status) {
  return std::string(status.message());
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_TESTING_GRAPH_TESTING_H_
