// SpaceToBatchND and BatchToSpaceND with TF 2.21's checks and texts
// (spacetobatch_op.cc, batchtospace_op.cc). Keras lowers dilated convolutions to
// SpaceToBatchND -> Conv2D -> BatchToSpaceND.
//
// Both view the tensor as [batch, spatial_1..spatial_M, depth] (depth: the trailing
// dims flattened) and move whole depth rows: output row r is one input row (or, for
// SpaceToBatchND's padding, zeros). Output batch index ob = offset * batch + b, where
// `offset` is the row-major index of the position inside the block.
//
// TF first folds leading and trailing block dims with block 1 and no padding into the
// batch and depth; it only matters here for TF's limit of 4 remaining block dims, whose
// error we keep. Sizes are multiplied with overflow checks so hostile block shapes and
// paddings give INVALID_ARGUMENT rather than wrapping.
#include <cstdint>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

constexpr int kMaxBlockDims = 4;  // TF's kMaxSpaceToBatchBlockDims

// block_shape, and paddings (or crops) as {before, after} pairs, checked for shape.
struct BlockArgs {
  std::vector<int64_t> block;
  std::vector<int64_t> pads;  // 2 per block dim
};

absl::StatusOr<BlockArgs> ReadBlockArgs(const OpKernelContext& ctx, const Tensor& input,
                                        const Tensor& block_t, const Tensor& pads_t,
                                        const char* pads_name) {
  if (block_t.shape().dims() != 1) {
    return KernelError(ctx, "block_shape rank should be 1 instead of ", block_t.shape().dims());
  }
  const int64_t m = block_t.shape().dim_size(0);
  if (input.shape().dims() < 1 + m) {
    return KernelError(ctx, "input rank should be >= ", 1 + m, " instead of ",
                       input.shape().dims());
  }
  if (pads_t.shape().dims() != 2 || pads_t.shape().dim_size(0) != m ||
      pads_t.shape().dim_size(1) != 2) {
    return KernelError(ctx, pads_name, " should have shape [", m, ", 2] instead of ",
                       pads_t.shape().DebugString());
  }
  return BlockArgs{ReadIndices(block_t), ReadIndices(pads_t)};
}

// TF's count of block dims left once leading and trailing trivial ones are folded.
absl::Status CheckInternalBlockDims(const OpKernelContext& ctx, const BlockArgs& a) {
  const int m = static_cast<int>(a.block.size());
  auto trivial = [&](int d) {
    return a.block[d] == 1 && a.pads[2 * d] == 0 && a.pads[2 * d + 1] == 0;
  };
  int prefix = 0;
  while (prefix < m && trivial(prefix)) ++prefix;
  int suffix = 0;
  while (suffix < m - prefix && trivial(m - 1 - suffix)) ++suffix;
  const int internal = m - prefix - suffix;
  if (internal > kMaxBlockDims) {
    return KernelError(ctx, "Maximum number of non-combined block dimensions is ", internal,
                       " but must not exceed ", kMaxBlockDims);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> BlockProduct(const OpKernelContext& ctx,
                                     const std::vector<int64_t>& block) {
  int64_t product = 1;
  for (int64_t b : block) {
    if (__builtin_mul_overflow(product, b, &product)) {
      return KernelError(ctx, "product of block sizes overflows int64");
    }
  }
  if (product <= 0)
    return KernelError(ctx, "Product of block sizes must be positive, got ", product);
  return product;
}

// The move of rows between the two views, from SpaceToBatchND's side: `space` is the
// [batch, spatial..., depth] tensor, `blocks` the [batch * prod(block), spatial / block...,
// depth] one.
struct Geometry {
  int64_t batch = 0;                // of the space tensor
  std::vector<int64_t> space;       // spatial sizes of the space tensor
  std::vector<int64_t> blocked;     // spatial sizes of the blocked tensor
  std::vector<int64_t> block;       // block sizes
  std::vector<int64_t> pad_before;  // padding (SpaceToBatch) or crop (BatchToSpace) before
  int64_t depth = 1;

  int64_t BlockedRows() const {
    int64_t rows = batch;
    for (size_t i = 0; i < block.size(); ++i) rows *= block[i] * blocked[i];
    return rows;
  }
  // The space tensor's row for blocked row `r`, or -1 for a padded position.
  int64_t SpaceRow(int64_t r) const {
    const int m = static_cast<int>(block.size());
    std::vector<int64_t> pos(m);
    for (int i = m - 1; i >= 0; --i) {
      pos[i] = r % blocked[i];
      r /= blocked[i];
    }
    const int64_t b = r % batch;
    int64_t offset = r / batch;
    for (int i = m - 1; i >= 0; --i) {
      pos[i] = pos[i] * block[i] + offset % block[i] - pad_before[i];
      offset /= block[i];
    }
    int64_t row = b;
    for (int i = 0; i < m; ++i) {
      if (pos[i] < 0 || pos[i] >= space[i]) return -1;
      row = row * space[i] + pos[i];
    }
    return row;
  }
};

// Moves rows between `space` and `blocked` (dtype T): to the blocked tensor for
// SpaceToBatchND (padding rows zeroed), back for BatchToSpaceND (cropped rows skipped).
// Iterates over the blocked rows, so each is visited once either way.
template <typename T>
void MoveRows(OpKernelContext* ctx, const Geometry& g, const Tensor& space, const Tensor& blocked,
              bool to_blocked) {
  const int64_t depth = g.depth;
  T* space_data = space.data<T>();
  T* blocked_data = blocked.data<T>();
  ParallelForElements(
      ctx, g.BlockedRows(), depth * CopyCost<T>() + 8, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t s = g.SpaceRow(r);
          T* b_row = blocked_data + r * depth;
          if (to_blocked) {
            if (s < 0) {
              std::fill(b_row, b_row + depth, T{});
            } else {
              std::copy(space_data + s * depth, space_data + (s + 1) * depth, b_row);
            }
          } else if (s >= 0) {
            std::copy(b_row, b_row + depth, space_data + s * depth);
          }
        }
      });
}

