// _Send/_Recv (cross-device copies inside a step) and _Arg/_Retval (feeds and fetches).
// On the CPU a received tensor shares the sender's buffer when the sender is a CPU: host
// memory needs no copy. From a GPU (send_device names a GPU) the CPU _Recv copies the
// tensor into a fresh host tensor, so no device buffer outlives its device (fetches) or
// is read by the host while the device may reuse it. For simulated GPUs (device memory
// is host memory, and a GPU _Send publishes only after its compute-stream work is done)
// that copy is a plain memcpy; the next step, for real GPUs, is to enqueue it on the
// sender's device_to_host stream and call done from ThenExecute.
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/call_frame.h"
#include "runtime/rendezvous.h"

namespace dflow {
namespace {

// The rendezvous key of a _Send/_Recv pair, minus the frame and iteration.
class SendRecvKey {
 public:
  explicit SendRecvKey(OpKernelConstruction* c) {
    std::string send_device, recv_device, tensor_name;
    int64_t incarnation = 0;
    OP_REQUIRES_OK(c, c->GetAttr("send_device", &send_device));
    OP_REQUIRES_OK(c, c->GetAttr("recv_device", &recv_device));
    OP_REQUIRES_OK(c, c->GetAttr("tensor_name", &tensor_name));
    OP_REQUIRES_OK(c, c->GetAttr("send_device_incarnation", &incarnation));
    send_device_ = send_device;
    recv_device_ = recv_device;
    tensor_name_ = tensor_name;
    incarnation_ = static_cast<uint64_t>(incarnation);
    send_device_is_gpu_ = absl::StrContains(absl::AsciiStrToUpper(send_device_), "GPU:");
  }
  // True when the sender is a GPU (its tensors live in device memory).
  bool send_device_is_gpu() const { return send_device_is_gpu_; }
  std::string Key(FrameAndIter frame_iter) const {
    return Rendezvous::CreateKey(send_device_, incarnation_, recv_device_, tensor_name_,
                                 frame_iter);
  }

 private:
  std::string send_device_, recv_device_, tensor_name_;
  uint64_t incarnation_ = 0;
  bool send_device_is_gpu_ = false;
};

absl::Status MissingRendezvous(const OpKernelContext& ctx) {
  return absl::InternalError(absl::StrCat(ctx.kernel().type_string(), " ran without a rendezvous"));
}

class SendOp final : public CheapOpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c) : CheapOpKernel(c), key_(c) {}
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->rendezvous() != nullptr, MissingRendezvous(*ctx));
    OP_REQUIRES_OK(ctx, ctx->rendezvous()->Send(key_.Key(ctx->frame_iter()), ctx->input(0),
                                                ctx->input_is_dead(0)));
  }

 private:
  SendRecvKey key_;
};

class RecvOp final : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c) : AsyncOpKernel(c), key_(c) {}
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    if (ctx->rendezvous() == nullptr) {
      ctx->SetStatus(MissingRendezvous(*ctx));
      done();
      return;
    }
    ctx->rendezvous()->RecvAsync(
        key_.Key(ctx->frame_iter()),
        [ctx, done, from_gpu = key_.send_device_is_gpu()](const absl::Status& status,
                                                          const Tensor& value, bool is_dead) {
          if (!status.ok()) {
            ctx->SetStatus(status);
          } else if (is_dead) {
            ctx->set_output_dead(0);
          } else if (from_gpu && value.IsInitialized() && value.dtype() != DT_STRING) {
            absl::StatusOr<Tensor> host =
                Tensor::Allocate(ctx->allocator(), value.dtype(), value.shape());
            if (!host.ok()) {
              ctx->SetStatus(host.status());
            } else {
              if (value.TotalBytes() > 0) {
                std::memcpy(host->raw_data(), value.raw_data(), value.TotalBytes());
              }
              ctx->set_output(0, *std::move(host));
            }
          } else {
            ctx->set_output(0, value);
          }
          done();
        });
  }

 private:
  SendRecvKey key_;
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

}  // namespace dflow
