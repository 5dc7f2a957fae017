// Training data for `dflow train`: a `--data=TENSOR=FILE` flag read into a column of
// examples in the dtype and per-example shape the fed tensor expects.
//
// Rules:
//  1. FILE is a .npy file (NumPy's magic) or an IDX file (MNIST's format, gzipped or
//     not); its first dimension counts the examples.
//  2. Values convert to the fed tensor's dtype as `--feed` values do
//     (tools/feed_parser.h), except that uint8 data fed to a float tensor is divided by
//     255: image pixels, as every MNIST input pipeline scales them.
//  3. When the fed placeholder declares its per-example dims and they hold as many
//     elements as a row of the file, rows are reshaped to them (IDX [N,28,28] feeds a
//     [?,784] placeholder); a different count is INVALID_ARGUMENT naming both shapes.
#ifndef DFLOW_TOOLS_TRAIN_DATA_H_
#define DFLOW_TOOLS_TRAIN_DATA_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"
#include "session/training_loop.h"

namespace dflow {

// The dtype and declared shape of the tensor `name` ("node" or "node:0") of `graph`,
// read from its node's dtype/shape attrs (Placeholder, PlaceholderWithDefault) or T.
struct FedTensorInfo {
  DataType dtype = DT_INVALID;
  std::vector<int64_t> dims;  // empty with known_rank false when unknown
  bool known_rank = false;
};
absl::StatusOr<FedTensorInfo> FedTensor(const GraphDef& graph, const std::string& name);

// One `--data` flag's value "TENSOR=FILE" read per rules 1-3.
absl::StatusOr<TrainingColumn> ReadTrainingColumn(const GraphDef& graph,
                                                  const std::string& flag);

}  // namespace dflow

#endif  // DFLOW_TOOLS_TRAIN_DATA_H_
