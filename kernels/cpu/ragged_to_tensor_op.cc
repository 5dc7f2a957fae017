// RaggedTensorToTensor: the dense (padded or truncated) form of a ragged tensor, as TF
// 2.21's ragged_tensor_to_tensor_op.cc computes it. RaggedTensor.to_tensor writes
// row_partition_types ["ROW_SPLITS", ...] (from row splits) or ["FIRST_DIM_SIZE",
// "VALUE_ROWIDS", ...] (from value_rowids); `shape` is a vector with -1 for unknown dims
// or the scalar -1 (unknown rank). Unknown dims become the first dimension's row count
// and each ragged dimension's longest row; rows and dims beyond `shape` are dropped, and
// the rest is filled with default_value broadcast to one value element.
//
// TF's order of checks and its texts are kept (including its forward alignment of
// default_value's dims with flat_values' dims 1.. and the double space in "rank = N  must
// be less"). Where TF reads or writes out of bounds (row partitions that point past the
// values, unsorted value_rowids) this kernel fails with an INVALID_ARGUMENT instead.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

enum class PartitionType { kFirstDimSize, kValueRowids, kRowSplits };

constexpr int kShapeInput = 0;
constexpr int kValuesInput = 1;
constexpr int kDefaultInput = 2;
constexpr int kFirstPartitionInput = 3;

// A shape whose rank or dims may be unknown (-1), as TF's TensorShapeProto here.
struct Partial {
  bool unknown_rank = false;
  std::vector<int64_t> dims;
};

std::string DebugString(const Partial& s) {
  if (s.unknown_rank) return "<unknown>";
  std::vector<std::string> dims;
  for (int64_t d : s.dims) dims.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

Partial Known(const TensorShape& shape) {
  Partial p;
  p.dims.assign(shape.dim_sizes().begin(), shape.dim_sizes().end());
  return p;
}

// TF's TensorShapeFromTensor.
absl::StatusOr<Partial> ShapeFromTensor(const Tensor& t) {
  Partial out;
  if (t.shape().dims() == 0) {
    if (ReadIndices(t)[0] == -1) {
      out.unknown_rank = true;
      return out;
    }
    return absl::InvalidArgumentError(
        "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
  }
  if (t.shape().dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shape must be at most rank 1 but is rank ", t.shape().dims()));
  }
  out.dims = ReadIndices(t);
  for (int64_t d : out.dims) {
    if (d < -1) return absl::InvalidArgumentError(absl::StrCat("Dimension ", d, " must be >= -1"));
  }
  return out;
}

absl::Status ValidateDefaultValueShape(const Partial& default_shape, const Partial& value_shape) {
  const int default_ndims = static_cast<int>(default_shape.dims.size());
  const int values_ndims = static_cast<int>(value_shape.dims.size());
  if (default_ndims >= values_ndims) {
    return absl::InvalidArgumentError(absl::StrCat(
        "default_value.shape=", DebugString(default_shape),
        " and rt_input.flat_values.shape=", DebugString(value_shape),
        " are incompatible: default_value.rank = ", default_ndims,
        "  must be less than rt_input.flat_values.rank = ", values_ndims));
  }
  for (int i = 0; i < std::min(default_ndims, values_ndims - 1); ++i) {
    const int64_t default_dim = default_shape.dims[i];
    const int64_t value_dim = value_shape.dims[i + 1];
    if (default_dim >= 0 && value_dim >= 0 && default_dim != 1 && default_dim != value_dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "default_value.shape=", DebugString(default_shape),
          " and rt_input.flat_values.shape=", DebugString(value_shape),
          " are incompatible: default_value.shape[", i - default_ndims, "] = ", default_dim,
          " but rt_input.flat_values.shape[", i - default_ndims, "] = ", value_dim));
    }
  }
  return absl::OkStatus();
}

// TF's CombineRaggedTensorToTensorShapes with a known value shape.
absl::StatusOr<std::vector<int64_t>> CombineShapes(int ragged_rank, const Partial& shape,
                                                   const Partial& value_shape) {
  const int value_rank = static_cast<int>(value_shape.dims.size());
  std::vector<int64_t> out =
      shape.unknown_rank ? std::vector<int64_t>(ragged_rank + value_rank, -1) : shape.dims;
  if (ragged_rank + value_rank != static_cast<int>(out.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rt_input.shape and shape=", DebugString(shape),
        " are incompatible: rt_input.rank = ", ragged_rank + value_rank,
        " but shape.rank = ", out.size()));
  }
  for (int i = 1; i < value_rank; ++i) {
    const int64_t value_dim = value_shape.dims[i];
    int64_t& out_dim = out[out.size() - value_rank + i];
    if (value_dim < 0) continue;
    if (out_dim >= 0 && out_dim != value_dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rt_input.shape and shape=", DebugString(shape), " are incompatible: rt_input.shape[",
          i + ragged_rank, "] = ", value_dim, " but shape[", i + ragged_rank, "] = ", out_dim));
    }
    out_dim = value_dim;
  }
  return out;
}

