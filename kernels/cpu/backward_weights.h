// The filter gradient of a convolution (2-D or 3-D) on oneDNN's backward-weights
// primitive, shared by Conv2DBackpropFilter and Conv3DBackpropFilter(V2).
//
// The caller builds the primitive: the weights' layout is oneDNN's choice (given the
// graph's, it falls back to an im2col GEMM), the images' too unless it has a direct
// kernel for the graph's (Conv2DBackpropFilter's NHWC). Each operand whose chosen layout
// is not the graph's is reordered (through the step's allocator) and the result
// reordered back; where a chosen layout is the graph's, nothing is copied.
//
// The result is a sum over the batch: with several threads and enough work the batch is
// split into shards (onednn::SplitBatch), each shard's gradient computed on its own
// thread into its own buffer (the first shard's into the output), then the buffers added
// in shard order, so a given thread count always gives the same bits.
#ifndef DFLOW_KERNELS_CPU_BACKWARD_WEIGHTS_H_
#define DFLOW_KERNELS_CPU_BACKWARD_WEIGHTS_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/cpu/dnnl_util.h"
#include "runtime/op_kernel.h"

namespace dflow {

struct BackwardWeightsPlan {
  std::shared_ptr<const onednn::Primitive> primitive;
  dnnl_memory_desc_t src, diff_dst, diff_weights;  // the graph's layouts
  // For each operand whose chosen layout is not the graph's, the reorder between the two.
  std::shared_ptr<const onednn::Primitive> src_reorder, diff_dst_reorder, weights_reorder;
};

// Sets `plan`'s reorders from its primitive's chosen layouts and the graph's.
absl::Status AddBackwardWeightsReorders(dnnl_engine_t engine, BackwardWeightsPlan* plan);

// The plan for a sub-batch of `n` images (built once per size by the caller's cache).
using BackwardWeightsPlanFor =
    std::function<absl::StatusOr<std::shared_ptr<const BackwardWeightsPlan>>(int64_t n)>;

// The filter gradient of `input` and `out_backprop` (float, batch in dim 0, images
// contiguous) into `out`, the batch split as above.
absl::Status RunBackwardWeights(OpKernelContext* ctx, dnnl_engine_t engine,
                                double flops_per_image, const Tensor& input,
                                const Tensor& out_backprop, const BackwardWeightsPlanFor& plan_for,
                                Tensor* out);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_BACKWARD_WEIGHTS_H_
