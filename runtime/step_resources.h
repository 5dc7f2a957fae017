// StepResources: the resources that live for one step of one executor (TF's per-step
// ScopedStepContainer): TensorArrays and stacks, which TF 1 loops create inside a step and
// which must not outlive it. The executor owns one per step and drops everything in it
// when the step ends, so a graph that never closes its arrays leaks nothing.
//
// A resource is named in the DT_RESOURCE handle kernels pass around (container and name of
// TF's ResourceHandleProto); lookups by a handle from another step find nothing.
// Thread-safe: kernels of one step run concurrently.
#ifndef DFLOW_RUNTIME_STEP_RESOURCES_H_
#define DFLOW_RUNTIME_STEP_RESOURCES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace dflow {

// One kind of per-step resource (a TensorArray, a stack). Kinds subclass it next to their
// kernels and guard their own state.
class StepResource {
 public:
  virtual ~StepResource() = default;
  // TF's mangled type name ("N10tensorflow11TensorArrayE"), for handles and errors.
  virtual std::string TypeName() const = 0;
};

class StepResources {
 public:
  // The container name handles of this step carry (TF's "__per_step_<id>").
  static std::string ContainerName(int64_t step_id) {
    return absl::StrCat("__per_step_", step_id);
  }

  // A name unique in this step made from `prefix`: "foo" -> "foo_0", "foo_1", ... (TF
  // numbers its TensorArrays and stacks the same way).
  std::string UniqueName(absl::string_view prefix) {
    absl::MutexLock lock(&mu_);
    return absl::StrCat(prefix, "_", next_id_++);
  }

  // Adds `resource` as `name` unless one is there; returns the one that is there then.
  std::shared_ptr<StepResource> AddIfAbsent(const std::string& name,
                                            std::shared_ptr<StepResource> resource) {
    absl::MutexLock lock(&mu_);
    auto [it, added] = resources_.try_emplace(name, std::move(resource));
    return it->second;
  }

  // The resource `name`, or nullptr. Shared: it stays alive for a kernel using it.
  std::shared_ptr<StepResource> Find(const std::string& name) const {
    absl::MutexLock lock(&mu_);
    auto it = resources_.find(name);
    return it == resources_.end() ? nullptr : it->second;
  }

  // Removes `name`; false when there was none.
  bool Remove(const std::string& name) {
    absl::MutexLock lock(&mu_);
    return resources_.erase(name) > 0;
  }

 private:
  mutable absl::Mutex mu_;
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<StepResource>> resources_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_STEP_RESOURCES_H_
