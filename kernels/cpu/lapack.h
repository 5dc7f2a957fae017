// The LAPACK routines the linear-algebra kernels use (linalg_ops.cc), from OpenBLAS
// (libopenblas-dev, already linked for the double MatMul; it exports LAPACK's Fortran
// symbols but not LAPACKE), typed for float and double.
//
// LAPACK is column-major: a row-major matrix read as column-major is its transpose, which
// the callers account for instead of copying where they can.
#ifndef DFLOW_KERNELS_CPU_LAPACK_H_
#define DFLOW_KERNELS_CPU_LAPACK_H_

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a,
             const int* lda, const int* ipiv, double* b, const int* ldb, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
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

}  // namespace dflow::lapack

#endif  // DFLOW_KERNELS_CPU_LAPACK_H_
