#include "kernels/cpu/strided_slice_args.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {

absl::Status ReadStridedSliceMasks(OpKernelConstruction* ctx, StridedSliceMasks* masks) {
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("begin_mask", &masks->begin));
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("end_mask", &masks->end));
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("ellipsis_mask", &masks->ellipsis));
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("new_axis_mask", &masks->new_axis));
  return ctx->GetAttr("shrink_axis_mask", &masks->shrink_axis);
}

absl::Status CheckStridedSliceVectors(const Tensor& begin, const Tensor& end,
                                      const Tensor& strides) {
  const int64_t n = strides.NumElements();
  if (begin.shape().dims() == 1 && end.shape().dims() == 1 && strides.shape().dims() == 1 &&
      begin.NumElements() == n && end.NumElements() == n && n < 32) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Expected begin, end, and strides to be 1D equal size tensors, but got shapes ",
      begin.shape().DebugString(), ", ", end.shape().DebugString(), ", and ",
      strides.shape().DebugString(), " instead."));
}

}  // namespace dflow
