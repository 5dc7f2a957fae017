// Pad, PadV2, MirrorPad and Tile. Each output element reads one input element chosen
// independently per dimension, so all four are one gather driven by a per-dimension
// index map: map[d][o] is the input index along d for output index o, or -1 for "the
// fill value" (constant padding). Padding and tiling only build different maps.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

using DimMaps = std::vector<std::vector<int64_t>>;

// output(o0..on) = input(maps[0][o0], .., maps[n][on]), or `fill` where a map says -1.
template <typename T>
void GatherByDimMaps(OpKernelContext* ctx, const Tensor& input, const DimMaps& maps,
                     const T& fill, const Tensor& output) {
  const int rank = input.shape().dims();
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * input.shape().dim_size(d + 1);
  const std::vector<int64_t>& last = maps[rank - 1];
  const int64_t row = static_cast<int64_t>(last.size());
  const int64_t rows = output.NumElements() / row;
  ParallelForElements(ctx, rows, row * (CopyCost<T>() + 1) + rank, [&](int64_t first, int64_t limit) {
    for (int64_t r = first; r < limit; ++r) {
      T* out = dst + r * row;
      int64_t offset = 0;
      bool padding = false;
      for (int64_t d = rank - 2, rest = r; d >= 0; --d) {
        const int64_t extent = static_cast<int64_t>(maps[d].size());
        const int64_t index = maps[d][rest % extent];
        rest /= extent;
        padding |= index < 0;
        offset += index * in_stride[d];
      }
      if (padding) {
        std::fill(out, out + row, fill);
        continue;
      }
      const T* in = src + offset;
      for (int64_t j = 0; j < row; ++j) out[j] = last[j] < 0 ? fill : in[last[j]];
    }
  });
}

// Allocates the output (one extent per map) and fills it; `fill` is read from
// `fill_tensor` (a scalar of the input's dtype) or is zero when it is null.
// Allocates the output of shape `dims` first (an overflowing or unallocatable size is an
// error before any index map exists: the maps hold one int64 per output index along each
// dim, so a huge request must never reach them), then gathers through `make_maps()`.
void RunGather(OpKernelContext* ctx, const std::vector<int64_t>& dims,
               const std::function<DimMaps()>& make_maps, const Tensor* fill_tensor) {
  const Tensor& input = ctx->input(0);
  OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
  OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
  if (output->NumElements() == 0) return;
  const DimMaps maps = make_maps();
  DispatchByElementSize(input.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T fill = fill_tensor == nullptr ? T{} : fill_tensor->data<T>()[0];
    GatherByDimMaps<T>(ctx, input, maps, fill, *output);
  });
}

// The padded output's dims; INVALID_ARGUMENT naming the dim when one overflows int64.
absl::StatusOr<std::vector<int64_t>> PaddedDims(const OpKernelContext& ctx,
                                                const std::vector<int64_t>& paddings) {
  const TensorShape& in = ctx.input(0).shape();
  std::vector<int64_t> dims(in.dims());
  for (int d = 0; d < in.dims(); ++d) {
    if (__builtin_add_overflow(in.dim_size(d), paddings[2 * d], &dims[d]) ||
        __builtin_add_overflow(dims[d], paddings[2 * d + 1], &dims[d])) {
      return KernelError(ctx, "output dimension ", d, " overflows: ", paddings[2 * d], " + ",
                         in.dim_size(d), " + ", paddings[2 * d + 1]);
    }
  }
  return dims;
}

// The (before, after) pairs of a [rank, 2] paddings input, checked as TF does.
absl::StatusOr<std::vector<int64_t>> ReadPaddings(const OpKernelContext& ctx) {
  const TensorShape& in = ctx.input(0).shape();
  const Tensor& paddings = ctx.input(1);
  if (paddings.shape().dims() != 2 || paddings.shape().dim_size(1) != 2) {
    return KernelError(ctx, "paddings must be a matrix with 2 columns: ",
                       paddings.shape().DebugString());
  }
  if (paddings.shape().dim_size(0) != in.dims()) {
    return KernelError(ctx, "The first dimension of paddings must be the rank of inputs",
                       paddings.shape().DebugString(), " ", in.DebugString());
  }
  std::vector<int64_t> values = ReadIndices(paddings);
  for (int d = 0; d < in.dims(); ++d) {
    if (values[2 * d] < 0 || values[2 * d + 1] < 0) {
      return KernelError(ctx, "Paddings must be non-negative: ", values[2 * d], " ",
                         values[2 * d + 1]);
    }
  }
  return values;
}

// Input index along a dimension of size `dim` for padded position `i` (may be outside
// [0, dim)); -1 for constant padding.
enum class PadMode { kConstant, kReflect, kSymmetric };

int64_t SourceIndex(int64_t i, int64_t dim, PadMode mode) {
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kReflect: return i < 0 ? -i : 2 * dim - 2 - i;
    case PadMode::kSymmetric: return i < 0 ? -i - 1 : 2 * dim - 1 - i;
  }
  return -1;
}

