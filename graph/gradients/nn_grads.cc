// Gradients of activations, softmax, losses, BiasAdd, convolutions and pooling
// (TF's nn_grad.py), mostly one fused backward kernel each.
#include "absl/status/status.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/nn_ops.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::Out;
using Grads = std::vector<Output>;

// Activations whose backward kernel takes (dy, forward input or output) plus the
// forward op's own attrs (LeakyRelu's alpha).
GradFunc ActivationGrad(const char* grad_op, bool uses_output) {
  return [grad_op, uses_output](const Scope& s, const Operation& op, const Grads& dy,
                                Grads* dx) {
    Output features = uses_output ? Out(op, 0) : In(op, 0);
    *dx = {AddOp(s, grad_op, {dy[0], features}, grad::CopyAttrs(op, {"alpha"})).output(0)};
    return absl::OkStatus();
  };
}

// softmax: dx = (dy - sum(dy * y, -1)) * y.
absl::Status SoftmaxGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output y = Out(op, 0);
  Output dot = Sum(s, Mul(s, dy[0], y), -1, /*keep_dims=*/true);
  *dx = {Mul(s, Sub(s, dy[0], dot), y)};
  return absl::OkStatus();
}

// log_softmax: dx = dy - exp(y) * sum(dy, -1).
absl::Status LogSoftmaxGrad(const Scope& s, const Operation& op, const Grads& dy,
                            Grads* dx) {
  Output total = Sum(s, dy[0], -1, /*keep_dims=*/true);
  *dx = {Sub(s, dy[0], Mul(s, Exp(s, Out(op, 0)), total))};
  return absl::OkStatus();
}

absl::Status BiasAddGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output bias_grad =
      AddOp(s, "BiasAddGrad", {dy[0]}, grad::CopyAttrs(op, {"data_format"})).output(0);
  *dx = {dy[0], bias_grad};
  return absl::OkStatus();
}

// The loss's gradient scales the per-example backprop the forward kernel computed.
// A gradient arriving at that backprop output (second order) adds TF's extra term.
absl::Status SoftmaxXentGrad(const Scope& s, const Operation& op, const Grads& dy,
                             Grads* dx) {
  Output dloss = ExpandDims(s, dy[0], -1);
  Output dlogits = Mul(s, dloss, Out(op, 1));
  if (dy[1].node != nullptr && dy[1].node->op() != "ZerosLike") {
    Output softmax = Softmax(s, In(op, 0));
    Output projected = Squeeze(
        s, MatMul(s, ExpandDims(s, dy[1], 1), ExpandDims(s, softmax, 2)), {1});
    dlogits = Add(s, dlogits, Mul(s, Sub(s, dy[1], projected), softmax));
  }
  Output dlabels = Mul(s, dloss, Neg(s, LogSoftmax(s, In(op, 0))));
  *dx = {dlogits, dlabels};
  return absl::OkStatus();
}

absl::Status SparseSoftmaxXentGrad(const Scope& s, const Operation& op, const Grads& dy,
                                   Grads* dx) {
  *dx = {Mul(s, ExpandDims(s, dy[0], -1), Out(op, 1)), Output()};
  return absl::OkStatus();
}

absl::Status L2LossGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, In(op, 0), dy[0])};
  return absl::OkStatus();
}

// Conv2D and DepthwiseConv2dNative: backprop to the input and to the filter.
GradFunc ConvGrad(const char* input_op, const char* filter_op) {
  return [input_op, filter_op](const Scope& s, const Operation& op, const Grads& dy,
                               Grads* dx) {
    Output x = In(op, 0), filter = In(op, 1);
    AttrMap attrs = grad::CopyAttrs(op, {"strides", "padding", "explicit_paddings",
                                         "data_format", "dilations", "use_cudnn_on_gpu"});
    Output dinput = AddOp(s, input_op, {Shape(s, x), filter, dy[0]}, attrs).output(0);
    Output dfilter = AddOp(s, filter_op, {x, Shape(s, filter), dy[0]}, attrs).output(0);
    *dx = {dinput, dfilter};
    return absl::OkStatus();
  };
}

absl::Status MaxPoolGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "MaxPoolGrad", {In(op, 0), Out(op, 0), dy[0]},
               grad::CopyAttrs(op, {"ksize", "strides", "padding", "explicit_paddings",
                                    "data_format"}))
             .output(0)};
  return absl::OkStatus();
}

absl::Status AvgPoolGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "AvgPoolGrad", {Shape(s, In(op, 0)), dy[0]},
               grad::CopyAttrs(op, {"ksize", "strides", "padding", "data_format"}))
             .output(0)};
  return absl::OkStatus();
}

// Conv2DBackpropInput(input_sizes, filter, out_backprop) is a transposed convolution:
// its gradients are a forward convolution (to out_backprop) and a filter backprop.
absl::Status ConvBackpropInputGrad(const Scope& s, const Operation& op, const Grads& dy,
                                   Grads* dx) {
  Output filter = In(op, 1), out_backprop = In(op, 2);
  AttrMap attrs = grad::CopyAttrs(op, {"strides", "padding", "explicit_paddings",
                                       "data_format", "dilations", "use_cudnn_on_gpu"});
  Output dfilter = AddOp(s, "Conv2DBackpropFilter", {dy[0], Shape(s, filter), out_backprop},
                         attrs)
                       .output(0);
  Output dout = AddOp(s, "Conv2D", {dy[0], filter}, attrs).output(0);
  *dx = {Output(), dfilter, dout};
  return absl::OkStatus();
}

