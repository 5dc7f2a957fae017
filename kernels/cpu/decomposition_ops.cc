// TF 2.21's matrix decompositions on float and double, each innermost matrix of a batch by
// LAPACK (lapack.h):
//  - Qr(input, full_matrices): Householder QR (geqrf + orgqr), the sign convention of
//    TF's Eigen HouseholderQR (R's diagonal may be negative); q [..., M, full ? M : K],
//    r [..., full ? M : K, N], K = min(M, N);
//  - Svd(input, compute_uv, full_matrices): divide and conquer (gesdd); s descending;
//    u [..., M, full ? M : K], v [..., N, full ? N : K] (v, not v^T, as TF), or [0] each
//    without compute_uv. Singular vectors are unique only up to sign (and rotation within
//    a repeated singular value): they may differ from TF's by a sign per pair;
//  - SelfAdjointEigV2(input, compute_v): eigenvalues ascending (syevd), eigenvectors the
//    columns of v; reads the lower triangle, as TF's Eigen solver does.
// An SVD LAPACK cannot converge on gives NaN factors (TF's GPU kernel does the same; its
// CPU kernel's Eigen solver does not report failure); an eigenproblem gives TF's
// INVALID_ARGUMENT. Empty matrices give empty factors (identities where a full factor is
// square).
//
// LAPACK is column-major: each matrix is copied into a column-major scratch (transposed)
// and the factors transposed back, which costs nothing next to the O(n^3) work.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/lapack.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

struct Batch {
  int m = 0, n = 0;
  int64_t count = 0;
  std::vector<int64_t> batch_dims;
};

absl::StatusOr<Batch> MatrixBatch(const OpKernelContext& ctx, const Tensor& t, bool square) {
  const int rank = t.shape().dims();
  if (rank < 2) {
    return KernelError(ctx, "Input tensor 0 must have rank >= 2, got ", rank);
  }
  const int64_t m = t.shape().dim_size(rank - 2), n = t.shape().dim_size(rank - 1);
  if (square && m != n) return KernelError(ctx, "Input matrix must be square.");
  if (m > std::numeric_limits<int>::max() / 8 || n > std::numeric_limits<int>::max() / 8) {
    return KernelError(ctx, "Input matrix of ", m, "x", n, " is too large for LAPACK");
  }
  Batch b{static_cast<int>(m), static_cast<int>(n), 1, {}};
  for (int i = 0; i < rank - 2; ++i) {
    b.batch_dims.push_back(t.shape().dim_size(i));
    b.count *= t.shape().dim_size(i);
  }
  return b;
}

TensorShape BatchShape(const Batch& b, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> dims = b.batch_dims;
  dims.insert(dims.end(), tail.begin(), tail.end());
  return TensorShape(dims);
}

// Row-major rows x cols `a` into column-major `out` (leading dimension rows).
template <typename T>
void ToColumnMajor(const T* a, int rows, int cols, T* out) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      out[r + static_cast<int64_t>(c) * rows] = a[r * int64_t{cols} + c];
    }
  }
}

// Column-major `a` (leading dimension ld) into row-major rows x cols `out`.
template <typename T>
void FromColumnMajor(const T* a, int ld, int rows, int cols, T* out) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      out[r * int64_t{cols} + c] = a[r + static_cast<int64_t>(c) * ld];
    }
  }
}

template <typename T>
void Identity(int rows, int cols, T* out) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) out[r * int64_t{cols} + c] = r == c ? T(1) : T(0);
  }
}

// A LAPACK call's failure other than non-convergence: a workspace beyond LAPACK's int
// counts, or an argument LAPACK rejected (a bug here, reported as such).
absl::Status LapackError(const OpKernelContext& ctx, int info, const char* routine,
                         const Batch& b) {
  if (info == lapack::kWorkspaceTooLarge) {
    return KernelError(ctx, "Input matrix of ", b.m, "x", b.n,
                       " needs more LAPACK workspace than an int counts");
  }
  return absl::InternalError(absl::StrCat("LAPACK ", routine, " rejected argument ", -info,
                                          " for a ", b.m, "x", b.n, " matrix"));
}

