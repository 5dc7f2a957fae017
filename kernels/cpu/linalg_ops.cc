// TF 2.21's linear-algebra kernels on float and double, each innermost matrix of a batch
// by LAPACK (lapack.h) or OpenBLAS's cblas_?trsm, with TF's texts:
//  - MatrixInverse(input, adjoint): "Input is not invertible." on an exact zero pivot
//    (TF's only check too);
//  - MatrixSolve(matrix, rhs, adjoint): batch dims equal, "Input matrix is not invertible.";
//  - Cholesky(input): reads the lower triangle; where it fails (not positive definite)
//    the lower triangle is NaN, as TF 2.21 does (it warns, it does not fail);
//  - MatrixTriangularSolve(matrix, rhs, lower, adjoint): batch dims broadcast;
//  - MatrixDeterminant, LogMatrixDeterminant: from the LU factors (sign * exp(log|det|),
//    as TF; an empty matrix's determinant is 1, a singular one's 0 with log|det| -inf).
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/batch_broadcast.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/lapack.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// Rows of the innermost matrices; the number of them.
struct Matrices {
  int64_t rows = 0, cols = 0, count = 0;
};

absl::StatusOr<Matrices> SquareMatrices(const OpKernelContext& ctx, const Tensor& t,
                                        int index) {
  const int rank = t.shape().dims();
  if (rank < 2) {
    return KernelError(ctx, "Input tensor ", index, " must have rank >= 2, got ", rank);
  }
  Matrices m{t.shape().dim_size(rank - 2), t.shape().dim_size(rank - 1), 0};
  int64_t area = 0;
  if (__builtin_mul_overflow(m.rows, m.cols, &area)) {  // possible in an empty tensor
    return KernelError(ctx, "Encountered overflow when multiplying ", m.rows, " with ", m.cols);
  }
  if (m.rows != m.cols) return KernelError(ctx, "Input matrix must be square.");
  if (m.rows > std::numeric_limits<int>::max()) {  // LAPACK and cblas count in int
    return KernelError(ctx, "Input matrix of ", m.rows, " rows is too large (at most ",
                       std::numeric_limits<int>::max(), ")");
  }
  m.count = area == 0 ? 0 : t.NumElements() / area;
  return m;
}

std::vector<int64_t> Dims(const TensorShape& shape) {
  return std::vector<int64_t>(shape.dim_sizes().begin(), shape.dim_sizes().end());
}

// ---- MatrixInverse ------------------------------------------------------------------

// Row-major A read as column-major is A^T: solving A^T Y = I gives Y = A^-T column-major,
// which is A^-1 row-major; adjoint solves (A^T)^T Y = I instead.
template <typename T>
class MatrixInverseOp : public OpKernel {
 public:
  explicit MatrixInverseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, const Matrices m, SquareMatrices(*ctx, input, 0));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    const int n = static_cast<int>(m.rows);
    std::vector<T> lu(static_cast<size_t>(n) * n);
    std::vector<int> pivots(n);
    for (int64_t b = 0; b < m.count; ++b) {
      const T* a = input.data<T>() + b * n * n;
      T* y = output->data<T>() + b * n * n;
      std::copy(a, a + static_cast<int64_t>(n) * n, lu.begin());
      OP_REQUIRES(ctx, lapack::Getrf(n, lu.data(), pivots.data()) == 0,
                  KernelError(*ctx, "Input is not invertible."));
      std::fill(y, y + static_cast<int64_t>(n) * n, T(0));
      for (int i = 0; i < n; ++i) y[static_cast<int64_t>(i) * n + i] = T(1);
      lapack::Getrs(adjoint_, n, n, lu.data(), pivots.data(), y);
    }
  }

 private:
  bool adjoint_ = false;
};

// ---- MatrixSolve --------------------------------------------------------------------

