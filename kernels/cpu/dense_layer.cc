#include "kernels/cpu/dense_layer.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {
namespace {

// A logical [rows, cols] f32 matrix stored row-major with row stride `ld`, or, when
// `transposed`, stored as its transpose ([cols, rows] with row stride `ld`).
absl::StatusOr<dnnl_memory_desc_t> MatrixDesc(int64_t rows, int64_t cols, bool transposed,
                                              int64_t ld) {
  return onednn::StridedDesc({rows, cols}, transposed ? std::vector<int64_t>{1, ld}
                                                      : std::vector<int64_t>{ld, 1});
}

}  // namespace

// What one row-block size needs: the primitive and the weights in its layout.
struct DenseLayer::Plan {
  std::shared_ptr<const onednn::Primitive> primitive;
  std::shared_ptr<const onednn::PackedWeights> packed;  // null: the weights as they are
  const void* weights = nullptr;                        // packed or the tensor's data
  dnnl_memory_desc_t bias_md;                           // {1, n}

  const dnnl_memory_desc_t* Md(dnnl_query_t what) const { return primitive->Md(what); }
};

absl::StatusOr<std::unique_ptr<DenseLayer>> DenseLayer::Create(
    const onednn::Activation& activation) {
  DFLOW_ASSIGN_OR_RETURN(onednn::EnginePtr engine, onednn::MakeCpuEngine());
  return std::unique_ptr<DenseLayer>(new DenseLayer(std::move(engine), activation));
}

absl::StatusOr<DenseLayer::Plan> DenseLayer::MakePlan(const DenseArgs& args, int64_t rows,
                                                      const Plan* other, PlanMode* mode) {
  return MakePlan(args, rows, 0, args.n, args.n, other, mode);
}

absl::StatusOr<std::shared_ptr<const onednn::Primitive>> DenseLayer::GetPrimitive(
    const DenseArgs& args, int64_t rows, int64_t cols, int64_t ldc, bool plain_weights) {
  const bool has_bias = args.bias != nullptr;
  const int64_t lda = args.trans_a ? args.m : args.k;
  const int64_t ldb = args.trans_b ? args.k : args.n;
  return primitives_.GetOrCreate(
      {rows, args.k, cols, args.trans_a, lda, args.trans_b, has_bias, ldc, plain_weights, ldb,
       args.accumulate},
      [&]() -> absl::StatusOr<std::shared_ptr<const onednn::Primitive>> {
        DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t src, MatrixDesc(rows, args.k, args.trans_a, lda));
        DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t dst, MatrixDesc(rows, cols, false, ldc));
        DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t bias, onednn::StridedDesc({1, cols}, {cols, 1}));
        DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t weights,
                               plain_weights ? MatrixDesc(args.k, cols, args.trans_b, ldb)
                                             : onednn::AnyLayoutDesc({args.k, cols}));
        dnnl_matmul_desc_t desc;
        DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
            dnnl_matmul_desc_init(&desc, &src, &weights, has_bias ? &bias : nullptr, &dst),
            "dnnl_matmul_desc_init"));
        return onednn::MakePrimitive(&desc, engine_.get(),
                                     onednn::PostOps(args.accumulate, activation_));
      });
}

absl::StatusOr<dnnl_memory_desc_t> DenseLayer::WeightsBlockDesc(const DenseArgs& args,
                                                                int64_t first_col, int64_t cols) {
  DFLOW_ASSIGN_OR_RETURN(
      dnnl_memory_desc_t all,
      MatrixDesc(args.k, args.n, args.trans_b, args.trans_b ? args.k : args.n));
  // A view with an offset, so that each column block has its own packed entry.
  dnnl_memory_desc_t block;
  const dnnl_dims_t block_dims = {args.k, cols};
  const dnnl_dims_t block_offsets = {0, first_col};
  DFLOW_RETURN_IF_ERROR(onednn::DnnlStatus(
      dnnl_memory_desc_init_submemory(&block, &all, block_dims, block_offsets),
      "dnnl_memory_desc_init_submemory"));
  return block;
}

absl::StatusOr<DenseLayer::Plan> DenseLayer::MakePlan(const DenseArgs& args, int64_t rows,
                                                      int64_t first_col, int64_t cols,
                                                      int64_t ldc, const Plan* other,
                                                      PlanMode* mode) {
  Plan plan;
  DFLOW_ASSIGN_OR_RETURN(plan.bias_md, onednn::StridedDesc({1, cols}, {cols, 1}));
  const bool plain_weights = mode->weights == WeightsMode::kPlain;
  DFLOW_ASSIGN_OR_RETURN(plan.primitive, GetPrimitive(args, rows, cols, ldc, plain_weights));
  const dnnl_memory_desc_t* weights_md = plan.Md(dnnl_query_weights_md);
  if (other != nullptr && dnnl_memory_desc_equal(other->Md(dnnl_query_weights_md), weights_md)) {
    plan.packed = other->packed;
    plan.weights = other->weights;
    return plan;
  }
  if (plain_weights) {
    // The block's first weight: column first_col of row 0 ([k, n]), or row first_col
    // ([n, k] when transposed).
    const int64_t first = args.trans_b ? first_col * args.k : first_col;
    plan.weights = static_cast<const char*>(args.weights->raw_data()) +
                   first * static_cast<int64_t>(sizeof(float));
    return plan;
  }
  DFLOW_ASSIGN_OR_RETURN(dnnl_memory_desc_t plain, WeightsBlockDesc(args, first_col, cols));
  if (mode->weights == WeightsMode::kLookup) {
    DFLOW_ASSIGN_OR_RETURN(plan.packed, packed_.Find(*args.weights, plain, *weights_md));
    if (plan.packed == nullptr && !dnnl_memory_desc_equal(&plain, weights_md)) mode->stale = true;
  } else {
    DFLOW_ASSIGN_OR_RETURN(plan.packed, packed_.Get(engine_.get(), *args.weights, plain,
                                                    *weights_md, args.weights_constant));
  }
  plan.weights = plan.packed != nullptr ? plan.packed->buffer.get() : args.weights->raw_data();
  return plan;
}

