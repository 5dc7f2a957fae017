// GPU kernels computed on the host: the op's CPU kernel runs on a host device whose
// allocator is the GPU's pinned host memory, then each output is uploaded on the compute
// stream, so consumers on the GPU see it in stream order. For ops whose work is small or
// rare and whose exact numbers matter more than speed: the random ops (TF's Philox
// streams, the same numbers as on the CPU, bit for bit), which TF 1 graphs colocate with
// the variables they initialize. Every input must be a HostMemory arg (the table's).
#include <memory>
#include <utility>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"

namespace dflow::cuda {
namespace {

class HostComputedKernel : public CudaOpKernel {
 public:
  HostComputedKernel(OpKernelConstruction* c, const KernelFactory& cpu_factory)
      : CudaOpKernel(c) {
    if (!c->status().ok()) return;
    cpu_kernel_ = cpu_factory(c);
    if (!c->status().ok()) return;
    OP_REQUIRES(c, cpu_kernel_ != nullptr && cpu_kernel_->AsAsync() == nullptr,
                absl::InternalError(absl::StrCat("host-computed GPU kernel for '", c->name(),
                                                 "' needs a synchronous CPU kernel")));
    host_ = std::make_unique<CpuDevice>(0, gpu()->host_allocator(), gpu()->compute_pool());
  }

 protected:
  void ComputeOnGpu(OpKernelContext* ctx) override {
    std::vector<Tensor> inputs;
    for (int i = 0; i < ctx->num_inputs(); ++i) inputs.push_back(ctx->input(i));
    OpKernelContext::Params params;
    params.kernel = cpu_kernel_.get();
    params.device = host_.get();
    params.inputs = absl::MakeSpan(inputs);
    params.step_id = ctx->step_id();
    OpKernelContext host_ctx(params, ctx->num_outputs());
    cpu_kernel_->Compute(&host_ctx);
    OP_REQUIRES_OK(ctx, host_ctx.status());
    // The host outputs stay alive until their uploads are done: a ThenExecute callback
    // queued behind the copies holds them (it runs on the stream's callback thread, also
    // after a stream error). On a failed enqueue the stream is drained first, so that no
    // queued copy outlives its source.
    std::vector<Tensor> uploading;
    absl::Status status;
    for (int i = 0; i < ctx->num_outputs() && status.ok(); ++i) {
      const Tensor& host = *host_ctx.mutable_output(i);
      absl::StatusOr<Tensor*> out = ctx->allocate_output(i, host.shape());
      status = out.status();
      if (!status.ok() || host.TotalBytes() == 0) continue;
      status = LaunchStatus(*ctx, cudaMemcpyAsync((*out)->raw_data(), host.raw_data(),
                                                  host.TotalBytes(), cudaMemcpyHostToDevice,
                                                  stream()));
      if (status.ok()) uploading.push_back(host);
    }
    if (!uploading.empty()) {
      const absl::Status held = gpu()->compute_stream()->ThenExecute(
          [uploading](const absl::Status&) {});
      if (!held.ok()) {
        gpu()->compute_stream()->BlockHostUntilDone().IgnoreError();
        if (status.ok()) status = held;
      }
    }
    if (!status.ok()) {
      if (!uploading.empty()) gpu()->compute_stream()->BlockHostUntilDone().IgnoreError();
      ctx->SetStatus(status);
    }
  }

 private:
  std::unique_ptr<OpKernel> cpu_kernel_;
  std::unique_ptr<CpuDevice> host_;
};

// One GPU kernel for `op`, with the table's def, wrapping the CPU kernel the registry
// would pick for the node (the first whose constraints the node meets).
absl::Status RegisterHostComputed(KernelRegistry* registry, const char* op) {
  auto cpu = std::make_shared<const std::vector<std::pair<KernelDef, KernelFactory>>>(
      registry->Entries(op, "CPU"));
  if (cpu->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("RegisterCudaHostComputedKernels: no CPU kernel of ", op));
  }
  return registry->Register(
      GpuKernel(op), [cpu](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
        for (const auto& [def, factory] : *cpu) {
          if (KernelDefMatches(def, c->def())) {
            return std::make_unique<HostComputedKernel>(c, factory);
          }
        }
        c->SetStatus(absl::InternalError(absl::StrCat("no CPU kernel of ", c->def().op(),
                                                      " accepts node '", c->name(), "'")));
        return nullptr;
      });
}

}  // namespace

absl::Status RegisterCudaHostComputedKernels(KernelRegistry* registry) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    DFLOW_RETURN_IF_ERROR(RegisterHostComputed(registry, op));
  }
  return absl::OkStatus();
}

}  // namespace dflow::cuda
