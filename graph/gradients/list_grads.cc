// Gradients of TensorList ops (TF 2's lists: TensorArrays, Keras RNN loops, tf.map_fn), as
// TF's list_ops.py defines them. A list's gradient is a list of the elements' gradients:
// pushing pops it, stacking unstacks it, reading an item writes that item into a list of
// unset elements (which read as zeros), and so on. Missing gradients of a list are
// ZerosLike of it and meeting ones are added by AddN, both of which the CPU kernels
// define for lists (kernels/cpu/list_arithmetic_kernels.cc).
//
// Lengths, element shapes, reserved and empty lists have no gradient.
#include "absl/status/status.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::Out;
using Grads = std::vector<Output>;

AttrMap ElementDtype(const Operation& op) {
  return {{"element_dtype", TypeAttr(op.node->attr("element_dtype")->type())}};
}

// An element's shape from the whole tensor's: its shape without the first dimension.
Output ElementShapeOf(const Scope& s, const Output& tensor) {
  return Slice(s, Shape(s, tensor), {1}, {-1});
}

Output Length(const Scope& s, const Output& list) {
  return AddOp(s, "TensorListLength", {list}).output(0);
}

// A list as long as `like`, every element unset, of `like`'s element shape.
Output UnsetListLike(const Scope& s, const Output& like, const AttrMap& element) {
  Output shape = AddOp(s, "TensorListElementShape", {like},
                       {{"shape_type", TypeAttr(DT_INT32)}}).output(0);
  return AddOp(s, "TensorListReserve", {shape, Length(s, like)}, element).output(0);
}

// PushBack(list, tensor) -> list.
absl::Status PushBackGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Operation pop = AddOp(s, "TensorListPopBack", {dy[0], Shape(s, In(op, 1))}, ElementDtype(op));
  *dx = {pop.output(0), pop.output(1)};
  return absl::OkStatus();
}

// PopBack(list, element_shape) -> (list, tensor).
absl::Status PopBackGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "TensorListPushBack", {dy[0], dy[1]}, ElementDtype(op)).output(0), Output()};
  return absl::OkStatus();
}

// Stack(list, element_shape) -> tensor.
absl::Status StackGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output list = AddOp(s, "TensorListFromTensor", {dy[0], ElementShapeOf(s, dy[0])},
                      {{"element_dtype", TypeAttr(BaseType(dy[0].dtype()))},
                       {"shape_type", TypeAttr(DT_INT32)}})
                    .output(0);
  *dx = {list, Output()};
  return absl::OkStatus();
}

// FromTensor(tensor, element_shape) -> list.
absl::Status FromTensorGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output tensor = In(op, 0);
  Output stacked = AddOp(s, "TensorListStack", {dy[0], ElementShapeOf(s, tensor)},
                         {{"element_dtype", TypeAttr(BaseType(tensor.dtype()))},
                          {"num_elements", IntAttr(-1)}})
                       .output(0);
  *dx = {stacked, Output()};
  return absl::OkStatus();
}

// GetItem(list, index, element_shape) -> item.
absl::Status GetItemGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output unset = UnsetListLike(s, In(op, 0), ElementDtype(op));
  *dx = {AddOp(s, "TensorListSetItem", {unset, In(op, 1), dy[0]}, ElementDtype(op)).output(0),
         Output(), Output()};
  return absl::OkStatus();
}

// SetItem(list, index, item) -> list: the item's gradient is read out, the list's has
// zeros where the item was written.
absl::Status SetItemGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  const AttrMap element = ElementDtype(op);
  Output item = In(op, 2);
  Output list_grad =
      AddOp(s, "TensorListSetItem", {dy[0], In(op, 1), ZerosLike(s, item)}, element).output(0);
  if (grad::BoolAttrOf(op, "resize_if_index_out_of_bounds")) {
    list_grad = AddOp(s, "TensorListResize", {list_grad, Length(s, In(op, 0))}).output(0);
  }
  Output item_grad =
      AddOp(s, "TensorListGetItem", {dy[0], In(op, 1), Shape(s, item)}, element).output(0);
  *dx = {list_grad, Output(), item_grad};
  return absl::OkStatus();
}

