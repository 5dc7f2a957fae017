// Data-parallel replication of a training GraphDef (MirroredStrategy for a TF 1 graph),
// behind `dflow train --devices=D0,D1,...`.
//
// The graph's optimizer update ops (Apply*/ResourceApply*: any stateful op with a "grad"
// or "delta" input) stay as they are, once. Everything between the fed data and those
// updates' gradients or the loss (the forward pass, the loss and the backward pass TF
// wrote) is the data-dependent part R; it is one replica ("tower"):
//  - tower 0 is R itself, moved to devices[0];
//  - tower t >= 1 is a copy of R named "tower_<t>/<name>" on devices[t], reading the same
//    variables and constants (nodes outside R are shared, never copied), fed with its own
//    data tensors "tower_<t>/<data tensor>";
//  - each update's gradient becomes the towers' weighted mean, sum of weight_t * grad_t,
//    the weights "dflow_towers/weight_<t>" (default 1/N) fed share_t / batch per step, so
//    unequal shares still give the whole batch's mean gradient; the loss reported is the
//    towers' weighted mean, "dflow_towers/loss/mean".
//  - a sparse update (SparseApply*, ResourceSparseApply*: rows and their indices) gets the
//    towers' weighted rows concatenated, rows of one index summed (Unique +
//    UnsortedSegmentSum, as TF's optimizers merge repeated indices).
// Colocation (`_class`) entries that point outside R are dropped in R and its copies (a
// gradient need not sit with its variable); entries inside R follow the copy.
// v1 while loops: every node of a loop frame R reaches is copied, each copy's frames
// renamed "tower_<t>/<frame>", and so are the per-step resources R uses (the stacks and
// TensorArrays of a dynamic_rnn and its gradient, with the Enters that carry them).
// Assign* ops in R (batch-norm moving averages written from the batch statistics) run in
// tower 0 only, as TF 1's multi-tower example keeps the first tower's update ops; other
// writers of variables or shared resources in R are refused (each tower would write).
// Outside R, variable assigns fed from R (moving averages the train op groups without
// the loss waiting for them) see tower 0's data by the same rule, and Assert/Print only
// check; any other stateful op whose data comes from R, directly or not, without passing
// an update or an optimizer merge is refused (it would see tower 0 alone).
// An optimizer that merges a sparse gradient itself, outside its update ops (Adam's
// sparse path: Unique of the indices, UnsortedSegmentSum of the rows, then scatters into
// its slots and a dense update of the table), keeps that merge once, fed the towers'
// indices and weighted rows concatenated.
#ifndef DFLOW_GRAPH_TRAIN_REPLICATE_H_
#define DFLOW_GRAPH_TRAIN_REPLICATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace dflow {

struct ReplicatedGraph {
  GraphDef graph;
  std::string loss;  // the towers' mean loss ("" when no loss was given)
  // Per tower, the names to feed in place of each data tensor (tower 0: the originals).
  std::vector<std::vector<std::string>> data_tensors;
  // Per tower, the scalar float weight to feed (share of the batch / batch).
  std::vector<std::string> tower_weights;
  int replicated_nodes = 0;  // |R|
};

// INVALID_ARGUMENT naming the problem: fewer than 2 devices or an empty one; a data
// tensor, the loss or the train op not in the graph; a data placeholder with a fixed
// batch dimension; no update reached from `train_op`; a gradient, a sparse update's
// indices, the loss or a data tensor outside R; an op R cannot hold or state written
// from R outside an update (above); a non-float gradient.
absl::StatusOr<ReplicatedGraph> ReplicateForTowers(const GraphDef& graph,
                                                   const std::vector<std::string>& data_tensors,
                                                   const std::string& loss,
                                                   const std::string& train_op,
                                                   const std::vector<std::string>& devices);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_REPLICATE_H_