DimMaps PadMaps(const TensorShape& in, const std::vector<int64_t>& paddings, PadMode mode) {
  DimMaps maps(in.dims());
  for (int d = 0; d < in.dims(); ++d) {
    const int64_t before = paddings[2 * d], dim = in.dim_size(d);
    const int64_t extent = before + dim + paddings[2 * d + 1];
    maps[d].resize(extent);
    for (int64_t o = 0; o < extent; ++o) maps[d][o] = SourceIndex(o - before, dim, mode);
  }
  return maps;
}

// Pad (zeros) and PadV2 (constant_values).
class PadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> paddings, ReadPaddings(*ctx));
    const Tensor* fill = nullptr;
    if (ctx->num_inputs() == 3) {
      fill = &ctx->input(2);
      OP_REQUIRES(ctx, fill->shape().dims() == 0,
                  KernelError(*ctx, "constant_values must be a scalar. Found: ",
                              fill->shape().DebugString()));
    }
    const Tensor& input = ctx->input(0);
    if (std::all_of(paddings.begin(), paddings.end(), [](int64_t p) { return p == 0; })) {
      ctx->set_output(0, input);  // nothing to pad: share the input
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dims, PaddedDims(*ctx, paddings));
    RunGather(
        ctx, dims, [&] { return PadMaps(input.shape(), paddings, PadMode::kConstant); }, fill);
  }
};

class MirrorPadOp : public OpKernel {
 public:
  explicit MirrorPadOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string mode;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("mode", &mode));
    OP_REQUIRES(ctx, mode == "REFLECT" || mode == "SYMMETRIC",
                absl::InvalidArgumentError(absl::StrCat("MirrorPad: mode must be REFLECT or "
                                                        "SYMMETRIC, got ", mode)));
    mode_ = mode == "REFLECT" ? PadMode::kReflect : PadMode::kSymmetric;
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> paddings, ReadPaddings(*ctx));
    const TensorShape& in = ctx->input(0).shape();
    // REFLECT excludes the edge, so it can mirror at most dim - 1 elements.
    const int64_t offset = mode_ == PadMode::kReflect ? 1 : 0;
    for (int d = 0; d < in.dims(); ++d) {
      const int64_t before = paddings[2 * d], after = paddings[2 * d + 1];
      const int64_t limit = in.dim_size(d) - offset;
      OP_REQUIRES(ctx, before <= limit && after <= limit,
                  mode_ == PadMode::kReflect
                      ? KernelError(*ctx, "paddings must be less than the dimension size: ",
                                    before, ", ", after, " not less than ", in.dim_size(d))
                      : KernelError(*ctx, "paddings must be no greater than the dimension size: ",
                                    before, ", ", after, " greater than ", in.dim_size(d)));
    }
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dims, PaddedDims(*ctx, paddings));
    RunGather(ctx, dims, [&] { return PadMaps(in, paddings, mode_); }, nullptr);
  }

 private:
  PadMode mode_ = PadMode::kReflect;
};

class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& multiples_t = ctx->input(1);
    const int rank = input.shape().dims();
    OP_REQUIRES(ctx, multiples_t.shape().dims() == 1,
                KernelError(*ctx, "Expected multiples to be 1-D, but got shape ",
                            multiples_t.shape().DebugString()));
    OP_REQUIRES(ctx, multiples_t.NumElements() == rank,
                KernelError(*ctx, "Expected multiples argument to be a vector of length ", rank,
                            " but got length ", multiples_t.NumElements()));
    const std::vector<int64_t> multiples = ReadIndices(multiples_t);
    std::vector<int64_t> dims(rank);
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(ctx, multiples[d] >= 0,
                  KernelError(*ctx, "Expected multiples[", d, "] >= 0, but got ", multiples[d]));
      const int64_t dim = input.shape().dim_size(d);
      OP_REQUIRES(ctx, !__builtin_mul_overflow(dim, multiples[d], &dims[d]),
                  KernelError(*ctx, "output dimension ", d, " overflows: ", dim, " * ",
                              multiples[d]));
    }
    if (std::all_of(multiples.begin(), multiples.end(), [](int64_t m) { return m == 1; })) {
      ctx->set_output(0, input);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape out_shape, TensorShape::Make(dims));
    OP_REQUIRES_OK(ctx, CheckReplicatedStrings(*ctx, input, out_shape));
    auto tile_maps = [&] {
      DimMaps maps(rank);
      for (int d = 0; d < rank; ++d) {
        const int64_t dim = input.shape().dim_size(d);
        maps[d].resize(dims[d]);
        for (int64_t o = 0; o < dims[d]; ++o) maps[d][o] = o % dim;
      }
      return maps;
    };
    RunGather(ctx, dims, tile_maps, nullptr);
  }
};

}  // namespace

absl::Status RegisterPadTileKernels(KernelRegistry* registry) {
  for (const char* op : {"Pad", "PadV2"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<PadOp>(
        CpuKernel(op).TypeConstraint("T", CopyableTypes()).TypeConstraint("Tpaddings", IndexTypes())));
  }
  DFLOW_RETURN_IF_ERROR(registry->Register<MirrorPadOp>(
      CpuKernel("MirrorPad").TypeConstraint("T", CopyableTypes()).TypeConstraint("Tpaddings", IndexTypes())));
  return registry->Register<TileOp>(
      CpuKernel("Tile").TypeConstraint("T", CopyableTypes()).TypeConstraint("Tmultiples", IndexTypes()));
}

}  // namespace dflow
