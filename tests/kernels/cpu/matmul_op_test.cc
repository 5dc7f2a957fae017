// MatMul, BatchMatMul and BatchMatMulV2 CPU kernels (oneDNN / OpenBLAS behind
// kernels/cpu/blas.h) against a naive reference.
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/cancellation.h"
#include "runtime/thread_pool.h"
#include "runtime/kernel_registry.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;

const KernelRegistry& Registry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    absl::Status status = RegisterMatMulKernels(r);
    if (!status.ok()) FAIL(status.ToString());
    return r;
  }();
  return *registry;
}

template <typename T>
Tensor Filled(std::vector<int64_t> shape, const std::vector<T>& values) {
  Tensor t = *Tensor::Allocate(TestCpuDevice()->allocator(), DataTypeOf<T>(),
                               TensorShape(absl::MakeConstSpan(shape)));
  std::copy(values.begin(), values.end(), t.flat<T>().begin());
  return t;
}

template <typename T>
std::vector<T> Random(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> values(count);
  for (T& v : values) v = static_cast<T>(dist(gen));
  return values;
}

// Small integers: products and sums are exact in float, so results compare with ==.
template <typename T>
std::vector<T> Counting(int64_t count, int start) {
  std::vector<T> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = static_cast<T>((start + 3 * i) % 11 - 5);
  return values;
}

// Row-major op(a)[m,k] * op(b)[k,n] with double accumulation; a is [m,k] or [k,m].
template <typename T>
std::vector<double> NaiveMatMul(const std::vector<T>& a, const std::vector<T>& b, int64_t m,
                                int64_t k, int64_t n, bool ta, bool tb) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = ta ? a[p * m + i] : a[i * k + p];
        const double bv = tb ? b[j * k + p] : b[p * n + j];
        sum += av * bv;
      }
      c[i * n + j] = sum;
    }
  }
  return c;
}

absl::StatusOr<Tensor> MatMul(const Tensor& a, const Tensor& b, bool ta = false,
                              bool tb = false) {
  return OpTester("MatMul", Registry())
      .Attr("T", a.dtype())
      .Attr("transpose_a", ta)
      .Attr("transpose_b", tb)
      .Input(a)
      .Input(b)
      .RunOne();
}

absl::StatusOr<Tensor> BatchMatMul(const std::string& op, const Tensor& x, const Tensor& y,
                                   bool adj_x = false, bool adj_y = false) {
  return OpTester(op, Registry())
      .Attr("T", x.dtype())
      .Attr("adj_x", adj_x)
      .Attr("adj_y", adj_y)
      .Input(x)
      .Input(y)
      .RunOne();
}

// Runs MatMul on random [m,k]x[k,n] operands (stored transposed when asked) and checks
// every element against the naive product.
template <typename T>
void CheckRandomMatMul(int64_t m, int64_t k, int64_t n, bool ta, bool tb, double tolerance) {
  CAPTURE(m, k, n, ta, tb);
  const std::vector<T> a = Random<T>(m * k, 1);
  const std::vector<T> b = Random<T>(k * n, 2);
  absl::StatusOr<Tensor> out = MatMul(Filled<T>(ta ? std::vector<int64_t>{k, m}
                                                   : std::vector<int64_t>{m, k}, a),
                                      Filled<T>(tb ? std::vector<int64_t>{n, k}
                                                   : std::vector<int64_t>{k, n}, b),
                                      ta, tb);
  REQUIRE(out.ok());
  REQUIRE(out->shape() == TensorShape({m, n}));
  const std::vector<double> want = NaiveMatMul(a, b, m, k, n, ta, tb);
  const std::vector<T> got = Values<T>(*out);
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  CHECK(worst <= tolerance);
}

