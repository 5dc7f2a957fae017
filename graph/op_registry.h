// OpRegistry: the OpDef declarations dflow understands, keyed by op name.
//
// The global registry starts with TensorFlow 2.21's op list (every op's inputs, outputs,
// attrs, defaults and allowed values, as the tensorflow-cpu 2.21.0 wheel registers them,
// less TF's test-only ops) plus dflow's own internal ops. Declaring every TF op here means a
// real TF graph is validated against exactly TF's rules; whether an op can *run* is a
// separate question answered by the kernel registry in runtime/.
//
// Thread-safety: all methods may be called concurrently. OpDef pointers stay valid for
// the registry's lifetime (registered ops are never removed).
#ifndef DFLOW_GRAPH_OP_REGISTRY_H_
#define DFLOW_GRAPH_OP_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "proto/op_def.pb.h"

namespace dflow {

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry, filled with the built-in ops on first use.
  static OpRegistry& Global();

  // Adds `def`. ALREADY_EXISTS if an op of that name is registered; INVALID_ARGUMENT if
  // the declaration is inconsistent (an arg naming an attr that is not declared).
  absl::Status Register(OpDef def);

  // Registers every op of a binary-encoded OpList except those named in `skip`.
  absl::Status RegisterSerializedOpList(absl::string_view bytes,
                                        absl::Span<const absl::string_view> skip = {});

  // The declaration of `op`, or nullptr when no such op is registered.
  const OpDef* Find(absl::string_view op) const;

  // Names of all registered ops, sorted.
  std::vector<std::string> OpNames() const;

  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<const OpDef>> ops_
      ABSL_GUARDED_BY(mu_);
};

// The ops of TF 2.21's op list that only TensorFlow's own tests use ("A", "TestAttr",
// ...): left out of the global registry.
absl::Span<const absl::string_view> TensorFlowTestOnlyOps();

// Checks an OpDef's internal consistency (arg type attrs exist and have the right type).
absl::Status ValidateOpDef(const OpDef& def);

}  // namespace dflow

#endif  // DFLOW_GRAPH_OP_REGISTRY_H_
