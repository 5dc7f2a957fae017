// Gradients of 3-D convolution and pooling, local response normalization and the
// space-to-batch pair of atrous convolutions, as TF's nn_grad.py / array_grad.py: each
// op's own backprop kernel (Conv3DBackprop*V2, MaxPool3DGrad, AvgPool3DGrad, LRNGrad), and
// SpaceToBatchND and BatchToSpaceND undo each other.
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

absl::Status Conv3DGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), filter = In(op, 1);
  AttrMap attrs = grad::CopyAttrs(op, {"strides", "padding", "data_format", "dilations"});
  *dx = {AddOp(s, "Conv3DBackpropInputV2", {Shape(s, x), filter, dy[0]}, attrs).output(0),
         AddOp(s, "Conv3DBackpropFilterV2", {x, Shape(s, filter), dy[0]}, attrs).output(0)};
  return absl::OkStatus();
}

absl::Status MaxPool3DGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "MaxPool3DGrad", {In(op, 0), Out(op, 0), dy[0]},
               grad::CopyAttrs(op, {"ksize", "strides", "padding", "data_format"}))
             .output(0)};
  return absl::OkStatus();
}

absl::Status AvgPool3DGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "AvgPool3DGrad", {Shape(s, In(op, 0)), dy[0]},
               grad::CopyAttrs(op, {"ksize", "strides", "padding", "data_format"}))
             .output(0)};
  return absl::OkStatus();
}

absl::Status LrnGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "LRNGrad", {dy[0], In(op, 0), Out(op, 0)},
               grad::CopyAttrs(op, {"depth_radius", "bias", "alpha", "beta"}))
             .output(0)};
  return absl::OkStatus();
}

// SpaceToBatchND(input, block_shape, paddings) <-> BatchToSpaceND(input, block_shape,
// crops): each one's gradient is the other with the same block shape and pads.
GradFunc SpaceBatchGrad(const char* inverse) {
  return [inverse](const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
    *dx = {AddOp(s, inverse, {dy[0], In(op, 1), In(op, 2)}).output(0), Output(), Output()};
    return absl::OkStatus();
  };
}

}  // namespace

absl::Status RegisterVolumeGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("Conv3D", Conv3DGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("MaxPool3D", MaxPool3DGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("AvgPool3D", AvgPool3DGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("LRN", LrnGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("SpaceToBatchND", SpaceBatchGrad("BatchToSpaceND")));
  return r->Register("BatchToSpaceND", SpaceBatchGrad("SpaceToBatchND"));
}

}  // namespace dflow
