#include "kernels/cpu/dnnl_util.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "runtime/thread_pool.h"

namespace dflow {
namespace onednn {
namespace {

struct StreamDeleter {
  void operator()(dnnl_stream_t s) const { dnnl_stream_destroy(s); }
};
struct MemoryDeleter {
  void operator()(dnnl_memory_t m) const { dnnl_memory_destroy(m); }
};
struct AttrDeleter {
  void operator()(dnnl_primitive_attr_t a) const { dnnl_primitive_attr_destroy(a); }
};
using StreamPtr = std::unique_ptr<dnnl_stream, StreamDeleter>;
using MemoryPtr = std::unique_ptr<dnnl_memory, MemoryDeleter>;
using AttrPtr = std::unique_ptr<dnnl_primitive_attr, AttrDeleter>;

const char* StatusName(dnnl_status_t status) {
  switch (status) {
    case dnnl_out_of_memory:
      return "out of memory";
    case dnnl_invalid_arguments:
      return "invalid arguments";
    case dnnl_unimplemented:
      return "unimplemented";
    case dnnl_iterator_ends:
      return "iterator ends";
    case dnnl_runtime_error:
      return "runtime error";
    case dnnl_not_required:
      return "not required";
    default:
      return "unknown status";
  }
}

std::shared_ptr<void> AlignedAlloc(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  return std::shared_ptr<void>(std::aligned_alloc(64, rounded), std::free);
}

absl::StatusOr<MemoryPtr> WrapMemory(const dnnl_memory_desc_t* md, dnnl_engine_t engine,
                                     const void* data) {
  dnnl_memory_t memory = nullptr;
  // oneDNN takes a non-const handle for every argument; inputs are only read.
  absl::Status status = DnnlStatus(dnnl_memory_create(&memory, md, engine, const_cast<void*>(data)),
                                   "dnnl_memory_create");
  if (!status.ok()) return status;
  return MemoryPtr(memory);
}

// `src` (in `src_md`) reordered into a new buffer laid out as `dst_md`.
absl::StatusOr<std::shared_ptr<void>> Reorder(dnnl_engine_t engine,
                                              const dnnl_memory_desc_t& src_md, const void* src,
                                              const dnnl_memory_desc_t& dst_md) {
  absl::StatusOr<std::shared_ptr<const Primitive>> reorder =
      MakeReorderPrimitive(engine, src_md, dst_md);
  if (!reorder.ok()) return reorder.status();
  std::shared_ptr<void> dst = AlignedAlloc(dnnl_memory_desc_get_size(&dst_md));
  if (dst == nullptr) return absl::ResourceExhaustedError("no memory for reordered weights");
  absl::Status status = Execute(**reorder, engine,
                                {{DNNL_ARG_FROM, &src_md, src}, {DNNL_ARG_TO, &dst_md, dst.get()}});
  if (!status.ok()) return status;
  return dst;
}

struct PostOpsDeleter {
  void operator()(dnnl_post_ops_t p) const { dnnl_post_ops_destroy(p); }
};

absl::Status SetPostOps(const PostOps& ops, dnnl_primitive_attr_t attr) {
  dnnl_post_ops_t raw = nullptr;
  DFLOW_RETURN_IF_ERROR(DnnlStatus(dnnl_post_ops_create(&raw), "dnnl_post_ops_create"));
  std::unique_ptr<dnnl_post_ops, PostOpsDeleter> post_ops(raw);
  if (ops.accumulate) {
    DFLOW_RETURN_IF_ERROR(DnnlStatus(dnnl_post_ops_append_sum(post_ops.get(), 1.0f),
                                     "dnnl_post_ops_append_sum"));
  }
  if (ops.activation.alg != dnnl_alg_kind_undef) {
    DFLOW_RETURN_IF_ERROR(
        DnnlStatus(dnnl_post_ops_append_eltwise(post_ops.get(), 1.0f, ops.activation.alg,
                                                ops.activation.alpha, ops.activation.beta),
                   "dnnl_post_ops_append_eltwise"));
  }
  return DnnlStatus(dnnl_primitive_attr_set_post_ops(attr, post_ops.get()),
                    "dnnl_primitive_attr_set_post_ops");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Primitive>> MakeReorderPrimitive(
    dnnl_engine_t engine, const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to) {
  UseOneOpenMPThread();
  dnnl_primitive_desc_t pd = nullptr;
  absl::Status status =
      DnnlStatus(dnnl_reorder_primitive_desc_create(&pd, &from, engine, &to, engine, nullptr),
                 "dnnl_reorder_primitive_desc_create");
  if (!status.ok()) return status;
  auto reorder = std::make_shared<Primitive>();
  reorder->pd.reset(pd);
  dnnl_primitive_t primitive = nullptr;
  status = DnnlStatus(dnnl_primitive_create(&primitive, pd), "dnnl_primitive_create(reorder)");
  if (!status.ok()) return status;
  reorder->primitive.reset(primitive);
  return std::shared_ptr<const Primitive>(std::move(reorder));
}

absl::Status DnnlStatus(dnnl_status_t status, const char* what) {
  if (status == dnnl_success) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " failed: oneDNN status ", static_cast<int>(status),
                                          " (", StatusName(status), ")"));
}

void UseOneOpenMPThread() {
  if (omp_get_max_threads() != 1) omp_set_num_threads(1);
}

absl::StatusOr<EnginePtr> MakeCpuEngine() {
  dnnl_engine_t engine = nullptr;
  absl::Status status =
      DnnlStatus(dnnl_engine_create(&engine, dnnl_cpu, 0), "dnnl_engine_create(cpu)");
  if (!status.ok()) return status;
  return EnginePtr(engine);
}

absl::StatusOr<dnnl_memory_desc_t> StridedDesc(const std::vector<int64_t>& dims,
                                               const std::vector<int64_t>& strides) {
  dnnl_dims_t d, s;
  const int ndims = static_cast<int>(dims.size());
  for (int i = 0; i < ndims; ++i) {
    d[i] = dims[i];
    s[i] = strides[i];
  }
  dnnl_memory_desc_t md;
  absl::Status status = DnnlStatus(dnnl_memory_desc_init_by_strides(&md, ndims, d, dnnl_f32, s),
                                   "dnnl_memory_desc_init_by_strides");
  if (!status.ok()) return status;
  return md;
}

absl::StatusOr<dnnl_memory_desc_t> AnyLayoutDesc(const std::vector<int64_t>& dims) {
  dnnl_dims_t d;
  const int ndims = static_cast<int>(dims.size());
  for (int i = 0; i < ndims; ++i) d[i] = dims[i];
  dnnl_memory_desc_t md;
  absl::Status status =
      DnnlStatus(dnnl_memory_desc_init_by_tag(&md, ndims, d, dnnl_f32, dnnl_format_tag_any),
                 "dnnl_memory_desc_init_by_tag(any)");
  if (!status.ok()) return status;
  return md;
}

absl::StatusOr<dnnl_memory_desc_t> ImageDesc(int64_t n, int64_t c, int64_t h, int64_t w,
                                             bool nchw) {
  const dnnl_dims_t dims = {n, c, h, w};
  dnnl_memory_desc_t md;
  absl::Status status =
      DnnlStatus(dnnl_memory_desc_init_by_tag(&md, 4, dims, dnnl_f32, nchw ? dnnl_nchw : dnnl_nhwc),
                 "dnnl_memory_desc_init_by_tag");
  if (!status.ok()) return status;
  return md;
}

const dnnl_memory_desc_t* Primitive::Md(dnnl_query_t what) const {
  return dnnl_primitive_desc_query_md(pd.get(), what, 0);
}

std::string Primitive::Implementation() const {
  const char* name = nullptr;
  if (dnnl_primitive_desc_query(pd.get(), dnnl_query_impl_info_str, 0, &name) != dnnl_success ||
      name == nullptr) {
    return "unknown";
  }
  return name;
}

std::optional<Activation> ActivationNamed(const std::string& op) {
  if (op == "Relu") return Activation{dnnl_eltwise_relu, 0.0f, 0.0f};
  if (op == "Relu6") return Activation{dnnl_eltwise_clip, 0.0f, 6.0f};
  // graph/fusion.h's swish, x * sigmoid(alpha * x); the kernel sets alpha from the attr.
  if (op == "_DflowSwish") return Activation{dnnl_eltwise_swish, 1.0f, 0.0f};
  return std::nullopt;
}

absl::Status FusionNotImplemented(const std::vector<std::string>& fused_ops) {
  return absl::UnimplementedError(
      absl::StrCat("Fusion is not implemented: [", absl::StrJoin(fused_ops, ","), "]"));
}

float Activate(const Activation& activation, float x) {
  switch (activation.alg) {
    case dnnl_eltwise_relu:
      if (x > 0.0f) return x;
      return activation.alpha == 0.0f ? 0.0f : activation.alpha * x;  // 0, not -0 or NaN
    case dnnl_eltwise_clip:
      return std::min(std::max(x, activation.alpha), activation.beta);
    case dnnl_eltwise_swish:
      return x / (1.0f + std::exp(-activation.alpha * x));
    default:
      return x;
  }
}

absl::StatusOr<PostOps> FusedPostOps(const std::vector<std::string>& fused_ops,
                                     int64_t num_args) {
  const bool add = fused_ops.size() >= 2 && fused_ops[1] == "Add";
  if (!add) {
    DFLOW_ASSIGN_OR_RETURN(Activation activation, FusedActivation(fused_ops, num_args));
    return PostOps(activation);
  }
  if (fused_ops.size() > 3 || fused_ops[0] != "BiasAdd") return FusionNotImplemented(fused_ops);
  if (num_args != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Fused op with BiasAdd and Add must have two extra arguments: bias and addend, got ",
        num_args));
  }
  if (fused_ops.size() == 2) return PostOps(/*accumulate_first=*/true, Activation{});
  std::optional<Activation> activation = ActivationNamed(fused_ops[2]);
  if (!activation.has_value()) return FusionNotImplemented(fused_ops);
  return PostOps(/*accumulate_first=*/true, *activation);
}

