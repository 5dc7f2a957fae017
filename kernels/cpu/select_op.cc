// Select (TF 1.x where) and SelectV2 (numpy-broadcasting where).
//
// Select accepts three layouts, as TF's SelectOp does: a scalar condition picks a whole
// tensor; a vector condition with higher-rank branches picks rows (condition[i] chooses
// row i of the first dimension); otherwise all three shapes must be equal. SelectV2
// broadcasts condition, then and else to one shape.
#include <algorithm>
#include <optional>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// out[i] = cond[i / row] ? t[i] : e[i], i.e. one condition per `row` elements.
template <typename T>
void SelectRows(OpKernelContext* ctx, const bool* cond, const T* t, const T* e, T* out,
                int64_t rows, int64_t row) {
  ParallelForElements(ctx, rows, row * (CopyCost<T>() + 1), [&](int64_t first, int64_t limit) {
    for (int64_t r = first; r < limit; ++r) {
      const T* src = (cond[r] ? t : e) + r * row;
      std::copy(src, src + row, out + r * row);
    }
  });
}

class SelectOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& then_t = ctx->input(1);
    const Tensor& else_t = ctx->input(2);
    const auto same_size_error = [&] {
      return KernelError(*ctx, "'then' and 'else' must have the same size.  but received: ",
                         then_t.shape().DebugString(), " vs. ", else_t.shape().DebugString());
    };
    if (cond.shape().dims() == 0) {
      OP_REQUIRES(ctx, then_t.shape() == else_t.shape(), same_size_error());
      ctx->set_output(0, cond.scalar<bool>() ? then_t : else_t);
      return;
    }
    int64_t rows = then_t.NumElements();
    if (cond.shape().dims() == 1 && then_t.shape().dims() != 1) {
      OP_REQUIRES(ctx, then_t.shape().dims() >= 1,
                  KernelError(*ctx, "'then' must be at least a vector, but saw shape: ",
                              then_t.shape().DebugString()));
      OP_REQUIRES(ctx, then_t.shape().dim_size(0) == cond.NumElements(),
                  KernelError(*ctx, "Number of batches of 'then' must match size of 'cond', "
                                    "but saw: ",
                              then_t.shape().dim_size(0), " vs. ", cond.NumElements()));
      OP_REQUIRES(ctx, then_t.shape() == else_t.shape(), same_size_error());
      rows = cond.NumElements();
    } else {
      for (int i = 1; i < 3; ++i) {
        OP_REQUIRES(ctx, ctx->input(i).shape() == cond.shape(),
                    KernelError(*ctx, "Inputs to operation ", ctx->node_name(), " of type ",
                                type_string(), " must have the same size and shape.  Input 0: ",
                                cond.shape().DebugString(), " != input ", i, ": ",
                                ctx->input(i).shape().DebugString()));
      }
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, then_t.shape()));
    if (output->NumElements() == 0) return;
    const int64_t row = output->NumElements() / rows;
    DispatchByElementSize(then_t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      SelectRows<T>(ctx, cond.data<bool>(), then_t.data<T>(), else_t.data<T>(),
                    output->data<T>(), rows, row);
    });
  }
};

// Numpy broadcasting of several shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> BroadcastShapes(const std::vector<const TensorShape*>& shapes) {
  int rank = 0;
  for (const TensorShape* s : shapes) rank = std::max(rank, s->dims());
  std::vector<int64_t> out(rank, 1);
  for (const TensorShape* s : shapes) {
    for (int i = 0; i < s->dims(); ++i) {
      const int64_t dim = s->dim_size(i);
      int64_t& o = out[rank - s->dims() + i];
      if (dim == o || dim == 1) continue;
      if (o != 1) return std::nullopt;
      o = dim;
    }
  }
  return out;
}

// Element strides of `shape` seen in a broadcast output of rank `rank` (0 where broadcast).
std::vector<int64_t> BroadcastStrides(const TensorShape& shape, int rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int i = shape.dims() - 1; i >= 0; --i) {
    const int o = rank - shape.dims() + i;
    strides[o] = shape.dim_size(i) == 1 ? 0 : stride;
    stride *= shape.dim_size(i);
  }
  return strides;
}

template <typename T>
void SelectBroadcast(OpKernelContext* ctx, const Tensor& cond, const Tensor& t, const Tensor& e,
                     const Tensor& output) {
  const int rank = output.shape().dims();
  const std::vector<int64_t> cs = BroadcastStrides(cond.shape(), rank);
  const std::vector<int64_t> ts = BroadcastStrides(t.shape(), rank);
  const std::vector<int64_t> es = BroadcastStrides(e.shape(), rank);
  const bool* c = cond.data<bool>();
  const T* tp = t.data<T>();
  const T* ep = e.data<T>();
  T* out = output.data<T>();
  ParallelForElements(ctx, output.NumElements(), CopyCost<T>() + 2 * rank,
                      [&](int64_t first, int64_t limit) {
    for (int64_t i = first; i < limit; ++i) {
      int64_t ci = 0, ti = 0, ei = 0;
      int64_t rest = i;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t extent = output.shape().dim_size(d);
        const int64_t index = rest % extent;
        rest /= extent;
        ci += index * cs[d];
        ti += index * ts[d];
        ei += index * es[d];
      }
      out[i] = c[ci] ? tp[ti] : ep[ei];
    }
  });
}

class SelectV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& then_t = ctx->input(1);
    const Tensor& else_t = ctx->input(2);
    std::optional<std::vector<int64_t>> dims =
        BroadcastShapes({&cond.shape(), &then_t.shape(), &else_t.shape()});
    OP_REQUIRES(ctx, dims.has_value(),
                KernelError(*ctx, "condition ", cond.shape().DebugString(), ", then ",
                            then_t.shape().DebugString(), ", and else ",
                            else_t.shape().DebugString(), " must be broadcastable"));
    if (cond.NumElements() == 1 && then_t.shape() == else_t.shape() &&
        TensorShape(*dims) == then_t.shape()) {
      ctx->set_output(0, cond.data<bool>()[0] ? then_t : else_t);  // one choice: share it
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, TensorShape(*dims)));
    if (output->NumElements() == 0) return;
    DispatchByElementSize(then_t.dtype(), [&](auto zero) {
      SelectBroadcast<decltype(zero)>(ctx, cond, then_t, else_t, *output);
    });
  }
};

}  // namespace

absl::Status RegisterSelectKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<SelectOp>(CpuKernel("Select").TypeConstraint("T", CopyableTypes())));
  return registry->Register<SelectV2Op>(
      CpuKernel("SelectV2").TypeConstraint("T", CopyableTypes()));
}

}  // namespace dflow