absl::StatusOr<std::vector<DenseLayer::Plan>> DenseLayer::MakePlans(
    const DenseArgs& args, const onednn::BatchSplit& split, bool columns, PlanMode* mode) {
  std::vector<Plan> plans;
  if (columns) {
    for (int64_t s = 0; s < split.shards; ++s) {
      const int64_t first = s * split.block;
      const int64_t cols = std::min(split.block, args.n - first);
      DFLOW_ASSIGN_OR_RETURN(Plan plan,
                             MakePlan(args, args.m, first, cols, cols, nullptr, mode));
      plans.push_back(std::move(plan));
    }
    return plans;
  }
  const int64_t last = args.m - (split.shards - 1) * split.block;
  DFLOW_ASSIGN_OR_RETURN(Plan full, MakePlan(args, split.block, nullptr, mode));
  plans.push_back(full);
  if (last != split.block) {
    DFLOW_ASSIGN_OR_RETURN(Plan rest, MakePlan(args, last, &full, mode));
    plans.push_back(std::move(rest));
  }
  return plans;
}

absl::StatusOr<std::vector<DenseLayer::Plan>> DenseLayer::MakeVariablePlans(
    const DenseArgs& args, const onednn::BatchSplit& split, bool columns) {
  PlanMode mode;
  if (weights_vary_.load(std::memory_order_relaxed)) {
    mode.weights = WeightsMode::kPlain;
  } else if (packed_variable_.load(std::memory_order_relaxed)) {
    mode.weights = WeightsMode::kLookup;
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<Plan> plans, MakePlans(args, split, columns, &mode));
  if (mode.weights == WeightsMode::kPack) packed_variable_.store(true, std::memory_order_relaxed);
  if (!mode.stale) return plans;
  // New values since they were packed: a variable being trained. Read plain from now on.
  weights_vary_.store(true, std::memory_order_relaxed);
  PlanMode plain{WeightsMode::kPlain};
  return MakePlans(args, split, columns, &plain);
}

absl::StatusOr<std::shared_ptr<const std::vector<DenseLayer::Plan>>> DenseLayer::Plans(
    const DenseArgs& args, const onednn::BatchSplit& split, bool columns) {
  if (!args.weights_constant) {
    DFLOW_ASSIGN_OR_RETURN(std::vector<Plan> plans, MakeVariablePlans(args, split, columns));
    return std::make_shared<const std::vector<Plan>>(std::move(plans));
  }
  // The weights buffer identifies the values: a constant input's buffer is held by its
  // packed entry (PackedWeights::constant_source), or read as it is (plain layout).
  const std::vector<int64_t> key = {
      args.m, args.k, args.n, args.trans_a, args.trans_b, args.bias != nullptr, args.accumulate,
      static_cast<int64_t>(reinterpret_cast<intptr_t>(args.weights->raw_data())),
      columns, split.shards, split.block};
  {
    std::lock_guard<std::mutex> lock(plan_sets_mu_);
    for (const auto& [k, plans] : plan_sets_) {
      if (k == key) return plans;
    }
  }
  PlanMode pack;
  DFLOW_ASSIGN_OR_RETURN(std::vector<Plan> made, MakePlans(args, split, columns, &pack));
  auto plans = std::make_shared<const std::vector<Plan>>(std::move(made));
  std::lock_guard<std::mutex> lock(plan_sets_mu_);
  if (plan_sets_.size() >= kMaxPlanSets) plan_sets_.erase(plan_sets_.begin());
  plan_sets_.emplace_back(key, plans);
  return plans;
}

// k == 0: every output is the activation of its bias (or of 0).
absl::Status DenseLayer::RunEmptySum(const DenseArgs& args) {
  for (int64_t i = 0; i < args.m; ++i) {
    for (int64_t j = 0; j < args.n; ++j) {
      args.c[i * args.n + j] = onednn::Activate(
          activation_, (args.bias != nullptr ? args.bias[j] : 0.0f) +
                           (args.accumulate ? args.c[i * args.n + j] : 0.0f));
    }
  }
  return absl::OkStatus();
}

