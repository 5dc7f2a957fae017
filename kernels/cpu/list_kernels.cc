// TensorList kernels (kernels/cpu/tensor_list.h): EmptyTensorList, TensorListReserve,
// TensorListFromTensor, TensorListGetItem, TensorListSetItem, TensorListStack,
// TensorListGather, TensorListLength, TensorListElementShape, TensorListPushBack,
// TensorListPopBack and TensorListResize, with TF 2.21's semantics and error texts.
//
// A handle is a scalar DT_VARIANT tensor. A kernel that changes a list takes the input's
// list apart when the handle is the last reference to it (a loop's list, passed from one
// iteration to the next), and copies the tensor handles (not their data) otherwise.
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
using tensor_list::CheckItemShape;
using tensor_list::ElementShape;
using tensor_list::IntScalar;
using tensor_list::ListInput;
using tensor_list::Merge;
using tensor_list::OutputList;
using tensor_list::ShapeInput;
using tensor_list::TakeList;
using tensor_list::Zeros;

class ListKernel : public CheapOpKernel {
 public:
  explicit ListKernel(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    if (ctx->HasAttr("element_dtype")) OP_REQUIRES_OK(ctx, ctx->GetAttr("element_dtype", &dtype_));
  }

 protected:
  DataType dtype_ = DT_INVALID;
};

class EmptyTensorListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    auto list = std::make_shared<TensorList>();
    list->element_dtype = dtype_;
    OP_ASSIGN_OR_RETURN(ctx, list->element_shape, ShapeInput(*ctx, 0));
    list->max_num_elements = static_cast<int>(IntScalar(ctx->input(1)));
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(list)));
  }
};

class TensorListReserveOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = IntScalar(ctx->input(1));
    OP_REQUIRES(ctx, n >= 0,
                KernelError(*ctx, "The num_elements to reserve must be a non negative number, "
                                  "but got ", n));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = dtype_;
    OP_ASSIGN_OR_RETURN(ctx, list->element_shape, ShapeInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, tensor_list::CheckListSize(*ctx, n));
    list->tensors.resize(n);
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(list)));
  }
};

class TensorListFromTensorOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    OP_REQUIRES(ctx, t.shape().dims() >= 1,
                KernelError(*ctx, "Tensor must be at least a vector, but saw shape: ",
                            t.shape().DebugString()));
    OP_REQUIRES(ctx, DataTypeSize(t.dtype()) > 0,
                KernelError(*ctx, "unsupported element dtype ", DataTypeString(t.dtype())));
    auto list = std::make_shared<TensorList>();
    list->element_dtype = t.dtype();
    const auto dims = t.shape().dim_sizes();
    std::vector<int64_t> element_dims(dims.begin() + 1, dims.end());
    OP_ASSIGN_OR_RETURN(ctx, PartialShape requested, ShapeInput(*ctx, 1));
    // TF keeps the requested shape (not merged with the tensor's), once they agree.
    OP_REQUIRES(ctx, requested.IsCompatibleWith(PartialShape(element_dims)),
                absl::InvalidArgumentError(absl::StrCat(
                    "Specified a list with shape ", requested.ToString(),
                    " from a tensor with shape ", PartialShape(element_dims).ToString())));
    list->element_shape = requested;
    const TensorShape element_shape(absl::MakeConstSpan(element_dims));
    for (int64_t i = 0; i < dims[0]; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor element, CopyRows(ctx, t, i, element_shape));
      list->tensors.push_back(std::move(element));
    }
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(list)));
  }
};

class TensorListGetItemOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    const int64_t index = IntScalar(ctx->input(1));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(ctx, index >= 0 && index < size,
                KernelError(*ctx, "Trying to access element ", index, " in a list with ", size,
                            " elements."));
    const Tensor& element = list->tensors[index];
    if (element.IsInitialized()) {
      ctx->set_output(0, element);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, PartialShape shape, ElementShape(ctx, *list, 2));
    OP_ASSIGN_OR_RETURN(ctx, Tensor zeros, Zeros(ctx, dtype_, shape));
    ctx->set_output(0, std::move(zeros));
  }
};

