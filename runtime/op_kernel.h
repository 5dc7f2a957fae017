// OpKernel: the code that runs one node on one device, and the contexts it sees.
//
// A kernel is built once per node when a plan is compiled (OpKernelConstruction: attrs,
// dtypes, device); a stateful node's kernel once per session, shared by its plans
// (stateful_kernels.h). It is Compute()d once per step (OpKernelContext: inputs, outputs,
// allocation, device, step state). Kernels never throw and never abort: they record an
// absl::Status on the context (OP_REQUIRES) and return; the executor annotates it with
// the node's name. Bad shapes are INVALID_ARGUMENT naming the shapes.
//
// Thread-safety: Compute() may run concurrently for different steps (of one plan, or of
// several for a stateful kernel), so
// kernels keep no mutable per-step state in members (state built in the constructor,
// like a Const's tensor, is read-only afterwards).
#ifndef DFLOW_RUNTIME_OP_KERNEL_H_
#define DFLOW_RUNTIME_OP_KERNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/partial_shape.h"
#include "graph/types.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"
#include "runtime/device.h"
#include "runtime/ref_slot.h"
#include "runtime/tensor.h"

namespace dflow {

class Rendezvous;
class CancellationToken;
struct CallFrame;
struct ResourceLimits;

// Records `status` on `ctx` and returns from the enclosing void function when `cond`
// is false / when `expr` is not OK.
#define OP_REQUIRES(ctx, cond, status) \
  do {                                 \
    if (!(cond)) {                     \
      (ctx)->SetStatus(status);        \
      return;                          \
    }                                  \
  } while (0)

#define OP_REQUIRES_OK(ctx, expr)             \
  do {                                        \
    ::absl::Status op_requires_status_ = (expr); \
    if (!op_requires_status_.ok()) {          \
      (ctx)->SetStatus(op_requires_status_);  \
      return;                                 \
    }                                         \
  } while (0)

// Assigns `lhs` from a StatusOr, or records the error on `ctx` and returns.
#define OP_ASSIGN_OR_RETURN(ctx, lhs, expr) \
  OP_ASSIGN_OR_RETURN_IMPL_(ctx, DFLOW_OP_CONCAT_(op_statusor_, __LINE__), lhs, expr)
#define DFLOW_OP_CONCAT_INNER_(a, b) a##b
#define DFLOW_OP_CONCAT_(a, b) DFLOW_OP_CONCAT_INNER_(a, b)
#define OP_ASSIGN_OR_RETURN_IMPL_(ctx, tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) {                                     \
    (ctx)->SetStatus(tmp.status());                    \
    return;                                            \
  }                                                    \
  lhs = std::move(tmp).value()

class OpKernelConstruction {
 public:
  // All references are borrowed and must outlive the construction call.
  OpKernelConstruction(const NodeDef& def, const OpDef& op_def, const DataTypeVector& inputs,
                       const DataTypeVector& outputs, Device* device);
  // As above, with the NodeDef kernels keep: shared instead of copied (a simulated-GPU
  // kernel and the CPU kernel inside it both keep it), and possibly slimmer than `def`,
  // which they read attrs from while constructed (a Const's kept def has no `value`:
  // the kernel holds the decoded tensor, and the bytes need not live twice).
  OpKernelConstruction(const NodeDef& def, std::shared_ptr<const NodeDef> kept_def,
                       const OpDef& op_def, const DataTypeVector& inputs,
                       const DataTypeVector& outputs, Device* device);

  // The def kernels keep, shared: the one passed in, or a copy made on the first call.
  std::shared_ptr<const NodeDef> shared_def() const;

  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return op_def_; }
  const std::string& name() const { return def_.name(); }
  Device* device() const { return device_; }
  Allocator* allocator() const { return device_->allocator(); }
  const DataTypeVector& input_types() const { return inputs_; }
  const DataTypeVector& output_types() const { return outputs_; }

  // Typed attr access. INVALID_ARGUMENT naming the node and attr when missing or of
  // another type. Supported T: bool, int32_t, int64_t, float, std::string, DataType,
  // PartialShape, TensorProto, and std::vector of bool/int32_t/int64_t/float/
  // std::string/DataType.
  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const;
  bool HasAttr(absl::string_view name) const;

  void SetStatus(const absl::Status& status) {
    if (status_.ok()) status_ = status;
  }
  const absl::Status& status() const { return status_; }

 private:
  mutable std::shared_ptr<const NodeDef> shared_def_;
  const NodeDef& def_;
  const OpDef& op_def_;
  const DataTypeVector& inputs_;
  const DataTypeVector& outputs_;
  Device* device_;
  absl::Status status_;
};


