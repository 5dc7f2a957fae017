// Reorders around a oneDNN primitive that picked its own activation layouts (format
// any): the Winograd convolution (conv_winograd.h) and the transposed convolution
// (conv_backprop_input_op.cc) read and write blocked layouts (nChw16c), and the graph's
// tensors stay NHWC/NCHW, so each execution reorders its source in and its result out.
#ifndef DFLOW_KERNELS_CPU_LAYOUT_REORDERS_H_
#define DFLOW_KERNELS_CPU_LAYOUT_REORDERS_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/cpu/dnnl_util.h"

namespace dflow {

// Reorders around a primitive that picked its own activation layouts: from the graph's
// source layout into the primitive's, and from the primitive's destination layout back
// into the graph's. Null members when the layouts already agree.
struct LayoutReorders {
  std::shared_ptr<const onednn::Primitive> to_primitive, from_primitive;
  // Scratch floats the primitive-layout copies need (0 without a reorder), each rounded
  // up to 64 bytes.
  int64_t src_floats = 0, dst_floats = 0;

  bool empty() const { return to_primitive == nullptr && from_primitive == nullptr; }
  int64_t ScratchFloats() const { return src_floats + dst_floats; }
};

absl::StatusOr<LayoutReorders> MakeLayoutReorders(const onednn::Primitive& p,
                                                  const dnnl_memory_desc_t& graph_src,
                                                  const dnnl_memory_desc_t& graph_dst,
                                                  dnnl_engine_t engine);

// One execution of `p` from `src` (graph layout) to `dst` (graph layout) through the
// reorders (none: `p` reads `src` and writes `dst` itself); `scratch` holds
// r.ScratchFloats() floats (may be null when that is 0); `args` are p's other arguments.
absl::Status ExecuteWithReorders(const onednn::Primitive& p, const LayoutReorders& r,
                                 dnnl_engine_t engine, const float* src, float* dst,
                                 float* scratch, absl::Span<const onednn::ExecArg> args);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_LAYOUT_REORDERS_H_
