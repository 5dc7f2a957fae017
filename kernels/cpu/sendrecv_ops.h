// _Send/_Recv (and their host-memory twins _HostSend/_HostRecv) for any device type.
//
// One implementation serves the CPU and every accelerator, because where the bytes go
// is decided by data, not by the kernel's device: a _Send publishes its input together
// with the device whose memory holds it (Rendezvous::Send's `producer`: its own device,
// or null for _HostSend and for host-memory devices), and a _Recv delivers into its own
// memory space:
//
//  | receiver output  | producer memory     | delivery                                        |
//  |------------------|---------------------|-------------------------------------------------|
//  | host             | host                | zero-copy: the sender's buffer is shared        |
//  | host             | accelerator P       | P.copier()->CopyDeviceToHost into a host tensor  |
//  | accelerator D    | host                | D.copier()->CopyHostToDevice into D's memory     |
//  | accelerator D    | accelerator P != D  | P.copier()->CopyDeviceToDevice (the SENDER's     |
//  |                  |                     | copier: it knows the producing streams)          |
//
// "Receiver output host" means a CPU _Recv, or _HostRecv on any device (a HostMemory
// input of an accelerator kernel, graph/memory_types.h). The consumer runs once the copy's
// completion callback has fired, so it never reads a partial copy; the copier holds the
// source and destination buffers until then. Strings and dead or empty values are never
// copied.
#ifndef DFLOW_KERNELS_CPU_SENDRECV_OPS_H_
#define DFLOW_KERNELS_CPU_SENDRECV_OPS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// Registers _Send, _Recv, _HostSend and _HostRecv for `device_type`, an accelerator type
// whose devices implement Device::copier() ("GPU"). The CPU's own registration
// (with _Arg/_Retval) is RegisterSendRecvKernels in register_cpu_kernels.h.
absl::Status RegisterAcceleratorSendRecvKernels(KernelRegistry* registry,
                                                absl::string_view device_type);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_SENDRECV_OPS_H_
