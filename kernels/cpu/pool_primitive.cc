#include "kernels/cpu/pool_primitive.h"

#include "graph/status_macros.h"

namespace dflow {

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakePoolPrimitive(
    const PoolGeometry& g, int64_t n, bool nchw, dnnl_alg_kind_t algorithm,
    dnnl_engine_t engine) {
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src,
                         onednn::ImageDesc(n, g.depth, g.rows.input, g.cols.input, nchw));
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst,
                         onednn::ImageDesc(n, g.depth, g.rows.output, g.cols.output, nchw));
  const dnnl_dims_t strides = {g.rows.stride, g.cols.stride};
  const dnnl_dims_t kernel = {g.rows.size, g.cols.size};
  const dnnl_dims_t pad_l = {g.rows.pad_before, g.cols.pad_before};
  const dnnl_dims_t pad_r = {g.rows.pad_after, g.cols.pad_after};
  dnnl_pooling_desc_t desc;
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_pooling_forward_desc_init(&desc, dnnl_forward_inference, algorithm, &src, &dst,
                                     strides, kernel, pad_l, pad_r),
      "dnnl_pooling_forward_desc_init"));
  return onednn::MakePrimitive(&desc, engine);
}

}  // namespace dflow
