#include "kernels/cpu/backward_weights.h"

#include <algorithm>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {
namespace {

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> ReorderIfNeeded(
    dnnl_engine_t engine, const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to) {
  if (dnnl_memory_desc_equal(&from, &to)) return nullptr;
  return onednn::MakeReorderPrimitive(engine, from, to);
}

// A scratch tensor of at least `md`'s size, from the step's allocator (its limits, its
// cached blocks).
absl::StatusOr<Tensor> ScratchFor(OpKernelContext* ctx, const dnnl_memory_desc_t& md) {
  const int64_t floats = static_cast<int64_t>((dnnl_memory_desc_get_size(&md) + 3) / 4);
  return ctx->allocate_temp(DT_FLOAT, TensorShape({std::max<int64_t>(floats, 1)}));
}

// `data` (laid out as `from`) in `reorder`'s layout: in `holder`, or `data` itself when
// there is no reorder.
absl::StatusOr<const void*> Reordered(OpKernelContext* ctx, const onednn::Primitive* reorder,
                                      dnnl_engine_t engine, const dnnl_memory_desc_t& from,
                                      const void* data, Tensor* holder) {
  if (reorder == nullptr) return data;
  const dnnl_memory_desc_t* to = reorder->Md(dnnl_query_dst_md);
  DFLOW_ASSIGN_OR_RETURN(*holder, ScratchFor(ctx, *to));
  DFLOW_RETURN_IF_ERROR(onednn::Execute(
      *reorder, engine, {{DNNL_ARG_FROM, &from, data}, {DNNL_ARG_TO, to, holder->raw_data()}}));
  return static_cast<const void*>(holder->raw_data());
}

// One shard: the whole computation of `plan` on the calling thread.
absl::Status RunPlan(OpKernelContext* ctx, const BackwardWeightsPlan& plan,
                     dnnl_engine_t engine, const void* src, const void* diff_dst,
                     void* diff_weights) {
  Tensor src_buffer, diff_dst_buffer, weights_buffer;
  DFLOW_ASSIGN_OR_RETURN(const void* src_data, Reordered(ctx, plan.src_reorder.get(), engine,
                                                         plan.src, src, &src_buffer));
  DFLOW_ASSIGN_OR_RETURN(const void* diff_dst_data,
                         Reordered(ctx, plan.diff_dst_reorder.get(), engine, plan.diff_dst,
                                   diff_dst, &diff_dst_buffer));
  const onednn::Primitive& p = *plan.primitive;
  const dnnl_memory_desc_t* weights_md = p.Md(dnnl_query_diff_weights_md);
  void* weights_data = diff_weights;
  if (plan.weights_reorder != nullptr) {
    DFLOW_ASSIGN_OR_RETURN(weights_buffer, ScratchFor(ctx, *weights_md));
    weights_data = weights_buffer.raw_data();
  }
  DFLOW_RETURN_IF_ERROR(onednn::Execute(
      p, engine,
      {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), src_data},
       {DNNL_ARG_DIFF_DST, p.Md(dnnl_query_diff_dst_md), diff_dst_data},
       {DNNL_ARG_DIFF_WEIGHTS, weights_md, weights_data}}));
  if (plan.weights_reorder == nullptr) return absl::OkStatus();
  return onednn::Execute(*plan.weights_reorder, engine,
                         {{DNNL_ARG_FROM, weights_md, weights_data},
                          {DNNL_ARG_TO, &plan.diff_weights, diff_weights}});
}

}  // namespace

absl::Status AddBackwardWeightsReorders(dnnl_engine_t engine, BackwardWeightsPlan* plan) {
  const onednn::Primitive& p = *plan->primitive;
  DFLOW_ASSIGN_OR_RETURN(plan->src_reorder,
                         ReorderIfNeeded(engine, plan->src, *p.Md(dnnl_query_src_md)));
  DFLOW_ASSIGN_OR_RETURN(plan->diff_dst_reorder,
                         ReorderIfNeeded(engine, plan->diff_dst, *p.Md(dnnl_query_diff_dst_md)));
  DFLOW_ASSIGN_OR_RETURN(
      plan->weights_reorder,
      ReorderIfNeeded(engine, *p.Md(dnnl_query_diff_weights_md), plan->diff_weights));
  return absl::OkStatus();
}

absl::Status RunBackwardWeights(OpKernelContext* ctx, dnnl_engine_t engine,
                                double flops_per_image, const Tensor& input,
                                const Tensor& out_backprop, const BackwardWeightsPlanFor& plan_for,
                                Tensor* out) {
  const int64_t batch = input.shape().dim_size(0);
  const onednn::BatchSplit split = onednn::SplitBatch(batch, flops_per_image, NumThreads(ctx));
  std::vector<Tensor> partials(split.shards - 1);  // shards 1.. (shard 0: the output)
  for (Tensor& partial : partials) {
    DFLOW_ASSIGN_OR_RETURN(partial, ctx->allocate_temp(DT_FLOAT, out->shape()));
  }
  const int64_t in_image = input.NumElements() / batch;
  const int64_t out_image = out_backprop.NumElements() / batch;
  DFLOW_RETURN_IF_ERROR(onednn::RunShards(
      ctx, batch, split, flops_per_image, [&](int64_t first, int64_t n) -> absl::Status {
        DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const BackwardWeightsPlan> plan, plan_for(n));
        const int64_t index = first / split.block;
        void* dst = index == 0 ? out->raw_data() : partials[index - 1].raw_data();
        return RunPlan(ctx, *plan, engine, input.data<float>() + first * in_image,
                       out_backprop.data<float>() + first * out_image, dst);
      }));
  float* sum = out->data<float>();
  for (const Tensor& partial : partials) {
    const float* v = partial.data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i) sum[i] += v[i];
  }
  return absl::OkStatus();
}

}  // namespace dflow