int ThreadsInProcess() {
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

TEMPLATE_TEST_CASE("MatMul matches the naive product for every transpose combination",
                   "[kernels][matmul]", float, double) {
  const int64_t m = 3, k = 4, n = 5;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CAPTURE(ta, tb);
      const std::vector<TestType> a = Counting<TestType>(m * k, 1);
      const std::vector<TestType> b = Counting<TestType>(k * n, 2);
      absl::StatusOr<Tensor> out =
          MatMul(Filled<TestType>(ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, a),
                 Filled<TestType>(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, b),
                 ta, tb);
      REQUIRE(out.ok());
      CHECK(out->dtype() == DataTypeOf<TestType>());
      CHECK(out->shape() == TensorShape({m, n}));
      const std::vector<double> want = NaiveMatMul(a, b, m, k, n, ta, tb);
      CHECK(Values<TestType>(*out) == std::vector<TestType>(want.begin(), want.end()));
    }
  }
}

TEST_CASE("MatMul of known 2x3 and 3x2 matrices", "[kernels][matmul]") {
  absl::StatusOr<Tensor> out = MatMul(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                      MakeTensor<float>({3, 2}, {7, 8, 9, 10, 11, 12}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 2}));
  CHECK(Values<float>(*out) == std::vector<float>{58, 64, 139, 154});
  // The same product from transposed storage: a stored as [3,2], b as [2,3].
  out = MatMul(MakeTensor<float>({3, 2}, {1, 4, 2, 5, 3, 6}),
               MakeTensor<float>({2, 3}, {7, 9, 11, 8, 10, 12}), true, true);
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 2}));
  CHECK(Values<float>(*out) == std::vector<float>{58, 64, 139, 154});
}

TEMPLATE_TEST_CASE("MatMul of 1x1 matrices", "[kernels][matmul]", float, double) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      absl::StatusOr<Tensor> out = MatMul(MakeTensor<TestType>({1, 1}, {3}),
                                          MakeTensor<TestType>({1, 1}, {-2.5}), ta, tb);
      REQUIRE(out.ok());
      CHECK(out->shape() == TensorShape({1, 1}));
      CHECK(Values<TestType>(*out) == std::vector<TestType>{-7.5});
    }
  }
}

TEMPLATE_TEST_CASE("MatMul with empty operands", "[kernels][matmul]", float, double) {
  SECTION("no rows: [0,3] x [3,4] is [0,4]") {
    absl::StatusOr<Tensor> out =
        MatMul(MakeTensor<TestType>({0, 3}, {}), MakeTensor<TestType>({3, 4}, Counting<TestType>(12, 0)));
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape({0, 4}));
  }
  SECTION("no columns: [2,3] x [3,0] is [2,0]") {
    absl::StatusOr<Tensor> out =
        MatMul(MakeTensor<TestType>({2, 3}, Counting<TestType>(6, 0)), MakeTensor<TestType>({3, 0}, {}));
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape({2, 0}));
  }
  SECTION("empty inner dimension: [2,0] x [0,3] is a [2,3] of zeros") {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        absl::StatusOr<Tensor> out =
            MatMul(Filled<TestType>(ta ? std::vector<int64_t>{0, 2} : std::vector<int64_t>{2, 0}, {}),
                   Filled<TestType>(tb ? std::vector<int64_t>{3, 0} : std::vector<int64_t>{0, 3}, {}),
                   ta, tb);
        REQUIRE(out.ok());
        CHECK(out->shape() == TensorShape({2, 3}));
        CHECK(Values<TestType>(*out) == std::vector<TestType>(6, 0));
      }
    }
  }
}

