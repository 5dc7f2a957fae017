#include "kernels/cpu/conv_winograd.h"

#include "graph/status_macros.h"

namespace dflow {
namespace {

// Floats of a buffer laid out as `md`, rounded up to a 64-byte multiple.
int64_t PaddedFloats(const dnnl_memory_desc_t& md) {
  const int64_t floats = static_cast<int64_t>(dnnl_memory_desc_get_size(&md) / sizeof(float));
  return (floats + 15) / 16 * 16;
}

}  // namespace

bool PreferWinograd(const WindowDim& rows, const WindowDim& cols, int64_t groups,
                    int64_t in_depth, int64_t out_depth) {
  const bool window = rows.size == 3 && cols.size == 3 && rows.stride == 1 && cols.stride == 1 &&
                      rows.dilation == 1 && cols.dilation == 1;
  return window && groups == 1 && in_depth >= 16 && out_depth >= 48 &&
         rows.output * cols.output >= 392;
}

absl::StatusOr<LayoutReorders> MakeLayoutReorders(const onednn::Primitive& p,
                                                  const dnnl_memory_desc_t& graph_src,
                                                  const dnnl_memory_desc_t& graph_dst,
                                                  dnnl_engine_t engine) {
  LayoutReorders r;
  const dnnl_memory_desc_t& src = *p.Md(dnnl_query_src_md);
  const dnnl_memory_desc_t& dst = *p.Md(dnnl_query_dst_md);
  if (!dnnl_memory_desc_equal(&src, &graph_src)) {
    DFLOW_ASSIGN_OR_RETURN(r.to_primitive, onednn::MakeReorderPrimitive(engine, graph_src, src));
    r.src_floats = PaddedFloats(src);
  }
  if (!dnnl_memory_desc_equal(&dst, &graph_dst)) {
    DFLOW_ASSIGN_OR_RETURN(r.from_primitive,
                           onednn::MakeReorderPrimitive(engine, dst, graph_dst));
    r.dst_floats = PaddedFloats(dst);
  }
  return r;
}

}  // namespace dflow
