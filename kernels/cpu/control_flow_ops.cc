// TF v1 control-flow kernels: Switch, _SwitchN, Merge, Enter, Exit, NextIteration (and
// their Ref* variants), LoopCond, ControlTrigger and ToBool (the last two with _SwitchN
// are what lowered If/Case/While use: graph/functional_control_flow.h), and IdentityN
// and NoOp (what inlined function calls are made of).
//
// They only route values: frames, iterations and deadness are the executor's business
// (runtime/executor.h, rule 7). The Ref* variants forward the RefSlot they received
// instead of a value (runtime/ref_slot.h). All are cheap and run inline, as in TF.
#include "kernels/cpu/control_flow_ops.h"

#include <initializer_list>
#include <string>

#include "graph/status_macros.h"
#include "graph/types.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// Output `out` := input `in`, as a value or, for ref-typed outputs, as the same ref.
void Forward(OpKernelContext* ctx, bool ref, int in, int out) {
  if (ref) {
    ctx->set_output_ref(out, ctx->input_ref(in));
  } else {
    ctx->set_output(out, ctx->input(in));
  }
}

// A scalar the kernel writes on the host: in host memory on every device (on an
// accelerator the arg is HostMemory, control_flow_ops.h).
absl::StatusOr<Tensor> HostScalar(OpKernelContext* ctx, DataType dtype) {
  return Tensor::Allocate(ctx->device()->host_allocator(), dtype, TensorShape());
}

class RoutingKernel : public CheapOpKernel {
 public:
  explicit RoutingKernel(OpKernelConstruction* c)
      : CheapOpKernel(c), ref_(!c->output_types().empty() && IsRefType(c->output_types()[0])) {}

 protected:
  bool ref() const { return ref_; }

 private:
  const bool ref_;
};

// Enter, Exit, NextIteration and their Ref* forms: the executor moves the value
// between frames or iterations.
class ForwardOp : public RoutingKernel {
 public:
  using RoutingKernel::RoutingKernel;
  void Compute(OpKernelContext* ctx) override { Forward(ctx, ref(), 0, 0); }
};

// Switch(data, pred): output 1 (output_true) when pred, else output 0; the other is dead.
class SwitchOp : public RoutingKernel {
 public:
  using RoutingKernel::RoutingKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    OP_REQUIRES(ctx, pred.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "The second input must be a scalar, but it has shape ",
                    pred.shape().DebugString())));
    const int taken = pred.scalar<bool>() ? 1 : 0;
    Forward(ctx, ref(), 0, taken);
    ctx->set_output_dead(1 - taken);
  }
};

// _SwitchN(data, output_index): output `output_index` gets data, the others are dead. An
// index out of [0, num_outs) selects the last output (a Case's default branch, as TF).
class SwitchNOp : public RoutingKernel {
 public:
  using RoutingKernel::RoutingKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& index = ctx->input(1);
    OP_REQUIRES(ctx, index.shape().dims() == 0,
                KernelError(*ctx, "output_index must be a scalar, but it has shape ",
                            index.shape().DebugString()));
    int taken = index.scalar<int32_t>();
    if (taken < 0 || taken >= ctx->num_outputs()) taken = ctx->num_outputs() - 1;
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      if (i == taken) {
        Forward(ctx, ref(), 0, i);
      } else {
        ctx->set_output_dead(i);
      }
    }
  }
};

// ToBool(input): a scalar's value != 0 (a string's: non-empty); any other tensor's
// non-emptiness. How If and While read a cond that is not a scalar bool.
class ToBoolOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    bool value = input.NumElements() > 0;
    if (input.shape().dims() == 0) {
      switch (input.dtype()) {
        case DT_BOOL: value = input.scalar<bool>(); break;
        case DT_FLOAT: value = input.scalar<float>() != 0; break;
        case DT_DOUBLE: value = input.scalar<double>() != 0; break;
        case DT_INT32: value = input.scalar<int32_t>() != 0; break;
        case DT_INT64: value = input.scalar<int64_t>() != 0; break;
        case DT_UINT8: value = input.scalar<uint8_t>() != 0; break;
        case DT_INT8: value = input.scalar<int8_t>() != 0; break;
        case DT_INT16: value = input.scalar<int16_t>() != 0; break;
        case DT_STRING: value = !input.scalar<std::string>().empty(); break;
        default:
          ctx->SetStatus(KernelError(*ctx, "ToBool of a ", DataTypeString(input.dtype()),
                                     " scalar is not supported"));
          return;
      }
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor out, HostScalar(ctx, DT_BOOL));
    out.scalar<bool>() = value;
    ctx->set_output(0, std::move(out));
  }
};

