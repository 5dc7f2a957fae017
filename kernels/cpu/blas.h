// The CPU kernels' one door to a BLAS: row-major GEMM on caller-owned buffers.
//
// Libraries (chosen by measurement, see kernels/README.md "BLAS choice" and
// bench/blas_choice/): float goes to oneDNN's dnnl_sgemm, double to OpenBLAS's
// cblas_dgemm (oneDNN has no double GEMM).
//
// Threading: one pool only. Every library call runs single-threaded on the thread that
// makes it (oneDNN's OpenMP team is capped at 1 thread per calling thread, OpenBLAS's
// thread count is held at 1), and ParallelGemm shards a product into row or column
// blocks over the session's ThreadPool. So no OpenMP or OpenBLAS worker ever runs or
// spin-waits beside the pool, concurrent MatMuls cannot oversubscribe the cores, and a
// busy pool degrades to the caller doing every block itself.
//
// Thread-safety: all functions may be called concurrently from any threads.
#ifndef DFLOW_KERNELS_CPU_BLAS_H_
#define DFLOW_KERNELS_CPU_BLAS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/thread_pool.h"

namespace dflow {

class CancellationToken;

namespace blas {

// C[m,n] = op(A)[m,k] * op(B)[k,n], all row-major, op(X) = X^T when trans_x.
// A is [m,k] (or [k,m] when trans_a) with row stride lda; B is [k,n] (or [n,k]) with
// row stride ldb; C is [m,n] with row stride ldc. C = alpha * op(A) op(B) + beta * C, by
// default overwritten (alpha 1, beta 0); k == 0 scales C by beta (zeros by default).
template <typename T>
struct GemmArgs {
  bool trans_a = false;
  bool trans_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  const T* a = nullptr;
  int64_t lda = 0;
  const T* b = nullptr;
  int64_t ldb = 0;
  T* c = nullptr;
  int64_t ldc = 0;
  // C = alpha * op(A) op(B) + beta * C (beta 0: C is only written; a fused gradient
  // update writes W -= lr * X^T dY as alpha -lr, beta 1).
  T alpha = T(1);
  T beta = T(0);
};

// The product C[m,n] = op(A) op(B) of dense row-major matrices (A [m,k] or [k,m] when
// trans_a, B [k,n] or [n,k] when trans_b, C [m,n]): MatMul's layout.
template <typename T>
GemmArgs<T> DenseProduct(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                         const T* a, const T* b, T* c) {
  GemmArgs<T> args;
  args.trans_a = trans_a;
  args.trans_b = trans_b;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a;
  args.lda = trans_a ? m : k;
  args.b = b;
  args.ldb = trans_b ? k : n;
  args.c = c;
  args.ldc = n;
  return args;
}

// Runs the whole product on the calling thread. INTERNAL when the library rejects the
// call; INVALID_ARGUMENT for double dims beyond OpenBLAS's 32-bit ints.
absl::Status Gemm(const GemmArgs<float>& args);
absl::Status Gemm(const GemmArgs<double>& args);

// Runs the product on up to `num_threads` threads of `pool` (the caller takes part;
// nullptr or num_threads <= 1 runs inline). Products too small to repay a thread
// hand-off run inline.
//
// Deadlines (issue 15): with a `cancellation` token that is checked_in_kernels() (a step
// with a deadline), a product above kCancellableFlops runs as tiles of about kTileFlops
// each (PartitionTiles), and the token is checked before each tile: once it is
// cancelled the remaining tiles are skipped and its reason (DEADLINE_EXCEEDED for a
// timeout) is returned, so a 4096^3 MatMul stops within a tile (~5 ms) instead of
// running on for a second. Each tile packs its panels of A and B again, which costs
// ~15-25% on such products (bench/deadline_bench.cc): steps without a deadline keep the
// one-call path.
template <typename T>
absl::Status ParallelGemm(ThreadPool* pool, int num_threads, const GemmArgs<T>& args,
                          const CancellationToken* cancellation = nullptr);

// A product of more FLOPs than this runs as tiles when it can be cancelled (~10 ms of
// one core here).
inline constexpr double kCancellableFlops = 2e9;
// The FLOPs of one tile (~5 ms of one core of an AVX-512 Xeon, ~10-20 of an AVX2 one).
inline constexpr double kTileFlops = 1e9;

// How ParallelGemm would split a product: `shards` blocks of `block` rows (by_rows) or
// columns. Exposed for tests and the blas_choice benchmark.
struct GemmPartition {
  int64_t shards = 1;
  bool by_rows = true;
  int64_t block = 0;
};
GemmPartition PartitionGemm(int64_t m, int64_t n, int64_t k, int num_threads);

// The tiles of a cancellable product: `rows` x `cols` blocks of C (edges multiples of
// 16, the last ones shorter), each of about kTileFlops with the whole k.
struct TilePartition {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_tiles = 1;
  int64_t col_tiles = 1;
};
TilePartition PartitionTiles(int64_t m, int64_t n, int64_t k);

// "oneDNN 2.6.3 (sgemm), OpenBLAS 0.3.21 Haswell (dgemm)": for logs and benchmarks.
std::string Describe();

}  // namespace blas
}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_BLAS_H_
