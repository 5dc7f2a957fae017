// Memory types: which of a placed node's inputs and outputs live in host memory on its
// assigned device (TF's MemoryTypesForNode, reduced to what dflow needs).
//
// An accelerator kernel may keep some args in host memory (KernelDef::host_memory_args,
// TF's HostMemory): small index tensors its launch code reads on the host, such as
// Reshape's `shape`, ExpandDims' `dim`, Fill's `dims`, reduction indices and Shape's
// output. The partitioner (partition.h rule 8) then moves such an edge between devices
// with `_HostSend`/`_HostRecv`, so no device copy is made for it. Everything else is
// device memory (on the CPU, device memory is host memory).
//
// On the CPU every arg is host memory (all flags false: nothing to tell apart). A
// device-memory output feeding a host-memory input on the same accelerator is copied by
// the partitioner (partition.h rule 10). Not modelled: TF's rule that int32 args of
// accelerator kernels always live in host memory.
#ifndef DFLOW_GRAPH_MEMORY_TYPES_H_
#define DFLOW_GRAPH_MEMORY_TYPES_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/kernel_support.h"

namespace dflow {

struct MemoryTypes {
  std::vector<bool> host_inputs;   // one per data input, true: host memory
  std::vector<bool> host_outputs;  // one per output
};

// `node`'s memory types on its assigned device, from the kernel `kernels` picks there.
// All false when the device has no type, no kernel declares host memory args, or the
// args cannot be matched to the node's inputs (never an error: device memory is the
// safe default, it only costs a copy).
MemoryTypes HostMemoryTypes(const KernelSupport& kernels, const Node& node);
// The same on `device` instead of the node's assigned device (the partitioner's rule 11
// moves some control-flow nodes).
MemoryTypes HostMemoryTypes(const KernelSupport& kernels, const Node& node,
                            const std::string& device);

}  // namespace dflow

#endif  // DFLOW_GRAPH_MEMORY_TYPES_H_
