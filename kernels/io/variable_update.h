// AddScaled: the copy-on-write update every variable kernel shares (AssignAdd/Sub,
// ApplyGradientDescent, and their resource-variable twins): value += scale * delta.
//
// The update writes in place only when the variable holds the sole reference to its
// buffer and delta is another buffer; otherwise it builds a new tensor and swaps it in,
// so readers holding the old value keep a consistent snapshot. scale 1 and -1 add and
// subtract exactly; any other scale multiplies first (negating alpha is exact, so a
// scale of -alpha is TF's var - alpha * delta bit for bit).
#ifndef DFLOW_KERNELS_IO_VARIABLE_UPDATE_H_
#define DFLOW_KERNELS_IO_VARIABLE_UPDATE_H_

#include "absl/status/status.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {

// REQUIRES: the caller holds the variable's lock; value is initialized and has delta's
// shape and dtype. UNIMPLEMENTED for dtypes without arithmetic (bool, strings).
absl::Status AddScaled(OpKernelContext* ctx, double scale, const Tensor& delta, Tensor* value);

// A scalar numeric tensor's value as a double (learning rates); INVALID_ARGUMENT naming
// `what` otherwise.
absl::StatusOr<double> ScalarAsDouble(const Tensor& t, absl::string_view what);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_VARIABLE_UPDATE_H_