void Move(OpKernelContext* ctx, const Geometry& g, const Tensor& space, const Tensor& blocked,
          bool to_blocked) {
  if (space.NumElements() == 0 || blocked.NumElements() == 0) return;
  DispatchByElementSize(space.dtype(), [&](auto zero) {
    MoveRows<decltype(zero)>(ctx, g, space, blocked, to_blocked);
  });
}

// The depth (trailing dims after the block dims) of `shape`.
int64_t Depth(const TensorShape& shape, int m) { return DimProduct(shape, 1 + m, shape.dims()); }

class SpaceToBatchNDOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, BlockArgs a,
                        ReadBlockArgs(*ctx, input, ctx->input(1), ctx->input(2), "paddings"));
    OP_ASSIGN_OR_RETURN(ctx, Geometry g, MakeGeometry(*ctx, input.shape(), a));
    OP_ASSIGN_OR_RETURN(ctx, const int64_t product, BlockProduct(*ctx, a.block));
    std::vector<int64_t> dims = {0};
    OP_REQUIRES(ctx, !__builtin_mul_overflow(g.batch, product, &dims[0]),
                KernelError(*ctx, "output batch size overflows int64"));
    dims.insert(dims.end(), g.blocked.begin(), g.blocked.end());
    for (int d = 1 + static_cast<int>(a.block.size()); d < input.shape().dims(); ++d) {
      dims.push_back(input.shape().dim_size(d));
    }
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    Move(ctx, g, input, *output, /*to_blocked=*/true);
  }

 private:
  // TF's checks in TF's order, then the padded sizes divided by the blocks.
  static absl::StatusOr<Geometry> MakeGeometry(const OpKernelContext& ctx, const TensorShape& shape,
                                               const BlockArgs& a) {
    const int m = static_cast<int>(a.block.size());
    for (int i = 0; i < m; ++i) {
      if (a.block[i] < 1) {
        return KernelError(ctx, "All values in block_shape must be positive, got value, ",
                           a.block[i], " at index ", i, ".");
      }
    }
    DFLOW_RETURN_IF_ERROR(BlockProduct(ctx, a.block).status());
    DFLOW_RETURN_IF_ERROR(CheckInternalBlockDims(ctx, a));
    Geometry g;
    g.batch = shape.dim_size(0);
    g.block = a.block;
    g.depth = Depth(shape, m);
    for (int i = 0; i < m; ++i) {
      const int64_t before = a.pads[2 * i], after = a.pads[2 * i + 1];
      if (before < 0 || after < 0) return KernelError(ctx, "Paddings must be non-negative");
      const int64_t size = shape.dim_size(1 + i);
      int64_t padded = 0;
      if (__builtin_add_overflow(size, before, &padded) ||
          __builtin_add_overflow(padded, after, &padded)) {
        return KernelError(ctx, "padded_shape[", i, "] overflows int64");
      }
      if (padded % a.block[i] != 0) {
        return KernelError(ctx, "padded_shape[", i, "]=", padded,
                           " is not divisible by block_shape[", i, "]=", a.block[i]);
      }
      g.space.push_back(size);
      g.blocked.push_back(padded / a.block[i]);
      g.pad_before.push_back(before);
    }
    return g;
  }
};

class BatchToSpaceNDOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, BlockArgs a,
                        ReadBlockArgs(*ctx, input, ctx->input(1), ctx->input(2), "crops"));
    OP_ASSIGN_OR_RETURN(ctx, Geometry g, MakeGeometry(*ctx, input.shape(), a));
    std::vector<int64_t> dims = {g.batch};
    dims.insert(dims.end(), g.space.begin(), g.space.end());
    for (int d = 1 + static_cast<int>(a.block.size()); d < input.shape().dims(); ++d) {
      dims.push_back(input.shape().dim_size(d));
    }
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    Move(ctx, g, *output, input, /*to_blocked=*/false);
  }

 private:
  // TF's checks in TF's order; the space sizes are the blocked ones times the blocks,
  // less the crops. TF checks only the product of the blocks, so a negative block
  // pair passes here and fails (or gives an empty output) on the cropped size.
  static absl::StatusOr<Geometry> MakeGeometry(const OpKernelContext& ctx, const TensorShape& shape,
                                               const BlockArgs& a) {
    const int m = static_cast<int>(a.block.size());
    DFLOW_ASSIGN_OR_RETURN(int64_t product, BlockProduct(ctx, a.block));
    const int64_t in_batch = shape.dim_size(0);
    if (in_batch % product != 0) {
      return KernelError(ctx, "Input batch dimension (", in_batch,
                         ") is not divisible by product of block sizes (", product, ")");
    }
    DFLOW_RETURN_IF_ERROR(CheckInternalBlockDims(ctx, a));
    Geometry g;
    g.batch = in_batch / product;
    g.block = a.block;
    g.depth = Depth(shape, m);
    for (int i = 0; i < m; ++i) {
      const int64_t before = a.pads[2 * i], after = a.pads[2 * i + 1];
      if (before < 0 || after < 0) return KernelError(ctx, "Crops must be non-negative");
      const int64_t size = shape.dim_size(1 + i);
      int64_t cropped = 0;
      if (__builtin_mul_overflow(size, a.block[i], &cropped) ||
          __builtin_sub_overflow(cropped, before, &cropped) ||
          __builtin_sub_overflow(cropped, after, &cropped)) {
        return KernelError(ctx, "cropped_shape[", i, "] overflows int64");
      }
      if (cropped < 0) {
        return KernelError(ctx, "cropped_shape[", i, "]=", cropped, " must be non-negative");
      }
      g.space.push_back(cropped);
      g.blocked.push_back(size);
      g.pad_before.push_back(before);
    }
    return g;
  }
};

// TF_CALL_REAL_NUMBER_TYPES: no bool, complex or string kernels on CPU.
std::vector<DataType> RealNumberTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_HALF,  DT_BFLOAT16, DT_INT8,   DT_INT16,
          DT_INT32, DT_INT64,  DT_UINT8, DT_UINT16,   DT_UINT32, DT_UINT64};
}

}  // namespace

absl::Status RegisterSpaceToBatchKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<SpaceToBatchNDOp>(CpuKernel("SpaceToBatchND")
                                               .TypeConstraint("T", RealNumberTypes())
                                               .TypeConstraint("Tblock_shape", IndexTypes())
                                               .TypeConstraint("Tpaddings", IndexTypes())));
  return registry->Register<BatchToSpaceNDOp>(CpuKernel("BatchToSpaceND")
                                                  .TypeConstraint("T", RealNumberTypes())
                                                  .TypeConstraint("Tblock_shape", IndexTypes())
                                                  .TypeConstraint("Tcrops", IndexTypes()));
}

}  // namespace dflow