TEST_CASE("MatMul rejects mismatched and non-matrix operands in TensorFlow's words",
          "[kernels][matmul]") {
  absl::StatusOr<Tensor> out =
      MatMul(MakeTensor<float>({2, 3}, {}), MakeTensor<float>({4, 2}, {}));
  REQUIRE(!out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(out.status().message()) ==
        "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,2]");

  // The shapes are reported as given, before transposition.
  out = MatMul(MakeTensor<float>({2, 3}, {}), MakeTensor<float>({2, 4}, {}), true, true);
  REQUIRE(!out.ok());
  CHECK(std::string(out.status().message()) ==
        "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,4]");
  // [3,2]^T x [3,4] is fine: transpose_a makes the inner dims agree.
  CHECK(MatMul(MakeTensor<float>({3, 2}, {}), MakeTensor<float>({3, 4}, {}), true).ok());

  out = MatMul(MakeTensor<float>({2, 3, 4}, {}), MakeTensor<float>({4, 2}, {}));
  REQUIRE(!out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(out.status().message()) ==
        "In[0] is not a matrix. Instead it has shape [2,3,4]");
  out = MatMul(MakeTensor<double>({2, 3}, {}), MakeTensor<double>({3}, {}));
  REQUIRE(!out.ok());
  CHECK(std::string(out.status().message()) ==
        "In[1] is not a matrix. Instead it has shape [3]");
}

TEST_CASE("MatMul has no integer kernels", "[kernels][matmul]") {
  absl::StatusOr<Tensor> out =
      MatMul(MakeTensor<int32_t>({1, 1}, {2}), MakeTensor<int32_t>({1, 1}, {3}));
  REQUIRE(!out.ok());
  CHECK(out.status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("MatMul 256x512x128 with random values matches the naive product",
          "[kernels][matmul]") {
  // Large enough to be split over the test device's 2 pool threads.
  REQUIRE(blas::PartitionGemm(256, 128, 512, 2).shards == 2);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckRandomMatMul<float>(256, 512, 128, ta, tb, 1e-4);
      CheckRandomMatMul<double>(256, 512, 128, ta, tb, 1e-11);
    }
  }
}

TEST_CASE("MatMul split into ragged row or column blocks matches the naive product",
          "[kernels][matmul]") {
  // Rows split (m >= n) with a short last block, and columns split (n > m).
  const blas::GemmPartition rows = blas::PartitionGemm(301, 96, 200, 2);
  CHECK(rows.shards == 2);
  CHECK(rows.by_rows);
  CHECK(rows.block == 160);
  const blas::GemmPartition cols = blas::PartitionGemm(37, 531, 300, 2);
  CHECK(cols.shards == 2);
  CHECK_FALSE(cols.by_rows);
  CHECK(cols.block == 272);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckRandomMatMul<float>(301, 200, 96, ta, tb, 1e-4);
      CheckRandomMatMul<float>(37, 300, 531, ta, tb, 1e-4);
      CheckRandomMatMul<double>(37, 300, 531, ta, tb, 1e-11);
    }
  }
}

TEST_CASE("PartitionGemm keeps small products on one thread and splits the long side",
          "[kernels][matmul]") {
  CHECK(blas::PartitionGemm(1024, 1024, 1024, 1).shards == 1);  // one thread
  CHECK(blas::PartitionGemm(64, 10, 512, 2).shards == 1);        // 0.65 MFLOP
  const blas::GemmPartition square = blas::PartitionGemm(1024, 1024, 1024, 2);
  CHECK(square.shards == 2);
  CHECK(square.by_rows);
  CHECK(square.block == 512);
  const blas::GemmPartition mlp = blas::PartitionGemm(64, 512, 784, 2);  // MLP layer 1
  CHECK(mlp.shards == 2);
  CHECK_FALSE(mlp.by_rows);
  CHECK(mlp.block == 256);
  // Never more shards than 16-wide blocks.
  CHECK(blas::PartitionGemm(20, 20, 100000, 8).shards == 2);
}

