// Simulated-GPU kernels: each wraps the CPU kernel of the same op and runs its Compute on
// the SimGpuDevice's compute stream, so stream order is kernel order, exactly as CUDA
// kernels would run.
//
// Memory: the wrapped kernel sees the same OpKernelConstruction/OpKernelContext, whose
// allocator() is the GPU's BFC allocator, so outputs (and a Const's tensor, built at
// construction) live in the simulated GPU's memory (host memory with a nominal capacity).
// For the sim that is all there is to it; a real GPU Const would upload its tensor once.
// Index inputs (Reshape's shape, reduction indices, ...) are HostMemory args (from
// gpu_kernel_list.h, recorded in each KernelDef): the partitioner receives them with
// _HostRecv, so they reach the GPU node as host tensors with no device copy
// (graph/memory_types.h). Outputs
// the kernel declares host memory (Shape's) still come from the GPU's allocator in the
// sim, where device memory is host memory; a CUDA kernel allocates them on the host.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/node_def_util.h"
#include "graph/status_macros.h"
#include "kernels/cpu/control_flow_ops.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/sim/gpu_kernel_list.h"
#include "kernels/sim/register_sim_kernels.h"
#include "runtime/sim/sim_device.h"

namespace dflow {

namespace {

using CpuKernels = std::vector<std::pair<KernelDef, KernelFactory>>;

// The factory of the CPU kernel the registry would pick for `node` (entries are in
// priority order), or nullptr.
const KernelFactory* FindCpuFactory(const CpuKernels& cpu, const NodeDef& node) {
  for (const auto& [def, factory] : cpu) {
    if (KernelDefMatches(def, node)) return &factory;
  }
  return nullptr;
}

// Runs the wrapped CPU kernel on the compute stream and calls `done` from there.
class SimComputeKernel final : public AsyncOpKernel {
 public:
  SimComputeKernel(OpKernelConstruction* c, const CpuKernels& cpu) : AsyncOpKernel(c) {
    device_ = dynamic_cast<sim::SimGpuDevice*>(c->device());
    OP_REQUIRES(c, device_ != nullptr,
                absl::InternalError(absl::StrCat("Simulated GPU kernel for '", c->name(),
                                                 "' built for a device that is not a "
                                                 "simulated GPU: ",
                                                 c->device()->name())));
    const KernelFactory* cpu_factory = FindCpuFactory(cpu, c->def());
    OP_REQUIRES(c, cpu_factory != nullptr,
                absl::InternalError(absl::StrCat("Simulated GPU kernel for '", c->name(),
                                                 "': no CPU kernel of ", c->def().op(),
                                                 " accepts its dtypes")));
    cpu_kernel_ = (*cpu_factory)(c);
    if (!c->status().ok()) return;
    OP_REQUIRES(c, cpu_kernel_ != nullptr && cpu_kernel_->AsAsync() == nullptr,
                absl::InternalError(absl::StrCat("Simulated GPU kernel for '", c->name(),
                                                 "' needs a synchronous CPU kernel")));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    OpKernel* kernel = cpu_kernel_.get();
    // Timed here, not by the stream: it must be reported before `done` ends the step.
    std::optional<PendingActivity> traced = device_->compute_stream()->TraceActivity("kernel");
    // ThenExecute rather than EnqueueHostFunction: its callback runs even when the stream
    // has failed (an injected fault, an earlier copy's error), so `done` is called exactly
    // once whatever happens; a kernel's own error goes on the context, never on the
    // stream (a sticky stream error would fail every later step).
    absl::Status enqueued = device_->compute_stream()->ThenExecute(
        [kernel, ctx, done, traced](const absl::Status& stream_status) mutable {
          if (stream_status.ok()) {
            if (traced) traced->Begin();
            ComputeNoThrow(kernel, ctx);
            if (traced) traced->End();
          } else {
            ctx->SetStatus(stream_status);
          }
          done();
        });
    if (!enqueued.ok()) {
      ctx->SetStatus(enqueued);
      done();
    }
  }

 private:
  sim::SimGpuDevice* device_ = nullptr;
  std::unique_ptr<OpKernel> cpu_kernel_;
};

// Every dtype combination `spec` lists: one NodeDef per combination, carrying just the
// type attrs (at most a few dozen: Cast's 5 x 5 is the largest).
std::vector<NodeDef> DtypeCombinations(const GpuKernelSpec& spec) {
  std::vector<NodeDef> nodes(1);
  nodes[0].set_op(spec.op);
  for (const auto& [attr, types] : spec.type_constraints) {
    std::vector<NodeDef> next;
    for (const NodeDef& node : nodes) {
      for (DataType t : types) {
        NodeDef with = node;
        (*with.mutable_attr())[attr].set_type(t);
        next.push_back(std::move(with));
      }
    }
    nodes = std::move(next);
  }
  return nodes;
}

// FAILED_PRECONDITION unless a CPU kernel runs every dtype combination the GPU table lists
// for the op: the simulated GPU runs the CPU implementation, so it cannot offer a dtype
// the CPU lacks (and a CPU constraint on an attr the table leaves out fails here too,
// so that the table names every type attr a kernel constrains).
absl::Status CheckCpuCovers(const GpuKernelSpec& spec, const CpuKernels& cpu) {
  for (const NodeDef& node : DtypeCombinations(spec)) {
    if (FindCpuFactory(cpu, node) != nullptr) continue;
    std::vector<std::string> attrs;
    for (const auto& [name, value] : node.attr()) {
      attrs.push_back(absl::StrCat(name, "=", DataTypeString(value.type())));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "RegisterSimGpuKernels: gpu_kernel_list.h lists '", spec.op, "' with ",
        absl::StrJoin(attrs, ", "), " but no CPU kernel of it accepts that"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSimGpuKernels(KernelRegistry* registry) {
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    auto cpu = std::make_shared<const CpuKernels>(registry->Entries(spec.op, "CPU"));
    if (cpu->empty()) {
      return absl::FailedPreconditionError(absl::StrCat("RegisterSimGpuKernels: no CPU kernel for '",
                                                        spec.op,
                                                        "' (register the CPU kernels first)"));
    }
    DFLOW_RETURN_IF_ERROR(CheckCpuCovers(spec, *cpu));
    // One GPU kernel per op with exactly the table's constraints (as kernels/cuda
    // registers), whatever way the CPU kernels split their dtypes.
    DFLOW_RETURN_IF_ERROR(registry->Register(
        GpuKernelDef(spec), [cpu](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
          return std::make_unique<SimComputeKernel>(c, *cpu);
        }));
  }
  // Control flow: the routing kernels every device shares (they never touch bytes).
  DFLOW_RETURN_IF_ERROR(RegisterAcceleratorControlFlowKernels(registry, "GPU"));
  // Copies between devices: the generic _Send/_Recv, which copy through the simulated
  // GPUs' SimGpuCopier on their copy streams.
  return RegisterAcceleratorSendRecvKernels(registry, "GPU");
}

}  // namespace dflow
