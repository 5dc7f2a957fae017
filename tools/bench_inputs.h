// What `dflow bench` runs when the user leaves things out: synthetic feeds for the
// placeholders the fetches need, shapes for their unknown dims, and default fetches.
//
// Rules (as TF's benchmark_model and ONNX Runtime's perf_test behave):
//  1. Every Placeholder the fetches and targets depend on and no --feed gives is fed
//     synthetic data. PlaceholderWithDefault is left to its default.
//  2. Its shape: `--shape=NAME=d0,d1,...` when given; else the declared shape, with an
//     unknown first dim taken as --batch (default 1). Any other unknown dim, or an
//     unknown rank, is INVALID_ARGUMENT naming the input and asking for --shape.
//  3. Synthetic data is deterministic (the same every invocation): floating point
//     uniform in [0, 1) from a fixed seed; integers 0 and bools false (0 is a valid
//     index, id or length for any embedding, gather or sequence op); strings empty.
//  4. With no --fetch and no --target, every output of every node that nothing consumes
//     (no data or control edge) is fetched, in graph order; Placeholders, Consts and
//     nodes without outputs are skipped.
#ifndef DFLOW_TOOLS_BENCH_INPUTS_H_
#define DFLOW_TOOLS_BENCH_INPUTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"
#include "proto/tensor_shape.pb.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

// --shape flags: input name -> dims. INVALID_ARGUMENT for a flag that is not
// NAME=d0,d1,... with non-negative integer dims ("NAME=" is a scalar).
absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseShapeFlags(
    const std::vector<std::string>& flags);

// Rule 2: the concrete shape of input `name`.
absl::StatusOr<TensorShape> ResolveBenchShape(
    const std::string& name, const TensorShapeProto& declared,
    const std::map<std::string, std::vector<int64_t>>& overrides, int64_t batch);

// Rule 3: a synthetic tensor. INVALID_ARGUMENT naming the input for dtypes without a
// synthetic value (resource, variant, complex, ...).
absl::StatusOr<Tensor> SyntheticFeed(const std::string& name, DataType dtype,
                                     const TensorShape& shape, Allocator* allocator);

// Rule 1: the Placeholder nodes of `graph_def` that `fetches` and `targets` (tensor or
// node names) reach through data and control inputs, in graph order, less those whose
// node is in `fed_nodes`.
std::vector<const NodeDef*> UnfedPlaceholders(const GraphDef& graph_def,
                                              const std::vector<std::string>& fetches,
                                              const std::vector<std::string>& targets,
                                              const std::vector<std::string>& fed_nodes);

// Rule 4: the default fetches of `graph` ("name:index").
std::vector<std::string> SinkFetches(const GraphDef& graph_def, const Graph& graph);

}  // namespace dflow

#endif  // DFLOW_TOOLS_BENCH_INPUTS_H_
