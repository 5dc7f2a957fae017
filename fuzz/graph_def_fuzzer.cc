// Fuzz target: a binary GraphDef through validation, import (function inlining, shape
// inference) and `dflow inspect`'s report: every outcome must be a Status, within the
// inlining budget, never a crash, hang or unbounded allocation.
#include <cstdint>
#include <sstream>

#include "graph/graph_def_import.h"
#include "proto/graph.pb.h"
#include "tools/inspect_command.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dflow::GraphDef graph_def;
  if (!graph_def.ParseFromArray(data, static_cast<int>(size))) return 0;
  std::ostringstream report;
  (void)dflow::InspectGraphDef(graph_def, report);
  (void)dflow::ImportGraphDef(graph_def);
  return 0;
}
