#include "kernels/cpu/tensor_list_util.h"

#include <cstring>
#include <utility>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "runtime/variant.h"

namespace dflow {
namespace tensor_list {

// An element_shape input: a scalar -1 (unknown rank) or a vector with -1 for unknown dims.
absl::StatusOr<PartialShape> ShapeInput(const OpKernelContext& ctx, int index) {
  const Tensor& t = ctx.input(index);
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return KernelError(ctx, "element_shape must be int32 or int64, not ", DataTypeString(t.dtype()));
  }
  std::vector<int64_t> dims = ReadIndices(t);
  if (t.shape().dims() == 0) {
    if (dims[0] != -1) return KernelError(ctx, "a scalar element_shape must be -1, not ", dims[0]);
    return PartialShape();
  }
  for (int64_t& d : dims) d = d < 0 ? -1 : d;
  return PartialShape(std::move(dims));
}

int64_t IntScalar(const Tensor& t) {
  return t.dtype() == DT_INT64 ? t.scalar<int64_t>() : t.scalar<int32_t>();
}

// Dims known in either, checked to agree where both know them.
absl::StatusOr<PartialShape> Merge(const OpKernelContext& ctx, const PartialShape& a,
                                   const PartialShape& b) {
  if (!a.rank_known()) return b;
  if (!b.rank_known()) return a;
  if (a.rank() != b.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PartialTensorShape: Incompatible ranks during merge: ", a.rank(), " vs. ", b.rank()));
  }
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) {
    if (a.dim(i) >= 0 && b.dim(i) >= 0 && a.dim(i) != b.dim(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PartialTensorShape: Incompatible shapes during merge: ", a.ToString(), " vs. ",
          b.ToString()));
    }
    dims[i] = a.dim(i) >= 0 ? a.dim(i) : b.dim(i);
  }
  return PartialShape(std::move(dims));
}

absl::StatusOr<const TensorList*> ListInput(const OpKernelContext& ctx, int index) {
  const Tensor& t = ctx.input(index);
  if (t.dtype() != DT_VARIANT || t.NumElements() != 1) {
    return KernelError(ctx, "input ", index, " must be a scalar variant (a TensorList), not ",
                       DataTypeString(t.dtype()), t.shape().DebugString());
  }
  const TensorList* list = t.data<Variant>()[0].get<TensorList>();
  if (list == nullptr) {
    return KernelError(ctx, "input ", index, " is not a TensorList but ",
                       t.data<Variant>()[0].TypeName());
  }
  return list;
}

absl::Status CheckDtype(const OpKernelContext& ctx, const TensorList& list, DataType dtype) {
  if (list.element_dtype == dtype) return absl::OkStatus();
  return KernelError(ctx, "Invalid data types; op elements ", DataTypeString(dtype),
                     " but list elements ", DataTypeString(list.element_dtype));
}

// A copy of the input list to modify; its tensors are moved out instead of copied when the
// input handle holds the only reference (the old list is then left empty, unseen). Safe
// because the executor moves a slot into its last consumer and keeps an extra reference
// wherever a value outlives the step (feeds, _Arg/_Retval, constant Enters), and because
// nothing copies Variant elements between buffers (DataTypeSize rejects variant). The
// buffer's refcount is the ordered check; use_count() alone would be a relaxed read.
std::shared_ptr<TensorList> TakeList(OpKernelContext* ctx, int index, const TensorList& list) {
  auto out = std::make_shared<TensorList>();
  out->element_dtype = list.element_dtype;
  out->element_shape = list.element_shape;
  out->max_num_elements = list.max_num_elements;
  const Tensor& handle = ctx->input(index);
  if (handle.IsSoleOwner() && handle.data<Variant>()[0].SoleOwner()) {
    out->tensors = std::move(const_cast<TensorList&>(list).tensors);
  } else {
    out->tensors = list.tensors;
  }
  return out;
}

// An item must fit the list's element shape (TF: "Tried to set/push an item ...").
absl::Status CheckItemShape(const OpKernelContext& ctx, const TensorList& list,
                            const Tensor& item, absl::string_view verb) {
  const PartialShape shape = item.shape().ToPartialShape();
  if (list.element_shape.IsCompatibleWith(shape)) return absl::OkStatus();
  return KernelError(ctx, "Tried to ", verb, " an item with incompatible shape ",
                     item.shape().DebugString(), " into a list with element shape ",
                     list.element_shape.ToString());
}

absl::Status OutputList(OpKernelContext* ctx, int index, std::shared_ptr<const TensorList> list) {
  DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(index, TensorShape()));
  out->data<Variant>()[0] = Variant(std::move(list));
  return absl::OkStatus();
}

// Zeros of `shape` for an element never set, which needs a fully defined shape.
absl::StatusOr<Tensor> Zeros(OpKernelContext* ctx, DataType dtype, const PartialShape& shape) {
  if (!shape.IsFullyDefined()) {
    return KernelError(*ctx, "Trying to read an uninitialized tensor but element_shape is not "
                             "fully defined: ", shape.ToString(),
                       " and no list element is set.");
  }
  DFLOW_ASSIGN_OR_RETURN(TensorShape dims, TensorShape::Make(shape.dims()));
  DFLOW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(ctx->allocator(), dtype, dims));
  if (DataTypeSize(dtype) > 0 && t.TotalBytes() > 0) std::memset(t.raw_data(), 0, t.TotalBytes());
  return t;
}

absl::Status CheckListSize(const OpKernelContext& ctx, int64_t n) {
  if (n <= kMaxListElements) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      ctx.kernel().type_string(), ": a list of ", n, " elements is over dflow's limit of ",
      kMaxListElements));
}

// The shape of unset elements: the list's, merged with the op's element_shape input and
// with any element that is set.
absl::StatusOr<PartialShape> ElementShape(OpKernelContext* ctx, const TensorList& list,
                                          int shape_input) {
  PartialShape shape = list.element_shape;
  if (shape_input >= 0) {
    DFLOW_ASSIGN_OR_RETURN(PartialShape requested, ShapeInput(*ctx, shape_input));
    DFLOW_ASSIGN_OR_RETURN(shape, Merge(*ctx, shape, requested));
  }
  if (!shape.IsFullyDefined()) {
    for (const Tensor& t : list.tensors) {
      if (!t.IsInitialized()) continue;
      return t.shape().ToPartialShape();
    }
  }
  return shape;
}

}  // namespace tensor_list
}  // namespace dflow
