// MatMul, BatchMatMul and BatchMatMulV2 for float (oneDNN) and double (OpenBLAS), and for
// half and bfloat16 through float, as TF's CPU kernel computes them (see HalfToFloat).
//
// The library runs on the input and output buffers as they are: transpose_a/transpose_b
// (adj_x/adj_y) become the GEMM's transpose flags and the tensors' row lengths its
// leading dimensions, so no operand is copied. Products are sharded over the session's
// pool by blas::ParallelGemm (kernels/cpu/blas.h explains why the pool, not the
// library's OpenMP team, provides the threads). Batched products with a shared,
// untransposed right operand (a dense layer over [batch, time, features]) run as one
// GEMM; other batches are spread over the pool matrix by matrix.
//
// Errors use TensorFlow's words ("Matrix size-incompatible: In[0]: [2,3], In[1]: [4,2]").
#include <algorithm>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/batch_broadcast.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/cancellation.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// Half and bfloat16 products run as TF 2.21's CPU kernel (BaseBatchMatMulOp) runs them:
// both inputs converted to float, a float product, and the result converted back once:
// rounded to nearest even for half, truncated for bfloat16 (TF's FloatToBFloat16 keeps
// the top 16 bits). Checked against TF on 64x64x64 products: every bfloat16 element
// matches truncation (rounding would differ in half of them); half differs in about
// 1 of 4096 elements, where the two float sums' orders straddle a rounding midpoint.
template <typename T>
absl::StatusOr<Tensor> HalfToFloat(OpKernelContext* ctx, const Tensor& input) {
  DFLOW_ASSIGN_OR_RETURN(Tensor converted, ctx->allocate_temp(DT_FLOAT, input.shape()));
  const T* in = input.data<T>();
  float* out = converted.data<float>();
  ParallelForElements(ctx, input.NumElements(), 2, [in, out](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = in[i].ToFloat();
  });
  return converted;
}

template <typename T>
void FloatToHalf(OpKernelContext* ctx, const Tensor& input, const Tensor& output) {
  const float* in = input.data<float>();
  T* out = output.data<T>();
  ParallelForElements(ctx, input.NumElements(), 2, [in, out](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (std::is_same_v<T, Bfloat16>) {
        out[i] = Bfloat16::FromFloatTruncated(in[i]);
      } else {
        out[i] = T::FromFloat(in[i]);
      }
    }
  });
}

// The type the BLAS computes T in.
template <typename T>
using GemmType = std::conditional_t<kIsHalfOrBfloat16<T>, float, T>;

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(context, context->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, const MatMulDims dims,
                        GetMatMulDims(a.shape(), b.shape(), transpose_a_, transpose_b_));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out,
                        ctx->allocate_output(0, TensorShape({dims.m, dims.n})));
    if (out->NumElements() == 0) return;
    if constexpr (kIsHalfOrBfloat16<T>) {
      OP_ASSIGN_OR_RETURN(ctx, const Tensor a_float, HalfToFloat<T>(ctx, a));
      OP_ASSIGN_OR_RETURN(ctx, const Tensor b_float, HalfToFloat<T>(ctx, b));
      OP_ASSIGN_OR_RETURN(ctx, const Tensor out_float, ctx->allocate_temp(DT_FLOAT, out->shape()));
      OP_REQUIRES_OK(ctx, Gemm<float>(ctx, dims, a_float, b_float, out_float));
      FloatToHalf<T>(ctx, out_float, *out);
    } else {
      OP_REQUIRES_OK(ctx, Gemm<T>(ctx, dims, a, b, *out));
    }
  }

 private:
  template <typename C>
  absl::Status Gemm(OpKernelContext* ctx, const MatMulDims& dims, const Tensor& a,
                    const Tensor& b, const Tensor& out) const {
    const blas::GemmArgs<C> args =
        blas::DenseProduct(dims.m, dims.n, dims.k, transpose_a_, transpose_b_, a.data<C>(),
                           b.data<C>(), out.data<C>());
    return blas::ParallelGemm(ctx->pool(), NumThreads(ctx), args, ctx->cancellation());
  }

  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

