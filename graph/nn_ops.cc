#include "graph/nn_ops.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/array_ops.h"
#include "graph/ops.h"

namespace dflow {
namespace {

AttrMap ConvAttrMap(const std::vector<int64_t>& strides, const std::string& padding,
                    const ConvAttrs& attrs) {
  AttrMap map = {{"strides", IntListAttr(strides)},
                 {"padding", StringAttr(padding)},
                 {"data_format", StringAttr(attrs.data_format)},
                 {"dilations", IntListAttr(attrs.dilations)}};
  if (!attrs.explicit_paddings.empty()) {
    map["explicit_paddings"] = IntListAttr(attrs.explicit_paddings);
  }
  return map;
}

Output Pool(const Scope& scope, absl::string_view op, Input value,
            const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
            const std::string& padding, const std::string& data_format) {
  return AddOp(scope, op, {std::move(value)},
               {{"ksize", IntListAttr(ksize)},
                {"strides", IntListAttr(strides)},
                {"padding", StringAttr(padding)},
                {"data_format", StringAttr(data_format)}})
      .output(0);
}

Output UnaryOp(const Scope& scope, absl::string_view op, Input x) {
  return AddOp(scope, op, {std::move(x)}).output(0);
}

CrossEntropyOutputs CrossEntropy(const Scope& scope, absl::string_view op, Input features,
                                 Input labels) {
  Operation node = AddOp(scope, op, {std::move(features), std::move(labels)});
  return {node.output(0), node.output(1)};
}

}  // namespace

Output Conv2D(const Scope& scope, Input input, Input filter,
              const std::vector<int64_t>& strides, const std::string& padding,
              const ConvAttrs& attrs) {
  return AddOp(scope, "Conv2D", {std::move(input), std::move(filter)},
               ConvAttrMap(strides, padding, attrs))
      .output(0);
}

Output DepthwiseConv2dNative(const Scope& scope, Input input, Input filter,
                             const std::vector<int64_t>& strides, const std::string& padding,
                             const ConvAttrs& attrs) {
  return AddOp(scope, "DepthwiseConv2dNative", {std::move(input), std::move(filter)},
               ConvAttrMap(strides, padding, attrs))
      .output(0);
}

Output MaxPool(const Scope& scope, Input value, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding,
               const std::string& data_format) {
  return Pool(scope, "MaxPool", std::move(value), ksize, strides, padding, data_format);
}

Output AvgPool(const Scope& scope, Input value, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding,
               const std::string& data_format) {
  return Pool(scope, "AvgPool", std::move(value), ksize, strides, padding, data_format);
}

Output LogSoftmax(const Scope& s, Input logits) { return UnaryOp(s, "LogSoftmax", logits); }
Output Elu(const Scope& s, Input features) { return UnaryOp(s, "Elu", features); }
Output Selu(const Scope& s, Input features) { return UnaryOp(s, "Selu", features); }
Output Softplus(const Scope& s, Input features) { return UnaryOp(s, "Softplus", features); }
Output Softsign(const Scope& s, Input features) { return UnaryOp(s, "Softsign", features); }

Output LeakyRelu(const Scope& scope, Input features, float alpha) {
  AttrValue value;
  value.set_f(alpha);
  return AddOp(scope, "LeakyRelu", {std::move(features)}, {{"alpha", value}}).output(0);
}

CrossEntropyOutputs SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                  Input labels) {
  return CrossEntropy(scope, "SoftmaxCrossEntropyWithLogits", std::move(features),
                      std::move(labels));
}

CrossEntropyOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                        Input labels) {
  return CrossEntropy(scope, "SparseSoftmaxCrossEntropyWithLogits", std::move(features),
                      std::move(labels));
}

Output L2Loss(const Scope& scope, Input t) { return UnaryOp(scope, "L2Loss", t); }

Output Dropout(const Scope& scope, Input x, float rate, int64_t seed, int64_t seed2) {
  if (!(rate >= 0.f && rate < 1.f)) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("Dropout: rate must be a scalar tensor or a float in the range [0, 1), "
                     "got ", rate)));
    return Output();
  }
  if (!scope.ok()) return Output();
  Scope s = scope.NewSubScope("dropout");
  Output value = x.is_literal() ? Const(s, x.literal()) : x.output();
  Output uniform = AddOp(s, "RandomUniform", {Shape(s, value)},
                         {{"dtype", TypeAttr(BaseType(value.dtype()))},
                          {"seed", IntAttr(seed)},
                          {"seed2", IntAttr(seed2)}})
                       .output(0);
  Output keep = Cast(s, GreaterEqual(s, uniform, rate), BaseType(value.dtype()));
  Output scaled = Mul(s, value, 1.0f / (1.0f - rate));
  return Mul(s.WithOpName("dropout"), scaled, keep);
}

}  // namespace dflow