template <typename T>
void FillNaN(T* begin, int64_t count) {
  std::fill(begin, begin + count, std::numeric_limits<T>::quiet_NaN());
}

// ---- Qr -------------------------------------------------------------------------------

template <typename T>
class QrOp : public OpKernel {
 public:
  explicit QrOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("full_matrices", &full_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, const Batch b, MatrixBatch(*ctx, input, false));
    const int m = b.m, n = b.n, k = std::min(m, n), rows = full_ ? m : k;
    OP_ASSIGN_OR_RETURN(ctx, Tensor * q, ctx->allocate_output(0, BatchShape(b, {m, rows})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * r, ctx->allocate_output(1, BatchShape(b, {rows, n})));
    // Q's columns are built over A's: the scratch has max(n, rows) columns.
    if (q->NumElements() == 0) return;  // no rows, or no columns and not full
    std::vector<T> scratch(static_cast<size_t>(m) * std::max(n, rows));
    std::vector<T> tau(std::max(1, k));
    for (int64_t i = 0; i < b.count; ++i) {
      T* q_out = q->data<T>() + i * int64_t{m} * rows;
      T* r_out = r->data<T>() + i * int64_t{rows} * n;
      if (k == 0) {  // no columns: Q is the identity
        Identity(m, rows, q_out);
        continue;
      }
      ToColumnMajor(input.data<T>() + i * int64_t{m} * n, m, n, scratch.data());
      int info = lapack::Geqrf(m, n, scratch.data(), tau.data());
      for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < n; ++col) {
          r_out[row * int64_t{n} + col] =
              col >= row ? scratch[row + static_cast<int64_t>(col) * m] : T(0);
        }
      }
      if (info == 0) info = lapack::Orgqr(m, rows, k, scratch.data(), tau.data());
      OP_REQUIRES(ctx, info == 0, LapackError(*ctx, info, "geqrf/orgqr", b));
      FromColumnMajor(scratch.data(), m, m, rows, q_out);
    }
  }

 private:
  bool full_ = false;
};

// ---- Svd ------------------------------------------------------------------------------

template <typename T>
class SvdOp : public OpKernel {
 public:
  explicit SvdOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("compute_uv", &compute_uv_));
    OP_REQUIRES_OK(c, c->GetAttr("full_matrices", &full_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, const Batch b, MatrixBatch(*ctx, input, false));
    const int m = b.m, n = b.n, k = std::min(m, n);
    const int ucols = full_ ? m : k, vcols = full_ ? n : k;
    OP_ASSIGN_OR_RETURN(ctx, Tensor * s, ctx->allocate_output(0, BatchShape(b, {k})));
    const TensorShape empty({0});
    OP_ASSIGN_OR_RETURN(ctx, Tensor * u, ctx->allocate_output(
                                             1, compute_uv_ ? BatchShape(b, {m, ucols}) : empty));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * v, ctx->allocate_output(
                                             2, compute_uv_ ? BatchShape(b, {n, vcols}) : empty));
    if (s->NumElements() == 0 && u->NumElements() == 0 && v->NumElements() == 0) return;
    std::vector<T> a(static_cast<size_t>(m) * n), u_cm, vt_cm;
    if (compute_uv_) {
      u_cm.resize(static_cast<size_t>(m) * ucols);
      vt_cm.resize(static_cast<size_t>(vcols) * n);
    }
    const char job = !compute_uv_ ? 'N' : full_ ? 'A' : 'S';
    for (int64_t i = 0; i < b.count; ++i) {
      T* s_out = s->data<T>() + i * k;
      T* u_out = compute_uv_ ? u->data<T>() + i * int64_t{m} * ucols : nullptr;
      T* v_out = compute_uv_ ? v->data<T>() + i * int64_t{n} * vcols : nullptr;
      if (k == 0) {
        if (compute_uv_) {
          Identity(m, ucols, u_out);
          Identity(n, vcols, v_out);
        }
        continue;
      }
      ToColumnMajor(input.data<T>() + i * int64_t{m} * n, m, n, a.data());
      const int info = lapack::Gesdd(job, m, n, a.data(), s_out, u_cm.data(), vt_cm.data(),
                                     compute_uv_ ? vcols : 1);
      OP_REQUIRES(ctx, info >= 0, LapackError(*ctx, info, "gesdd", b));
      if (info > 0) {  // no convergence
        FillNaN(s_out, k);
        if (compute_uv_) {
          FillNaN(u_out, int64_t{m} * ucols);
          FillNaN(v_out, int64_t{n} * vcols);
        }
        continue;
      }
      if (!compute_uv_) continue;
      FromColumnMajor(u_cm.data(), m, m, ucols, u_out);
      // v[r][c] = vt[c][r]: vt column-major (leading dimension vcols) read transposed.
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < vcols; ++c) {
          v_out[r * int64_t{vcols} + c] = vt_cm[c + static_cast<int64_t>(r) * vcols];
        }
      }
    }
  }

 private:
  bool compute_uv_ = true;
  bool full_ = false;
};