int64_t MaxWidthRowSplits(const std::vector<int64_t>& splits) {
  int64_t widest = 0;
  for (size_t i = 0; i + 1 < splits.size(); ++i) {
    widest = std::max(widest, splits[i + 1] - splits[i]);
  }
  return widest;
}

int64_t MaxWidthValueRowids(const std::vector<int64_t>& rowids) {
  const int64_t n = static_cast<int64_t>(rowids.size());
  if (n == 0) return 0;
  int64_t run_start = 0, widest = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (rowids[i] != rowids[run_start]) {
      widest = std::max(widest, i - run_start);
      run_start = i;
    }
  }
  return std::max(widest, n - run_start);
}

// Maps each child row's values to output positions (-1: dropped), from the parents'.
absl::Status OutputIndexRowSplits(const std::vector<int64_t>& splits,
                                  const std::vector<int64_t>& parent, int64_t multiplier,
                                  int64_t size, std::vector<int64_t>* result) {
  const int64_t n = static_cast<int64_t>(splits.size());
  if (n - 1 > static_cast<int64_t>(parent.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Row partition size is greater than output size: ", n - 1, " > ", parent.size()));
  }
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t length = splits[i + 1] - splits[i];
    int64_t kept = std::min(size, length);
    int64_t index = parent[i];
    if (index == -1) kept = 0;
    for (int64_t j = 0; j < kept; ++j, index += multiplier) result->push_back(index);
    for (int64_t j = 0; j < length - kept; ++j) result->push_back(-1);
  }
  if (n > 0 && static_cast<int64_t>(result->size()) != splits[n - 1]) {
    return absl::InvalidArgumentError("Invalid row split size.");
  }
  return absl::OkStatus();
}

absl::Status OutputIndexValueRowids(const std::vector<int64_t>& rowids,
                                    const std::vector<int64_t>& parent, int64_t multiplier,
                                    int64_t size, std::vector<int64_t>* result) {
  if (rowids.empty()) return absl::OkStatus();
  const int64_t parents = static_cast<int64_t>(parent.size());
  // TF compares as unsigned, so negative ids fail too.
  auto out_of_range = [&](int64_t id) { return id < 0 || id >= parents; };
  int64_t row = rowids[0];
  if (out_of_range(row)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Got current_value_rowid=", row, " which is not less than ", parents));
  }
  int64_t column = 0;
  int64_t index = parent[row];
  result->push_back(index);
  for (size_t i = 1; i < rowids.size(); ++i) {
    const int64_t next = rowids[i];
    if (next == row) {
      if (index >= 0) {
        ++column;
        index = column < size ? index + multiplier : -1;
      }
    } else {
      column = 0;
      row = next;
      if (out_of_range(next)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Got next_value_rowid=", next, " which is not less than ", parents));
      }
      index = parent[next];
    }
    result->push_back(index);
  }
  return absl::OkStatus();
}

// `status` with the op's name in front, as KernelError's.
absl::Status Named(const OpKernelContext& ctx, const absl::Status& status) {
  return status.ok() ? status : KernelError(ctx, status.message());
}