// FusedBatchNorm / V2 / V3: one FusedBatchNormGrad* call. In training the kernel
// saved the batch statistics in the reserve spaces; in inference the population mean
// and variance (inputs 3 and 4) take their place, as TF does.
GradFunc FusedBatchNormGrad(const char* grad_op, bool v3) {
  return [grad_op, v3](const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
    const bool training = grad::BoolAttrOf(op, "is_training");
    std::vector<OpArg> args = {dy[0], In(op, 0), In(op, 1),
                               training ? Out(op, 3) : In(op, 3),
                               training ? Out(op, 4) : In(op, 4)};
    if (v3) args.push_back(Out(op, 5));
    Operation g = AddOp(s, grad_op, args,
                        grad::CopyAttrs(op, {"epsilon", "data_format", "is_training"}));
    *dx = {g.output(0), g.output(1), g.output(2), Output(), Output()};
    return absl::OkStatus();
  };
}

// ResizeBilinear(images, size): ResizeBilinearGrad(dy, images) with the same corners.
absl::Status ResizeBilinearGrad(const Scope& s, const Operation& op, const Grads& dy,
                                Grads* dx) {
  *dx = {AddOp(s, "ResizeBilinearGrad", {dy[0], In(op, 0)},
               grad::CopyAttrs(op, {"align_corners", "half_pixel_centers"}))
             .output(0),
         Output()};
  return absl::OkStatus();
}

// ResizeNearestNeighbor(images, size): ResizeNearestNeighborGrad(dy, images' H and W).
absl::Status ResizeNearestNeighborGrad(const Scope& s, const Operation& op, const Grads& dy,
                                       Grads* dx) {
  Output size = Slice(s, Shape(s, In(op, 0)), {1}, {2});
  *dx = {AddOp(s, "ResizeNearestNeighborGrad", {dy[0], size},
               grad::CopyAttrs(op, {"align_corners", "half_pixel_centers"}))
             .output(0),
         Output()};
  return absl::OkStatus();
}

absl::Status Register(GradientRegistry* r, const char* op, GradFunc f) {
  return r->Register(op, std::move(f));
}

}  // namespace

absl::Status RegisterNnGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(Register(r, "Relu", ActivationGrad("ReluGrad", true)));
  DFLOW_RETURN_IF_ERROR(Register(r, "ResizeBilinear", ResizeBilinearGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "ResizeNearestNeighbor", ResizeNearestNeighborGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Relu6", ActivationGrad("Relu6Grad", false)));
  DFLOW_RETURN_IF_ERROR(Register(r, "Elu", ActivationGrad("EluGrad", true)));
  DFLOW_RETURN_IF_ERROR(Register(r, "Selu", ActivationGrad("SeluGrad", true)));
  DFLOW_RETURN_IF_ERROR(Register(r, "Softplus", ActivationGrad("SoftplusGrad", false)));
  DFLOW_RETURN_IF_ERROR(Register(r, "Softsign", ActivationGrad("SoftsignGrad", false)));
  DFLOW_RETURN_IF_ERROR(Register(r, "LeakyRelu", ActivationGrad("LeakyReluGrad", false)));
  DFLOW_RETURN_IF_ERROR(Register(r, "Softmax", SoftmaxGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "LogSoftmax", LogSoftmaxGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "BiasAdd", BiasAddGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "SoftmaxCrossEntropyWithLogits", SoftmaxXentGrad));
  DFLOW_RETURN_IF_ERROR(
      Register(r, "SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxXentGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "L2Loss", L2LossGrad));
  DFLOW_RETURN_IF_ERROR(
      Register(r, "Conv2D", ConvGrad("Conv2DBackpropInput", "Conv2DBackpropFilter")));
  DFLOW_RETURN_IF_ERROR(Register(r, "DepthwiseConv2dNative",
                                 ConvGrad("DepthwiseConv2dNativeBackpropInput",
                                          "DepthwiseConv2dNativeBackpropFilter")));
  DFLOW_RETURN_IF_ERROR(Register(r, "MaxPool", MaxPoolGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "AvgPool", AvgPoolGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Conv2DBackpropInput", ConvBackpropInputGrad));
  DFLOW_RETURN_IF_ERROR(
      Register(r, "FusedBatchNorm", FusedBatchNormGrad("FusedBatchNormGrad", false)));
  DFLOW_RETURN_IF_ERROR(
      Register(r, "FusedBatchNormV2", FusedBatchNormGrad("FusedBatchNormGradV2", false)));
  DFLOW_RETURN_IF_ERROR(
      Register(r, "FusedBatchNormV3", FusedBatchNormGrad("FusedBatchNormGradV3", true)));
  return absl::OkStatus();
}

}  // namespace dflow
