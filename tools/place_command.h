// `dflow place --graph=PATH [--config=TEXTPROTO] [--explain]`: where every node of a
// GraphDef would run, without running it.
//
// Output (stdout), one line per node in node order, TF's log_device_placement form:
//   c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:1
// With --explain each node line is followed by its reason (graph/placer.h), e.g.
//     reason: requested '/cpu:1'
// and then every cross-device copy the partitioner will insert (graph/partition.h):
//   cross-device copies: 2
//     a:0 float32 [2,3] 24 bytes: /job:.../device:CPU:0 -> /job:.../device:CPU:1 (read by c)
//   total: 48 bytes per step
// A copy's size comes from shape inference; when the shape is not fully known the line
// says "unknown size" instead of a byte count.
//
// The placement is the Session's own (the same devices, kernels and ConfigProto
// switches as `dflow run`); its errors (`INVALID_ARGUMENT: Cannot assign a device ...`)
// are returned as they are.
#ifndef DFLOW_TOOLS_PLACE_COMMAND_H_
#define DFLOW_TOOLS_PLACE_COMMAND_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/placer.h"
#include "proto/config.pb.h"
#include "proto/graph.pb.h"

namespace dflow {

// `graph_def` imported, each node carrying the device `placement` gave it.
absl::StatusOr<std::unique_ptr<Graph>> ImportPlacedGraph(const GraphDef& graph_def,
                                                         const PlacementResult& placement);

// Places `graph_def` on the devices `config` asks for and writes the report to `out`.
absl::Status PrintPlacement(const GraphDef& graph_def, const ConfigProto& config, bool explain,
                            std::ostream& out);

// The subcommand: args are the flags after "place".
absl::Status RunPlaceCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_PLACE_COMMAND_H_