absl::Status DenseLayer::Run(OpKernelContext* ctx, const DenseArgs& args) {
  if (args.m == 0 || args.n == 0) return absl::OkStatus();
  if (args.k == 0) return RunEmptySum(args);
  const double flops_per_row = 2.0 * static_cast<double>(args.k) * static_cast<double>(args.n);
  const int threads = NumThreads(ctx);
  const onednn::BatchSplit split =
      onednn::SplitBatch(args.m, flops_per_row, threads, kMinFlopsPerShard);
  // Few rows (a batch of 1 at serving time: VGG16's fc1 is a 411 MB matrix-vector
  // product, bound by memory bandwidth) split the columns over the pool instead.
  const int64_t column_shards = std::min<int64_t>(
      threads, static_cast<int64_t>(flops_per_row * static_cast<double>(args.m) /
                                    kMinFlopsPerShard));
  const bool large_weights =
      args.k * args.n * static_cast<int64_t>(sizeof(float)) >= kMinWeightsBytesForColumnSplit;
  if (column_shards > 1 && split.block < kMaxRowsForColumnSplit &&
      args.n >= column_shards * kColumnBlock && (large_weights || split.shards < 2)) {
    return RunColumnBlocks(ctx, args, column_shards);
  }
  // Plans for the (at most two) block sizes, made here so that shards only execute.
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<Plan>> plans,
                         Plans(args, split, /*columns=*/false));
  const Plan& full = plans->front();
  const Plan& rest = plans->back();
  return onednn::RunShards(
      ctx, args.m, split, flops_per_row, [&](int64_t first, int64_t rows) {
        const Plan& plan = rows == split.block ? full : rest;
        const float* a = args.a + (args.trans_a ? first : first * args.k);
        float* c = args.c + first * args.n;
        const onednn::Primitive& p = *plan.primitive;
        if (args.bias == nullptr) {
          return onednn::Execute(p, engine_.get(),
                                 {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), a},
                                  {DNNL_ARG_WEIGHTS, plan.Md(dnnl_query_weights_md), plan.weights},
                                  {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), c}});
        }
        return onednn::Execute(p, engine_.get(),
                               {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), a},
                                {DNNL_ARG_WEIGHTS, plan.Md(dnnl_query_weights_md), plan.weights},
                                {DNNL_ARG_BIAS, &plan.bias_md, args.bias},
                                {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), c}});
      });
}

absl::Status DenseLayer::RunColumnBlocks(OpKernelContext* ctx, const DenseArgs& args,
                                         int64_t shards) {
  // Whole kColumnBlock's per shard (the packed layout's block width), the last smaller.
  const int64_t per_shard = (args.n + shards - 1) / shards;
  onednn::BatchSplit split;
  split.block = (per_shard + kColumnBlock - 1) / kColumnBlock * kColumnBlock;
  split.shards = (args.n + split.block - 1) / split.block;
  // Plans per block (each its own packed weights), made here so that shards only execute.
  // Each block writes a dense [m, cols] scratch and copies it into its columns of c:
  // oneDNN's brgemm matmul (the packed-weights kernel) takes no row stride wider than
  // the block, and its fallback (gemm:jit) repacks the plain weights on every call.
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<Plan>> plans,
                         Plans(args, split, /*columns=*/true));
  const double flops_per_col = 2.0 * static_cast<double>(args.m) * static_cast<double>(args.k);
  // One scratch for every block, from the context's allocator (counted against the
  // session's limits; a fresh aligned_alloc of this size per call went to mmap and
  // page faults, which cost more than the product on 14x14 pointwise convolutions).
  const int64_t block_floats = (args.m * split.block + 15) / 16 * 16;  // 64-byte aligned
  DFLOW_ASSIGN_OR_RETURN(Tensor scratch,
                         ctx->allocate_temp(DT_FLOAT, TensorShape({split.shards, block_floats})));
  return onednn::RunShards(
      ctx, args.n, split, flops_per_col, [&](int64_t first, int64_t cols) -> absl::Status {
        const Plan& plan = (*plans)[first / split.block];
        const onednn::Primitive& p = *plan.primitive;
        float* block = scratch.data<float>() + (first / split.block) * block_floats;
        for (int64_t i = 0; args.accumulate && i < args.m; ++i) {  // what the sum adds
          std::memcpy(block + i * cols, args.c + i * args.n + first, cols * sizeof(float));
        }
        absl::Status status =
            args.bias == nullptr
                ? onednn::Execute(p, engine_.get(),
                                  {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), args.a},
                                   {DNNL_ARG_WEIGHTS, plan.Md(dnnl_query_weights_md), plan.weights},
                                   {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), block}})
                : onednn::Execute(p, engine_.get(),
                                  {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), args.a},
                                   {DNNL_ARG_WEIGHTS, plan.Md(dnnl_query_weights_md), plan.weights},
                                   {DNNL_ARG_BIAS, &plan.bias_md, args.bias + first},
                                   {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), block}});
        if (!status.ok()) return status;
        for (int64_t i = 0; i < args.m; ++i) {
          std::memcpy(args.c + i * args.n + first, block + i * cols, cols * sizeof(float));
        }
        return absl::OkStatus();
      });
}

}  // namespace dflow
