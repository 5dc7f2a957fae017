// Shared oneDNN plumbing for the CPU kernels that run oneDNN primitives (Conv2D and
// pooling): RAII handles over the C API, status conversion, a per-kernel primitive
// cache keyed by shape, a cache of weights reordered into a primitive's layout, and
// batch sharding on the session's pool.
//
// The C API (dnnl.h), not dnnl.hpp: the C++ API reports errors by throwing, and library
// code here returns absl::Status (docs/STYLE.md #3, #4); every dnnl_status_t becomes a Status in
// DnnlStatus.
//
// Threading (as in blas.h): every primitive is created and executed with the calling
// thread's OpenMP team capped at 1 thread, so oneDNN never starts an OpenMP worker; the
// kernels get their parallelism by splitting the batch over the pool (SplitBatch,
// RunShards). Primitives use a user-provided scratchpad allocated per execution, so one
// primitive may run on several threads at once.
#ifndef DFLOW_KERNELS_CPU_DNNL_UTIL_H_
#define DFLOW_KERNELS_CPU_DNNL_UTIL_H_

#include <dnnl.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {
namespace onednn {

// INTERNAL "<what> failed: <oneDNN status>" unless `status` is dnnl_success.
absl::Status DnnlStatus(dnnl_status_t status, const char* what);

// Caps the calling thread's OpenMP team (the ICV oneDNN reads) at 1 thread.
void UseOneOpenMPThread();

struct EngineDeleter {
  void operator()(dnnl_engine_t e) const { dnnl_engine_destroy(e); }
};
struct PrimitiveDescDeleter {
  void operator()(dnnl_primitive_desc_t pd) const { dnnl_primitive_desc_destroy(pd); }
};
struct PrimitiveDeleter {
  void operator()(dnnl_primitive_t p) const { dnnl_primitive_destroy(p); }
};
using EnginePtr = std::unique_ptr<dnnl_engine, EngineDeleter>;
using PrimitiveDescPtr = std::unique_ptr<dnnl_primitive_desc, PrimitiveDescDeleter>;
using PrimitivePtr = std::unique_ptr<dnnl_primitive, PrimitiveDeleter>;

// The CPU engine. Each kernel owns one (creating it is cheap; no globals).
absl::StatusOr<EnginePtr> MakeCpuEngine();

// A plain f32 memory descriptor with the given logical dims and strides (in elements).
absl::StatusOr<dnnl_memory_desc_t> StridedDesc(const std::vector<int64_t>& dims,
                                               const std::vector<int64_t>& strides);
// An f32 descriptor of `dims` whose layout the primitive picks (format any).
absl::StatusOr<dnnl_memory_desc_t> AnyLayoutDesc(const std::vector<int64_t>& dims);
// A 4-D f32 image descriptor, dims {N, C, H, W}, laid out NHWC or NCHW.
absl::StatusOr<dnnl_memory_desc_t> ImageDesc(int64_t n, int64_t c, int64_t h, int64_t w, bool nchw);

struct ExecSlot;

// A created primitive and its descriptor; immutable once built, shared by the threads
// that execute it.
struct Primitive {
  Primitive();
  ~Primitive();

  PrimitiveDescPtr pd;
  PrimitivePtr primitive;
  size_t scratchpad_bytes = 0;
  // What Execute wrapped the arguments in (memory objects, a stream, the scratchpad),
  // kept for the next execution: making them anew costs ~1.2 us an execution, ~2% of
  // a 2-thread MLP step. One slot per concurrent execution.
  mutable std::mutex slots_mu;
  mutable std::vector<std::unique_ptr<ExecSlot>> slots ABSL_GUARDED_BY(slots_mu);

