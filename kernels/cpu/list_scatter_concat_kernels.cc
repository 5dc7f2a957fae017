// TensorList kernels that move whole tensors in and out of lists: TensorListSplit,
// TensorListConcat/TensorListConcatV2 (TF 2's TensorArray.split/.concat), TensorListScatter,
// TensorListScatterV2 and TensorListScatterIntoExistingList (TensorArray.unstack/.scatter
// inside tf.function), with TF 2.21's semantics and error texts.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/tensor_list.h"
#include "kernels/cpu/tensor_list_util.h"

namespace dflow {
namespace {

using tensor_list::CheckDtype;
using tensor_list::ListInput;
using tensor_list::Merge;
using tensor_list::OutputList;
using tensor_list::ShapeInput;
using tensor_list::TakeList;

PartialShape DimsFrom(absl::Span<const int64_t> dims) {
  return PartialShape(std::vector<int64_t>(dims.begin(), dims.end()));
}

absl::Status CheckAtLeastVector(const Tensor& t) {
  if (t.shape().dims() >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor must be at least a vector, but saw shape: ", t.shape().DebugString()));
}

// Rows [begin, begin + rows) of `t` as a new tensor.
absl::StatusOr<Tensor> Rows(OpKernelContext* ctx, const Tensor& t, int64_t begin, int64_t rows) {
  std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  dims[0] = rows;
  return CopyRows(ctx, t, begin, TensorShape(absl::MakeConstSpan(dims)));
}

// Row `i` of `t` as a tensor of t's shape without its first dim.
absl::StatusOr<Tensor> Row(OpKernelContext* ctx, const Tensor& t, int64_t i) {
  return CopyRows(ctx, t, i, TensorShape(t.shape().dim_sizes().subspan(1)));
}

absl::Status CheckCopyable(DataType dtype) {
  if (DataTypeSize(dtype) > 0) return absl::OkStatus();
  return absl::UnimplementedError(
      absl::StrCat("TensorList ops here move only numeric and bool tensors, not ",
                   DataTypeString(dtype)));
}

class TensorListSplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(t));
    OP_REQUIRES_OK(ctx, CheckCopyable(t.dtype()));
    OP_ASSIGN_OR_RETURN(ctx, PartialShape element_shape, ShapeInput(*ctx, 1));
    const PartialShape rest = DimsFrom(t.shape().dim_sizes().subspan(1));
    if (element_shape.rank_known()) {
      const std::vector<int64_t>& d = element_shape.dims();
      OP_REQUIRES(ctx, !d.empty() && DimsFrom(absl::MakeConstSpan(d).subspan(1)).IsCompatibleWith(rest),
                  absl::InvalidArgumentError(absl::StrCat(
                      "tensor shape ", t.shape().DebugString(),
                      " is not compatible with element_shape ", element_shape.ToString())));
    }
    const Tensor& lengths = ctx->input(2);
    OP_REQUIRES(ctx, lengths.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Expected lengths to be a vector, received shape: ",
                    lengths.shape().DebugString())));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = t.dtype();
    list->element_shape = element_shape;
    const int64_t size = t.shape().dim_size(0);
    int64_t begin = 0;
    for (int64_t i = 0; i < lengths.NumElements(); ++i) {
      const int64_t length = lengths.data<int64_t>()[i];
      OP_REQUIRES(ctx, length >= 0,
                  absl::InvalidArgumentError(absl::StrCat("Invalid value in lengths: ", length)));
      if (length > size - begin) {
        int64_t end;  // saturated: the message must not overflow either
        if (__builtin_add_overflow(begin, length, &end)) end = INT64_MAX;
        ctx->SetStatus(absl::InvalidArgumentError(absl::StrCat(
            "Attempting to slice [", begin, ", ", end, "] from tensor with length ", size)));
        return;
      }
      OP_ASSIGN_OR_RETURN(ctx, Tensor element, Rows(ctx, t, begin, length));
      list->tensors.push_back(std::move(element));
      begin += length;
    }
    OP_REQUIRES(ctx, begin == size,
                absl::InvalidArgumentError(absl::StrCat("Unused values in tensor. Length of tensor: ",
                                                        size, " Values used: ", begin)));
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(list)));
  }
};

