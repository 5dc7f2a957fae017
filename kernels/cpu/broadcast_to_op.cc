// BroadcastTo(input, shape) and BroadcastArgs(s0, s1), with TF 2.21's checks
// and texts (broadcast_to_op.cc, bcast_ops.cc, util/bcast.h).
//
// Both follow numpy's rule, dims aligned on the right: equal dims stay, a 1
// takes the other side's dim, anything else is "Incompatible shapes".
// BroadcastTo copies row by row of the output's last dim, reading the input
// through strides that are 0 on broadcast dims.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// numpy's broadcast of two dim lists; nullopt when a pair of dims is
// incompatible.
std::optional<std::vector<int64_t>> BroadcastDims(absl::Span<const int64_t> a,
                                                  absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {  // i counts from the right
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[rank - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

// TF's TensorShapeUtils::MakeShape texts for a requested output shape.
absl::StatusOr<TensorShape> MakeRequestedShape(const OpKernelContext& ctx,
                                               const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0) return KernelError(ctx, "Dimension ", d, " must be >= 0");
    if (__builtin_mul_overflow(product, d, &product)) {
      std::vector<std::string> shown;
      for (int64_t e : dims) shown.push_back(e < 0 ? "?" : std::to_string(e));
      return KernelError(ctx, "Shape [", absl::StrJoin(shown, ","),
                         "] would have more than 2**63 - 1 elements");
    }
  }
  return OutputShape(ctx, dims);
}

template <typename T>
void BroadcastCopy(OpKernelContext* ctx, const Tensor& input, const Tensor& output) {
  const int rank = output.shape().dims();
  const int offset = rank - input.shape().dims();
  // Input strides per output dim: 0 where the input is broadcast (or absent).
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (int d = rank - 1; d >= offset; --d) {
    const int64_t in_dim = input.shape().dim_size(d - offset);
    stride[d] = in_dim == 1 ? 0 : s;
    s *= in_dim;
  }
  const int64_t cols = rank == 0 ? 1 : output.shape().dim_size(rank - 1);
  const int64_t col_stride = rank == 0 ? 0 : stride[rank - 1];
  const int64_t rows = output.NumElements() / cols;
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  ParallelForElements(ctx, rows, cols * CopyCost<T>() + 4, [&](int64_t first, int64_t end) {
    for (int64_t row = first; row < end; ++row) {
      int64_t base = 0;
      for (int64_t d = rank - 2, r = row; d >= 0; --d) {  // row's multi-index, last dim first
        base += (r % output.shape().dim_size(d)) * stride[d];
        r /= output.shape().dim_size(d);
      }
      T* out = dst + row * cols;
      for (int64_t c = 0; c < cols; ++c) out[c] = src[base + c * col_stride];
    }
  });
}

class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& shape_t = ctx->input(1);
    OP_REQUIRES(ctx, shape_t.shape().dims() == 1,
                KernelError(*ctx, "shape must be a vector of {int32,int64}, got shape ",
                            shape_t.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape,
                        MakeRequestedShape(*ctx, ReadIndices(shape_t)));
    const TensorShape& in_shape = input.shape();
    OP_REQUIRES(
        ctx, in_shape.dims() <= shape.dims(),
        KernelError(*ctx, "Rank of input (", in_shape.dims(),
                    ") must be no greater than rank of output shape (", shape.dims(), ")."));
    if (in_shape == shape) {
      ctx->set_output(0, input);  // nothing to broadcast: share the buffer, as TF does
      return;
    }
    std::optional<std::vector<int64_t>> dims =
        BroadcastDims(in_shape.dim_sizes(), shape.dim_sizes());
    OP_REQUIRES(ctx, dims.has_value(),
                KernelError(*ctx, "Incompatible shapes: ", in_shape.DebugString(), " vs. ",
                            shape.DebugString()));
    OP_REQUIRES(ctx, absl::MakeConstSpan(*dims) == shape.dim_sizes(),
                KernelError(*ctx, "Unable to broadcast tensor of shape ", in_shape.DebugString(),
                            " to tensor of shape ", shape.DebugString()));
    OP_REQUIRES_OK(ctx, CheckReplicatedStrings(*ctx, input, shape));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    if (output->NumElements() == 0) return;
    DispatchByElementSize(input.dtype(),
                          [&](auto zero) { BroadcastCopy<decltype(zero)>(ctx, input, *output); });
  }
};

// BroadcastArgs(s0, s1): the broadcast shape of two shape vectors. Like TF, the
// dims are not validated (a -3 broadcast with 1 is -3).
class BroadcastArgsOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 2; ++i) {
      OP_REQUIRES(
          ctx, ctx->input(i).shape().dims() == 1,
          KernelError(*ctx, "In[", i, "] must be a vector.", ctx->input(i).shape().DebugString()));
    }
    const std::vector<int64_t> s0 = ReadIndices(ctx->input(0));
    const std::vector<int64_t> s1 = ReadIndices(ctx->input(1));
    std::optional<std::vector<int64_t>> dims = BroadcastDims(s0, s1);
    OP_REQUIRES(
        ctx, dims.has_value(),
        KernelError(*ctx, "Incompatible shapes: ", DimsString(s0), " vs. ", DimsString(s1)));
    const int64_t rank = static_cast<int64_t>(dims->size());
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, TensorShape{rank}));
    DispatchIndexType(output->dtype(), [&](auto zero) {
      using T = decltype(zero);
      for (int64_t i = 0; i < rank; ++i) output->data<T>()[i] = static_cast<T>((*dims)[i]);
    });
  }
};

}  // namespace

absl::Status RegisterBroadcastToKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<BroadcastToOp>(CpuKernel("BroadcastTo")
                                            .TypeConstraint("T", PodAndStringTypes())
                                            .TypeConstraint("Tidx", IndexTypes())));
  return registry->Register<BroadcastArgsOp>(
      CpuKernel("BroadcastArgs").TypeConstraint("T", IndexTypes()));
}

}  // namespace dflow
