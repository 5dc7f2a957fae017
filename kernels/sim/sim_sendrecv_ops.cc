// "GPU" _Send/_Recv for simulated GPUs (cross-device copies inside a step).
//
//  - _Send on a GPU publishes its input to the step's Rendezvous when it runs. Publishing
//    then is correct because every simulated kernel has finished its compute-stream work
//    before it calls done, so the producer's buffer is complete by the time _Send runs.
//  - _Recv on a GPU copies the received tensor into a fresh buffer from the GPU's
//    allocator on the device's host_to_device stream. That stream first WaitFor()s an
//    event recorded on the compute stream, so a reused buffer is never overwritten while
//    earlier compute work may still read it; done is called from ThenExecute once the copy
//    is done. (The sender may be the CPU or another GPU: sim device memory is host memory.)
//  - The CPU side (a CPU _Recv of a GPU tensor) is in kernels/cpu/sendrecv_ops.cc.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/sim/register_sim_kernels.h"
#include "runtime/rendezvous.h"
#include "runtime/sim/sim_device.h"

namespace dflow {
namespace {

// Runs the wrapped CPU kernel inline (the GPU _Send: it only hands a Tensor over).
class InlineKernel final : public OpKernel {
 public:
  InlineKernel(OpKernelConstruction* c, const KernelFactory& cpu_factory) : OpKernel(c) {
    cpu_kernel_ = cpu_factory(c);
    if (!c->status().ok()) return;
    OP_REQUIRES(c, cpu_kernel_ != nullptr && cpu_kernel_->AsAsync() == nullptr,
                absl::InternalError(absl::StrCat("'", c->name(), "' needs a synchronous kernel")));
  }
  void Compute(OpKernelContext* ctx) override { cpu_kernel_->Compute(ctx); }
  bool IsExpensive() const override { return false; }

 private:
  std::unique_ptr<OpKernel> cpu_kernel_;
};

class SimGpuRecvOp final : public AsyncOpKernel {
 public:
  explicit SimGpuRecvOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    device_ = dynamic_cast<sim::SimGpuDevice*>(c->device());
    OP_REQUIRES(c, device_ != nullptr,
                absl::InternalError(absl::StrCat("GPU _Recv '", c->name(),
                                                 "' built for a device that is not a simulated GPU")));
    int64_t incarnation = 0;
    OP_REQUIRES_OK(c, c->GetAttr("send_device", &send_device_));
    OP_REQUIRES_OK(c, c->GetAttr("recv_device", &recv_device_));
    OP_REQUIRES_OK(c, c->GetAttr("tensor_name", &tensor_name_));
    OP_REQUIRES_OK(c, c->GetAttr("send_device_incarnation", &incarnation));
    incarnation_ = static_cast<uint64_t>(incarnation);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    if (ctx->rendezvous() == nullptr) {
      ctx->SetStatus(absl::InternalError("_Recv ran without a rendezvous"));
      done();
      return;
    }
    sim::SimGpuDevice* device = device_;
    ctx->rendezvous()->RecvAsync(
        Rendezvous::CreateKey(send_device_, incarnation_, recv_device_, tensor_name_,
                              ctx->frame_iter()),
        [ctx, done, device](const absl::Status& status, const Tensor& value, bool is_dead) {
          if (!status.ok()) {
            ctx->SetStatus(status);
            done();
          } else if (is_dead) {
            ctx->set_output_dead(0);
            done();
          } else {
            CopyToDevice(ctx, device, value, done);
          }
        });
  }

 private:
  static void CopyToDevice(OpKernelContext* ctx, sim::SimGpuDevice* device, const Tensor& value,
                           const DoneCallback& done) {
    if (!value.IsInitialized() || value.dtype() == DT_STRING || value.TotalBytes() == 0) {
      // Nothing to copy (strings never live in device memory; empty tensors have no bytes).
      if (value.IsInitialized() && value.dtype() != DT_STRING) {
        absl::StatusOr<Tensor> empty = Tensor::Allocate(ctx->allocator(), value.dtype(), value.shape());
        if (!empty.ok()) {
          ctx->SetStatus(empty.status());
        } else {
          ctx->set_output(0, *std::move(empty));
        }
      } else {
        ctx->set_output(0, value);
      }
      done();
      return;
    }
    absl::StatusOr<Tensor> allocated = Tensor::Allocate(ctx->allocator(), value.dtype(), value.shape());
    if (!allocated.ok()) {
      ctx->SetStatus(allocated.status());
      done();
      return;
    }
    auto out = std::make_shared<Tensor>(*std::move(allocated));
    absl::Status status = [&]() -> absl::Status {
      DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Event> computed,
                             device->compute_stream()->RecordEvent());
      Stream* h2d = device->host_to_device_stream();
      DFLOW_RETURN_IF_ERROR(h2d->WaitFor(*computed));
      DFLOW_RETURN_IF_ERROR(h2d->MemcpyHostToDevice(out->raw_data(), value.raw_data(),
                                                    value.TotalBytes()));
      // `value` and `out` stay alive until the copy is done.
      return h2d->ThenExecute([ctx, done, out, value](const absl::Status& copied) {
        if (copied.ok()) {
          ctx->set_output(0, std::move(*out));
        } else {
          ctx->SetStatus(copied);
        }
        done();
      });
    }();
    if (!status.ok()) {
      // Nothing will call done: make sure no enqueued copy still touches the buffers.
      device->host_to_device_stream()->BlockHostUntilDone().IgnoreError();
      ctx->SetStatus(status);
      done();
    }
  }

  sim::SimGpuDevice* device_ = nullptr;
  std::string send_device_, recv_device_, tensor_name_;
  uint64_t incarnation_ = 0;
};

}  // namespace

absl::Status RegisterSimSendRecvKernels(KernelRegistry* registry) {
  for (auto& [def, factory] : registry->Entries("_Send", "CPU")) {
    KernelDef gpu = def;
    gpu.device_type = "GPU";
    DFLOW_RETURN_IF_ERROR(registry->Register(
        std::move(gpu),
        [factory = factory](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
          return std::make_unique<InlineKernel>(c, factory);
        }));
  }
  return registry->Register<SimGpuRecvOp>(KernelDefBuilder("_Recv").Device("GPU"));
}

}  // namespace dflow