  // The descriptor the primitive expects for `what` (dnnl_query_src_md, ...).
  const dnnl_memory_desc_t* Md(dnnl_query_t what) const;
  // oneDNN's implementation name ("brg:avx512_core", "jit:avx2", "ref:any").
  std::string Implementation() const;
};

// An elementwise function applied to a primitive's result in the same pass (a oneDNN
// eltwise post-op): Relu is {dnnl_eltwise_relu}, Relu6 {dnnl_eltwise_clip, 0, 6}.
struct Activation {
  dnnl_alg_kind_t alg = dnnl_alg_kind_undef;  // undef: none
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The activation a fused op's `fused_ops` entry names ("Relu", "Relu6"); nullopt for
// others.
std::optional<Activation> ActivationNamed(const std::string& op);

// TF's UNIMPLEMENTED "Fusion is not implemented: [BiasAdd,...]" for a fused_ops list a
// fused kernel does not implement.
absl::Status FusionNotImplemented(const std::vector<std::string>& fused_ops);

// `x` through `activation`, as the post-op computes it (for results computed without
// a primitive: empty sums, broadcast addends).
float Activate(const Activation& activation, float x);

// What a primitive applies to its result, in this order (oneDNN's post-ops): with
// `accumulate`, the sum of what the destination already holds (a residual connection:
// TF's fused "Add"), then the activation.
struct PostOps {
  PostOps() = default;
  PostOps(const Activation& a) : activation(a) {}  // NOLINT(runtime/explicit): act alone
  PostOps(bool accumulate_first, const Activation& a)
      : accumulate(accumulate_first), activation(a) {}

  bool accumulate = false;
  Activation activation;
};

// The post-ops of a _FusedConv2D whose fused_ops are ["BiasAdd"], ["BiasAdd", act],
// ["BiasAdd", "Add"] or ["BiasAdd", "Add", act] (act: Relu, Relu6, dflow's swish), with
// one extra argument (the bias), or two with "Add" (the bias, then the addend);
// UNIMPLEMENTED for other fusions (TF's words), INVALID_ARGUMENT for another num_args.
absl::StatusOr<PostOps> FusedPostOps(const std::vector<std::string>& fused_ops,
                                     int64_t num_args);

// The activation of a _FusedConv2D/_FusedMatMul whose fused_ops are ["BiasAdd"] or
// ["BiasAdd", "Relu" | "Relu6"] with one extra argument (the bias); UNIMPLEMENTED for
// other fusions (TF's words), INVALID_ARGUMENT for another num_args.
absl::StatusOr<Activation> FusedActivation(const std::vector<std::string>& fused_ops,
                                           int64_t num_args);

// Creates the primitive for `op_desc` (a dnnl_*_desc_t) on `engine`, on the calling
// thread with a 1-thread OpenMP team, with a user scratchpad and `post_ops` applied to
// its output. Backward primitives pass their forward primitive's descriptor as `hint`.
absl::StatusOr<std::shared_ptr<const Primitive>> MakePrimitive(
    const_dnnl_op_desc_t op_desc, dnnl_engine_t engine, const PostOps& post_ops = {},
    const_dnnl_primitive_desc_t hint = nullptr);

// A reorder from `from`'s layout to `to`'s (same dims), created on the calling thread with
// a 1-thread OpenMP team; kernels that let a primitive pick its output layout use one to
// bring the result back to the graph's layout.
absl::StatusOr<std::shared_ptr<const Primitive>> MakeReorderPrimitive(
    dnnl_engine_t engine, const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to);

// One argument of an execution: `data` laid out as `md`.
struct ExecArg {
  int arg;  // DNNL_ARG_SRC, ...
  const dnnl_memory_desc_t* md;
  const void* data;
};

// Runs `p` on the calling thread (1-thread OpenMP team) and waits for it.
absl::Status Execute(const Primitive& p, dnnl_engine_t engine, absl::Span<const ExecArg> args);

// A shape-keyed cache of immutable values (primitives), guarded by a mutex because
// Compute runs concurrently. A kernel sees few shapes; past kMaxEntries it starts over,
// so shapes that vary step by step cannot grow it without bound.
template <typename V>
class ShapeCache {
 public:
  using Key = std::vector<int64_t>;
  static constexpr size_t kMaxEntries = 64;

  // The cached value for `key`, else make() (run outside the lock) cached and returned.
  absl::StatusOr<std::shared_ptr<const V>> GetOrCreate(
      const Key& key, const std::function<absl::StatusOr<std::shared_ptr<const V>>()>& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    absl::StatusOr<std::shared_ptr<const V>> made = make();
    if (!made.ok()) return made.status();
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();
    return map_.emplace(key, *std::move(made)).first->second;
  }