absl::StatusOr<Activation> FusedActivation(const std::vector<std::string>& fused_ops,
                                           int64_t num_args) {
  const auto unsupported = [&] { return FusionNotImplemented(fused_ops); };
  if (fused_ops.empty() || fused_ops.size() > 2 || fused_ops[0] != "BiasAdd") {
    return unsupported();
  }
  if (num_args != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Fused op with BiasAdd must have one extra argument: bias, got ", num_args));
  }
  if (fused_ops.size() == 1) return Activation{};
  std::optional<Activation> activation = ActivationNamed(fused_ops[1]);
  if (!activation.has_value()) return unsupported();
  return *activation;
}

absl::StatusOr<std::shared_ptr<const Primitive>> MakePrimitive(
    const_dnnl_op_desc_t op_desc, dnnl_engine_t engine, const PostOps& post_ops,
    const_dnnl_primitive_desc_t hint) {
  // Primitives size their work split by the creating thread's OpenMP team.
  UseOneOpenMPThread();
  dnnl_primitive_attr_t raw_attr = nullptr;
  absl::Status status =
      DnnlStatus(dnnl_primitive_attr_create(&raw_attr), "dnnl_primitive_attr_create");
  if (!status.ok()) return status;
  AttrPtr attr(raw_attr);
  status =
      DnnlStatus(dnnl_primitive_attr_set_scratchpad_mode(attr.get(), dnnl_scratchpad_mode_user),
                 "dnnl_primitive_attr_set_scratchpad_mode");
  if (!status.ok()) return status;
  if (post_ops.accumulate || post_ops.activation.alg != dnnl_alg_kind_undef) {
    DFLOW_RETURN_IF_ERROR(SetPostOps(post_ops, attr.get()));
  }
  auto p = std::make_shared<Primitive>();
  dnnl_primitive_desc_t pd = nullptr;
  status = DnnlStatus(dnnl_primitive_desc_create(&pd, op_desc, attr.get(), engine, hint),
                      "dnnl_primitive_desc_create");
  if (!status.ok()) return status;
  p->pd.reset(pd);
  dnnl_primitive_t primitive = nullptr;
  status = DnnlStatus(dnnl_primitive_create(&primitive, pd), "dnnl_primitive_create");
  if (!status.ok()) return status;
  p->primitive.reset(primitive);
  const dnnl_memory_desc_t* scratch = p->Md(dnnl_query_scratchpad_md);
  p->scratchpad_bytes = scratch == nullptr ? 0 : dnnl_memory_desc_get_size(scratch);
  return std::shared_ptr<const Primitive>(std::move(p));
}