// TensorListConcat (element_shape attr) and TensorListConcatV2 (element_shape and
// leading_dims inputs): the elements joined along dim 0, plus each one's length. Unset
// elements are zeros whose first dim comes from leading_dims, or from the first dim all
// set elements share.
class TensorListConcatOp : public OpKernel {
 public:
  explicit TensorListConcatOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("element_dtype", &dtype_));
    v2_ = type_string() == "TensorListConcatV2";
    if (!v2_ && ctx->HasAttr("element_shape")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("element_shape", &attr_shape_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    OP_REQUIRES_OK(ctx, CheckCopyable(dtype_));
    PartialShape element_shape = attr_shape_;
    if (v2_) {
      OP_ASSIGN_OR_RETURN(ctx, PartialShape requested, ShapeInput(*ctx, 1));
      OP_ASSIGN_OR_RETURN(ctx, element_shape, Merge(*ctx, list->element_shape, requested));
      OP_REQUIRES(ctx, !element_shape.rank_known() || element_shape.rank() >= 1,
                  absl::InvalidArgumentError(
                      "Concat requires elements to be at least vectors, found scalars instead."));
    }
    int64_t first_dim = -1;
    PartialShape rest;  // element shape except its first dim
    if (element_shape.rank_known() && element_shape.rank() >= 1) {
      if (v2_) first_dim = element_shape.dim(0);
      rest = DimsFrom(absl::MakeConstSpan(element_shape.dims()).subspan(1));
    }
    OP_REQUIRES(ctx, !list->tensors.empty() || rest.IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    "All except the first dimension must be fully defined when concating an "
                    "empty tensor list. element_shape: ", rest.ToString())));
    OP_REQUIRES_OK(ctx, CheckElements(*ctx, *list, &first_dim, &rest));
    OP_REQUIRES(ctx, rest.IsFullyDefined(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to concat list with only uninitialized tensors but "
                    "element_shape_except_first_dim_ is not fully defined: ", rest.ToString())));
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> lengths, Lengths(*ctx, *list, first_dim));
    OP_REQUIRES_OK(ctx, Output(ctx, *list, lengths, rest));
  }

 private:
  // Checks set elements against `rest` (merging their shapes into it) and `first_dim`;
  // when first_dim is unknown, infers it if all set elements share one.
  static absl::Status CheckElements(const OpKernelContext& ctx, const TensorList& list,
                                    int64_t* first_dim, PartialShape* rest) {
    const bool infer = *first_dim == -1;
    int64_t inferred = *first_dim;
    bool agree = true;
    for (size_t i = 0; i < list.tensors.size(); ++i) {
      const Tensor& t = list.tensors[i];
      if (!t.IsInitialized()) continue;
      if (t.shape().dims() == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Concat saw a scalar shape at index ", i, " but requires at least vectors."));
      }
      DFLOW_ASSIGN_OR_RETURN(*rest, Merge(ctx, *rest, DimsFrom(t.shape().dim_sizes().subspan(1))));
      const int64_t d = t.shape().dim_size(0);
      if (*first_dim != -1 && *first_dim != d) {
        return absl::InvalidArgumentError(absl::StrCat(
            "First entry of element_shape input does not match the first dim of list element "
            "at index: ", i, " Expected: ", *first_dim, " Actual: ", d));
      }
      if (infer && agree) {
        if (inferred == -1) {
          inferred = d;
        } else if (inferred != d) {
          inferred = -1;
          agree = false;
        }
      }
    }
    *first_dim = inferred;
    return absl::OkStatus();
  }

  // Each element's length: its first dim when set, else leading_dims[i] or `first_dim`.
  absl::StatusOr<std::vector<int64_t>> Lengths(const OpKernelContext& ctx, const TensorList& list,
                                               int64_t first_dim) const {
    std::vector<int64_t> lengths;
    if (v2_ && ctx.input(2).shape().dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "leading_dims must be a vector, got shape ", ctx.input(2).shape().DebugString()));
    }
    const int64_t given = v2_ ? ctx.input(2).NumElements() : 0;
    for (size_t i = 0; i < list.tensors.size(); ++i) {
      const Tensor& t = list.tensors[i];
      if (t.IsInitialized()) {
        lengths.push_back(t.shape().dim_size(0));
      } else if (static_cast<int64_t>(i) >= given && first_dim != -1) {
        lengths.push_back(first_dim);
      } else if (!v2_) {
        return absl::InvalidArgumentError(
            "Concating lists with uninitialized tensors is not supported in this version of "
            "TensorListConcat. Consider updating your GraphDef to run the newer version.");
      } else if (static_cast<int64_t>(i) >= given) {
        return absl::InvalidArgumentError(absl::StrCat(
            "List contains uninitialized tensor at index ", i, " but leading_dims has only ",
            given, " elements."));
      } else {
        const int64_t d = ctx.input(2).data<int64_t>()[i];
        if (d < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("leading_dims[", i, "] = ", d, " is negative"));
        }
        lengths.push_back(d);
      }
    }
    return lengths;
  }

  static absl::Status Output(OpKernelContext* ctx, const TensorList& list,
                             const std::vector<int64_t>& lengths, const PartialShape& rest) {
    const int64_t n = static_cast<int64_t>(lengths.size());
    DFLOW_ASSIGN_OR_RETURN(Tensor * lengths_out, ctx->allocate_output(1, TensorShape({n})));
    int64_t rows = 0;
    for (int64_t i = 0; i < n; ++i) {
      lengths_out->data<int64_t>()[i] = lengths[i];
      if (__builtin_add_overflow(rows, lengths[i], &rows)) {
        return absl::InvalidArgumentError("TensorListConcat: the lengths overflow int64");
      }
    }
    std::vector<int64_t> dims = {rows};
    for (int64_t d : rest.dims()) dims.push_back(d);
    DFLOW_ASSIGN_OR_RETURN(const TensorShape shape, OutputShape(*ctx, dims));
    DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const size_t row_bytes = DimProduct(out->shape(), 1, out->shape().dims()) *
                             DataTypeSize(out->dtype());
    char* dst = static_cast<char*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& t = list.tensors[i];
      const size_t bytes = lengths[i] * row_bytes;
      if (bytes == 0) continue;
      if (t.IsInitialized()) {
        std::memcpy(dst, t.raw_data(), bytes);
      } else {
        std::memset(dst, 0, bytes);
      }
      dst += bytes;
    }
    return absl::OkStatus();
  }

  DataType dtype_ = DT_INVALID;
  PartialShape attr_shape_;
  bool v2_ = false;
};

