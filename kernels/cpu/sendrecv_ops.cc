// _Send/_Recv (cross-device copies inside a step) and _Arg/_Retval (feeds and fetches).
// _Send/_Recv decide where bytes go from the producer device the rendezvous carries; the
// delivery table and the zero-copy rule for host memory are in sendrecv_ops.h.
#include "kernels/cpu/sendrecv_ops.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/call_frame.h"
#include "runtime/device_copier.h"
#include "runtime/rendezvous.h"

namespace dflow {
namespace {

// The rendezvous key of a _Send/_Recv pair, minus the frame and iteration.
class SendRecvKey {
 public:
  explicit SendRecvKey(OpKernelConstruction* c) {
    int64_t incarnation = 0;
    OP_REQUIRES_OK(c, c->GetAttr("send_device", &send_device_));
    OP_REQUIRES_OK(c, c->GetAttr("recv_device", &recv_device_));
    OP_REQUIRES_OK(c, c->GetAttr("tensor_name", &tensor_name_));
    OP_REQUIRES_OK(c, c->GetAttr("send_device_incarnation", &incarnation));
    incarnation_ = static_cast<uint64_t>(incarnation);
  }
  std::string Key(FrameAndIter frame_iter) const {
    return Rendezvous::CreateKey(send_device_, incarnation_, recv_device_, tensor_name_,
                                 frame_iter);
  }

 private:
  std::string send_device_, recv_device_, tensor_name_;
  uint64_t incarnation_ = 0;
};

absl::Status MissingRendezvous(const OpKernelContext& ctx) {
  return absl::InternalError(absl::StrCat(ctx.kernel().type_string(), " ran without a rendezvous"));
}

// The device whose memory holds a tensor, null for host memory.
Device* MemoryOwner(Device* device) {
  return device != nullptr && device->copier() != nullptr ? device : nullptr;
}

class SendOp final : public CheapOpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c)
      : CheapOpKernel(c),
        key_(c),
        producer_(c->def().op() == "_HostSend" ? nullptr : MemoryOwner(c->device())) {}
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->rendezvous() != nullptr, MissingRendezvous(*ctx));
    OP_REQUIRES_OK(ctx, ctx->rendezvous()->Send(key_.Key(ctx->frame_iter()), ctx->input(0),
                                                ctx->input_is_dead(0), producer_));
  }

 private:
  SendRecvKey key_;
  Device* const producer_;  // where the sent bytes live; null: host memory
};

// Sets `value`, whose bytes live in `from`'s memory (null: host), as output 0 of a _Recv
// whose output lives in `to`'s memory (null: host); copies through the producer's or the
// receiver's copier when the two differ (sendrecv_ops.h). Calls `done` once delivered.
void Deliver(OpKernelContext* ctx, const Tensor& value, Device* from, Device* to,
             const AsyncOpKernel::DoneCallback& done) {
  // Strings, resource handles and variants are host objects wherever they are "placed"
  // (TF keeps them in host memory too): handed over as they are, never copied.
  if (from == to || !value.IsInitialized() || value.dtype() == DT_STRING ||
      value.dtype() == DT_RESOURCE || value.dtype() == DT_VARIANT) {
    ctx->set_output(0, value);  // same memory: zero-copy
    return done();
  }
  // Into host memory: the producer's host allocator (page-locked on a GPU, so the copy is
  // one DMA and a fetched result needs no second copy).
  Allocator* allocator = to != nullptr ? to->allocator() : from->host_allocator();
  absl::StatusOr<Tensor> out = Tensor::Allocate(allocator, value.dtype(), value.shape());
  if (!out.ok()) {
    ctx->SetStatus(out.status());
    return done();
  }
  auto finish = [ctx, done, out = *out](const absl::Status& copied) {
    if (copied.ok()) {
      ctx->set_output(0, out);
    } else {
      ctx->SetStatus(copied);
    }
    done();
  };
  if (to == nullptr) {
    from->copier()->CopyDeviceToHost(value, *out, std::move(finish));
  } else if (from == nullptr) {
    to->copier()->CopyHostToDevice(value, *out, std::move(finish));
  } else {
    from->copier()->CopyDeviceToDevice(value, to, *out, std::move(finish));
  }
}

class RecvOp final : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c)
      : AsyncOpKernel(c),
        key_(c),
        memory_(c->def().op() == "_HostRecv" ? nullptr : MemoryOwner(c->device())) {}
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    if (ctx->rendezvous() == nullptr) {
      ctx->SetStatus(MissingRendezvous(*ctx));
      done();
      return;
    }
    ctx->rendezvous()->RecvAsyncFrom(
        key_.Key(ctx->frame_iter()),
        [ctx, done, to = memory_](const absl::Status& status, const Tensor& value, bool is_dead,
                                  Device* producer) {
          if (!status.ok()) {
            ctx->SetStatus(status);
          } else if (is_dead) {
            ctx->set_output_dead(0);
          } else {
            return Deliver(ctx, value, MemoryOwner(producer), to, done);
          }
          done();
        });
  }

 private:
  SendRecvKey key_;
  Device* const memory_;  // where the output lives; null: host memory
};

class ArgOp final : public CheapOpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : CheapOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->call_frame();
    OP_REQUIRES(ctx, frame != nullptr && index_ >= 0 && index_ < static_cast<int64_t>(frame->args.size()),
                absl::InternalError(absl::StrCat("_Arg ", index_, " has no fed value")));
    ctx->set_output(0, frame->args[index_]);
  }

 private:
  int64_t index_ = 0;
};

class RetvalOp final : public CheapOpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* c) : CheapOpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->call_frame();
    OP_REQUIRES(ctx, frame != nullptr && index_ >= 0 && index_ < static_cast<int64_t>(frame->retvals.size()),
                absl::InternalError(absl::StrCat("_Retval ", index_, " has no slot")));
    frame->retvals[index_] = ctx->input(0);
    frame->retval_set[index_] = 1;
  }

 private:
  int64_t index_ = 0;
};

}  // namespace

absl::Status RegisterSendRecvKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<SendOp>(KernelDefBuilder("_Send").Device("CPU")));
  DFLOW_RETURN_IF_ERROR(registry->Register<RecvOp>(KernelDefBuilder("_Recv").Device("CPU")));
  DFLOW_RETURN_IF_ERROR(registry->Register<SendOp>(KernelDefBuilder("_HostSend").Device("CPU")));
  DFLOW_RETURN_IF_ERROR(registry->Register<RecvOp>(KernelDefBuilder("_HostRecv").Device("CPU")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ArgOp>(KernelDefBuilder("_Arg").Device("CPU")));
  DFLOW_RETURN_IF_ERROR(registry->Register<RetvalOp>(KernelDefBuilder("_Retval").Device("CPU")));
  return absl::OkStatus();
}

absl::Status RegisterAcceleratorSendRecvKernels(KernelRegistry* registry,
                                                absl::string_view device_type) {
  const std::string type(device_type);
  DFLOW_RETURN_IF_ERROR(registry->Register<SendOp>(KernelDefBuilder("_Send").Device(type)));
  DFLOW_RETURN_IF_ERROR(registry->Register<RecvOp>(KernelDefBuilder("_Recv").Device(type)));
  DFLOW_RETURN_IF_ERROR(registry->Register<SendOp>(
      KernelDefBuilder("_HostSend").Device(type).HostMemory("tensor")));
  return registry->Register<RecvOp>(
      KernelDefBuilder("_HostRecv").Device(type).HostMemory("tensor"));
}

}  // namespace dflow