// One execution's wrapping of its arguments, reused while the descriptors match.
struct ExecSlot {
  dnnl_engine_t engine = nullptr;
  StreamPtr stream;
  std::vector<int> arg_ids;
  std::vector<dnnl_memory_desc_t> mds;
  std::vector<MemoryPtr> memories;  // one per argument, then the scratchpad's
  std::vector<dnnl_exec_arg_t> exec_args;
  std::shared_ptr<void> scratchpad;

  bool Matches(dnnl_engine_t e, absl::Span<const ExecArg> args) const {
    if (e != engine || args.size() != arg_ids.size()) return false;
    size_t i = 0;
    for (const ExecArg& a : args) {
      if (a.arg != arg_ids[i] || !dnnl_memory_desc_equal(a.md, &mds[i])) return false;
      ++i;
    }
    return true;
  }

  // Points argument i's memory object at `data`. Setting a handle zero-fills the
  // layout's padding, which would write into buffers other threads read (packed
  // weights); a padded layout gets a new memory object instead, as every call used to.
  absl::Status Point(size_t i, dnnl_engine_t e, const void* data) {
    void* current = nullptr;
    DFLOW_RETURN_IF_ERROR(
        DnnlStatus(dnnl_memory_get_data_handle(memories[i].get(), &current),
                   "dnnl_memory_get_data_handle"));
    if (current == data) return absl::OkStatus();
    if (Padded(mds[i])) {
      DFLOW_ASSIGN_OR_RETURN(memories[i], WrapMemory(&mds[i], e, data));
      exec_args[i].memory = memories[i].get();
      return absl::OkStatus();
    }
    return DnnlStatus(dnnl_memory_set_data_handle(memories[i].get(), const_cast<void*>(data)),
                      "dnnl_memory_set_data_handle");
  }

