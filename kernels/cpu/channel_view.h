// ChannelView: a batch-norm operand seen as [outer, channels, inner]. Channels last (NHWC,
// NDHWC) is [N*spatial, C, 1]; channels second (NCHW, NCDHW) is [N, C, spatial]. Shared by
// FusedBatchNorm and its gradient.
#ifndef DFLOW_KERNELS_CPU_CHANNEL_VIEW_H_
#define DFLOW_KERNELS_CPU_CHANNEL_VIEW_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "kernels/cpu/kernel_util.h"
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

// `num_sums` per-channel sums over the whole view, in double, sharded over outer blocks:
// `add(o, sums)` adds outer block o's terms into sums[k * channels + c]. The shards'
// partial sums are added in shard order, so the result is the same every run (threads
// finish in any order). `cost` is the work of one outer block, for sharding.
template <typename AddFn>
std::vector<double> ShardedChannelSums(OpKernelContext* ctx, const ChannelView& v, int num_sums,
                                       int64_t cost, const AddFn& add) {
  const size_t size = static_cast<size_t>(num_sums * v.channels);
  std::mutex mu;
  std::map<int64_t, std::vector<double>> partials;  // by the shard's first block
  ParallelForElements(ctx, v.outer, cost, [&](int64_t begin, int64_t end) {
    std::vector<double> part(size, 0.0);
    for (int64_t o = begin; o < end; ++o) add(o, part.data());
    std::lock_guard<std::mutex> lock(mu);
    partials[begin] = std::move(part);
  });
  std::vector<double> total(size, 0.0);
  for (const auto& [begin, part] : partials) {
    for (size_t k = 0; k < size; ++k) total[k] += part[k];
  }
  return total;
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CHANNEL_VIEW_H_
