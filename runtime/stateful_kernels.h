// StatefulKernels: the kernels of stateful nodes (random ops, variables, queues), shared
// by every executor of one session, as TF's DirectSession shares them (OpSegment).
//
// Why: a session builds one executor per (feeds, fetches, targets) signature. A seeded
// RandomUniform (dropout) must continue one Philox stream across them: TF's loss-only
// run and its training run draw from the same generator, so a script that evaluates the
// loss between steps sees TF's numbers only if the kernel is shared. Stateless kernels
// stay per executor (their constant caches and plans may differ by partition).
//
// Keyed by device, node name, op and attrs (TF keys by name alone; the rest keeps two
// different nodes that share a name across graph versions apart). Transfers (_Send,
// _Recv and their host twins) are never shared: the partitioner names them per plan.
//
// Thread-safe. Kernels must already be safe to Compute concurrently (concurrent steps
// of one executor share them too).
#ifndef DFLOW_RUNTIME_STATEFUL_KERNELS_H_
#define DFLOW_RUNTIME_STATEFUL_KERNELS_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"
#include "runtime/op_kernel.h"

namespace dflow {

class StatefulKernels {
 public:
  using Factory = std::function<absl::StatusOr<std::unique_ptr<OpKernel>>()>;

  // Whether a node of this op is shared: stateful and not a transfer.
  static bool Shares(const OpDef& op_def);

  // The kernel made earlier for the same node on `device`, or `make`'s, kept for later.
  absl::StatusOr<std::shared_ptr<OpKernel>> FindOrCreate(const std::string& device,
                                                         const NodeDef& node,
                                                         const Factory& make);

  int size() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<OpKernel>> kernels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_STATEFUL_KERNELS_H_
