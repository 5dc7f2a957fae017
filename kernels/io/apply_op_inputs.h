// What the dense (apply_ops.cc) and sparse (sparse_apply_ops.cc) optimizer apply kernels
// read before updating: their attrs, their scalar hyperparameters, and their slots checked
// against the variable, with TF's texts.
#ifndef DFLOW_KERNELS_IO_APPLY_OP_INPUTS_H_
#define DFLOW_KERNELS_IO_APPLY_OP_INPUTS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/io/optimizer_functors.h"
#include "kernels/io/variable_slots.h"
#include "runtime/op_kernel.h"

namespace dflow {

// use_nesterov, update_slots and multiply_linear_by_lr where the op has them. use_locking
// is accepted and needs nothing: dflow always locks (SlotLocks).
template <typename T>
absl::Status ReadApplyAttrs(const OpKernelConstruction& ctx, optimizer::Args<T>* args) {
  if (ctx.HasAttr("use_nesterov")) {
    DFLOW_RETURN_IF_ERROR(ctx.GetAttr("use_nesterov", &args->nesterov));
  }
  if (ctx.HasAttr("update_slots")) {
    DFLOW_RETURN_IF_ERROR(ctx.GetAttr("update_slots", &args->update_slots));
  }
  if (ctx.HasAttr("multiply_linear_by_lr")) {
    DFLOW_RETURN_IF_ERROR(ctx.GetAttr("multiply_linear_by_lr", &args->multiply_linear_by_lr));
  }
  return absl::OkStatus();
}

// The scalar inputs, in order: every input after the first `num_slots` except those in
// `skip` (the gradient, a sparse op's indices). TF's "lr is not a scalar: [1]". An int64
// input (AdagradDA's global_step) is read as T, as TF's kernels cast it.
template <typename T>
absl::Status ReadApplyScalars(const OpKernelContext& ctx, int num_slots,
                              const std::vector<int>& skip, const std::vector<std::string>& names,
                              optimizer::Args<T>* args) {
  int n = 0;
  for (int i = num_slots; i < ctx.num_inputs(); ++i) {
    if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
    if (ctx.input(i).dtype() == DT_INT64) {
      DFLOW_RETURN_IF_ERROR(CheckScalarInput(ctx, i, DT_INT64, names[i]));
      args->scalar[n++] = static_cast<T>(ctx.input(i).scalar<int64_t>());
      continue;
    }
    DFLOW_RETURN_IF_ERROR(CheckScalarInput(ctx, i, DataTypeOf<T>(), names[i]));
    args->scalar[n++] = ctx.input(i).scalar<T>();
  }
  return absl::OkStatus();
}

// Every slot initialized, holding T, and shaped like the variable (slot 0): TF's "var and
// accum do not have the same shape[3] [2]", with the slot's input name. REQUIRES: the
// slots' locks held.
template <typename T>
absl::Status CheckApplySlots(const OpKernelContext& ctx, const std::vector<Slot>& slots,
                             const std::vector<std::string>& names) {
  for (const Slot& s : slots) DFLOW_RETURN_IF_ERROR(CheckInitialized(s));
  for (const Slot& s : slots) {
    if (s.value->dtype() != DataTypeOf<T>()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ctx.kernel().type_string(), ": ", s.name, " holds ", DataTypeString(s.value->dtype()),
          ", the op updates ", DataTypeString(DataTypeOf<T>())));
    }
  }
  const TensorShape& var = slots[0].value->shape();
  for (size_t i = 1; i < slots.size(); ++i) {
    const TensorShape& shape = slots[i].value->shape();
    if (shape != var) {
      return absl::InvalidArgumentError(absl::StrCat("var and ", names[i],
                                                     " do not have the same shape",
                                                     var.DebugString(), " ", shape.DebugString()));
    }
  }
  return absl::OkStatus();
}

// Makes every slot writable (MakeWritable: copied when shared, or when it aliases `grad`)
// and points args->slot at their elements. REQUIRES: the slots' locks held.
template <typename T>
absl::Status PrepareApplySlots(OpKernelContext* ctx, const std::vector<Slot>& slots,
                               const Tensor& grad, optimizer::Args<T>* args) {
  for (size_t i = 0; i < slots.size(); ++i) {
    const Tensor* inputs[] = {&grad};
    DFLOW_RETURN_IF_ERROR(MakeWritable(ctx, slots[i].value, inputs));
    args->slot[i] = slots[i].value->data<T>();
  }
  return absl::OkStatus();
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_APPLY_OP_INPUTS_H_
