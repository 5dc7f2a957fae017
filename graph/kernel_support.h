// KernelSupport: the one question graph/ asks about kernels — "which device types can
// run this node?" — declared here and implemented by the kernel registry in runtime/,
// so graph/ depends on no runtime code (docs/STYLE.md #10). Tests use fakes.
#ifndef DFLOW_GRAPH_KERNEL_SUPPORT_H_
#define DFLOW_GRAPH_KERNEL_SUPPORT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/node_def.pb.h"

namespace dflow {

class KernelSupport {
 public:
  virtual ~KernelSupport() = default;

  // Device types ("CPU", "GPU", ...) with a kernel whose constraints `node` satisfies
  // (op name, dtype attrs). Order is not significant.
  virtual std::vector<std::string> SupportedDeviceTypes(const NodeDef& node) const = 0;

  // The registered kernels of `op`, one per line in TF's form
  // "  device='CPU'; T in [DT_FLOAT, DT_INT32]\n", or "  <no registered kernels>\n".
  virtual std::string DescribeKernels(absl::string_view op) const = 0;

  // Names of `node`'s input and output args that the kernel chosen for `device_type`
  // keeps in host memory (TF's HostMemory, e.g. Reshape's "shape" on a GPU). Empty when
  // none, when no kernel matches, and for fakes that do not override it.
  virtual std::vector<std::string> HostMemoryArgs(const NodeDef& node,
                                                  absl::string_view device_type) const {
    return {};
  }
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_KERNEL_SUPPORT_H_