class TensorListSetItemOp : public ListKernel {
 public:
  explicit TensorListSetItemOp(OpKernelConstruction* ctx) : ListKernel(ctx) {
    if (ctx->HasAttr("resize_if_index_out_of_bounds")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("resize_if_index_out_of_bounds", &resize_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    const int64_t index = IntScalar(ctx->input(1));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(ctx, index >= 0 && (index < size || resize_),
                KernelError(*ctx, "Trying to modify element ", index, " in a list with ", size,
                            " elements."));
    const Tensor& item = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckItemShape(*ctx, *list, item, "set"));
    std::shared_ptr<TensorList> out = TakeList(ctx, 0, *list);
    if (index >= size) {
      OP_REQUIRES_OK(ctx, tensor_list::CheckListSize(*ctx, index + 1));
      out->tensors.resize(index + 1);
    }
    out->tensors[index] = item;
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
  }

 private:
  bool resize_ = false;
};

// [n, element...] from elements `indices` (all of them when null).
void StackElements(OpKernelContext* ctx, const TensorList& list, DataType dtype,
                   const std::vector<int64_t>* indices, int shape_input) {
  const int64_t n = indices == nullptr ? static_cast<int64_t>(list.tensors.size())
                                       : static_cast<int64_t>(indices->size());
  OP_ASSIGN_OR_RETURN(ctx, PartialShape shape, ElementShape(ctx, list, shape_input));
  if (!shape.IsFullyDefined()) {
    OP_REQUIRES(ctx, n > 0 || shape.rank_known(),
                KernelError(*ctx, "Tried to stack elements of an empty list with non-fully-"
                                  "defined element_shape: ", shape.ToString()));
  }
  std::vector<int64_t> dims = {n};
  if (shape.rank_known()) {
    for (int64_t d : shape.dims()) dims.push_back(d < 0 ? 0 : d);
  }
  const TensorShape element_shape(absl::MakeConstSpan(dims.data() + 1, dims.size() - 1));
  OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(dims))));
  const size_t bytes = element_shape.num_elements() * DataTypeSize(dtype);
  char* dst = static_cast<char*>(out->raw_data());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = indices == nullptr ? i : (*indices)[i];
    OP_REQUIRES(ctx, at >= 0 && at < static_cast<int64_t>(list.tensors.size()),
                KernelError(*ctx, "Trying to gather element ", at, " in a list with ",
                            list.tensors.size(), " elements."));
    const Tensor& element = list.tensors[at];
    if (!element.IsInitialized()) {
      OP_REQUIRES(ctx, shape.IsFullyDefined(),
                  KernelError(*ctx, "Trying to read an uninitialized tensor but element_shape "
                                    "is not fully defined: ", shape.ToString()));
      std::memset(dst + i * bytes, 0, bytes);
      continue;
    }
    OP_REQUIRES(ctx, element.shape() == element_shape,
                KernelError(*ctx, "Incompatible shapes in list: element ", at, " is ",
                            element.shape().DebugString(), ", expected ",
                            element_shape.DebugString()));
    std::memcpy(dst + i * bytes, element.raw_data(), bytes);
  }
}

class TensorListStackOp : public ListKernel {
 public:
  explicit TensorListStackOp(OpKernelConstruction* ctx) : ListKernel(ctx) {
    if (ctx->HasAttr("num_elements")) OP_REQUIRES_OK(ctx, ctx->GetAttr("num_elements", &num_elements_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    OP_REQUIRES(ctx, DataTypeSize(dtype_) > 0,
                KernelError(*ctx, "unsupported element dtype ", DataTypeString(dtype_)));
    OP_REQUIRES(ctx, num_elements_ < 0 || num_elements_ == static_cast<int64_t>(list->tensors.size()),
                KernelError(*ctx, "Operation expected a list with ", num_elements_,
                            " elements but got a list with ", list->tensors.size(), " elements."));
    StackElements(ctx, *list, dtype_, nullptr, 1);
  }

 private:
  int64_t num_elements_ = -1;
};

class TensorListGatherOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    const Tensor& indices = ctx->input(1);
    std::vector<int64_t> at;
    for (int64_t i = 0; i < indices.NumElements(); ++i) at.push_back(indices.data<int32_t>()[i]);
    StackElements(ctx, *list, dtype_, &at, 2);
  }
};

class TensorListLengthOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<int32_t>() = static_cast<int32_t>(list->tensors.size());
  }
};

class TensorListElementShapeOp : public CheapOpKernel {
 public:
  explicit TensorListElementShapeOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape_type", &shape_type_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    const PartialShape& shape = list->element_shape;
    const std::vector<int64_t> dims = shape.rank_known() ? shape.dims() : std::vector<int64_t>{-1};
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out,
                        ctx->allocate_output(0, shape.rank_known()
                                                    ? TensorShape({static_cast<int64_t>(dims.size())})
                                                    : TensorShape()));
    for (size_t i = 0; i < dims.size(); ++i) {
      if (shape_type_ == DT_INT64) {
        out->data<int64_t>()[i] = dims[i];
      } else {
        out->data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
      }
    }
  }

 private:
  DataType shape_type_ = DT_INT32;
};

class TensorListPushBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    OP_REQUIRES(ctx, list->max_num_elements < 0 ||
                         static_cast<int>(list->tensors.size()) < list->max_num_elements,
                KernelError(*ctx, "Tried to push item into a full list list size: ",
                            list->tensors.size(), ", max_num_elements: ", list->max_num_elements));
    OP_REQUIRES_OK(ctx, CheckItemShape(*ctx, *list, ctx->input(1), "push"));
    std::shared_ptr<TensorList> out = TakeList(ctx, 0, *list);
    out->tensors.push_back(ctx->input(1));
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
  }
};

class TensorListPopBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDtype(*ctx, *list, dtype_));
    OP_REQUIRES(ctx, !list->tensors.empty(),
                KernelError(*ctx, "Trying to pop from an empty list."));
    std::shared_ptr<TensorList> out = TakeList(ctx, 0, *list);
    Tensor last = std::move(out->tensors.back());
    out->tensors.pop_back();
    if (!last.IsInitialized()) {
      OP_ASSIGN_OR_RETURN(ctx, PartialShape shape, ElementShape(ctx, *out, 1));
      OP_ASSIGN_OR_RETURN(ctx, last, Zeros(ctx, dtype_, shape));
    }
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
    ctx->set_output(1, std::move(last));
  }
};

class TensorListResizeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    const int64_t size = IntScalar(ctx->input(1));
    OP_REQUIRES(ctx, size >= 0,
                KernelError(*ctx, "TensorListSlice expects size to be non-negative. Got: ", size));
    OP_REQUIRES_OK(ctx, tensor_list::CheckListSize(*ctx, size));
    std::shared_ptr<TensorList> out = TakeList(ctx, 0, *list);
    out->tensors.resize(size);
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
  }
};

}  // namespace

absl::Status RegisterListKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterListScatterConcatKernels(r));
  DFLOW_RETURN_IF_ERROR(RegisterListArithmeticKernels(r));
  DFLOW_RETURN_IF_ERROR(r->Register<EmptyTensorListOp>(CpuKernel("EmptyTensorList")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListReserveOp>(CpuKernel("TensorListReserve")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListFromTensorOp>(CpuKernel("TensorListFromTensor")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListGetItemOp>(CpuKernel("TensorListGetItem")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListSetItemOp>(CpuKernel("TensorListSetItem")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListStackOp>(CpuKernel("TensorListStack")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListGatherOp>(CpuKernel("TensorListGather")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListLengthOp>(CpuKernel("TensorListLength")));
  DFLOW_RETURN_IF_ERROR(
      r->Register<TensorListElementShapeOp>(CpuKernel("TensorListElementShape")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListPushBackOp>(CpuKernel("TensorListPushBack")));
  DFLOW_RETURN_IF_ERROR(r->Register<TensorListPopBackOp>(CpuKernel("TensorListPopBack")));
  return r->Register<TensorListResizeOp>(CpuKernel("TensorListResize"));
}

}  // namespace dflow
