#include "kernels/cpu/blas.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>

#include <cblas.h>
#include <dnnl.h>

#include "absl/strings/str_cat.h"
#include "runtime/cancellation.h"

// OpenBLAS's own entry points (declared here too so that a netlib <cblas.h> would do).
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char* openblas_get_config(void);
char* openblas_get_corename(void);
}

namespace dflow {
namespace blas {
namespace {

// Below this many FLOPs per shard (~20 us of one core) a hand-off to another pool thread
// does not pay: a few us when that thread is still spinning, tens when it has to be woken
// (bench/blas_choice/RESULTS.md).
constexpr double kMinFlopsPerShard = 4e6;
// Block edges are multiples of this many rows/columns (64 bytes of floats).
constexpr int64_t kBlockAlign = 16;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// oneDNN (OpenMP runtime) sizes its team from the calling thread's nthreads ICV. With 1
// it runs inline and never starts an OpenMP team, so no OpenMP thread spin-waits beside
// our pool. The ICV is per thread, so every calling thread sets its own.
void UseOneOpenMPThread() {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

// OpenBLAS's thread count is process-wide; its pthread workers then stay asleep.
void UseOneOpenBlasThread() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

// An empty product (k == 0): C = beta * C.
template <typename T>
void ScaleOutput(const GemmArgs<T>& args) {
  if (args.beta == T(1)) return;
  for (int64_t i = 0; i < args.m; ++i) {
    T* row = args.c + i * args.ldc;
    if (args.beta == T(0)) {
      std::memset(row, 0, static_cast<size_t>(args.n) * sizeof(T));
      continue;
    }
    for (int64_t j = 0; j < args.n; ++j) row[j] *= args.beta;
  }
}

// The sub-product computing shard `s` of `part`: rows [lo, hi) of C (rows of op(A)) or
// columns [lo, hi) of C (columns of op(B)), pointing into the same buffers.
template <typename T>
GemmArgs<T> Shard(const GemmArgs<T>& args, const GemmPartition& part, int64_t s) {
  GemmArgs<T> sub = args;
  const int64_t lo = s * part.block;
  const int64_t hi = std::min(part.by_rows ? args.m : args.n, lo + part.block);
  if (part.by_rows) {
    sub.m = hi - lo;
    sub.a = args.trans_a ? args.a + lo : args.a + lo * args.lda;
    sub.c = args.c + lo * args.ldc;
  } else {
    sub.n = hi - lo;
    sub.b = args.trans_b ? args.b + lo * args.ldb : args.b + lo;
    sub.c = args.c + lo;
  }
  return sub;
}

}  // namespace

absl::Status Gemm(const GemmArgs<float>& args) {
  if (args.m == 0 || args.n == 0) return absl::OkStatus();
  if (args.k == 0) {
    ScaleOutput(args);
    return absl::OkStatus();
  }
  UseOneOpenMPThread();
  const dnnl_status_t status =
      dnnl_sgemm(args.trans_a ? 'T' : 'N', args.trans_b ? 'T' : 'N', args.m, args.n, args.k,
                 args.alpha, args.a, args.lda, args.b, args.ldb, args.beta, args.c, args.ldc);
  if (status != dnnl_success) {
    return absl::InternalError(absl::StrCat("dnnl_sgemm failed with status ",
                                            static_cast<int>(status), " for m=", args.m,
                                            " n=", args.n, " k=", args.k));
  }
  return absl::OkStatus();
}

absl::Status Gemm(const GemmArgs<double>& args) {
  if (args.m == 0 || args.n == 0) return absl::OkStatus();
  if (args.k == 0) {
    ScaleOutput(args);
    return absl::OkStatus();
  }
  for (int64_t v : {args.m, args.n, args.k, args.lda, args.ldb, args.ldc}) {
    if (v > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("double MatMul dimension ", v, " exceeds OpenBLAS's limit ", INT_MAX));
    }
  }
  UseOneOpenBlasThread();
  cblas_dgemm(CblasRowMajor, args.trans_a ? CblasTrans : CblasNoTrans,
              args.trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(args.m),
              static_cast<int>(args.n), static_cast<int>(args.k), args.alpha, args.a,
              static_cast<int>(args.lda), args.b, static_cast<int>(args.ldb), args.beta, args.c,
              static_cast<int>(args.ldc));
  return absl::OkStatus();
}

GemmPartition PartitionGemm(int64_t m, int64_t n, int64_t k, int num_threads) {
  GemmPartition single{1, true, m};
  if (num_threads <= 1 || m == 0 || n == 0 || k == 0) return single;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(k);
  int64_t shards =
      std::min<int64_t>(num_threads, static_cast<int64_t>(flops / kMinFlopsPerShard));
  if (shards <= 1) return single;
  // Row blocks each re-pack all of op(B) (k*n), column blocks all of op(A) (m*k): split
  // the longer of m and n, which duplicates the smaller operand's packing.
  const bool by_rows = m >= n;
  const int64_t dim = by_rows ? m : n;
  shards = std::min(shards, CeilDiv(dim, kBlockAlign));
  if (shards <= 1) return single;
  const int64_t block = CeilDiv(CeilDiv(dim, shards), kBlockAlign) * kBlockAlign;
  return GemmPartition{CeilDiv(dim, block), by_rows, block};
}

TilePartition PartitionTiles(int64_t m, int64_t n, int64_t k) {
  // Square tiles of kTileFlops (2 * edge^2 * k), at least one block edge, at most C.
  const double edge = std::sqrt(kTileFlops / (2.0 * static_cast<double>(std::max<int64_t>(k, 1))));
  const int64_t aligned =
      std::max<int64_t>(kBlockAlign, static_cast<int64_t>(edge) / kBlockAlign * kBlockAlign);
  TilePartition tiles;
  tiles.rows = std::min(m, aligned);
  tiles.cols = std::min(n, aligned);
  tiles.row_tiles = tiles.rows == 0 ? 1 : CeilDiv(m, tiles.rows);
  tiles.col_tiles = tiles.cols == 0 ? 1 : CeilDiv(n, tiles.cols);
  return tiles;
}

namespace {

// Tile `t` (row-major over the tiles) of `args`.
template <typename T>
GemmArgs<T> Tile(const GemmArgs<T>& args, const TilePartition& tiles, int64_t t) {
  const int64_t row = t / tiles.col_tiles * tiles.rows;
  const int64_t col = t % tiles.col_tiles * tiles.cols;
  GemmArgs<T> sub = args;
  sub.m = std::min(tiles.rows, args.m - row);
  sub.n = std::min(tiles.cols, args.n - col);
  sub.a = args.trans_a ? args.a + row : args.a + row * args.lda;
  sub.b = args.trans_b ? args.b + col * args.ldb : args.b + col;
  sub.c = args.c + row * args.ldc + col;
  return sub;
}

// The tiled, cancellable product (ParallelGemm's deadline path).
template <typename T>
absl::Status CancellableGemm(ThreadPool* pool, int num_threads, const GemmArgs<T>& args,
                             const CancellationToken& cancellation) {
  const TilePartition tiles = PartitionTiles(args.m, args.n, args.k);
  const int64_t count = tiles.row_tiles * tiles.col_tiles;
  std::mutex mu;
  absl::Status status;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      absl::Status tile_status = cancellation.IsCancelled() ? cancellation.reason()
                                                            : Gemm(Tile(args, tiles, t));
      if (!tile_status.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        status.Update(tile_status);
        return;
      }
    }
  };
  if (pool == nullptr || num_threads <= 1) {
    run(0, count);
  } else {
    // Contiguous ranges of tiles per thread: neighbours share A's row panel in cache.
    pool->ParallelFor(count, static_cast<int64_t>(kTileFlops / 64), run);
  }
  return status;
}

}  // namespace