// Writes row i of `t` to element indices[i] of `list` (the last write wins on repeats).
absl::Status Scatter(OpKernelContext* ctx, const Tensor& t, const Tensor& indices,
                     TensorList* list) {
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    DFLOW_ASSIGN_OR_RETURN(Tensor row, Row(ctx, t, i));
    list->tensors[indices.data<int32_t>()[i]] = std::move(row);
  }
  return absl::OkStatus();
}

absl::Status CheckScatterIndices(const Tensor& t, const Tensor& indices) {
  if (indices.NumElements() != t.shape().dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid number of rows in input tensor. Expected: ", indices.NumElements(),
        " Actual: ", t.shape().dim_size(0)));
  }
  const int32_t* at = indices.data<int32_t>();
  if (std::any_of(at, at + indices.NumElements(), [](int32_t i) { return i < 0; })) {
    return absl::InvalidArgumentError("Indices in TensorListScatter must all be non-negative.");
  }
  return absl::OkStatus();
}

int32_t MaxIndex(const Tensor& indices) {
  const int32_t* at = indices.data<int32_t>();
  return indices.NumElements() == 0 ? -1 : *std::max_element(at, at + indices.NumElements());
}

// TensorListScatter and TensorListScatterV2: a new list of max(num_elements, max index + 1)
// elements (V1: max index + 1) holding the rows of `tensor` at `indices`.
class TensorListScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(t));
    OP_REQUIRES_OK(ctx, CheckCopyable(t.dtype()));
    OP_ASSIGN_OR_RETURN(ctx, PartialShape element_shape, ShapeInput(*ctx, 2));
    const PartialShape rest = DimsFrom(t.shape().dim_sizes().subspan(1));
    OP_REQUIRES(ctx, element_shape.IsCompatibleWith(rest),
                absl::InvalidArgumentError(absl::StrCat(
                    "Specified a list with shape ", element_shape.ToString(),
                    " from a tensor with shape ", rest.ToString())));
    OP_REQUIRES_OK(ctx, CheckScatterIndices(t, indices));
    int64_t size = MaxIndex(indices) + 1;
    if (ctx->num_inputs() > 3) {  // TensorListScatterV2
      OP_REQUIRES(ctx, ctx->input(3).shape().dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "num_elements must be a scalar, got shape ",
                      ctx->input(3).shape().DebugString())));
      const int64_t num_elements = tensor_list::IntScalar(ctx->input(3));
      OP_REQUIRES(ctx, num_elements == -1 || num_elements >= size,
                  absl::InvalidArgumentError(absl::StrCat(
                      "TensorListScatter: Trying to scatter at index ", size - 1,
                      " in list with size ", num_elements)));
      size = std::max(size, num_elements);
    }
    OP_REQUIRES_OK(ctx, tensor_list::CheckListSize(*ctx, size));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = t.dtype();
    list->element_shape = element_shape;
    list->tensors.resize(size);
    OP_REQUIRES_OK(ctx, Scatter(ctx, t, indices, list.get()));
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(list)));
  }
};