TEST_CASE("A cancellable product runs as tiles with the same result", "[kernels][matmul]") {
  // Above kCancellableFlops with a token: ragged 16-aligned tiles over rows and columns
  // of C, for every transpose combination, against the one-call product.
  const int64_t m = 1000, n = 1100, k = 1000;
  REQUIRE(2.0 * m * n * k > blas::kCancellableFlops);
  const blas::TilePartition tiles = blas::PartitionTiles(m, n, k);
  CHECK(tiles.rows == 704);  // sqrt(1e9 / 2000) = 707, down to a multiple of 16
  CHECK(tiles.cols == 704);
  CHECK(tiles.row_tiles == 2);
  CHECK(tiles.col_tiles == 2);
  const std::vector<float> a = Random<float>(m * k, 11);
  const std::vector<float> b = Random<float>(k * n, 12);
  ThreadPool pool(2, "tiles");
  CancellationToken token;
  token.set_checked_in_kernels(true);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      blas::GemmArgs<float> args;
      args.trans_a = ta;
      args.trans_b = tb;
      args.m = m, args.n = n, args.k = k;
      args.a = a.data(), args.lda = ta ? m : k;
      args.b = b.data(), args.ldb = tb ? k : n;
      args.ldc = n;
      std::vector<float> one(m * n), tiled(m * n, -1.f);
      args.c = one.data();
      REQUIRE(blas::ParallelGemm(&pool, 2, args).ok());
      args.c = tiled.data();
      REQUIRE(blas::ParallelGemm(&pool, 2, args, &token).ok());
      double worst = 0;
      for (int64_t i = 0; i < m * n; ++i) {
        worst = std::max<double>(worst, std::fabs(one[i] - tiled[i]));
      }
      INFO("trans_a " << ta << " trans_b " << tb);
      CHECK(worst < 1e-4);
    }
  }
  // Small products and empty k keep the one-call path.
  CHECK(blas::PartitionTiles(16, 16, 100000000).rows == 16);
}

TEST_CASE("A cancelled product stops before its next tile with the token's reason",
          "[kernels][matmul]") {
  const int64_t n = 1280;  // 4.2 GFLOP: cancellable
  const std::vector<float> a = Random<float>(n * n, 13);
  std::vector<float> c(n * n, -7.f);
  blas::GemmArgs<float> args;
  args.m = args.n = args.k = n;
  args.a = a.data(), args.b = a.data(), args.c = c.data();
  args.lda = args.ldb = args.ldc = n;
  CancellationToken token;
  token.set_checked_in_kernels(true);
  token.Cancel(absl::DeadlineExceededError("Timed out"));
  ThreadPool pool(2, "cancelled");
  for (int threads : {1, 2}) {
    const absl::Status status = blas::ParallelGemm(&pool, threads, args, &token);
    CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
    CHECK(status.message() == "Timed out");
  }
  CHECK(std::count(c.begin(), c.end(), -7.f) == n * n);  // no tile ran
  // A token not checked in kernels (no deadline) leaves the product in one call, as
  // does no token: it runs to the end.
  CancellationToken between_nodes;
  between_nodes.Cancel(absl::CancelledError("closed"));
  REQUIRE(blas::ParallelGemm(&pool, 2, args, &between_nodes).ok());
  CHECK(c[0] != -7.f);
}

TEST_CASE("MatMul starts no library threads beside the pool", "[kernels][matmul]") {
  // Warm up: the test device's pool and whatever the libraries start at load time.
  REQUIRE(MatMul(MakeTensor<float>({1, 1}, {1}), MakeTensor<float>({1, 1}, {1})).ok());
  const int before = ThreadsInProcess();
  REQUIRE(before > 0);
  const std::vector<float> a = Random<float>(256 * 256, 3);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(MatMul(Filled<float>({256, 256}, a), Filled<float>({256, 256}, a)).ok());
    REQUIRE(MatMul(Filled<double>({256, 256}, std::vector<double>(a.begin(), a.end())),
                   Filled<double>({256, 256}, std::vector<double>(a.begin(), a.end())))
                .ok());
  }
  CHECK(ThreadsInProcess() == before);
}

