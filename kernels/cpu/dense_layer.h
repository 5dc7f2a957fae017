// DenseLayer: y[m,n] = act(op(a)[m,k] * op(w)[k,n] + bias[n] [+ y[m,n]]) on oneDNN's matmul
// primitive, for _FusedMatMul and for convolutions that are plain matrix products
// (1x1 filters, or a filter covering the whole input).
//
// Why not dnnl_sgemm (blas.h): the primitive takes the weights in its own blocked layout,
// reordered once per weights value (PackedWeightsCache) instead of being re-packed by
// every call, and applies bias and activation while the result is still in registers.
// On the MLP's 64-row layers that is the difference to ONNX Runtime (kernels/README.md).
//
// Threads as in dnnl_util.h: rows are split over the session's pool, each shard runs
// the primitive single-threaded on its row block, all shards share the packed weights.
// Few rows with large weights (the MLP's batch of 64 on 2 threads), or rows too few to
// split at all, split the columns instead, each block with its own packed weights: a
// shard then streams only its part of the weights (784x512 floats are 1.6 MB) instead
// of all of them. A column
// block is computed into a dense scratch and copied out: with the output's wider row
// stride oneDNN falls back from brgemm to gemm:jit, which repacks the weights per call.
// Weights that change between calls (a variable being trained) are not packed: after the
// first call finds the packed copy stale, the layer reads them in their plain layout,
// as oneDNN's matmul does with its own small copies of B; repacking 1.6 MB a step
// (a memcmp, a copy and a reorder into fresh pages) took longer than the product.
// Thread-safe: Run may be called concurrently.
#ifndef DFLOW_KERNELS_CPU_DENSE_LAYER_H_
#define DFLOW_KERNELS_CPU_DENSE_LAYER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "kernels/cpu/dnnl_util.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {

// One product. `a` is [m,k] (or [k,m] when trans_a), `weights` [k,n] (or [n,k] when
// trans_b), both row-major and contiguous; `c` is [m,n]; `bias` has n values or is null.
// With `accumulate`, c's values are added to the product before the activation.
struct DenseArgs {
  int64_t m = 0, k = 0, n = 0;
  bool trans_a = false, trans_b = false;
  const float* a = nullptr;
  const Tensor* weights = nullptr;
  bool weights_constant = false;  // IsConstantInput: packed weights found by address
  const float* bias = nullptr;
  float* c = nullptr;
  bool accumulate = false;  // c += product (a residual connection), then the activation
};

class DenseLayer {
 public:
  static absl::StatusOr<std::unique_ptr<DenseLayer>> Create(const onednn::Activation& activation);

  absl::Status Run(OpKernelContext* ctx, const DenseArgs& args);

 private:
  struct Plan;
  explicit DenseLayer(onednn::EnginePtr engine, const onednn::Activation& activation)
      : engine_(std::move(engine)), activation_(activation) {}

  // Below this many FLOPs a shard, one shard. Lower than the convolutions' 4e6: a dense
  // layer mostly follows another one, whose shards leave the pool's workers spinning, so
  // a hand-off costs ~1 us (the MLP's 64x512x10 layer: 7.6 us on one thread).
  static constexpr double kMinFlopsPerShard = 2.5e5;
  // Below this many rows a shard, the shards split the columns.
  static constexpr int64_t kMaxRowsForColumnSplit = 128;
  // Few rows split the columns only when the weights are at least this large (half a
  // core's L2 here): streaming all of them is then what a row shard would wait on. Smaller
  // weights split the rows, each shard reading all of them from cache: MobileNetV2's 14x14
  // pointwise layers (196 x 64 x 384) took 80 us on one thread and 138 us on two as
  // column blocks, 46 us as row blocks.
  static constexpr int64_t kMinWeightsBytesForColumnSplit = int64_t{1} << 20;
  // Column blocks are multiples of this (oneDNN's packed weights are 64 columns wide).
  static constexpr int64_t kColumnBlock = 64;

  // How a plan gets its weights: packed (made when missing), packed only when an entry
  // for these values exists (else `stale` is set), or read in their plain layout.
  enum class WeightsMode { kPack, kLookup, kPlain };
  struct PlanMode {
    WeightsMode weights = WeightsMode::kPack;
    bool stale = false;
  };
  absl::StatusOr<Plan> MakePlan(const DenseArgs& args, int64_t rows, const Plan* other,
                                PlanMode* mode);
  // The plan for `rows` rows and the columns [first_col, first_col + cols), written
  // with row stride `ldc`.
  absl::StatusOr<Plan> MakePlan(const DenseArgs& args, int64_t rows, int64_t first_col,
                                int64_t cols, int64_t ldc, const Plan* other, PlanMode* mode);
  // The primitive for those rows and columns; `plain_weights`: it reads the weights in
  // their own layout, else in the layout oneDNN prefers.
  absl::StatusOr<std::shared_ptr<const onednn::Primitive>> GetPrimitive(
      const DenseArgs& args, int64_t rows, int64_t cols, int64_t ldc, bool plain_weights);
  // Columns [first_col, first_col + cols) of the weights, as a [k, cols] view.
  static absl::StatusOr<dnnl_memory_desc_t> WeightsBlockDesc(const DenseArgs& args,
                                                             int64_t first_col, int64_t cols);
  // The plans for every shard of `split` (row blocks: the full and the last block's;
  // `columns`: one per column block).
  absl::StatusOr<std::vector<Plan>> MakePlans(const DenseArgs& args,
                                              const onednn::BatchSplit& split, bool columns,
                                              PlanMode* mode);
  // The plans for weights that are not a constant input: packed the first time, then
  // reused while the values stay the same, plain for good once they change.
  absl::StatusOr<std::vector<Plan>> MakeVariablePlans(const DenseArgs& args,
                                                      const onednn::BatchSplit& split,
                                                      bool columns);
  // The same, kept for constant weights: making them looks up three caches (~1.5 us a
  // layer, most of the hand-off to the shards in the 2-thread MLP).
  absl::StatusOr<std::shared_ptr<const std::vector<Plan>>> Plans(
      const DenseArgs& args, const onednn::BatchSplit& split, bool columns);
  absl::Status RunColumnBlocks(OpKernelContext* ctx, const DenseArgs& args, int64_t shards);
  absl::Status RunEmptySum(const DenseArgs& args);

  onednn::EnginePtr engine_;
  onednn::Activation activation_;
  onednn::ShapeCache<onednn::Primitive> primitives_;
  onednn::PackedWeightsCache packed_;
  // Non-constant weights: set once a call has packed them, and `weights_vary_` once a
  // later call finds different values (from then on they are read plain).
  std::atomic<bool> packed_variable_{false};
  std::atomic<bool> weights_vary_{false};
  // Plans for constant weights, by shape, split and weights buffer; the oldest go first.
  static constexpr size_t kMaxPlanSets = 8;
  std::mutex plan_sets_mu_;
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const std::vector<Plan>>>>
      plan_sets_ ABSL_GUARDED_BY(plan_sets_mu_);
};

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_DENSE_LAYER_H_
