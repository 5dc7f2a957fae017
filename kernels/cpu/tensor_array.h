// TensorArray: the per-step resource behind TF 1's TensorArrayV3 family (dynamic_rnn,
// tf.scan, tf.map_fn, while loops writing arrays, and their gradients), with TF 2.21's
// semantics and error texts.
//
// An array holds `size` slots (growing when dynamic_size), each unwritten, written or
// cleared (read once with clear_after_read). An unwritten slot reads as zeros when the
// element shape is fully defined. Gradient arrays (multiple_writes_aggregate) sum repeated
// writes to a slot. Values are shared Tensors: writing stores the input's buffer, reading
// hands it out; nothing is copied until Gather/Concat pack slots into one tensor.
// Thread-safe: one mutex per array.
#ifndef DFLOW_KERNELS_CPU_TENSOR_ARRAY_H_
#define DFLOW_KERNELS_CPU_TENSOR_ARRAY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/partial_shape.h"
#include "graph/types.h"
#include "runtime/allocator.h"
#include "runtime/step_resources.h"
#include "runtime/tensor.h"

namespace dflow {

class TensorArray final : public StepResource {
 public:
  struct Options {
    DataType dtype = DT_INVALID;
    PartialShape element_shape;  // unknown rank by default
    int64_t size = 0;
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    bool multiple_writes_aggregate = false;  // gradient arrays
  };

  // At most this many slots (a slot is ~72 bytes): a hostile size gets RESOURCE_EXHAUSTED
  // instead of a failed allocation that ends the process.
  static constexpr int64_t kMaxSize = int64_t{1} << 26;
  static absl::Status CheckSize(int64_t size);

  // REQUIRES: CheckSize(options.size) is OK.
  TensorArray(std::string name, const Options& options);

  std::string TypeName() const override { return "N10tensorflow11TensorArrayE"; }
  const std::string& name() const { return name_; }
  DataType dtype() const { return options_.dtype; }
  const Options& options() const { return options_; }

  int64_t Size() const;
  PartialShape ElementShape() const;
  absl::Status CheckOpen() const;

  // Writes `value` to slot `index` (summed into it for gradient arrays), growing a
  // dynamic array. `allocator` holds sums.
  absl::Status Write(int64_t index, const Tensor& value, Allocator* allocator);
  // Slot `index` (zeros when unwritten and the element shape is known), cleared after
  // the read when clear_after_read.
  absl::StatusOr<Tensor> Read(int64_t index, Allocator* allocator);
  // Marks the array closed: every later use fails (TF's ClearAndMarkClosed).
  void Close();

 private:
  struct Slot {
    Tensor value;
    bool written = false;
    bool cleared = false;
  };
  absl::Status CheckOpenLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteLocked(int64_t index, const Tensor& value, Allocator* allocator)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const Options options_;
  mutable absl::Mutex mu_;
  PartialShape element_shape_ ABSL_GUARDED_BY(mu_);
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_TENSOR_ARRAY_H_
