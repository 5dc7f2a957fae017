// Loading TensorFlow 1.x SavedModels and MetaGraphDef + checkpoint pairs into a Session.
//
//   DFLOW_ASSIGN_OR_RETURN(SavedModelBundle bundle, LoadSavedModel(dir, {"serve"}));
//   DFLOW_ASSIGN_OR_RETURN(const SignatureDef* sig,
//                          FindSignature(bundle.meta_graph_def, "serving_default"));
//   bundle.session->Run({{sig->inputs().at("x").name(), x}},
//                       {sig->outputs().at("y").name()}, {}, &outputs);
//
// LoadSavedModel follows TF's loader (cc/saved_model/loader.cc):
//  1. Reads DIR/saved_model.pb, else DIR/saved_model.pbtxt.
//  2. Picks the MetaGraphDef whose tag set equals `tags` (as sets); NOT_FOUND listing
//     the available tag sets otherwise.
//  3. Creates a session with the graph. allow_soft_placement is switched on: TF 2, which
//     is how users load v1 SavedModels today, places softly by default, so a model
//     exported with ops pinned to /device:GPU:0 loads and runs on a CPU-only machine.
//  4. If DIR/variables/variables.index exists and the graph has a saver_def, runs
//     saver_def.restore_op_name feeding saver_def.filename_tensor_name =
//     "DIR/variables/variables".
//  5. Runs the init op: signature "__saved_model_init_op", else collection
//     "saved_model_main_op", else "legacy_init_op".
//  Steps 4 and 5 also feed every asset tensor its file's path, DIR/assets/<file>.
#ifndef DFLOW_SESSION_SAVED_MODEL_H_
#define DFLOW_SESSION_SAVED_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/config.pb.h"
#include "proto/meta_graph.pb.h"
#include "session/session.h"

namespace dflow {

inline constexpr char kSavedModelTagServe[] = "serve";
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";

// A loaded model: the session holding its restored variables, and its MetaGraphDef
// (signatures, collections).
struct SavedModelBundle {
  std::unique_ptr<Session> session;
  MetaGraphDef meta_graph_def;
};

absl::StatusOr<SavedModelBundle> LoadSavedModel(const std::string& export_dir,
                                                const std::vector<std::string>& tags,
                                                const ConfigProto& config = {});

// Creates a session with the MetaGraphDef at `meta_graph_path` (binary or text) and
// restores the checkpoint at `checkpoint_prefix` through its saver_def (as
// tf.train.Saver.restore does). A directory holding a `checkpoint` state file stands for
// its latest checkpoint. INVALID_ARGUMENT when the MetaGraphDef has no saver_def.
absl::StatusOr<SavedModelBundle> LoadMetaGraphWithCheckpoint(const std::string& meta_graph_path,
                                                             const std::string& checkpoint_prefix,
                                                             const ConfigProto& config = {});

// `path` itself, or for a directory the latest checkpoint its `checkpoint` state file
// names (as tf.train.latest_checkpoint).
absl::StatusOr<std::string> ResolveCheckpoint(const std::string& path);

// The SignatureDef `key`; NOT_FOUND listing the available keys.
absl::StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& meta_graph_def,
                                                  const std::string& key);

}  // namespace dflow

#endif  // DFLOW_SESSION_SAVED_MODEL_H_