// TensorListScatterIntoExistingList: the input list with rows of `tensor` set at
// `indices`, grown to max index + 1 when needed.
class TensorListScatterIntoExistingListOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    const Tensor& t = ctx->input(1);
    const Tensor& indices = ctx->input(2);
    OP_REQUIRES(ctx, t.dtype() == list->element_dtype,
                absl::InvalidArgumentError(absl::StrCat(
                    "Invalid data types; input tensor type: ", DataTypeString(t.dtype()),
                    " list element_type: ", DataTypeString(list->element_dtype))));
    OP_REQUIRES_OK(ctx, CheckAtLeastVector(t));
    OP_REQUIRES_OK(ctx, CheckCopyable(t.dtype()));
    const PartialShape rest = DimsFrom(t.shape().dim_sizes().subspan(1));
    OP_REQUIRES(ctx, list->element_shape.IsCompatibleWith(rest),
                absl::InvalidArgumentError(absl::StrCat(
                    "Tried to scatter a tensor with element shape ", rest.ToString(),
                    " into a list with element shape ", list->element_shape.ToString())));
    OP_REQUIRES_OK(ctx, CheckScatterIndices(t, indices));
    const int64_t needed = MaxIndex(indices) + 1;
    OP_REQUIRES_OK(ctx, tensor_list::CheckListSize(*ctx, needed));
    std::shared_ptr<TensorList> out = TakeList(ctx, 0, *list);
    if (needed > static_cast<int64_t>(out->tensors.size())) out->tensors.resize(needed);
    OP_REQUIRES_OK(ctx, Scatter(ctx, t, indices, out.get()));
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
  }
};

}  // namespace

absl::Status RegisterListScatterConcatKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListSplitOp>(CpuKernel("TensorListSplit")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListConcatOp>(CpuKernel("TensorListConcat")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListConcatOp>(CpuKernel("TensorListConcatV2")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListScatterOp>(CpuKernel("TensorListScatter")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListScatterOp>(CpuKernel("TensorListScatterV2")));
  return r->Register<TensorListScatterIntoExistingListOp>(
      CpuKernel("TensorListScatterIntoExistingList"));
}

}  // namespace dflow
