// Helpers the TensorList kernels share (list_kernels.cc, list_scatter_concat_kernels.cc):
// reading list handles and element_shape inputs, copy-or-take for updates, element shapes
// of unset elements, with TF 2.21's error texts.
#ifndef DFLOW_KERNELS_CPU_TENSOR_LIST_UTIL_H_
#define DFLOW_KERNELS_CPU_TENSOR_LIST_UTIL_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "graph/partial_shape.h"
#include "kernels/cpu/tensor_list.h"
#include "runtime/op_kernel.h"

namespace dflow {
namespace tensor_list {

// An element_shape input: a scalar -1 (unknown rank) or a vector with -1 for unknown dims.
absl::StatusOr<PartialShape> ShapeInput(const OpKernelContext& ctx, int index);

// An int32 or int64 scalar's value.
int64_t IntScalar(const Tensor& t);

// Dims known in either, checked to agree where both know them (TF's PartialTensorShape
// MergeWith, its texts too).
absl::StatusOr<PartialShape> Merge(const OpKernelContext& ctx, const PartialShape& a,
                                   const PartialShape& b);

// The list behind input `index`, a scalar DT_VARIANT holding a TensorList.
absl::StatusOr<const TensorList*> ListInput(const OpKernelContext& ctx, int index);

// TF's "Invalid data types" unless the list holds `dtype` elements.
absl::Status CheckDtype(const OpKernelContext& ctx, const TensorList& list, DataType dtype);

// A copy of the input list to modify; its tensors are moved out instead of copied when the
// input handle holds the only reference (the old list is then left empty, unseen). Safe
// because the executor moves a slot into its last consumer and keeps an extra reference
// wherever a value outlives the step (feeds, _Arg/_Retval, constant Enters), and because
// nothing copies Variant elements between buffers (DataTypeSize rejects variant). The
// buffer's refcount is the ordered check; use_count() alone would be a relaxed read.
std::shared_ptr<TensorList> TakeList(OpKernelContext* ctx, int index, const TensorList& list);

// An item must fit the list's element shape (TF: "Tried to set/push an item ...").
absl::Status CheckItemShape(const OpKernelContext& ctx, const TensorList& list,
                            const Tensor& item, absl::string_view verb);

// Sets output `index` to a scalar variant holding `list`.
absl::Status OutputList(OpKernelContext* ctx, int index, std::shared_ptr<const TensorList> list);

// Lists hold at most this many elements (a slot is a Tensor handle, ~64 bytes): a hostile
// size gets RESOURCE_EXHAUSTED instead of a failed allocation that ends the process.
inline constexpr int64_t kMaxListElements = int64_t{1} << 26;

// RESOURCE_EXHAUSTED when a list of `n` elements would be over kMaxListElements.
absl::Status CheckListSize(const OpKernelContext& ctx, int64_t n);

// Zeros of `shape` for an element never set, which needs a fully defined shape.
absl::StatusOr<Tensor> Zeros(OpKernelContext* ctx, DataType dtype, const PartialShape& shape);

// The shape of unset elements: the list's, merged with the op's element_shape input and
// with any element that is set.
absl::StatusOr<PartialShape> ElementShape(OpKernelContext* ctx, const TensorList& list,
                                          int shape_input);

}  // namespace tensor_list
}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_TENSOR_LIST_UTIL_H_