// LU of A^T (A read column-major); A X = B is then A^T's transposed solve. B and X are
// transposed into and out of column-major.
template <typename T>
class MatrixSolveOp : public OpKernel {
 public:
  explicit MatrixSolveOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& matrix = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    OP_REQUIRES(ctx, matrix.shape().dims() == rhs.shape().dims(),
                KernelError(*ctx, "All input tensors must have the same rank."));
    OP_ASSIGN_OR_RETURN(ctx, const Matrices m, SquareMatrices(*ctx, matrix, 0));
    const int rank = rhs.shape().dims();
    bool compatible = rhs.shape().dim_size(rank - 2) == m.rows;
    for (int i = 0; i + 2 < rank; ++i) {
      compatible &= matrix.shape().dim_size(i) == rhs.shape().dim_size(i);
    }
    OP_REQUIRES(ctx, compatible, KernelError(*ctx, "Input matrix and rhs are incompatible."));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, rhs.shape()));
    OP_REQUIRES(ctx, rhs.shape().dim_size(rank - 1) <= std::numeric_limits<int>::max(),
                KernelError(*ctx, "rhs has too many columns: ", rhs.shape().dim_size(rank - 1)));
    const int n = static_cast<int>(m.rows);
    const int k = static_cast<int>(rhs.shape().dim_size(rank - 1));
    if (n == 0 || k == 0) return;
    std::vector<T> lu(static_cast<size_t>(n) * n), x(static_cast<size_t>(n) * k);
    std::vector<int> pivots(n);
    for (int64_t b = 0; b < m.count; ++b) {
      const T* a = matrix.data<T>() + b * n * n;
      const T* in = rhs.data<T>() + b * n * k;
      T* out = output->data<T>() + b * n * k;
      std::copy(a, a + static_cast<int64_t>(n) * n, lu.begin());
      OP_REQUIRES(ctx, lapack::Getrf(n, lu.data(), pivots.data()) == 0,
                  KernelError(*ctx, "Input matrix is not invertible."));
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t c = 0; c < k; ++c) x[c * n + r] = in[r * k + c];
      }
      lapack::Getrs(!adjoint_, n, k, lu.data(), pivots.data(), x.data());
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t c = 0; c < k; ++c) out[r * k + c] = x[c * n + r];
      }
    }
  }

 private:
  bool adjoint_ = false;
};

// ---- Cholesky -----------------------------------------------------------------------

// The lower triangle of row-major A is the upper triangle of A read column-major, so
// LAPACK's upper factorization there gives U = L^T column-major: L row-major.
template <typename T>
class CholeskyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, const Matrices m, SquareMatrices(*ctx, input, 0));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    const int n = static_cast<int>(m.rows);
    for (int64_t b = 0; b < m.count; ++b) {
      const T* a = input.data<T>() + b * n * n;
      T* l = output->data<T>() + b * n * n;
      std::copy(a, a + static_cast<int64_t>(n) * n, l);
      const bool ok = lapack::PotrfUpper(n, l) == 0;
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
          T& v = l[static_cast<int64_t>(r) * n + c];
          if (c > r) v = T(0);
          else if (!ok) v = std::numeric_limits<T>::quiet_NaN();
        }
      }
    }
  }
};

// ---- MatrixTriangularSolve ----------------------------------------------------------

inline void Trsm(bool lower, bool adjoint, int n, int k, const float* a, float* b) {
  cblas_strsm(CblasRowMajor, CblasLeft, lower ? CblasLower : CblasUpper,
              adjoint ? CblasTrans : CblasNoTrans, CblasNonUnit, n, k, 1.0f, a, n, b, k);
}
inline void Trsm(bool lower, bool adjoint, int n, int k, const double* a, double* b) {
  cblas_dtrsm(CblasRowMajor, CblasLeft, lower ? CblasLower : CblasUpper,
              adjoint ? CblasTrans : CblasNoTrans, CblasNonUnit, n, k, 1.0, a, n, b, k);
}

