#include "kernels/cpu/layout_reorders.h"

#include "absl/container/inlined_vector.h"

#include "graph/status_macros.h"

namespace dflow {
namespace {

// Floats of a buffer laid out as `md`, rounded up to a 64-byte multiple.
int64_t PaddedFloats(const dnnl_memory_desc_t& md) {
  const int64_t floats = static_cast<int64_t>(dnnl_memory_desc_get_size(&md) / sizeof(float));
  return (floats + 15) / 16 * 16;
}

}  // namespace

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

absl::Status ExecuteWithReorders(const onednn::Primitive& p, const LayoutReorders& r,
                                 dnnl_engine_t engine, const float* src, float* dst,
                                 float* scratch, absl::Span<const onednn::ExecArg> args) {
  float* p_src = r.to_primitive != nullptr ? scratch : const_cast<float*>(src);
  float* p_dst = r.from_primitive != nullptr ? scratch + r.src_floats : dst;
  if (r.to_primitive != nullptr) {
    const onednn::Primitive& to = *r.to_primitive;
    DFLOW_RETURN_IF_ERROR(onednn::Execute(to, engine,
                                          {{DNNL_ARG_FROM, to.Md(dnnl_query_src_md), src},
                                           {DNNL_ARG_TO, to.Md(dnnl_query_dst_md), p_src}}));
  }
  absl::InlinedVector<onednn::ExecArg, 6> all(args.begin(), args.end());
  all.push_back({DNNL_ARG_SRC, p.Md(dnnl_query_src_md), p_src});
  all.push_back({DNNL_ARG_DST, p.Md(dnnl_query_dst_md), p_dst});
  DFLOW_RETURN_IF_ERROR(onednn::Execute(p, engine, all));
  if (r.from_primitive == nullptr) return absl::OkStatus();
  const onednn::Primitive& from = *r.from_primitive;
  return onednn::Execute(from, engine,
                         {{DNNL_ARG_FROM, from.Md(dnnl_query_src_md), p_dst},
                          {DNNL_ARG_TO, from.Md(dnnl_query_dst_md), dst}});
}

}  // namespace dflow
