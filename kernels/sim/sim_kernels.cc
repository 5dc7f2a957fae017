// Simulated-GPU kernels: each wraps the CPU kernel of the same op and runs its Compute on
// the SimGpuDevice's compute stream, so stream order is kernel order, exactly as CUDA
// kernels would run (shared/DESIGN.md "Devices, streams, memory").
//
// Memory: the wrapped kernel sees the same OpKernelConstruction/OpKernelContext, whose
// allocator() is the GPU's BFC allocator, so outputs (and a Const's tensor, built at
// construction) live in the simulated GPU's memory (host memory with a nominal capacity).
// For the sim that is all there is to it; a real GPU Const would upload its tensor once.
// Index inputs (Reshape's shape, reduction indices, ...) are HostMemory args (below,
// recorded in each KernelDef): the partitioner receives them with _HostRecv, so they
// reach the GPU node as host tensors with no device copy (graph/memory_types.h). Outputs
// the kernel declares host memory (Shape's) still come from the GPU's allocator in the
// sim, where device memory is host memory; a CUDA kernel allocates them on the host.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/sim/register_sim_kernels.h"
#include "kernels/sim/sim_kernel_list.h"
#include "runtime/sim/sim_device.h"

namespace dflow {

namespace {

// Runs the wrapped CPU kernel on the compute stream and calls `done` from there.
class SimComputeKernel final : public AsyncOpKernel {
 public:
  SimComputeKernel(OpKernelConstruction* c, const KernelFactory& cpu_factory)
      : AsyncOpKernel(c) {
    device_ = dynamic_cast<sim::SimGpuDevice*>(c->device());
    OP_REQUIRES(c, device_ != nullptr,
                absl::InternalError(absl::StrCat("Simulated GPU kernel for '", c->name(),
                                                 "' built for a device that is not a "
                                                 "simulated GPU: ",
                                                 c->device()->name())));
    cpu_kernel_ = cpu_factory(c);
    if (!c->status().ok()) return;
    OP_REQUIRES(c, cpu_kernel_ != nullptr && cpu_kernel_->AsAsync() == nullptr,
                absl::InternalError(absl::StrCat("Simulated GPU kernel for '", c->name(),
                                                 "' needs a synchronous CPU kernel")));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    OpKernel* kernel = cpu_kernel_.get();
    // ThenExecute rather than EnqueueHostFunction: its callback runs even when the stream
    // has failed (an injected fault, an earlier copy's error), so `done` is called exactly
    // once whatever happens; a kernel's own error goes on the context, never on the
    // stream (a sticky stream error would fail every later step).
    absl::Status enqueued = device_->compute_stream()->ThenExecute(
        [kernel, ctx, done](const absl::Status& stream_status) {
          if (stream_status.ok()) {
            kernel->Compute(ctx);
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

// Args the GPU kernel keeps in host memory (TF's HostMemory); the CUDA kernels of
// these ops must declare the same.
std::vector<std::string> HostMemoryArgs(const std::string& op) {
  if (op == "Reshape") return {"shape"};
  if (op == "ExpandDims") return {"dim"};
  if (op == "Fill") return {"dims"};
  if (op == "Sum" || op == "Mean" || op == "Max") return {"reduction_indices"};
  if (op == "Shape") return {"output"};
  return {};
}

}  // namespace

absl::Status RegisterSimGpuKernels(KernelRegistry* registry) {
  for (const char* op : sim::kGpuKernelOps) {
    std::vector<std::pair<KernelDef, KernelFactory>> cpu = registry->Entries(op, "CPU");
    if (cpu.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "RegisterSimGpuKernels: no CPU kernel for '", op, "' (register the CPU kernels first)"));
    }
    for (auto& [def, factory] : cpu) {
      KernelDef gpu = def;
      gpu.device_type = "GPU";
      gpu.host_memory_args = HostMemoryArgs(op);
      DFLOW_RETURN_IF_ERROR(registry->Register(
          std::move(gpu),
          [factory = std::move(factory)](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
            return std::make_unique<SimComputeKernel>(c, factory);
          }));
    }
  }
  // Copies between devices: the generic _Send/_Recv, which copy through the simulated
  // GPUs' SimGpuCopier on their copy streams.
  return RegisterAcceleratorSendRecvKernels(registry, "GPU");
}

}  // namespace dflow