// GetAttr is defined (only) for these types, in op_kernel.cc.
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, bool*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, int64_t*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, int32_t*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, float*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::string*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, DataType*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, TensorProto*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, PartialShape*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::vector<bool>*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::vector<int64_t>*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::vector<int32_t>*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::vector<float>*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::vector<std::string>*) const;
template <>
absl::Status OpKernelConstruction::GetAttr(absl::string_view, std::vector<DataType>*) const;

class OpKernel;
class StepResources;

// Where a step is in v1 control flow (frame id, iteration); "0:0" at top level.
struct FrameAndIter {
  uint64_t frame_id = 0;
  int64_t iter_id = 0;
};

class OpKernelContext {
 public:
  // What the executor hands a kernel for one invocation. Borrowed pointers.
  struct Params {
    const OpKernel* kernel = nullptr;
    Device* device = nullptr;
    absl::Span<Tensor> inputs;          // one entry per data input
    const bool* input_is_dead = nullptr;  // per input; null means all live
    // Per input: the RefSlot it arrived over, or null; null array when the graph has no
    // reference edges.
    RefSlot* const* input_refs = nullptr;
    Rendezvous* rendezvous = nullptr;
    int64_t step_id = 0;
    FrameAndIter frame_iter;
    CancellationToken* cancellation = nullptr;
    CallFrame* call_frame = nullptr;  // feeds and fetches of the step
    StepResources* step_resources = nullptr;  // this step's TensorArrays and stacks
    // The session's allocation limits, checked by allocate_output/allocate_temp; null:
    // none (kernels run outside a session, tests).
    const ResourceLimits* limits = nullptr;
  };

  OpKernelContext(const Params& params, int num_outputs);

  const OpKernel& kernel() const { return *params_.kernel; }
  const std::string& node_name() const;
  Device* device() const { return params_.device; }
  Allocator* allocator() const { return params_.device->allocator(); }
  ThreadPool* pool() const { return params_.device->compute_pool(); }
  Rendezvous* rendezvous() const { return params_.rendezvous; }
  int64_t step_id() const { return params_.step_id; }
  FrameAndIter frame_iter() const { return params_.frame_iter; }
  CancellationToken* cancellation() const { return params_.cancellation; }
  CallFrame* call_frame() const { return params_.call_frame; }
  // Resources that end with the step (TensorArrays, stacks); null outside an executor.
  StepResources* step_resources() const { return params_.step_resources; }

  int num_inputs() const { return static_cast<int>(params_.inputs.size()); }
  const Tensor& input(int index) const { return params_.inputs[index]; }
  bool input_is_dead(int index) const {
    return params_.input_is_dead != nullptr && params_.input_is_dead[index];
  }
  // Reference inputs (variables). For an input whose declared type is a ref type this is
  // the slot it points at, and input(index) is empty: the kernel reads or updates the
  // value under the slot's lock. For other inputs fed from a ref output the executor
  // has already read the value into input(index); input_ref(index) is then still the
  // slot (so RefIdentity-like kernels can forward it). Null for ordinary inputs.
  RefSlot* input_ref(int index) const {
    return params_.input_refs == nullptr ? nullptr : params_.input_refs[index];
  }
  // Whether input `index` carries a value: live and either a tensor or a ref. Merge
  // uses it, since it runs with only its first live input delivered.
  bool has_input(int index) const {
    return !input_is_dead(index) &&
           (params_.inputs[index].IsInitialized() || input_ref(index) != nullptr);
  }
  // Moves input `in` to output `out` when this node holds the only reference to its
  // buffer and dtype and shape match: the kernel may then write the result in place.
  // Returns the output, or nullptr when forwarding is not possible.
  Tensor* ForwardInputToOutput(int in, int out, const TensorShape& shape);

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // Allocates output `index` with the node's declared dtype on this device.
  // RESOURCE_EXHAUSTED naming shape, dtype, device and allocator when memory is short.
  absl::StatusOr<Tensor*> allocate_output(int index, const TensorShape& shape);
  absl::StatusOr<Tensor> allocate_temp(DataType dtype, const TensorShape& shape);
  void set_output(int index, Tensor tensor) { outputs_[index] = std::move(tensor); }
  Tensor* mutable_output(int index) { return &outputs_[index]; }
  // Marks output `index` dead (v1 control flow: Switch's untaken branch).
  void set_output_dead(int index);
  bool output_is_dead(int index) const;
  // Makes output `index` a reference to `slot` (VariableV2, Assign's output_ref, and
  // kernels that forward a ref input: RefIdentity, RefSwitch, RefEnter, ...). `slot` is
  // borrowed and must outlive the step.
  void set_output_ref(int index, RefSlot* slot);
  RefSlot* output_ref(int index) const {
    return output_refs_.empty() ? nullptr : output_refs_[index];
  }