TEST_CASE("MatMul runs concurrently from several threads", "[kernels][matmul]") {
  const std::vector<float> a = Random<float>(128 * 96, 4);
  const std::vector<float> b = Random<float>(96 * 200, 5);
  const std::vector<double> want = NaiveMatMul(a, b, 128, 96, 200, false, false);
  std::vector<double> worst(4, 0.0);
  std::vector<char> ok(4, 0);  // not vector<bool>: its bits share words across threads
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) {
        absl::StatusOr<Tensor> out = MatMul(Filled<float>({128, 96}, a), Filled<float>({96, 200}, b));
        if (!out.ok()) return;
        const std::vector<float> got = Values<float>(*out);
        for (size_t i = 0; i < want.size(); ++i) {
          worst[t] = std::max(worst[t], std::abs(got[i] - want[i]));
        }
      }
      ok[t] = 1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    CHECK(ok[t]);
    CHECK(worst[t] <= 1e-4);
  }
}

// --- BatchMatMul / BatchMatMulV2 ---

// Naive batched product of x [bx..., r, c] and y [by..., r, c] with broadcasting.
template <typename T>
std::vector<double> NaiveBatch(const std::vector<T>& x, const std::vector<int64_t>& xs,
                               const std::vector<T>& y, const std::vector<int64_t>& ys,
                               bool adj_x, bool adj_y, std::vector<int64_t>* out_shape) {
  const size_t rank = std::max(xs.size(), ys.size());
  std::vector<int64_t> xd(rank - 2, 1), yd(rank - 2, 1), od(rank - 2);
  for (size_t i = 0; i + 2 < xs.size(); ++i) xd[rank - xs.size() + i] = xs[i];
  for (size_t i = 0; i + 2 < ys.size(); ++i) yd[rank - ys.size() + i] = ys[i];
  int64_t batches = 1;
  for (size_t i = 0; i < od.size(); ++i) batches *= (od[i] = std::max(xd[i], yd[i]));
  const int64_t xr = xs[xs.size() - 2], xc = xs.back(), yr = ys[ys.size() - 2], yc = ys.back();
  const int64_t m = adj_x ? xc : xr, k = adj_x ? xr : xc, n = adj_y ? yr : yc;
  *out_shape = od;
  out_shape->push_back(m);
  out_shape->push_back(n);
  std::vector<double> out;
  for (int64_t b = 0; b < batches; ++b) {
    int64_t rem = b, xi = 0, yi = 0, xstride = 1, ystride = 1;
    for (int i = static_cast<int>(od.size()) - 1; i >= 0; --i) {
      const int64_t idx = rem % od[i];
      rem /= od[i];
      xi += (xd[i] == 1 ? 0 : idx) * xstride;
      yi += (yd[i] == 1 ? 0 : idx) * ystride;
      xstride *= xd[i];
      ystride *= yd[i];
    }
    std::vector<T> xm(x.begin() + xi * xr * xc, x.begin() + (xi + 1) * xr * xc);
    std::vector<T> ym(y.begin() + yi * yr * yc, y.begin() + (yi + 1) * yr * yc);
    std::vector<double> c = NaiveMatMul(xm, ym, m, k, n, adj_x, adj_y);
    out.insert(out.end(), c.begin(), c.end());
  }
  return out;
}

// x is x_batch + [m,k] ([k,m] when adj_x), y is y_batch + [k,n] ([n,k] when adj_y).
template <typename T>
void CheckBatch(const std::string& op, std::vector<int64_t> x_batch,
                std::vector<int64_t> y_batch, int64_t m, int64_t k, int64_t n, bool adj_x,
                bool adj_y, double tolerance) {
  std::vector<int64_t> xs = x_batch, ys = y_batch;
  xs.push_back(adj_x ? k : m);
  xs.push_back(adj_x ? m : k);
  ys.push_back(adj_y ? n : k);
  ys.push_back(adj_y ? k : n);
  CAPTURE(op, xs, ys, adj_x, adj_y);
  int64_t xn = 1, yn = 1;
  for (int64_t d : xs) xn *= d;
  for (int64_t d : ys) yn *= d;
  const std::vector<T> x = Random<T>(xn, 7);
  const std::vector<T> y = Random<T>(yn, 8);
  std::vector<int64_t> want_shape;
  const std::vector<double> want = NaiveBatch(x, xs, y, ys, adj_x, adj_y, &want_shape);
  absl::StatusOr<Tensor> out = BatchMatMul(op, Filled<T>(xs, x), Filled<T>(ys, y), adj_x, adj_y);
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape(absl::MakeConstSpan(want_shape)));
  const std::vector<T> got = Values<T>(*out);
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  CHECK(worst <= tolerance);
}

