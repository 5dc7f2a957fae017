// The LAPACK routines the linear-algebra kernels use (linalg_ops.cc, decomposition_ops.cc),
// from OpenBLAS (libopenblas-dev, already linked for the double MatMul; it exports
// LAPACK's Fortran symbols but not LAPACKE), typed for float and double.
//
// LAPACK is column-major: a row-major matrix read as column-major is its transpose, which
// the callers account for instead of copying where they can.
#ifndef DFLOW_KERNELS_CPU_LAPACK_H_
#define DFLOW_KERNELS_CPU_LAPACK_H_

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a,
             const int* lda, const int* ipiv, double* b, const int* ldb, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda,
             const float* tau, float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work,
             const int* lwork, int* iwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
             double* s, double* u, const int* ldu, double* vt, const int* ldvt, double* work,
             const int* lwork, int* iwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda,
             float* w, float* work, const int* lwork, int* iwork, const int* liwork,
             int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
             double* w, double* work, const int* lwork, int* iwork, const int* liwork,
             int* info);
}

namespace dflow::lapack {

// LU with partial pivoting of the n x n column-major `a` in place; info > 0: a zero pivot.
inline int Getrf(int n, float* a, int* pivots) {
  int info = 0;
  sgetrf_(&n, &n, a, &n, pivots, &info);
  return info;
}
inline int Getrf(int n, double* a, int* pivots) {
  int info = 0;
  dgetrf_(&n, &n, a, &n, pivots, &info);
  return info;
}

// Solves op(A) X = B (`transpose`: A^T) for Getrf's factors of A; B is n x nrhs,
// column-major, overwritten by X.
inline void Getrs(bool transpose, int n, int nrhs, const float* lu, const int* pivots,
                  float* b) {
  const char trans = transpose ? 'T' : 'N';
  int info = 0;
  sgetrs_(&trans, &n, &nrhs, lu, &n, pivots, b, &n, &info);
}
inline void Getrs(bool transpose, int n, int nrhs, const double* lu, const int* pivots,
                  double* b) {
  const char trans = transpose ? 'T' : 'N';
  int info = 0;
  dgetrs_(&trans, &n, &nrhs, lu, &n, pivots, b, &n, &info);
}

// Cholesky factor of the column-major `a` from its upper triangle (A = U^T U, U written
// there); info > 0: not positive definite.
inline int PotrfUpper(int n, float* a) {
  const char uplo = 'U';
  int info = 0;
  spotrf_(&uplo, &n, a, &n, &info);
  return info;
}
inline int PotrfUpper(int n, double* a) {
  const char uplo = 'U';
  int info = 0;
  dpotrf_(&uplo, &n, a, &n, &info);
  return info;
}

// The routines below take LAPACK's workspace query (lwork = -1) first, then run with the
// size it asks for. Their matrices are column-major; info > 0: no convergence; info < 0:
// a bad argument, or kWorkspaceTooLarge.

// A workspace LAPACK would need beyond its int count (or a failed query).
inline constexpr int kWorkspaceTooLarge = -1000;

// The size a workspace query returned, rounded up (a float may hold a rounded-down
// count), or -1 when the query failed or the size exceeds an int.
template <typename T>
int WorkspaceSize(T size, int query_info) {
  if (query_info != 0) return -1;
  double rounded = static_cast<double>(size);
  if (std::is_same_v<T, float>) rounded = std::nextafter(static_cast<float>(size), 1e30f);
  rounded = std::ceil(rounded);
  if (!(rounded <= std::numeric_limits<int>::max())) return -1;
  return std::max(1, static_cast<int>(rounded));
}

// Runs `call(work, lwork)` twice: as LAPACK's workspace query (lwork = -1), then with a
// workspace of the size it asked for; `info` is what the calls set. Returns the last info,
// or kWorkspaceTooLarge.
template <typename T, typename Call>
int WithWorkspace(const Call& call, const int& info) {
  const int query = -1;
  T size = 0;
  call(&size, &query);
  const int lwork = WorkspaceSize(size, info);
  if (lwork < 0) return kWorkspaceTooLarge;
  std::vector<T> work(lwork);
  call(work.data(), &lwork);
  return info;
}

// Householder QR of the m x n `a` (leading dimension m) in place: R in the upper triangle,
// the reflectors below it and in `tau` (min(m, n) values).
template <typename T>
int Geqrf(int m, int n, T* a, T* tau) {
  int info = 0;
  auto call = [&](T* work, const int* lw) {
    if constexpr (std::is_same_v<T, float>) {
      sgeqrf_(&m, &n, a, &m, tau, work, lw, &info);
    } else {
      dgeqrf_(&m, &n, a, &m, tau, work, lw, &info);
    }
  };
  return WithWorkspace<T>(call, info);
}

// The first `cols` columns of Q from Geqrf's `k` reflectors, over them in `a`.
template <typename T>
int Orgqr(int m, int cols, int k, T* a, const T* tau) {
  int info = 0;
  auto call = [&](T* work, const int* lw) {
    if constexpr (std::is_same_v<T, float>) {
      sorgqr_(&m, &cols, &k, a, &m, tau, work, lw, &info);
    } else {
      dorgqr_(&m, &cols, &k, a, &m, tau, work, lw, &info);
    }
  };
  return WithWorkspace<T>(call, info);
}

// SVD of the m x n `a` (destroyed) by divide and conquer: `job` 'N' (values only), 'S'
// (the first min(m, n) singular vectors), 'A' (all); u is m x ucols (ld m), vt is
// vtrows x n (ld vtrows).
template <typename T>
int Gesdd(char job, int m, int n, T* a, T* s, T* u, T* vt, int vtrows) {
  int info = 0;
  int ldu = std::max(1, m), ldvt = std::max(1, vtrows);
  std::vector<int> iwork(8 * static_cast<size_t>(std::max(1, std::min(m, n))));
  auto call = [&](T* work, const int* lw) {
    if constexpr (std::is_same_v<T, float>) {
      sgesdd_(&job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, lw, iwork.data(), &info);
    } else {
      dgesdd_(&job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, lw, iwork.data(), &info);
    }
  };
  return WithWorkspace<T>(call, info);
}

// Eigenvalues (ascending, into w) and, with `vectors`, eigenvectors (the columns of `a`)
// of the symmetric n x n `a`, read from its `uplo` ('U' or 'L') triangle.
template <typename T>
int Syevd(bool vectors, char uplo, int n, T* a, T* w) {
  const char job = vectors ? 'V' : 'N';
  int info = 0, query = -1, lwork = 0, liwork = 0, isize = 0;
  T size = 0;
  auto call = [&](T* work, const int* lw, int* iwork, const int* liw) {
    if constexpr (std::is_same_v<T, float>) {
      ssyevd_(&job, &uplo, &n, a, &n, w, work, lw, iwork, liw, &info);
    } else {
      dsyevd_(&job, &uplo, &n, a, &n, w, work, lw, iwork, liw, &info);
    }
  };
  call(&size, &query, &isize, &query);
  lwork = WorkspaceSize(size, info);
  liwork = std::max(1, isize);
  if (lwork < 0) return kWorkspaceTooLarge;
  std::vector<T> work(lwork);
  std::vector<int> iwork(liwork);
  call(work.data(), &lwork, iwork.data(), &liwork);
  return info;
}

}  // namespace dflow::lapack

#endif  // DFLOW_KERNELS_CPU_LAPACK_H_