// V1 (BatchMatMul) wants equal ranks and equal batch dims; V2 broadcasts them.
absl::StatusOr<BatchBroadcast> MakeBatchPlan(const TensorShape& x, const TensorShape& y,
                                        bool broadcast) {
  if (broadcast) {
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("In[0] ndims must be >= 2: ", x.dims()));
    }
    if (y.dims() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("In[1] ndims must be >= 2: ", y.dims()));
    }
  } else {
    if (x.dims() != y.dims()) {
      return absl::InvalidArgumentError(absl::StrCat("In[0] and In[1] has different ndims: ",
                                                     x.DebugString(), " vs. ", y.DebugString()));
    }
    if (x.dims() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("In[0] and In[1] ndims must be >= 2: ", x.dims()));
    }
    for (int i = 0; i < x.dims() - 2; ++i) {
      if (x.dim_size(i) != y.dim_size(i)) {
        return absl::InvalidArgumentError(absl::StrCat("In[0].dim(", i, ") and In[1].dim(", i,
                                                       ") must be the same: ", x.DebugString(),
                                                       " vs ", y.DebugString()));
      }
    }
  }
  // Batch dims: all dims but the last two.
  std::optional<BatchBroadcast> plan =
      BroadcastBatches(x.dim_sizes().first(x.dims() - 2), y.dim_sizes().first(y.dims() - 2));
  if (!plan.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("In[0] and In[1] must have compatible batch dimensions: ",
                     x.DebugString(), " vs. ", y.DebugString()));
  }
  return *std::move(plan);
}

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  BatchMatMulOp(OpKernelConstruction* context, bool broadcast)
      : OpKernel(context), broadcast_(broadcast) {
    OP_REQUIRES_OK(context, context->GetAttr("adj_x", &adj_x_));
    OP_REQUIRES_OK(context, context->GetAttr("adj_y", &adj_y_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, BatchBroadcast plan,
                        MakeBatchPlan(x.shape(), y.shape(), broadcast_));
    const int xr = x.shape().dims();
    const int yr = y.shape().dims();
    const int64_t x_rows = x.shape().dim_size(xr - 2), x_cols = x.shape().dim_size(xr - 1);
    const int64_t y_rows = y.shape().dim_size(yr - 2), y_cols = y.shape().dim_size(yr - 1);
    const int64_t m = adj_x_ ? x_cols : x_rows;
    const int64_t k = adj_x_ ? x_rows : x_cols;
    const int64_t n = adj_y_ ? y_rows : y_cols;
    OP_REQUIRES(ctx, k == (adj_y_ ? y_cols : y_rows), MatrixSizeIncompatible(x.shape(), y.shape()));
    std::vector<int64_t> out_dims = plan.out_dims;
    out_dims.push_back(m);
    out_dims.push_back(n);
    OP_ASSIGN_OR_RETURN(ctx, TensorShape out_shape, TensorShape::Make(out_dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return;

    // Per-matrix dims and leading dimensions; Products points them at each matrix.
    const blas::GemmArgs<GemmType<T>> args = blas::DenseProduct<GemmType<T>>(
        m, n, k, adj_x_, adj_y_, nullptr, nullptr, nullptr);
    if constexpr (kIsHalfOrBfloat16<T>) {
      OP_ASSIGN_OR_RETURN(ctx, const Tensor x_float, HalfToFloat<T>(ctx, x));
      OP_ASSIGN_OR_RETURN(ctx, const Tensor y_float, HalfToFloat<T>(ctx, y));
      OP_ASSIGN_OR_RETURN(ctx, const Tensor out_float, ctx->allocate_temp(DT_FLOAT, out_shape));
      OP_REQUIRES_OK(ctx, Products(ctx, plan, x_float, y_float, out_float, args));
      FloatToHalf<T>(ctx, out_float, *out);
    } else {
      OP_REQUIRES_OK(ctx, Products(ctx, plan, x, y, *out, args));
    }
  }

 private:
  // Every output matrix of `plan`: `args` has the per-matrix dims, transposes and leading
  // dimensions; the tensors hold C, the type the BLAS computes in.
  template <typename C>
  absl::Status Products(OpKernelContext* ctx, const BatchBroadcast& plan, const Tensor& x,
                        const Tensor& y, const Tensor& out, blas::GemmArgs<C> args) const {
    // The output exists, so its size (and this product) did not overflow.
    int64_t batches = 1;
    for (int64_t d : plan.out_dims) batches *= d;
    const int64_t x_matrix = args.m * args.k;
    const int64_t y_matrix = args.k * args.n;
    const int64_t out_matrix = args.m * args.n;
    const C* x_data = x.data<C>();
    const C* y_data = y.data<C>();
    C* out_data = out.data<C>();
    const int threads = NumThreads(ctx);

    // One y for every batch and x's matrices stacked untransposed: [batches*m, k] x y.
    const bool y_shared = y.NumElements() == y_matrix;
    const bool x_in_order = x.NumElements() == batches * x_matrix;
    if (batches == 1 || (y_shared && x_in_order && !args.trans_a)) {
      args.m = batches * args.m;
      args.a = x_data;
      args.b = y_data;
      args.c = out_data;
      return blas::ParallelGemm(ctx->pool(), threads, args, ctx->cancellation());
    }
    auto matrix = [&](int64_t batch) {
      blas::GemmArgs<C> one = args;
      const auto [x_source, y_source] = plan.Sources(batch);
      one.a = x_data + x_source * x_matrix;
      one.b = y_data + y_source * y_matrix;
      one.c = out_data + batch * out_matrix;
      return one;
    };
    if (batches < threads) {
      // Few large matrices: each one uses the whole pool.
      for (int64_t b = 0; b < batches; ++b) {
        DFLOW_RETURN_IF_ERROR(
            blas::ParallelGemm(ctx->pool(), threads, matrix(b), ctx->cancellation()));
      }
      return absl::OkStatus();
    }
    std::mutex mu;
    absl::Status status;
    const int64_t cycles_per_matrix = std::max<int64_t>(1, 2 * out_matrix * args.k / 64);
    // Many matrices: the step's cancellation (a deadline) is checked before each one.
    const CancellationToken* cancellation = ctx->cancellation();
    ParallelForElements(ctx, batches, cycles_per_matrix, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        absl::Status s = cancellation != nullptr && cancellation->IsCancelled()
                             ? cancellation->reason()
                             : blas::Gemm(matrix(b));
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          status.Update(s);
        }
      }
    });
    return status;
  }

  bool broadcast_;
  bool adj_x_ = false;
  bool adj_y_ = false;
};

template <typename T>
absl::Status RegisterForType(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<MatMulOp<T>>(
      KernelDefBuilder("MatMul").Device("CPU").TypeConstraint<T>("T")));
  DFLOW_RETURN_IF_ERROR(registry->Register(
      KernelDefBuilder("BatchMatMulV2").Device("CPU").TypeConstraint<T>("T"),
      [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
        return std::make_unique<BatchMatMulOp<T>>(c, /*broadcast=*/true);
      }));
  DFLOW_RETURN_IF_ERROR(registry->Register(
      KernelDefBuilder("BatchMatMul").Device("CPU").TypeConstraint<T>("T"),
      [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
        return std::make_unique<BatchMatMulOp<T>>(c, /*broadcast=*/false);
      }));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMatMulKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterForType<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<Half>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<Bfloat16>(registry));
  return absl::OkStatus();
}

}  // namespace dflow