 private:
  std::mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<const V>> map_ ABSL_GUARDED_BY(mu_);
};

// Weights in a primitive's preferred layout, with a copy of the plain values they were
// made from (to recognise them again).
struct PackedWeights {
  dnnl_memory_desc_t plain_md;
  dnnl_memory_desc_t md;
  std::vector<char> plain;       // the source values, plain layout (empty when constant)
  std::shared_ptr<void> buffer;  // the reordered data, 64-byte aligned
  // For a constant input (IsConstantInput): the source tensor itself, held so that its
  // buffer address stays unique to these values.
  Tensor constant_source;
};

// Reordered weights, built once per distinct weights value: a frozen graph's filter is a
// Const with the same values every step. An entry is found by comparing the incoming
// values with its plain copy (one memcmp, far cheaper than a reorder and negligible next
// to the convolution), not by buffer address alone: a variable's buffer can be updated
// in place (Assign, ApplyGradientDescent on a RefSlot), and a stale packed filter would
// give silently wrong results. New values (a filter computed each step, a trained
// variable) are reordered again and replace older entries beyond a few. Thread-safe.
class PackedWeightsCache {
 public:
  // The packed form of `source` (plain float data laid out as `plain_md`) in
  // `packed_md`'s layout, or nullptr when the layouts are equal (use `source` itself).
  // `constant`: `source` is a constant input (the same values in every step), so an
  // entry made from this very buffer is found without comparing values (a megabyte
  // memcmp costs tens of microseconds next to a small-batch GEMM).
  // `offset_bytes`: the plain values start that far into `source` (a slice of a
  // constant filter, conv_channel_blocks.h); only with `constant`, and an entry is then
  // told from another slice of the same source by `plain_md` alone, so a cache holds the
  // slices of one layout at one offset.
  absl::StatusOr<std::shared_ptr<const PackedWeights>> Get(dnnl_engine_t engine,
                                                           const Tensor& source,
                                                           const dnnl_memory_desc_t& plain_md,
                                                           const dnnl_memory_desc_t& packed_md,
                                                           bool constant = false,
                                                           size_t offset_bytes = 0);
  // The entry packed from values equal to `source`'s, or nullptr when there is none (or
  // the layouts are equal); never packs.
  absl::StatusOr<std::shared_ptr<const PackedWeights>> Find(const Tensor& source,
                                                            const dnnl_memory_desc_t& plain_md,
                                                            const dnnl_memory_desc_t& packed_md);

 private:
  std::shared_ptr<const PackedWeights> FindLocked(const Tensor& source,
                                                  const dnnl_memory_desc_t& plain_md,
                                                  const dnnl_memory_desc_t& packed_md,
                                                  bool constant) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  static constexpr size_t kMaxEntries = 4;
  std::mutex mu_;
  std::vector<std::shared_ptr<const PackedWeights>> entries_ ABSL_GUARDED_BY(mu_);
};

// Below this many FLOPs per shard (~20 us of one core) a hand-off to another pool thread
// does not pay (the same threshold as blas.cc, bench/blas_choice/RESULTS.md). Batch
// shards and conv_row_bands.h's bands of rows use it.
inline constexpr double kMinFlopsPerShard = 4e6;

// How a batch of `n` images is split: `shards` sub-batches of `block` images (the last
// may be smaller). One shard when the work is too small to repay a hand-off.
struct BatchSplit {
  int64_t shards = 1;
  int64_t block = 0;
};
BatchSplit SplitBatch(int64_t n, double flops_per_image, int num_threads);
// The same with a caller's threshold: kernels that run right after a parallel one (the
// pool's workers still spinning, a hand-off costs ~1 us) may split smaller work.
BatchSplit SplitBatch(int64_t n, double flops_per_image, int num_threads,
                      double min_flops_per_shard);

// Runs fn(first_image, num_images) for each shard of `split`, on the context's pool
// when there are several; returns the first error.
absl::Status RunShards(OpKernelContext* ctx, int64_t n, const BatchSplit& split,
                       double flops_per_image,
                       const std::function<absl::Status(int64_t, int64_t)>& fn);

}  // namespace onednn
}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_DNNL_UTIL_H_