// Resize(list, size) -> list.
absl::Status ResizeGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "TensorListResize", {dy[0], Length(s, In(op, 0))}).output(0), Output()};
  return absl::OkStatus();
}

// Gather(list, indices, element_shape) -> tensor.
absl::Status GatherGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output unset = UnsetListLike(s, In(op, 0), ElementDtype(op));
  Output list = AddOp(s, "TensorListScatterIntoExistingList", {unset, dy[0], In(op, 1)})
                    .output(0);
  *dx = {list, Output(), Output()};
  return absl::OkStatus();
}

// Scatter(tensor, indices, element_shape[, num_elements]) -> list.
absl::Status ScatterGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output tensor = In(op, 0);
  Output gathered = AddOp(s, "TensorListGather", {dy[0], In(op, 1), ElementShapeOf(s, tensor)},
                          {{"element_dtype", TypeAttr(BaseType(tensor.dtype()))}})
                        .output(0);
  dx->assign(op.node->num_inputs(), Output());
  (*dx)[0] = gathered;
  return absl::OkStatus();
}

// ScatterIntoExistingList(list, tensor, indices) -> list.
absl::Status ScatterIntoExistingGrad(const Scope& s, const Operation& op, const Grads& dy,
                                     Grads* dx) {
  Output tensor = In(op, 1);
  Output indices = In(op, 2);
  Output tensor_grad =
      AddOp(s, "TensorListGather", {dy[0], indices, ElementShapeOf(s, tensor)},
            {{"element_dtype", TypeAttr(BaseType(tensor.dtype()))}})
          .output(0);
  Output list_grad =
      AddOp(s, "TensorListScatterIntoExistingList", {dy[0], ZerosLike(s, tensor), indices})
          .output(0);
  *dx = {list_grad, tensor_grad, Output()};
  return absl::OkStatus();
}

// ConcatV2(list, element_shape, leading_dims) -> (tensor, lengths).
absl::Status ConcatGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output shape = AddOp(s, "TensorListElementShape", {In(op, 0)},
                       {{"shape_type", TypeAttr(DT_INT32)}}).output(0);
  Output list = AddOp(s, "TensorListSplit", {dy[0], shape, Out(op, 1)},
                      {{"element_dtype", TypeAttr(BaseType(dy[0].dtype()))},
                       {"shape_type", TypeAttr(DT_INT32)}})
                    .output(0);
  dx->assign(op.node->num_inputs(), Output());
  (*dx)[0] = list;
  return absl::OkStatus();
}

// Split(tensor, element_shape, lengths) -> list.
absl::Status SplitGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output tensor = In(op, 0);
  Output shape = ConcatV2(s, {Const(s, {-1}), ElementShapeOf(s, tensor)}, 0);
  Output concat = AddOp(s, "TensorListConcatV2", {dy[0], shape, In(op, 2)},
                        {{"element_dtype", TypeAttr(BaseType(tensor.dtype()))},
                         {"shape_type", TypeAttr(DT_INT32)}})
                      .output(0);
  *dx = {concat, Output(), Output()};
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterListGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListPushBack", PushBackGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListPopBack", PopBackGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListStack", StackGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListFromTensor", FromTensorGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListGetItem", GetItemGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListSetItem", SetItemGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListResize", ResizeGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListGather", GatherGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListScatter", ScatterGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListScatterV2", ScatterGrad));
  DFLOW_RETURN_IF_ERROR(
      r->Register("TensorListScatterIntoExistingList", ScatterIntoExistingGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListConcatV2", ConcatGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("TensorListSplit", SplitGrad));
  for (const char* op : {"TensorListLength", "TensorListElementShape", "TensorListReserve",
                         "EmptyTensorList"}) {
    DFLOW_RETURN_IF_ERROR(r->RegisterNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace dflow