  static bool Padded(const dnnl_memory_desc_t& md) {
    for (int d = 0; d < md.ndims; ++d) {
      if (md.padded_dims[d] != md.dims[d]) return true;
    }
    return false;
  }
};

Primitive::Primitive() = default;
Primitive::~Primitive() = default;

namespace {

// A slot for `args`, memory objects pointing at their data.
absl::StatusOr<std::unique_ptr<ExecSlot>> MakeSlot(const Primitive& p, dnnl_engine_t engine,
                                                   absl::Span<const ExecArg> args) {
  auto slot = std::make_unique<ExecSlot>();
  slot->engine = engine;
  slot->memories.reserve(args.size() + 1);
  slot->exec_args.reserve(args.size() + 1);
  for (const ExecArg& a : args) {
    absl::StatusOr<MemoryPtr> m = WrapMemory(a.md, engine, a.data);
    if (!m.ok()) return m.status();
    slot->arg_ids.push_back(a.arg);
    slot->mds.push_back(*a.md);
    slot->exec_args.push_back({a.arg, m->get()});
    slot->memories.push_back(*std::move(m));
  }
  if (p.scratchpad_bytes > 0) {
    slot->scratchpad = AlignedAlloc(p.scratchpad_bytes);
    if (slot->scratchpad == nullptr) return absl::ResourceExhaustedError("no memory for scratchpad");
    absl::StatusOr<MemoryPtr> m =
        WrapMemory(p.Md(dnnl_query_scratchpad_md), engine, slot->scratchpad.get());
    if (!m.ok()) return m.status();
    slot->exec_args.push_back({DNNL_ARG_SCRATCHPAD, m->get()});
    slot->memories.push_back(*std::move(m));
  }
  dnnl_stream_t raw_stream = nullptr;
  DFLOW_RETURN_IF_ERROR(DnnlStatus(
      dnnl_stream_create(&raw_stream, engine, dnnl_stream_default_flags), "dnnl_stream_create"));
  slot->stream.reset(raw_stream);
  return slot;
}

// A free slot of `p` that fits `args`, pointed at their data, else a new one.
absl::StatusOr<std::unique_ptr<ExecSlot>> TakeSlot(const Primitive& p, dnnl_engine_t engine,
                                                   absl::Span<const ExecArg> args) {
  std::unique_ptr<ExecSlot> slot;
  {
    std::lock_guard<std::mutex> lock(p.slots_mu);
    if (!p.slots.empty()) {
      slot = std::move(p.slots.back());
      p.slots.pop_back();
    }
  }
  if (slot == nullptr || !slot->Matches(engine, args)) return MakeSlot(p, engine, args);
  size_t i = 0;
  for (const ExecArg& a : args) {
    DFLOW_RETURN_IF_ERROR(slot->Point(i, engine, a.data));
    ++i;
  }
  return slot;
}

// Slots kept a primitive: more than the pool's threads only if several sessions share it.
constexpr size_t kMaxSlots = 16;

void ReturnSlot(const Primitive& p, std::unique_ptr<ExecSlot> slot) {
  std::lock_guard<std::mutex> lock(p.slots_mu);
  if (p.slots.size() < kMaxSlots) p.slots.push_back(std::move(slot));
}

}  // namespace