  void SetStatus(const absl::Status& status) {
    if (status_.ok()) status_ = status;
  }
  const absl::Status& status() const { return status_; }

  // The session's limits for a string tensor whose elements will hold `string_bytes`
  // characters in all: kernels that replicate or grow strings (Tile, Fill, BroadcastTo,
  // regex replacement) call it before making them, since characters bypass the allocator.
  absl::Status CheckStringLimits(const TensorShape& shape, double string_bytes) const;

 private:
  // The session's limits (params_.limits) for a tensor about to be allocated, with the
  // characters of its strings when the caller knows them.
  absl::Status CheckLimits(DataType dtype, const TensorShape& shape,
                           double string_bytes = 0) const;

  const Params& params_;
  absl::InlinedVector<Tensor, 2> outputs_;
  absl::InlinedVector<bool, 2> dead_outputs_;
  absl::InlinedVector<RefSlot*, 1> output_refs_;  // empty unless a ref was set
  absl::Status status_;
};

class AsyncOpKernel;

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* context);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(OpKernelContext* context) = 0;
  virtual AsyncOpKernel* AsAsync() { return nullptr; }
  // Expensive kernels go to the thread pool; cheap ones run inline on the executor's
  // thread. Defaults to true; bookkeeping kernels (Const, Identity, ...) say false.
  virtual bool IsExpensive() const { return true; }

  const std::string& name() const { return def_->name(); }
  const std::string& type_string() const { return def_->op(); }
  const NodeDef& def() const { return *def_; }
  DataType output_type(int i) const { return output_types_[i]; }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }

 private:
  std::shared_ptr<const NodeDef> def_;  // never null; shared with wrapped kernels
  DataTypeVector output_types_;
};

// A kernel whose work completes later (e.g. _Recv waiting for its tensor).
class AsyncOpKernel : public OpKernel {
 public:
  using DoneCallback = std::function<void()>;
  using OpKernel::OpKernel;

  // Must eventually call `done` exactly once, after setting outputs or status.
  virtual void ComputeAsync(OpKernelContext* context, DoneCallback done) = 0;
  AsyncOpKernel* AsAsync() override { return this; }
  // Runs ComputeAsync and blocks until it is done.
  void Compute(OpKernelContext* context) override;
};

// Runs `kernel->Compute(context)` with no exception escaping into the executor: one
// thrown inside (a container's std::bad_alloc or std::length_error when an input asks for
// a huge size) becomes the context's status, RESOURCE_EXHAUSTED for allocation failures
// and INTERNAL for anything else; the executor then names the node, the step fails
// cleanly and the session stays usable.
void ComputeNoThrow(OpKernel* kernel, OpKernelContext* context);
// The same for ComputeAsync: when it throws before calling `done`, the status is set and
// `done` is called here (once, whatever the kernel does). A kernel that throws after
// handing `done` to another thread is not supported (that thread may run it first).
void ComputeAsyncNoThrow(AsyncOpKernel* kernel, OpKernelContext* context,
                         AsyncOpKernel::DoneCallback done);

}  // namespace dflow

#endif  // DFLOW_RUNTIME_OP_KERNEL_H_
