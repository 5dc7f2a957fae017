// `dflow train`: N training steps of a graph that has a train op, over .npy or IDX data,
// with shuffling, epochs, a progress bar with the loss, periodic evaluation and V2
// checkpoints TensorFlow reads.
//
//   dflow train --meta_graph=FILE [--checkpoint=PREFIX|DIR] [--init=OP]
//   dflow train --graph=PATH [--init=OP] [--checkpoint=PREFIX|DIR]
//               --train_op=NAME [--loss=NAME] --data=TENSOR=FILE...
//               [--rows=B:E] [--eval_rows=B:E] [--batch=32] [--epochs=1 | --steps=N]
//               [--shuffle=true|false] [--seed=N]
//               [--feed=NAME=VALUE]... [--eval_data=TENSOR=FILE]... [--eval_fetch=NAME]...
//               [--eval_feed=NAME=VALUE]... [--eval_every=N] [--eval_batch=500]
//               [--save=PREFIX] [--save_every=N] [--config=TEXTPROTO]
//               [--progress=auto|bar|lines|none] [--output=text|json]
//               [--devices=D0,D1,...]
//
// Rules:
//  1. The graph: --meta_graph (a MetaGraphDef, binary or text, whose saver_def saves and
//     restores) or --graph (a GraphDef; a Saver over all its variables is added,
//     graph/train/saver_builder.h, when --checkpoint or --save needs one).
//  2. Variables: --init runs that op (e.g. `init`, TF's global_variables_initializer)
//     first; --checkpoint then restores a V2 checkpoint (a prefix, or a directory whose
//     `checkpoint` file names one). At least one of them is required.
//  3. Data: tools/train_data.h (--data for training, --eval_data for evaluation, rows
//     matched by index across flags; --rows=BEGIN:END and --eval_rows=BEGIN:END keep
//     those examples only, e.g. one file split into training and held-out digits).
//     --feed gives constant values fed every training step (e.g. keep_prob=0.5),
//     --eval_feed every evaluation run.
//  4. Steps: session/training_loop.h (shuffled each epoch unless --shuffle=false; the
//     last batch of an epoch may be smaller; --steps crosses epochs).
//  5. Progress on stderr: with --loss, a bar redrawn in place on a terminal (`bar`) or a
//     line about every 10% of the steps (`lines`, the default when stderr is not a
//     terminal); evaluation results as they come.
//  6. Checkpoints (--save): "<PREFIX>-<step>" every --save_every steps and "<PREFIX>" at
//     the end, plus the `checkpoint` state file in PREFIX's directory naming the latest,
//     as tf.train.Saver writes it, so tf.train.latest_checkpoint finds it.
//  7. The report on stdout: text, or with --output=json exactly one JSON document
//     {"steps", "seconds", "steps_per_second", "examples_per_second", "first_loss",
//     "final_loss", "losses": [...], "evals": [{"step", "<fetch>": mean, ...}],
//     "checkpoints": [...]}.
//  8. Errors name the flag, tensor or step at fault (exit 1).
//  9. --devices=D0,D1,... trains data-parallel, as MirroredStrategy: the graph's forward
//     and backward passes are replicated once per device (graph/train/replicate.h),
//     each batch is split over the towers, their gradients are averaged and applied
//     once to the one copy of the variables; the loss reported is the towers' mean.
//     Evaluation runs on tower 0. (Add device_count to --config for several CPUs.)
//     One device (--devices=/gpu:0) places the whole graph there instead, as
//     `with tf.device(...)` around it (nodes naming a device keep it). Either way
//     allow_soft_placement is on: ops without a kernel there fall back to the CPU.
#ifndef DFLOW_TOOLS_TRAIN_COMMAND_H_
#define DFLOW_TOOLS_TRAIN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dflow {

absl::Status RunTrainCommand(const std::vector<std::string>& args, std::ostream& out,
                             std::ostream& progress);

}  // namespace dflow

#endif  // DFLOW_TOOLS_TRAIN_COMMAND_H_