// ---- SelfAdjointEigV2 -----------------------------------------------------------------

// Whether the lower triangle of the n x n row-major `a` (what the solver reads) is finite:
// TF's solver reports no convergence on NaN or infinity, LAPACK may return NaNs instead.
template <typename T>
bool AllFinite(const T* a, int n) {
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c <= r; ++c) {
      if (!std::isfinite(a[r * int64_t{n} + c])) return false;
    }
  }
  return true;
}

// Row-major A's lower triangle is the upper triangle of the same memory read
// column-major: syevd reads 'U' there, with no copy but into the scratch it overwrites.
template <typename T>
class SelfAdjointEigOp : public OpKernel {
 public:
  explicit SelfAdjointEigOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("compute_v", &compute_v_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, const Batch b, MatrixBatch(*ctx, input, true));
    const int n = b.n;
    OP_ASSIGN_OR_RETURN(ctx, Tensor * e, ctx->allocate_output(0, BatchShape(b, {n})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * v, ctx->allocate_output(
                                             1, compute_v_ ? BatchShape(b, {n, n})
                                                           : TensorShape({0})));
    if (n == 0) return;
    std::vector<T> a(static_cast<size_t>(n) * n);
    for (int64_t i = 0; i < b.count; ++i) {
      const T* in = input.data<T>() + i * int64_t{n} * n;
      std::copy(in, in + int64_t{n} * n, a.begin());
      T* e_out = e->data<T>() + i * n;
      T* v_out = compute_v_ ? v->data<T>() + i * int64_t{n} * n : nullptr;
      const int info = AllFinite(in, n) ? lapack::Syevd(compute_v_, 'U', n, a.data(), e_out) : 1;
      OP_REQUIRES(ctx, info >= 0, LapackError(*ctx, info, "syevd", b));
      OP_REQUIRES(ctx, info == 0,
                  KernelError(*ctx, "Self-adjoint eigen decomposition was not successful. The "
                                    "input might not be valid."));
      if (compute_v_) FromColumnMajor(a.data(), n, n, n, v_out);
    }
  }

 private:
  bool compute_v_ = true;
};

template <template <typename> class Op>
absl::Status RegisterRealTypes(KernelRegistry* r, const char* op) {
  DFLOW_RETURN_IF_ERROR(r->Register<Op<float>>(CpuKernel(op).TypeConstraint<float>("T")));
  return r->Register<Op<double>>(CpuKernel(op).TypeConstraint<double>("T"));
}

}  // namespace

absl::Status RegisterDecompositionKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<QrOp>(r, "Qr"));
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<SvdOp>(r, "Svd"));
  return RegisterRealTypes<SelfAdjointEigOp>(r, "SelfAdjointEigV2");
}

}  // namespace dflow