template <typename T>
absl::Status ParallelGemm(ThreadPool* pool, int num_threads, const GemmArgs<T>& args,
                          const CancellationToken* cancellation) {
  if (cancellation != nullptr && cancellation->checked_in_kernels() && args.m > 0 && args.n > 0 && args.k > 0 &&
      2.0 * static_cast<double>(args.m) * static_cast<double>(args.n) *
              static_cast<double>(args.k) > kCancellableFlops) {
    return CancellableGemm(pool, num_threads, args, *cancellation);
  }
  if (pool == nullptr) num_threads = 1;
  const GemmPartition part = PartitionGemm(args.m, args.n, args.k, num_threads);
  if (part.shards <= 1) return Gemm(args);
  const double flops_per_shard = 2.0 * static_cast<double>(args.m) *
                                 static_cast<double>(args.n) * static_cast<double>(args.k) /
                                 static_cast<double>(part.shards);
  std::mutex mu;
  absl::Status status;
  // One work unit per shard; the cost (cycles ~ FLOPs / 64 per cycle at best) is far
  // above the pool's hand-off threshold, so every shard may go to its own thread.
  pool->ParallelFor(part.shards, static_cast<int64_t>(flops_per_shard / 64),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t s = begin; s < end; ++s) {
                        absl::Status shard_status = Gemm(Shard(args, part, s));
                        if (!shard_status.ok()) {
                          std::lock_guard<std::mutex> lock(mu);
                          status.Update(shard_status);
                        }
                      }
                    });
  return status;
}

template absl::Status ParallelGemm<float>(ThreadPool*, int, const GemmArgs<float>&,
                                          const CancellationToken*);
template absl::Status ParallelGemm<double>(ThreadPool*, int, const GemmArgs<double>&,
                                           const CancellationToken*);

std::string Describe() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch,
                      " (sgemm, OpenMP runtime capped at 1 thread per call), ",
                      openblas_get_config(), " core=", openblas_get_corename(), " (dgemm)");
}

}  // namespace blas
}  // namespace dflow