class RaggedTensorToTensorOp : public OpKernel {
 public:
  explicit RaggedTensorToTensorOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::vector<std::string> names;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("row_partition_types", &names));
    for (const std::string& name : names) {
      if (name == "FIRST_DIM_SIZE") {
        types_.push_back(PartitionType::kFirstDimSize);
      } else if (name == "VALUE_ROWIDS") {
        types_.push_back(PartitionType::kValueRowids);
      } else if (name == "ROW_SPLITS") {
        types_.push_back(PartitionType::kRowSplits);
      } else {
        OP_REQUIRES(ctx, false,
                    absl::InvalidArgumentError(
                        absl::StrCat("Unknown string for partition info type: ", name)));
      }
    }
    first_is_size_ = !types_.empty() && types_[0] == PartitionType::kFirstDimSize;
    ragged_rank_ = first_is_size_ ? static_cast<int>(types_.size()) - 1
                                  : static_cast<int>(types_.size());
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& first_partition = ctx->input(kFirstPartitionInput);
    OP_REQUIRES(ctx, first_partition.NumElements() > 0,
                KernelError(*ctx, "Invalid first partition input. Tensor requires at least "
                                  "one element."));
    OP_REQUIRES(ctx, !types_.empty(), KernelError(*ctx, "No row_partition_types given."));
    OP_REQUIRES(ctx, ctx->num_inputs() == kFirstPartitionInput + static_cast<int>(types_.size()),
                KernelError(*ctx, "row_partition_types has ", types_.size(),
                            " entries but there are ", ctx->num_inputs() - kFirstPartitionInput,
                            " row_partition_tensors"));
    int64_t first_dim = 0;
    switch (types_[0]) {
      case PartitionType::kFirstDimSize: first_dim = ReadIndices(first_partition)[0]; break;
      case PartitionType::kValueRowids:
        ctx->SetStatus(KernelError(*ctx, "Cannot handle VALUE_ROWIDS in first dimension."));
        return;
      case PartitionType::kRowSplits:
        OP_REQUIRES(ctx, first_partition.shape().dims() >= 1,
                    KernelError(*ctx, "Row partition must be a vector."));
        first_dim = first_partition.shape().dim_size(0) - 1;
        break;
    }
    // The ragged dimensions' partitions, outermost first.
    std::vector<std::vector<int64_t>> partitions;
    for (int i = 0; i < ragged_rank_; ++i) {
      const int input = kFirstPartitionInput + (first_is_size_ ? 1 : 0) + i;
      partitions.push_back(ReadIndices(ctx->input(input)));
    }
    auto type_of = [&](int dim) { return types_[dim + (first_is_size_ ? 1 : 0)]; };
    for (int i = 0; i < ragged_rank_; ++i) {
      OP_REQUIRES(ctx, type_of(i) != PartitionType::kFirstDimSize,
                  KernelError(*ctx, "Cannot handle partition type FIRST_DIM_SIZE"));
    }

    const Tensor& values = ctx->input(kValuesInput);
    const Tensor& default_value = ctx->input(kDefaultInput);
    const Partial value_shape = Known(values.shape());
    OP_REQUIRES_OK(ctx, Named(*ctx, ValidateDefaultValueShape(Known(default_value.shape()),
                                                              value_shape)));
    absl::StatusOr<Partial> shape = ShapeFromTensor(ctx->input(kShapeInput));
    OP_REQUIRES_OK(ctx, Named(*ctx, shape.status()));
    absl::StatusOr<std::vector<int64_t>> combined =
        CombineShapes(ragged_rank_, *shape, value_shape);
    OP_REQUIRES_OK(ctx, Named(*ctx, combined.status()));
    std::vector<int64_t>& size = *combined;
    if (size[0] < 0) size[0] = first_dim;
    for (int i = 1; i <= ragged_rank_; ++i) {
      if (size[i] >= 0) continue;
      const std::vector<int64_t>& partition = partitions[i - 1];
      size[i] = type_of(i - 1) == PartitionType::kRowSplits ? MaxWidthRowSplits(partition)
                                                            : MaxWidthValueRowids(partition);
    }
    std::vector<int64_t> multiplier(ragged_rank_ + 1, 1);
    for (int i = ragged_rank_ - 1; i >= 0; --i) multiplier[i] = multiplier[i + 1] * size[i + 1];
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output,
                        ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(size))));
    if (output->NumElements() == 0) return;

    // Output position (in value elements) of every value row, -1 where dropped.
    std::vector<int64_t> index, next;
    const int64_t kept_rows = std::min(first_dim, size[0]);
    for (int64_t i = 0; i < first_dim; ++i) index.push_back(i < kept_rows ? i * multiplier[0] : -1);
    for (int i = 1; i <= ragged_rank_; ++i) {
      next.clear();
      if (type_of(i - 1) == PartitionType::kRowSplits) {
        OP_REQUIRES_OK(ctx, Named(*ctx, OutputIndexRowSplits(partitions[i - 1], index,
                                                             multiplier[i], size[i], &next)));
      } else {
        OP_REQUIRES_OK(ctx, Named(*ctx, OutputIndexValueRowids(partitions[i - 1], index,
                                                               multiplier[i], size[i], &next)));
      }
      index.swap(next);
    }
    const bool ok = DispatchByElementSize(values.dtype(), [&](auto zero) {
      SetOutput<decltype(zero)>(ctx, index, values, default_value, output);
    });
    OP_REQUIRES(ctx, ok, KernelError(*ctx, "unsupported dtype ", DataTypeString(values.dtype())));
  }

 private:
  // TF's SetOutput: copies runs of values whose output positions are consecutive and pads
  // the gaps (and the tail) with the broadcast default value.
  template <typename T>
  void SetOutput(OpKernelContext* ctx, const std::vector<int64_t>& index, const Tensor& values,
                 const Tensor& default_value, Tensor* output) {
    const TensorShape& out_shape = output->shape();
    const int64_t element = DimProduct(out_shape, ragged_rank_ + 1, out_shape.dims());
    const int64_t rows = output->NumElements() / element;
    const int64_t value_rows = values.shape().dims() == 0 ? 0 : values.shape().dim_size(0);
    const T* src_base = values.data<T>();
    T* out = output->data<T>();
    // default_value broadcast to one element (its dims align with the element's leading
    // dims, as TF validated; a size-1 dim repeats).
    std::vector<T> fill(element);
    const T* dflt = default_value.data<T>();
    if (default_value.NumElements() == element) {
      std::copy(dflt, dflt + element, fill.begin());
    } else if (default_value.NumElements() == 1) {
      std::fill(fill.begin(), fill.end(), dflt[0]);
    } else {
      const int dd = default_value.shape().dims();
      const int ed = out_shape.dims() - ragged_rank_ - 1;
      for (int d = ed - 1, k = dd - 1; k >= 0; --d, --k) {
        const int64_t ddim = default_value.shape().dim_size(k);
        OP_REQUIRES(ctx, d >= 0 && (ddim == 1 || ddim == out_shape.dim_size(ragged_rank_ + 1 + d)),
                    KernelError(*ctx, "Error broadcasting default_value"));
      }
      // Right-align, as BCast does.
      for (int64_t e = 0; e < element; ++e) {
        int64_t rest = e, src = 0, stride = 1;
        for (int d = ed - 1, k = dd - 1; d >= 0; --d, --k) {
          const int64_t dim = out_shape.dim_size(ragged_rank_ + 1 + d);
          const int64_t coord = rest % dim;
          rest /= dim;
          if (k >= 0) {
            const int64_t ddim = default_value.shape().dim_size(k);
            src += (ddim == 1 ? 0 : coord) * stride;
            stride *= ddim;
          }
        }
        fill[e] = dflt[src];
      }
    }
    auto pad = [&](int64_t from, int64_t to) {
      for (int64_t r = from; r < to; ++r) std::copy(fill.begin(), fill.end(), out + r * element);
    };
    const int64_t n = static_cast<int64_t>(index.size());
    int64_t src_start = 0, dst_start = 0, dst_end = 0;
    for (int64_t src_i = 0; src_i <= n; ++src_i) {
      int64_t dst_i = src_i < n ? index[src_i] : -1;
      if (dst_i == dst_end) {
        ++dst_end;
        continue;
      }
      if (dst_start < dst_end) {
        OP_REQUIRES(ctx, dst_end <= rows && src_start + (dst_end - dst_start) <= value_rows,
                    KernelError(*ctx, "row partitions point past the values or the output (",
                                value_rows, " value rows)"));
        const T* src = src_base + src_start * element;
        std::copy(src, src + (dst_end - dst_start) * element, out + dst_start * element);
      }
      if (src_i >= n) dst_i = rows;
      if (dst_i > dst_end) {
        OP_REQUIRES(ctx, dst_i <= rows, KernelError(*ctx, "row partitions point past the output"));
        pad(dst_end, dst_i);
        dst_end = dst_i;
      }
      if (dst_i < 0) {
        src_start = src_i + 1;
        dst_start = dst_end;
      } else {
        src_start = src_i;
        dst_start = dst_end;
        dst_end = dst_start + 1;
      }
    }
  }

  std::vector<PartitionType> types_;
  bool first_is_size_ = false;
  int ragged_rank_ = 0;
};

}  // namespace

absl::Status RegisterRaggedToTensorKernels(KernelRegistry* registry) {
  return registry->Register<RaggedTensorToTensorOp>(
      CpuKernel("RaggedTensorToTensor")
          .TypeConstraint("T", PodAndStringTypes())
          .TypeConstraint("Tindex", IndexTypes())
          .TypeConstraint("Tshape", IndexTypes()));
}

}  // namespace dflow