absl::Status Execute(const Primitive& p, dnnl_engine_t engine,
                     absl::Span<const ExecArg> args) {
  UseOneOpenMPThread();
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<ExecSlot> slot, TakeSlot(p, engine, args));
  DFLOW_RETURN_IF_ERROR(DnnlStatus(
      dnnl_primitive_execute(p.primitive.get(), slot->stream.get(),
                             static_cast<int>(slot->exec_args.size()), slot->exec_args.data()),
      "dnnl_primitive_execute"));
  DFLOW_RETURN_IF_ERROR(DnnlStatus(dnnl_stream_wait(slot->stream.get()), "dnnl_stream_wait"));
  ReturnSlot(p, std::move(slot));
  return absl::OkStatus();
}

std::shared_ptr<const PackedWeights> PackedWeightsCache::FindLocked(
    const Tensor& source, const dnnl_memory_desc_t& plain_md, const dnnl_memory_desc_t& packed_md,
    bool constant) {
  const char* values = static_cast<const char*>(source.raw_data());
  const size_t bytes = source.TotalBytes();
  if (constant && values != nullptr) {
    for (const auto& e : entries_) {
      if (e->constant_source.raw_data() == values && dnnl_memory_desc_equal(&e->md, &packed_md) &&
          dnnl_memory_desc_equal(&e->plain_md, &plain_md)) {
        return e;
      }
    }
  }
  for (const auto& e : entries_) {
    if (dnnl_memory_desc_equal(&e->md, &packed_md) &&
        dnnl_memory_desc_equal(&e->plain_md, &plain_md) && e->plain.size() == bytes &&
        std::memcmp(e->plain.data(), values, bytes) == 0) {
      return e;
    }
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<const PackedWeights>> PackedWeightsCache::Find(
    const Tensor& source, const dnnl_memory_desc_t& plain_md, const dnnl_memory_desc_t& packed_md) {
  if (dnnl_memory_desc_equal(&plain_md, &packed_md)) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return FindLocked(source, plain_md, packed_md, /*constant=*/false);
}

absl::StatusOr<std::shared_ptr<const PackedWeights>> PackedWeightsCache::Get(
    dnnl_engine_t engine, const Tensor& source, const dnnl_memory_desc_t& plain_md,
    const dnnl_memory_desc_t& packed_md, bool constant, size_t offset_bytes) {
  if (dnnl_memory_desc_equal(&plain_md, &packed_md)) return nullptr;
  if (offset_bytes != 0 && !constant) {
    return absl::InternalError("PackedWeightsCache: an offset needs a constant source");
  }
  const char* values = static_cast<const char*>(source.raw_data());
  const size_t bytes = source.TotalBytes();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto found = FindLocked(source, plain_md, packed_md, constant)) return found;
  }
  auto packed = std::make_shared<PackedWeights>();
  packed->plain_md = plain_md;
  packed->md = packed_md;
  // A constant input is recognised by its buffer (held, so that the address stays its
  // own): no plain copy, which for VGG16's weights was 553 MB more, page-faulted in on
  // the first run.
  if (constant) {
    packed->constant_source = source;
  } else {
    packed->plain.assign(values, values + bytes);
  }
  DFLOW_ASSIGN_OR_RETURN(packed->buffer,
                         Reorder(engine, plain_md, values + offset_bytes, packed_md));
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() >= kMaxEntries) entries_.erase(entries_.begin());
  entries_.push_back(packed);
  return std::shared_ptr<const PackedWeights>(std::move(packed));
}

