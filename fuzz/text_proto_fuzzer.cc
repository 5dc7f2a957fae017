// Fuzz target: text-format GraphDef and ConfigProto (what `--graph=F.pbtxt` and
// `--config=` read), then the parsed GraphDef through validation.
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "graph/graph_def_import.h"
#include "graph/proto_io.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  dflow::ConfigProto config;
  (void)dflow::ParseTextProto(text, "ConfigProto", &config);
  dflow::GraphDef graph_def;
  if (dflow::ParseProto(text, "GraphDef", &graph_def).ok()) {
    (void)dflow::ValidateGraphDef(graph_def);
  }
  return 0;
}