TEST_CASE("BatchMatMulV2 broadcasts batch dims and honours adj_x/adj_y",
          "[kernels][matmul][batch_matmul]") {
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      // Equal batches (spread over the pool), broadcast on either side, rank mismatch.
      CheckBatch<float>("BatchMatMulV2", {6}, {6}, 3, 4, 5, adj_x, adj_y, 1e-5);
      CheckBatch<float>("BatchMatMulV2", {2, 1}, {1, 3}, 3, 4, 5, adj_x, adj_y, 1e-5);
      CheckBatch<double>("BatchMatMulV2", {}, {5, 2}, 3, 4, 2, adj_x, adj_y, 1e-12);
      // A shared y: [batch*rows, k] x y as one GEMM when x is not transposed.
      CheckBatch<float>("BatchMatMulV2", {4}, {}, 50, 64, 300, adj_x, adj_y, 1e-4);
      CheckBatch<float>("BatchMatMulV2", {2, 3}, {1, 1}, 20, 64, 100, adj_x, adj_y, 1e-4);
      // A single large matrix pair split over the pool.
      CheckBatch<float>("BatchMatMulV2", {1}, {1}, 200, 160, 200, adj_x, adj_y, 1e-4);
      CheckBatch<double>("BatchMatMul", {2, 3}, {2, 3}, 4, 5, 3, adj_x, adj_y, 1e-12);
    }
  }
}

TEST_CASE("BatchMatMul and BatchMatMulV2 report bad shapes in TensorFlow's words",
          "[kernels][matmul][batch_matmul]") {
  auto message = [](const std::string& op, std::initializer_list<int64_t> xs,
                    std::initializer_list<int64_t> ys) {
    absl::StatusOr<Tensor> out =
        BatchMatMul(op, MakeTensor<float>(xs, {}), MakeTensor<float>(ys, {}));
    REQUIRE(!out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(out.status().message());
  };
  CHECK(message("BatchMatMulV2", {2, 3, 4}, {2, 5, 6}) ==
        "Matrix size-incompatible: In[0]: [2,3,4], In[1]: [2,5,6]");
  CHECK(message("BatchMatMulV2", {2, 3, 4}, {5, 4, 2}) ==
        "In[0] and In[1] must have compatible batch dimensions: [2,3,4] vs. [5,4,2]");
  CHECK(message("BatchMatMulV2", {4}, {4, 2}) == "In[0] ndims must be >= 2: 1");
  CHECK(message("BatchMatMul", {2, 3, 4}, {4, 2}) ==
        "In[0] and In[1] has different ndims: [2,3,4] vs. [4,2]");
  CHECK(message("BatchMatMul", {2, 3, 4}, {1, 4, 2}) ==
        "In[0].dim(0) and In[1].dim(0) must be the same: [2,3,4] vs [1,4,2]");
}

TEST_CASE("BatchMatMulV2 with empty batches or matrices", "[kernels][matmul][batch_matmul]") {
  absl::StatusOr<Tensor> out =
      BatchMatMul("BatchMatMulV2", MakeTensor<float>({0, 2, 3}, {}), MakeTensor<float>({3, 4}, {}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({0, 2, 4}));
  out = BatchMatMul("BatchMatMulV2", MakeTensor<float>({2, 2, 0}, {}),
                    MakeTensor<float>({2, 0, 3}, {}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 2, 3}));
  CHECK(Values<float>(*out) == std::vector<float>(12, 0.0f));
}

// ---------------------------------------------------------------------------------------
// Half and bfloat16: a float product converted back once, rounded (half) or truncated
// (bfloat16) as TF 2.21's CPU kernel does. Expected bits are TF's.

// ((sum of index * coefficient + offset) % 128 - 64) / 64 at each index, row-major:
// exact in half and bfloat16, and coarse enough that every float sum of products is
// exact, so TF's bits do not depend on the order of the float sum.
template <typename T>
Tensor Grid(const std::vector<int64_t>& shape, const std::vector<int64_t>& coefficients,
            int64_t offset) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<T> values;
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t n = offset;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1, rest = flat; d >= 0; --d) {
      n += (rest % shape[d]) * coefficients[d];
      rest /= shape[d];
    }
    values.push_back(T::FromFloat((n % 128 - 64) / 64.0f));
  }
  return Filled<T>(shape, values);
}

