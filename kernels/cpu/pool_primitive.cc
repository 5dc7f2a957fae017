#include "kernels/cpu/pool_primitive.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/conv_row_bands.h"
#include "kernels/cpu/kernel_util.h"

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

namespace {

// A pool reads each input once and does a compare per window element: a hand-off pays
// from about a quarter of a convolution shard's work.
constexpr double kMinPoolFlopsPerShard = onednn::kMinFlopsPerShard / 4;

absl::Status Execute(const onednn::Primitive& p, dnnl_engine_t engine, const float* src,
                     float* dst) {
  return onednn::Execute(p, engine,
                         {{DNNL_ARG_SRC, p.Md(dnnl_query_src_md), src},
                          {DNNL_ARG_DST, p.Md(dnnl_query_dst_md), dst}});
}

// The pool as `bands` bands of output rows per image; false (nothing run) when a band
// would read only padding.
absl::StatusOr<bool> RunRowBands(OpKernelContext* ctx, const PoolGeometry& g, int64_t batch,
                                 int64_t bands, dnnl_engine_t engine,
                                 const PoolPrimitiveFn& primitive, const float* src,
                                 float* dst) {
  std::optional<std::vector<RowBand>> split = SplitOutputRows(g.rows, bands);
  if (!split.has_value()) return false;
  const std::vector<RowBand>& row_bands = *split;
  bands = static_cast<int64_t>(row_bands.size());
  std::vector<std::shared_ptr<const onednn::Primitive>> primitives;
  for (const RowBand& band : row_bands) {
    PoolGeometry sub = g;
    sub.rows = band.rows;
    DFLOW_ASSIGN_OR_RETURN(auto p, primitive(sub, 1));
    primitives.push_back(std::move(p));
  }
  const int64_t in_row = g.depth * g.cols.input;  // NHWC: a row is contiguous
  const int64_t out_row = g.depth * g.cols.output;
  const int64_t units = batch * bands;
  DFLOW_RETURN_IF_ERROR(onednn::RunShards(
      ctx, units, onednn::BatchSplit{units, 1}, g.FlopsPerImage() / static_cast<double>(bands),
      [&](int64_t first, int64_t count) -> absl::Status {
        for (int64_t u = first; u < first + count; ++u) {
          const int64_t image = u / bands;
          const RowBand& band = row_bands[u % bands];
          DFLOW_RETURN_IF_ERROR(
              Execute(*primitives[u % bands], engine,
                      src + image * g.InImage() + band.first_input_row * in_row,
                      dst + image * g.OutImage() + band.first_output_row * out_row));
        }
        return absl::OkStatus();
      }));
  return true;
}

}  // namespace

absl::Status RunPool(OpKernelContext* ctx, const PoolGeometry& g, int64_t batch, bool nchw,
                     dnnl_engine_t engine, const PoolPrimitiveFn& primitive, const float* src,
                     float* dst) {
  const int threads = NumThreads(ctx);
  const onednn::BatchSplit split =
      onednn::SplitBatch(batch, g.FlopsPerImage(), threads, kMinPoolFlopsPerShard);
  if (!nchw && split.shards < threads) {
    const int64_t bands = RowBandsPerImage(batch, g.rows.output, g.FlopsPerImage(), threads,
                                           kMinPoolFlopsPerShard);
    if (bands > 1) {
      DFLOW_ASSIGN_OR_RETURN(bool done,
                             RunRowBands(ctx, g, batch, bands, engine, primitive, src, dst));
      if (done) return absl::OkStatus();
    }
  }
  const int64_t last = batch - (split.shards - 1) * split.block;
  DFLOW_ASSIGN_OR_RETURN(auto full, primitive(g, split.block));
  auto rest = full;
  if (last != split.block) {
    DFLOW_ASSIGN_OR_RETURN(rest, primitive(g, last));
  }
  return onednn::RunShards(ctx, batch, split, g.FlopsPerImage(),
                           [&](int64_t first, int64_t n) {
                             return Execute(n == split.block ? *full : *rest, engine,
                                            src + first * g.InImage(),
                                            dst + first * g.OutImage());
                           });
}

}  // namespace dflow
