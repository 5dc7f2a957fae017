// ZerosLike and AddN of TensorLists (T = variant), as TF registers them for lists
// (TensorListZerosLike, TensorListBinaryAdd): what gradients of list ops need, where a
// list's gradient is a list, a missing one is zeros like the forward list, and
// gradients meeting at one list are summed element by element.
//
// ZerosLike keeps the list's dtype, element shape and length; each set element becomes
// zeros of its shape (a list element, zeros like it), an unset one stays unset (it reads
// as zeros anyway). AddN adds element by element (numbers, half, bfloat16, lists of
// lists); an unset element adds nothing. TF 2.21's error texts.
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/tensor_list.h"
#include "kernels/cpu/tensor_list_util.h"

namespace dflow {
namespace {

using tensor_list::ListInput;
using tensor_list::OutputList;

// The list a scalar variant tensor holds (null when it holds none).
const TensorList* ListOf(const Tensor& t) {
  if (t.dtype() != DT_VARIANT || t.NumElements() != 1) return nullptr;
  return t.data<Variant>()[0].get<TensorList>();
}

absl::StatusOr<Tensor> ListTensor(OpKernelContext* ctx, std::shared_ptr<const TensorList> list) {
  DFLOW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(ctx->allocator(), DT_VARIANT, {}));
  t.data<Variant>()[0] = Variant(std::move(list));
  return t;
}

absl::StatusOr<std::shared_ptr<TensorList>> ZerosLikeList(OpKernelContext* ctx,
                                                          const TensorList& list);

// Zeros like one set element: a list element (a list of lists, as nested loops'
// accumulators) recursively, any other dtype as zero bytes.
absl::StatusOr<Tensor> ZerosLikeElement(OpKernelContext* ctx, const Tensor& t) {
  if (t.dtype() == DT_VARIANT) {
    const TensorList* inner = ListOf(t);
    if (inner == nullptr) {
      return KernelError(*ctx, "ZerosLike of a list element that is not a TensorList");
    }
    DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<TensorList> zeros, ZerosLikeList(ctx, *inner));
    return ListTensor(ctx, std::move(zeros));
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Allocate(ctx->allocator(), t.dtype(), t.shape()));
  if (DataTypeSize(t.dtype()) > 0 && zeros.TotalBytes() > 0) {
    std::memset(zeros.raw_data(), 0, zeros.TotalBytes());
  }
  return zeros;
}

absl::StatusOr<std::shared_ptr<TensorList>> ZerosLikeList(OpKernelContext* ctx,
                                                          const TensorList& list) {
  auto out = std::make_shared<TensorList>();
  out->element_dtype = list.element_dtype;
  out->element_shape = list.element_shape;
  out->max_num_elements = list.max_num_elements;
  out->tensors.reserve(list.tensors.size());
  for (const Tensor& t : list.tensors) {
    if (!t.IsInitialized()) {
      out->tensors.emplace_back();  // unset stays unset: it reads as zeros
      continue;
    }
    DFLOW_ASSIGN_OR_RETURN(Tensor zeros, ZerosLikeElement(ctx, t));
    out->tensors.push_back(std::move(zeros));
  }
  return out;
}

class TensorListZerosLikeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, 0));
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<TensorList> out, ZerosLikeList(ctx, *list));
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
  }
};

absl::Status AddInto(OpKernelContext* ctx, const TensorList& b, TensorList* a);

template <typename T>
void AddElements(const Tensor& a, const Tensor& b, Tensor* sum) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = sum->data<T>();
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
      z[i] = T::FromFloat(x[i].ToFloat() + y[i].ToFloat());
    } else {
      z[i] = static_cast<T>(x[i] + y[i]);
    }
  }
}

// a + b for two set elements of one dtype and shape (lists of lists add recursively).
absl::StatusOr<Tensor> AddTensors(OpKernelContext* ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return KernelError(*ctx, "Trying to add two tensors with incompatible element shapes. "
                       "One is ", a.shape().DebugString(), " and the other is ",
                       b.shape().DebugString());
  }
  if (a.dtype() == DT_VARIANT) {
    const TensorList* x = ListOf(a);
    const TensorList* y = ListOf(b);
    if (x == nullptr || y == nullptr) {
      return KernelError(*ctx, "Can't add list elements that are not TensorLists");
    }
    auto sum = std::make_shared<TensorList>(*x);
    DFLOW_RETURN_IF_ERROR(AddInto(ctx, *y, sum.get()));
    return ListTensor(ctx, std::move(sum));
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor sum, Tensor::Allocate(ctx->allocator(), a.dtype(), a.shape()));
  const bool numeric = DispatchNumericOrHalf(a.dtype(), [&](auto zero) {
    AddElements<decltype(zero)>(a, b, &sum);
  });
  if (!numeric) {
    return KernelError(*ctx, "Can't add TensorList elements of dtype ",
                       DataTypeString(a.dtype()));
  }
  return sum;
}

// a += b element by element; an unset element adds nothing. TF's TensorListBinaryAdd.
absl::Status AddInto(OpKernelContext* ctx, const TensorList& b, TensorList* a) {
  if (a->element_dtype != b.element_dtype) {
    return KernelError(*ctx, "Trying to add two lists of tensors of different dtypes. One is ",
                       DataTypeString(a->element_dtype), " and the other is ",
                       DataTypeString(b.element_dtype));
  }
  if (a->tensors.size() != b.tensors.size()) {
    return KernelError(*ctx, "Trying to add two lists of tensors with different lengths. One "
                       "is ", a->tensors.size(), " and the other is ", b.tensors.size());
  }
  DFLOW_ASSIGN_OR_RETURN(a->element_shape,
                         tensor_list::Merge(*ctx, a->element_shape, b.element_shape));
  for (size_t i = 0; i < a->tensors.size(); ++i) {
    const Tensor& y = b.tensors[i];
    Tensor& x = a->tensors[i];
    if (!y.IsInitialized()) continue;
    if (!x.IsInitialized()) {
      x = y;
      continue;
    }
    DFLOW_ASSIGN_OR_RETURN(x, AddTensors(ctx, x, y));
  }
  return absl::OkStatus();
}

class TensorListAddNOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const TensorList* first, ListInput(*ctx, 0));
    auto out = std::make_shared<TensorList>(*first);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      OP_ASSIGN_OR_RETURN(ctx, const TensorList* list, ListInput(*ctx, i));
      OP_REQUIRES_OK(ctx, AddInto(ctx, *list, out.get()));
    }
    OP_REQUIRES_OK(ctx, OutputList(ctx, 0, std::move(out)));
  }
};

}  // namespace

absl::Status RegisterListArithmeticKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<TensorListZerosLikeOp>(
      CpuKernel("ZerosLike").TypeConstraint("T", {DT_VARIANT})));
  return registry->Register<TensorListAddNOp>(
      CpuKernel("AddN").TypeConstraint("T", {DT_VARIANT}));
}

}  // namespace dflow