template <typename T>
Tensor Transposed(const Tensor& matrix) {
  const int64_t rows = matrix.shape().dim_size(0), cols = matrix.shape().dim_size(1);
  std::vector<T> values(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) values[j * rows + i] = matrix.flat<T>()[i * cols + j];
  }
  return Filled<T>({cols, rows}, values);
}

void CheckBits(const absl::StatusOr<Tensor>& got, const std::vector<uint16_t>& want) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  const auto* bits = static_cast<const uint16_t*>(got->raw_data());
  CHECK(std::vector<uint16_t>(bits, bits + got->NumElements()) == want);
}

TEST_CASE("half MatMul and BatchMatMulV2 match TF", "[kernels][matmul][half]") {
  const Tensor a = Grid<Half>({6, 40}, {7, 13}, 0);
  const Tensor b = Grid<Half>({40, 5}, {5, 11}, 3);
  const std::vector<uint16_t> want = {
      0x3888, 0x3cd1, 0x42ef, 0x42b6, 0x3af0, 0x3bbe, 0x3cee, 0x423e, 0x4146, 0xb328,
      0xb618, 0xb7d4, 0x3c1c, 0x442b, 0x3b7c, 0x3554, 0xb0c0, 0x3bf6, 0x4387, 0x3108,
      0xb9a0, 0xbe3b, 0xba4c, 0x3e6f, 0x3e84, 0xb6d4, 0xbffe, 0xbfc7, 0xb440, 0x4214};
  CheckBits(MatMul(a, b), want);
  CheckBits(MatMul(Transposed<Half>(a), Transposed<Half>(b), true, true), want);
  const Tensor x = Grid<Half>({2, 3, 40}, {17, 7, 13}, 1);
  const Tensor y = Grid<Half>({2, 40, 4}, {3, 5, 11}, 2);
  CheckBits(BatchMatMul("BatchMatMulV2", x, y),
            {0x3940, 0x3c9b, 0x42eb, 0x42c8, 0x3d15, 0x3cb2, 0x4238, 0x4156,
             0x3050, 0xb86e, 0x3c08, 0x4432, 0xbaf8, 0xbc93, 0x32b0, 0x3d3f,
             0xb6d4, 0xbdaa, 0xba3e, 0x42c6, 0xbc0e, 0xc010, 0xbdb4, 0x40fc});
  // One y for both batches: the stacked single-GEMM path.
  const Tensor y0 = Grid<Half>({40, 4}, {5, 11}, 2);
  CheckBits(BatchMatMul("BatchMatMulV2", x, y0),
            {0x3940, 0x3c9b, 0x42eb, 0x42c8, 0x3d15, 0x3cb2, 0x4238, 0x4156,
             0x3050, 0xb86e, 0x3c08, 0x4432, 0xb068, 0xbc84, 0x3328, 0x4267,
             0x38d0, 0xbd4d, 0xb984, 0x3e49, 0x2fd0, 0xc01b, 0xbdc9, 0x3a48});
}

