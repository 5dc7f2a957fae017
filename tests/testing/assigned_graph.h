// Test helper for graph passes that run on placed partitions: a text GraphDef imported
// without shape inference, every node assigned to one device.
#ifndef DFLOW_TESTS_TESTING_ASSIGNED_GRAPH_H_
#define DFLOW_TESTS_TESTING_ASSIGNED_GRAPH_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "graph/graph.h"
#include "graph/graph_def_import.h"
#include "tests/testing/graph_testing.h"

namespace dflow::testing {

// Fails the test when the text does not import.
inline std::unique_ptr<Graph> ImportOnDevice(const std::string& text, const std::string& device) {
  ImportOptions options;
  options.infer_shapes = false;
  auto graph = ImportGraphDef(GraphFromText(text), options);
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  for (Node* node : (*graph)->nodes()) node->set_assigned_device(device);
  return *std::move(graph);
}

// `text` imported on `device` (ImportOnDevice), then `pass` run on it; fails the test
// when the pass fails. What the fusion passes' tests check their rewrites on.
inline std::unique_ptr<Graph> AfterPass(const std::string& text, const std::string& device,
                                        const std::function<absl::Status(Graph*)>& pass) {
  std::unique_ptr<Graph> graph = ImportOnDevice(text, device);
  absl::Status status = pass(graph.get());
  INFO(status.ToString());
  REQUIRE(status.ok());
  return graph;
}

// The inputs of `node` as a GraphDef would spell them ("x", "w:1", "^c").
inline std::vector<std::string> InputNames(const Graph& graph, const std::string& node) {
  NodeDef def = graph.NodeDefWithInputs(*graph.FindNode(node));
  return std::vector<std::string>(def.input().begin(), def.input().end());
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_TESTING_ASSIGNED_GRAPH_H_