template <typename T>
class MatrixTriangularSolveOp : public OpKernel {
 public:
  explicit MatrixTriangularSolveOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("lower", &lower_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint", &adjoint_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& matrix = ctx->input(0);
    const Tensor& rhs = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, const Matrices m, SquareMatrices(*ctx, matrix, 0));
    const int rank = rhs.shape().dims();
    OP_REQUIRES(ctx, rank >= 2,
                KernelError(*ctx, "Input tensor 1 must have rank >= 2, got ", rank));
    const int64_t n = m.rows;
    const int64_t k = rhs.shape().dim_size(rank - 1);
    const std::vector<int64_t> a_dims = Dims(matrix.shape());
    const std::vector<int64_t> b_dims = Dims(rhs.shape());
    std::optional<BatchBroadcast> batches =
        BroadcastBatches(absl::MakeConstSpan(a_dims).subspan(0, a_dims.size() - 2),
                         absl::MakeConstSpan(b_dims).subspan(0, b_dims.size() - 2));
    OP_REQUIRES(ctx, batches.has_value() && rhs.shape().dim_size(rank - 2) == n,
                KernelError(*ctx, "In[0] mismatch In[1] shape: ", n, " vs. ",
                            rhs.shape().dim_size(rank - 2), ": ", matrix.shape().DebugString(),
                            " ", rhs.shape().DebugString(), " ", lower_, " ", adjoint_));
    OP_REQUIRES(ctx, k <= std::numeric_limits<int>::max(),
                KernelError(*ctx, "rhs has too many columns: ", k));
    std::vector<int64_t> out_dims = batches->out_dims;
    out_dims.insert(out_dims.end(), {n, k});
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape out_shape, OutputShape(*ctx, out_dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, out_shape));
    if (output->NumElements() == 0) return;
    const int64_t count = output->NumElements() / (n * k);
    for (int64_t b = 0; b < count; ++b) {
      const auto [ai, bi] = batches->Sources(b);
      T* out = output->data<T>() + b * n * k;
      const T* in = rhs.data<T>() + bi * n * k;
      std::copy(in, in + n * k, out);
      Trsm(lower_, adjoint_, static_cast<int>(n), static_cast<int>(k),
           matrix.data<T>() + ai * n * n, out);
    }
  }

 private:
  bool lower_ = true;
  bool adjoint_ = false;
};

// ---- MatrixDeterminant, LogMatrixDeterminant ---------------------------------------

// sign and log|det| of row-major A from the LU of A^T (same determinant).
template <typename T>
void SignAndLogAbsDet(const T* a, int n, std::vector<T>* lu, std::vector<int>* pivots,
                      T* sign, T* log_abs_det) {
  *sign = T(1);
  *log_abs_det = T(0);
  if (n == 0) return;
  std::copy(a, a + static_cast<int64_t>(n) * n, lu->begin());
  lapack::Getrf(n, lu->data(), pivots->data());
  for (int i = 0; i < n; ++i) {
    const T d = (*lu)[static_cast<int64_t>(i) * n + i];
    *log_abs_det += std::log(std::abs(d));
    *sign *= (d > T(0)) - (d < T(0));
    if ((*pivots)[i] != i + 1) *sign = -*sign;
  }
  if (!std::isfinite(*log_abs_det)) {  // a zero pivot: TF's sign 0, log|det| -inf
    *sign = T(0);
    *log_abs_det = -std::numeric_limits<T>::infinity();
  }
}

template <typename T, bool kLog>
class DeterminantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, const Matrices m, SquareMatrices(*ctx, input, 0));
    std::vector<int64_t> batch = Dims(input.shape());
    batch.resize(batch.size() - 2);
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape batch_shape, OutputShape(*ctx, batch));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * first, ctx->allocate_output(0, batch_shape));
    Tensor* second = first;
    if (kLog) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor * log_abs, ctx->allocate_output(1, batch_shape));
      second = log_abs;
    }
    const int n = static_cast<int>(m.rows);
    std::vector<T> lu(static_cast<size_t>(n) * n);
    std::vector<int> pivots(n);
    for (int64_t b = 0; b < first->NumElements(); ++b) {
      T sign, log_abs_det;
      SignAndLogAbsDet(input.data<T>() + b * n * n, n, &lu, &pivots, &sign, &log_abs_det);
      if (kLog) {
        first->data<T>()[b] = sign;
        second->data<T>()[b] = log_abs_det;
      } else {
        first->data<T>()[b] = sign * std::exp(log_abs_det);
      }
    }
  }
};

template <template <typename> class Op>
absl::Status RegisterRealTypes(KernelRegistry* r, const char* op) {
  DFLOW_RETURN_IF_ERROR(r->Register<Op<float>>(CpuKernel(op).TypeConstraint<float>("T")));
  return r->Register<Op<double>>(CpuKernel(op).TypeConstraint<double>("T"));
}

template <typename T>
using DeterminantOnly = DeterminantOp<T, false>;
template <typename T>
using LogDeterminant = DeterminantOp<T, true>;

}  // namespace

absl::Status RegisterLinalgKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<MatrixInverseOp>(r, "MatrixInverse"));
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<MatrixSolveOp>(r, "MatrixSolve"));
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<CholeskyOp>(r, "Cholesky"));
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<MatrixTriangularSolveOp>(r, "MatrixTriangularSolve"));
  DFLOW_RETURN_IF_ERROR(RegisterRealTypes<DeterminantOnly>(r, "MatrixDeterminant"));
  return RegisterRealTypes<LogDeterminant>(r, "LogMatrixDeterminant");
}

}  // namespace dflow