TEST_CASE("bfloat16 MatMul and BatchMatMulV2 match TF", "[kernels][matmul][half]") {
  const Tensor a = Grid<Bfloat16>({6, 40}, {7, 13}, 0);
  const Tensor b = Grid<Bfloat16>({40, 5}, {5, 11}, 3);
  const std::vector<uint16_t> want = {
      0x3f11, 0x3f9a, 0x405d, 0x4056, 0x3f5e, 0x3f77, 0x3f9d, 0x4047, 0x4028, 0xbe65,
      0xbec3, 0xbefa, 0x3f83, 0x4085, 0x3f6f, 0x3eaa, 0xbe18, 0x3f7e, 0x4070, 0x3e21,
      0xbf34, 0xbfc7, 0xbf49, 0x3fcd, 0x3fd0, 0xbeda, 0xbfff, 0xbff8, 0xbe88, 0x4042};
  CheckBits(MatMul(a, b), want);
  CheckBits(MatMul(Transposed<Bfloat16>(a), Transposed<Bfloat16>(b), true, true), want);
  const Tensor x = Grid<Bfloat16>({2, 3, 40}, {17, 7, 13}, 1);
  const Tensor y = Grid<Bfloat16>({2, 40, 4}, {3, 5, 11}, 2);
  CheckBits(BatchMatMul("BatchMatMulV2", x, y),
            {0x3f28, 0x3f93, 0x405d, 0x4059, 0x3fa2, 0x3f96, 0x4046, 0x402a,
             0x3e0a, 0xbf0d, 0x3f81, 0x4086, 0xbf5f, 0xbf92, 0x3e56, 0x3fa7,
             0xbeda, 0xbfb5, 0xbf47, 0x4058, 0xbf81, 0xc002, 0xbfb6, 0x401f});
  // One y for both batches: the stacked single-GEMM path.
  const Tensor y0 = Grid<Bfloat16>({40, 4}, {5, 11}, 2);
  CheckBits(BatchMatMul("BatchMatMulV2", x, y0),
            {0x3f28, 0x3f93, 0x405d, 0x4059, 0x3fa2, 0x3f96, 0x4046, 0x402a,
             0x3e0a, 0xbf0d, 0x3f81, 0x4086, 0xbe0d, 0xbf90, 0x3e65, 0x404c,
             0x3f1a, 0xbfa9, 0xbf30, 0x3fc9, 0x3dfa, 0xc003, 0xbfb9, 0x3f49});
}

// A random 64x64x64 product against a float sum converted back in the same way; the BLAS
// sums in another order, so an element may land one unit away where the two float sums
// straddle a rounding point (about 1 in 4000 against TF, see matmul_op.cc).
template <typename T>
void CheckRandomHalfMatMul() {
  const int64_t m = 64, k = 64, n = 64;
  std::vector<T> a, b;
  for (float v : Random<float>(m * k, 3)) a.push_back(T::FromFloat(4 * v));
  for (float v : Random<float>(k * n, 4)) b.push_back(T::FromFloat(4 * v));
  absl::StatusOr<Tensor> out = MatMul(Filled<T>({m, k}, a), Filled<T>({k, n}, b));
  REQUIRE(out.ok());
  REQUIRE(out->dtype() == DataTypeOf<T>());
  int exact = 0, off_by_one = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[i * k + p].ToFloat() * b[p * n + j].ToFloat();
      T want;
      if constexpr (std::is_same_v<T, Bfloat16>) {
        want = Bfloat16::FromFloatTruncated(sum);
      } else {
        want = T::FromFloat(sum);
      }
      const int distance = std::abs(out->flat<T>()[i * n + j].bits - want.bits);
      exact += distance == 0;
      off_by_one += distance == 1;
    }
  }
  CHECK(exact + off_by_one == m * n);
  CHECK(exact >= m * n * 99 / 100);
}

TEST_CASE("Random half and bfloat16 products round once from a float sum",
          "[kernels][matmul][half]") {
  CheckRandomHalfMatMul<Half>();
  CheckRandomHalfMatMul<Bfloat16>();
}

}  // namespace
}  // namespace dflow
