// The training loop behind `dflow train`, for any Session whose graph has a train op:
// batches from in-memory examples (shuffled each epoch), N steps or epochs, the loss of
// every step, periodic evaluation and V2 checkpoints through a SaverDef. Variables live
// in the session, so they persist across steps, calls and evaluations.
//
//   TrainingLoopOptions o;
//   o.train_op = "train"; o.loss = "loss:0";
//   o.train_data = {{"x:0", images}, {"y:0", labels}};   // [N, ...] each
//   o.epochs = 3; o.batch = 64;
//   absl::StatusOr<TrainingReport> report = RunTrainingLoop(session.get(), o);
//
// Rules:
//  1. Every data column has the same number of examples N (its first dimension) and is
//     fed whole rows, already in the fed tensor's dtype; a batch is `batch` rows (the last
//     one of an epoch may be smaller, as tf.data's batch keeps it).
//  2. `steps` > 0 runs exactly that many steps, crossing epochs as needed; otherwise
//     `epochs` full passes.
//  3. Evaluation (when eval_fetches is set) runs every `eval_every` steps and after the
//     last one (eval_every 0: after each epoch), over all of eval_data in batches, and
//     reports each fetch's mean over the examples (a scalar fetch counts once per batch,
//     weighted by the batch's size).
//  4. Checkpoints (when save_prefix is set, through `saver`): "<prefix>-<step>" every
//     `save_every` steps and "<prefix>" at the end, written by the session's SaveV2.
//  5. With `tower_tensors` (data-parallel towers, graph/train/replicate.h), each batch is
//     split into one contiguous share per tower, as even as can be; share t feeds
//     tower_tensors[t][c] in place of train_data[c].tensor, and tower_weights[t] (when
//     given) is fed share_t / batch, so towers of unequal shares still average to the
//     whole batch's gradient. An epoch's last batch smaller than the number of towers is
//     dropped (tf.data's drop_remainder); fewer examples or a smaller batch than towers
//     is INVALID_ARGUMENT. Evaluation feeds the columns' own tensors.
//  6. A failing step stops the loop with its status, prefixed by the step number; the
//     session and its variables stay usable.
#ifndef DFLOW_SESSION_TRAINING_LOOP_H_
#define DFLOW_SESSION_TRAINING_LOOP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/saver.pb.h"
#include "runtime/tensor.h"
#include "session/session.h"

namespace dflow {

struct TrainingColumn {
  std::string tensor;  // the tensor fed, "node:index" or "node"
  Tensor data;         // [N, ...]: one row per example
};

struct TrainingProgress {
  int64_t step = 0, total_steps = 0;
  int epoch = 0;
  double loss = 0;             // this step's (NaN when no loss is fetched)
  double steps_per_second = 0;
};

struct EvalResult {
  int64_t step = 0;
  std::vector<double> means;  // one per eval fetch
};

struct TrainingLoopOptions {
  std::string train_op;
  std::string loss;  // "" when not fetched
  std::vector<TrainingColumn> train_data;
  std::vector<std::pair<std::string, Tensor>> constant_feeds;  // fed every step
  std::vector<std::vector<std::string>> tower_tensors;         // [tower][column] (rule 5)
  std::vector<std::string> tower_weights;                      // [tower] (rule 5)
  int64_t batch = 32;
  int epochs = 1;
  int64_t steps = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  std::vector<TrainingColumn> eval_data;
  std::vector<std::string> eval_fetches;
  std::vector<std::pair<std::string, Tensor>> eval_constant_feeds;
  int64_t eval_batch = 500;
  int64_t eval_every = 0;
  std::optional<SaverDef> saver;
  std::string save_prefix;
  int64_t save_every = 0;
  std::function<void(const TrainingProgress&)> on_step;
  std::function<void(const EvalResult&)> on_eval;
};

struct TrainingReport {
  int64_t steps = 0;
  int64_t examples = 0;        // rows fed to training steps
  std::vector<double> losses;  // per step, when a loss is fetched
  std::vector<EvalResult> evals;
  std::vector<std::string> checkpoints;
  double seconds = 0;  // the training steps only
};

absl::StatusOr<TrainingReport> RunTrainingLoop(Session* session,
                                               const TrainingLoopOptions& options);

// The examples of every column picked by `rows` (each a row index), as tensors of
// [rows.size(), ...]. INVALID_ARGUMENT for a column of a non-numeric dtype.
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> GatherRows(
    const std::vector<TrainingColumn>& columns, const std::vector<int64_t>& rows);

// Saves or restores every variable through `saver` (a V2 checkpoint at `prefix`).
absl::Status SaveCheckpoint(Session* session, const SaverDef& saver, const std::string& prefix);
absl::Status RestoreCheckpoint(Session* session, const SaverDef& saver,
                               const std::string& prefix);

}  // namespace dflow

#endif  // DFLOW_SESSION_TRAINING_LOOP_H_
