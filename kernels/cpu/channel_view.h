// ChannelView: a batch-norm operand seen as [outer, channels, inner]. Channels last (NHWC,
// NDHWC) is [N*spatial, C, 1]; channels second (NCHW, NCDHW) is [N, C, spatial]. Shared by
// FusedBatchNorm and its gradient.
#ifndef DFLOW_KERNELS_CPU_CHANNEL_VIEW_H_
#define DFLOW_KERNELS_CPU_CHANNEL_VIEW_H_

#include <cstdint>

#include "runtime/tensor_shape.h"

namespace dflow {

struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 0;

  int64_t PerChannel() const { return outer * inner; }  // elements of one channel
  // The flat index of element (o, c, i).
  int64_t At(int64_t o, int64_t c, int64_t i) const { return (o * channels + c) * inner + i; }
};

inline ChannelView ViewOf(const TensorShape& x, bool channels_last) {
  const int axis = channels_last ? x.dims() - 1 : 1;
  ChannelView v{1, x.dim_size(axis), 1};
  if (x.num_elements() == 0) return {0, v.channels, 0};  // products of huge dims overflow
  for (int i = 0; i < x.dims(); ++i) {
    if (i < axis) v.outer *= x.dim_size(i);
    if (i > axis) v.inner *= x.dim_size(i);
  }
  return v;
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CHANNEL_VIEW_H_