// Merge(inputs...): forwards the one live input and its index (value_index). The
// executor runs it as soon as one live input has arrived.
class MergeOp : public RoutingKernel {
 public:
  using RoutingKernel::RoutingKernel;
  void Compute(OpKernelContext* ctx) override {
    int taken = -1;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->has_input(i)) continue;
      OP_REQUIRES(ctx, taken < 0,
                  absl::InternalError("Merge can not have more than one valid input."));
      taken = i;
    }
    if (taken < 0) {  // nothing live: the outputs are dead
      ctx->set_output_dead(0);
      ctx->set_output_dead(1);
      return;
    }
    Forward(ctx, ref(), taken, 0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor index, HostScalar(ctx, DT_INT32));
    index.scalar<int32_t>() = taken;
    ctx->set_output(1, std::move(index));
  }
};

// LoopCond(input): the loop predicate, forwarded; must be a scalar bool.
class LoopCondOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.shape().dims() == 0,
                KernelError(*ctx, "input must be a scalar, got shape ",
                            input.shape().DebugString()));
    ctx->set_output(0, input);
  }
};

// IdentityN(inputs...): each input forwarded (what inlined function calls are built of).
class IdentityNOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->set_output(i, ctx->input(i));
  }
};

class NoOpKernel : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext*) override {}
};

// ControlTrigger: a control-only node that is never dead (the executor sees to that).
class ControlTriggerOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext*) override {}
};

}  // namespace

namespace {

// Registers every control-flow kernel for `device_type`; on accelerators (`host_args`)
// with the scalars the host reads or writes in host memory (control_flow_ops.h).
absl::Status RegisterForDevice(KernelRegistry* registry, const std::string& device_type,
                               bool host_args) {
  auto def = [&](const char* op, std::initializer_list<const char*> host_memory) {
    KernelDefBuilder builder(op);
    builder.Device(device_type);
    if (host_args) {
      for (const char* arg : host_memory) builder.HostMemory(arg);
    }
    return builder;
  };
  for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
                         "RefNextIteration"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<ForwardOp>(def(op, {})));
  }
  for (const char* op : {"Switch", "RefSwitch"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<SwitchOp>(def(op, {"pred"})));
  }
  for (const char* op : {"Merge", "RefMerge"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<MergeOp>(def(op, {"value_index"})));
  }
  DFLOW_RETURN_IF_ERROR(registry->Register<SwitchNOp>(def("_SwitchN", {"output_index"})));
  DFLOW_RETURN_IF_ERROR(registry->Register<ToBoolOp>(def("ToBool", {"input", "output"})));
  DFLOW_RETURN_IF_ERROR(registry->Register<LoopCondOp>(def("LoopCond", {"input", "output"})));
  DFLOW_RETURN_IF_ERROR(registry->Register<IdentityNOp>(def("IdentityN", {})));
  DFLOW_RETURN_IF_ERROR(registry->Register<NoOpKernel>(def("NoOp", {})));
  return registry->Register<ControlTriggerOp>(def("ControlTrigger", {}));
}

}  // namespace

absl::Status RegisterControlFlowKernels(KernelRegistry* registry) {
  return RegisterForDevice(registry, "CPU", false);
}

absl::Status RegisterAcceleratorControlFlowKernels(KernelRegistry* registry,
                                                   absl::string_view device_type) {
  return RegisterForDevice(registry, std::string(device_type), true);
}

}  // namespace dflow