BatchSplit SplitBatch(int64_t n, double flops_per_image, int num_threads) {
  return SplitBatch(n, flops_per_image, num_threads, kMinFlopsPerShard);
}

BatchSplit SplitBatch(int64_t n, double flops_per_image, int num_threads,
                      double min_flops_per_shard) {
  BatchSplit split{1, n};
  if (num_threads <= 1 || n <= 1) return split;
  const double total = flops_per_image * static_cast<double>(n);
  const int64_t shards = std::min<int64_t>(
      {static_cast<int64_t>(num_threads), n, static_cast<int64_t>(total / min_flops_per_shard)});
  if (shards <= 1) return split;
  split.block = (n + shards - 1) / shards;
  split.shards = (n + split.block - 1) / split.block;
  return split;
}

absl::Status RunShards(OpKernelContext* ctx, int64_t n, const BatchSplit& split,
                       double flops_per_image,
                       const std::function<absl::Status(int64_t, int64_t)>& fn) {
  if (split.shards <= 1 || ctx->pool() == nullptr) return fn(0, n);
  std::mutex mu;
  absl::Status status;
  // Cycles per shard at a conservative ~16 FLOPs per cycle: far above the pool's
  // hand-off threshold, so each shard may go to its own thread.
  const int64_t cycles =
      static_cast<int64_t>(flops_per_image * static_cast<double>(split.block) / 16);
  ctx->pool()->ParallelFor(split.shards, std::max<int64_t>(cycles, 1),
                           [&](int64_t begin, int64_t end) {
                             for (int64_t s = begin; s < end; ++s) {
                               const int64_t first = s * split.block;
                               absl::Status shard = fn(first, std::min(split.block, n - first));
                               if (!shard.ok()) {
                                 std::lock_guard<std::mutex> lock(mu);
                                 status.Update(shard);
                               }
                             }
                           });
  return status;
}

}  // namespace onednn
}  // namespace dflow
