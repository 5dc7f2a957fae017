// Numeric checks of nn_grads.cc. Convolutions and pooling run in float (the dtype
// their oneDNN kernels have), with a larger step and tolerance.
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/nn_ops.h"
#include "graph/ops.h"
#include "session/client_session.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;
constexpr double kFloatTol = 2e-3;

GradInput Floats(std::vector<int64_t> shape, double scale = 1.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return {std::move(shape), SpreadValues(n, scale), DT_FLOAT};
}

TEST_CASE("Activations") {
  using UnaryFn = Output (*)(const Scope&, Input);
  const std::vector<std::pair<const char*, UnaryFn>> ops = {
      {"Relu", Relu}, {"Relu6", Relu6}, {"Elu", Elu},           {"Selu", Selu},
      {"Softplus", Softplus}, {"Softsign", Softsign}, {"Softmax", Softmax},
      {"LogSoftmax", LogSoftmax}};
  for (const auto& [name, fn] : ops) {
    SECTION(name) {
      auto f = [fn = fn](const Scope& s, const Xs& x) -> Xs {
        return {Weighted(s, fn(s, x[0]))};
      };
      // Scale 7 crosses Relu6's upper kink region without landing on a kink.
      CHECK(CheckGradient({{{2, 5}, SpreadValues(10, 7.0)}}, f) < kTol);
    }
  }
  SECTION("LeakyRelu") {
    auto f = [](const Scope& s, const Xs& x) -> Xs {
      return {Weighted(s, LeakyRelu(s, x[0], 0.3f))};
    };
    CHECK(CheckGradient({{{2, 5}}}, f) < kTol);
  }
}

TEST_CASE("BiasAdd and L2Loss") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    return {Weighted(s, BiasAdd(s, x[0], x[1])), L2Loss(s, x[0])};
  };
  CHECK(CheckGradient({{{2, 3}}, {{3}}}, f) < kTol);
}

TEST_CASE("Cross-entropy losses") {
  SECTION("dense labels: logits and labels both get gradients") {
    auto f = [](const Scope& s, const Xs& x) -> Xs {
      return {Weighted(s, SoftmaxCrossEntropyWithLogits(s, x[0], Softmax(s, x[1])).loss)};
    };
    CHECK(CheckGradient({{{3, 4}}, {{3, 4}}}, f) < kTol);
  }
  SECTION("sparse labels") {
    auto f = [](const Scope& s, const Xs& x) -> Xs {
      return {Weighted(s, SparseSoftmaxCrossEntropyWithLogits(s, x[0], {2, 0, 3}).loss)};
    };
    CHECK(CheckGradient({{{3, 4}}}, f) < kTol);
  }
}

TEST_CASE("Conv2D: input and filter, strides and padding") {
  for (const char* padding : {"SAME", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      auto f = [padding, stride](const Scope& s, const Xs& x) -> Xs {
        return {WeightedSum(s, Conv2D(s, x[0], x[1], {1, stride, stride, 1}, padding))};
      };
      CHECK(CheckGradient({Floats({2, 5, 5, 2}), Floats({3, 3, 2, 3}, 0.5)}, f, 1e-2) <
            kFloatTol);
    }
  }
}

TEST_CASE("DepthwiseConv2dNative: input and filter") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    return {WeightedSum(s, DepthwiseConv2dNative(s, x[0], x[1], {1, 1, 1, 1}, "SAME"))};
  };
  CHECK(CheckGradient({Floats({1, 4, 4, 2}), Floats({3, 3, 2, 2}, 0.5)}, f, 1e-2) <
        kFloatTol);
}

TEST_CASE("Conv2DBackpropInput (transposed convolution): filter and out_backprop") {
  auto f = [](const Scope& s, const Xs& x) -> Xs {
    Output y = AddOp(s, "Conv2DBackpropInput", {Input({1, 5, 5, 2}), x[0], x[1]},
                     {{"strides", IntListAttr({1, 2, 2, 1})}, {"padding", StringAttr("SAME")}})
                   .output(0);
    return {WeightedSum(s, y)};
  };
  CHECK(CheckGradient({Floats({3, 3, 2, 3}, 0.5), Floats({1, 3, 3, 3})}, f, 1e-2) <
        kFloatTol);
}

TEST_CASE("FusedBatchNormV3 in training and FusedBatchNorm in inference") {
  auto training = [](const Scope& s, const Xs& x) -> Xs {
    Operation bn = AddOp(s, "FusedBatchNormV3",
                         {x[0], x[1], x[2], Input(std::initializer_list<float>{}),
                          Input(std::initializer_list<float>{})},
                         {{"is_training", BoolAttr(true)}});
    return {WeightedSum(s, bn.output(0))};
  };
  // Scale and offset differ: a gradient reading the offset for the scale must fail.
  const GradInput scale{{2}, {1.3, 0.7}, DT_FLOAT}, offset{{2}, {0.25, -0.6}, DT_FLOAT};
  CHECK(CheckGradient({Floats({2, 3, 3, 2}), scale, offset}, training, 1e-2) < kFloatTol);
  auto inference = [](const Scope& s, const Xs& x) -> Xs {
    Operation bn = AddOp(s, "FusedBatchNorm",
                         {x[0], x[1], x[2], Input({0.1f, -0.2f}), Input({1.5f, 0.8f})},
                         {{"is_training", BoolAttr(false)}});
    return {WeightedSum(s, bn.output(0))};
  };
  CHECK(CheckGradient({Floats({2, 3, 3, 2}), scale, offset}, inference, 1e-2) < kFloatTol);
}

