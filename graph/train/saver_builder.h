// Adds a tf.compat.v1.train.Saver to a GraphDef that has none: SaveV2 and RestoreV2 over
// every variable (VarHandleOp resource variables and VariableV2/Variable ref variables),
// keyed by the variable's node name, as TF 1's Saver writes V2 checkpoints. Returns the
// SaverDef that drives it (feed the checkpoint prefix to filename_tensor_name, then run
// save_tensor_name to save or restore_op_name to restore), so a plain GraphDef with an
// init op can be trained, checkpointed and resumed like a MetaGraphDef.
//
// Node names are TF's: "save/Const" (the prefix, a PlaceholderWithDefault defaulting to
// "model"), "save/SaveV2", "save/control_dependency", "save/RestoreV2",
// "save/restore_all"; "save_1/..." and so on when "save/Const" is taken.
#ifndef DFLOW_GRAPH_TRAIN_SAVER_BUILDER_H_
#define DFLOW_GRAPH_TRAIN_SAVER_BUILDER_H_

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"
#include "proto/saver.pb.h"

namespace dflow {

// INVALID_ARGUMENT when `graph` has no variables or a variable lacks its dtype attr.
absl::StatusOr<SaverDef> AddSaver(GraphDef* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_SAVER_BUILDER_H_
