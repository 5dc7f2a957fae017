// The routing kernels for accelerators: v1 control flow (Switch, _SwitchN, Merge, Enter,
// Exit, NextIteration and their Ref* forms, LoopCond, ControlTrigger, ToBool) and the
// IdentityN and NoOp that inlined function calls are made of.
//
// They route tensors and never touch their bytes, so the one implementation
// (control_flow_ops.cc) serves the CPU and every accelerator, for every dtype, as TF
// registers them on GPUs: a loop's skeleton can then sit on the device of its body and its
// values never leave that device (graph/partition.h builds the per-device control loops
// when a frame spans devices). What they read or write themselves is a scalar the host
// must see, so on accelerators these args live in host memory (TF's HostMemory):
// Switch's `pred`, _SwitchN's `output_index`, Merge's `value_index`, LoopCond's `input`
// and `output`, ToBool's `input` and `output`. A predicate computed in device memory
// reaches them through the partitioner's same-device copy (partition.h rule 10).
#ifndef DFLOW_KERNELS_CPU_CONTROL_FLOW_OPS_H_
#define DFLOW_KERNELS_CPU_CONTROL_FLOW_OPS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// Registers the control-flow kernels for `device_type` (an accelerator: "GPU"), with the
// host-memory args above. The CPU's registration is RegisterControlFlowKernels in
// register_cpu_kernels.h.
absl::Status RegisterAcceleratorControlFlowKernels(KernelRegistry* registry,
                                                   absl::string_view device_type);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONTROL_FLOW_OPS_H_