TEST_CASE("ResizeBilinear (half-pixel centers) and ResizeNearestNeighbor") {
  for (bool half_pixel : {false, true}) {
    INFO("half_pixel_centers " << half_pixel);
    auto bilinear = [&](const Scope& s, const Xs& x) -> Xs {
      return {WeightedSum(s, AddOp(s, "ResizeBilinear", {x[0], Input({5, 7})},
                                   {{"half_pixel_centers", BoolAttr(half_pixel)}})
                                 .output(0))};
    };
    CHECK(CheckGradient({Floats({1, 3, 4, 2})}, bilinear, 1e-2) < kFloatTol);
    auto nearest = [&](const Scope& s, const Xs& x) -> Xs {
      return {WeightedSum(s, AddOp(s, "ResizeNearestNeighbor", {x[0], Input({6, 8})},
                                   {{"half_pixel_centers", BoolAttr(half_pixel)}})
                                 .output(0))};
    };
    CHECK(CheckGradient({Floats({1, 3, 4, 2})}, nearest, 1e-2) < kFloatTol);
  }
}

AttrValue Alpha(float value) {
  AttrValue attr;
  attr.set_f(value);
  return attr;
}

TEST_CASE("Conv3D, MaxPool3D, AvgPool3D, LRN, SpaceToBatchND and BatchToSpaceND") {
  auto conv3d = [](const Scope& s, const Xs& x) -> Xs {
    return {WeightedSum(s, AddOp(s, "Conv3D", {x[0], x[1]},
                                 {{"strides", IntListAttr({1, 1, 2, 1, 1})},
                                  {"padding", StringAttr("SAME")}})
                               .output(0))};
  };
  CHECK(CheckGradient({Floats({1, 3, 4, 3, 2}), Floats({2, 2, 2, 2, 2}, 0.5)}, conv3d, 1e-2) <
        kFloatTol);
  for (const char* pool : {"MaxPool3D", "AvgPool3D"}) {
    INFO(pool);
    auto f = [&](const Scope& s, const Xs& x) -> Xs {
      return {WeightedSum(s, AddOp(s, pool, {x[0]},
                                   {{"ksize", IntListAttr({1, 2, 2, 2, 1})},
                                    {"strides", IntListAttr({1, 2, 2, 2, 1})},
                                    {"padding", StringAttr("VALID")}})
                                 .output(0))};
    };
    CHECK(CheckGradient({Floats({1, 4, 4, 4, 2})}, f, 1e-3) < kFloatTol);
  }
  auto lrn = [](const Scope& s, const Xs& x) -> Xs {
    return {WeightedSum(s, AddOp(s, "LRN", {x[0]},
                                 {{"depth_radius", IntAttr(1)}, {"alpha", Alpha(0.5f)}})
                               .output(0))};
  };
  CHECK(CheckGradient({Floats({1, 2, 2, 4})}, lrn, 1e-2) < kFloatTol);
  auto atrous = [](const Scope& s, const Xs& x) -> Xs {
    Output batched = AddOp(s, "SpaceToBatchND", {x[0], Input({2, 2}), Input({{0, 1}, {1, 0}})})
                         .output(0);
    Output back = AddOp(s, "BatchToSpaceND", {Square(s, batched), Input({2, 2}),
                                              Input({{0, 1}, {1, 0}})})
                      .output(0);
    return {WeightedSum(s, back)};
  };
  CHECK(CheckGradient({Floats({1, 3, 3, 2})}, atrous, 1e-2) < kFloatTol);
}

TEST_CASE("MaxPool and AvgPool") {
  auto max_pool = [](const Scope& s, const Xs& x) -> Xs {
    return {WeightedSum(s, MaxPool(s, x[0], {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"))};
  };
  CHECK(CheckGradient({Floats({1, 4, 4, 2})}, max_pool, 1e-3) < kFloatTol);
  auto avg_pool = [](const Scope& s, const Xs& x) -> Xs {
    return {WeightedSum(s, AvgPool(s, x[0], {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME"))};
  };
  CHECK(CheckGradient({Floats({1, 5, 5, 2})}, avg_pool, 1e-2) < kFloatTol);
}

TEST_CASE("Dropout: kept elements pass the scaled gradient, dropped ones none") {
  // The mask is random per run, so the check compares the gradient with the output of
  // the same run instead of with finite differences.
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output y = Dropout(root, x, 0.5f);
  std::vector<Output> grads;
  REQUIRE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  std::vector<double> xs = SpreadValues(64, 1.0, 3.0);  // all nonzero
  REQUIRE((*session)->Run({{x, MakeTensor(DT_DOUBLE, {64}, xs)}}, {y, grads[0]}, &out).ok());
  std::vector<double> ys = ToDoubles(out[0]), gs = ToDoubles(out[1]);
  int kept = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool keep = ys[i] != 0.0;
    kept += keep;
    CHECK(ys[i] == (keep ? 2.0 * xs[i] : 0.0));
    CHECK(gs[i] == (keep ? 2.0 : 0.0));
  }
  CHECK(kept > 16);
  CHECK(kept < 48);
}

}  // namespace
}  // namespace dflow::testing
