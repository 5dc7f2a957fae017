// [cuda] Every CUDA kernel against the CPU kernel of the same op, through a Session:
// the same graph built under /gpu:0 and under /cpu:0 (inputs are Consts under the same
// device, so Const upload is exercised as well), compared with per-op tolerances.
#include <string>
#include <vector>

#include "tests/kernels/cuda/gpu_session.h"

namespace dflow::testing {
namespace {

using Builder = std::function<Output(const Scope&)>;

// Runs `build` on the GPU and on the CPU and compares.
void Conform(const std::string& what, const Builder& build, double atol, double rtol) {
  INFO("case: " << what);
  absl::StatusOr<Tensor> gpu = RunOn("/gpu:0", build);
  INFO("gpu: " << gpu.status().ToString());
  REQUIRE(gpu.ok());
  absl::StatusOr<Tensor> cpu = RunOn("/cpu:0", build);
  INFO("cpu: " << cpu.status().ToString());
  REQUIRE(cpu.ok());
  CheckClose(*gpu, *cpu, atol, rtol);
}

Output Floats(const Scope& s, std::vector<int64_t> shape, float lo, float hi, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Const(s, Input::Initializer(RandomFloats(n, lo, hi, seed), shape));
}

Output Ints(const Scope& s, std::vector<int64_t> shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int32_t> values;
  for (float f : RandomFloats(n, -50, 50, seed)) values.push_back(static_cast<int32_t>(f));
  return Const(s, Input::Initializer(values, shape));
}

Output Axes(const Scope& s, std::vector<int32_t> axes) {
  return Const(s, Input::Initializer(axes, {static_cast<int64_t>(axes.size())}));
}

TEST_CASE("Unary CUDA kernels match the CPU", "[cuda]") {
  RequireGpu();
  using Fn = Output (*)(const Scope&, Input);
  const std::vector<std::pair<std::string, Fn>> any_sign = {
      {"Neg", &Neg},   {"Abs", &Abs},         {"Square", &Square}, {"Exp", &Exp},
      {"Relu", &Relu}, {"Relu6", &Relu6},     {"Sigmoid", &Sigmoid}, {"Tanh", &Tanh}};
  for (const auto& [name, fn] : any_sign) {
    Conform(name, [fn = fn](const Scope& s) { return fn(s, Floats(s, {3, 5, 70}, -8, 8, 1)); },
            1e-6, 2e-6);
  }
  const std::vector<std::pair<std::string, Fn>> positive = {
      {"Sqrt", &Sqrt}, {"Rsqrt", &Rsqrt}, {"Log", &Log}};
  for (const auto& [name, fn] : positive) {
    Conform(name, [fn = fn](const Scope& s) { return fn(s, Floats(s, {1000}, 0.01f, 50, 2)); },
            1e-6, 2e-6);
  }
  for (const auto& [name, fn] : std::vector<std::pair<std::string, Fn>>{
           {"Neg int32", &Neg}, {"Abs int32", &Abs}, {"Square int32", &Square}}) {
    Conform(name, [fn = fn](const Scope& s) { return fn(s, Ints(s, {4, 9}, 3)); }, 0, 0);
  }
}

TEST_CASE("Binary CUDA kernels broadcast like the CPU", "[cuda]") {
  RequireGpu();
  using Fn = Output (*)(const Scope&, Input, Input);
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"Add", &Add},         {"AddV2", &AddV2},     {"Sub", &Sub},
      {"Mul", &Mul},         {"RealDiv", &RealDiv}, {"Maximum", &Maximum},
      {"Minimum", &Minimum}, {"SquaredDifference", &SquaredDifference}};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4, 5}, {4, 5}}, {{4, 1, 5}, {3, 1}}, {{}, {7}}, {{2, 3, 4, 5}, {5}}, {{6, 1}, {1, 6}}};
  for (const auto& [name, fn] : ops) {
    for (const auto& [xs, ys] : shapes) {
      Conform(name + " " + std::to_string(xs.size()) + "d", [&, fn = fn](const Scope& s) {
        return fn(s, Floats(s, xs, -4, 4, 5), Floats(s, ys, 0.5f, 4, 6));
      }, 1e-6, 1e-6);
    }
    if (name == "RealDiv") continue;
    Conform(name + " int32", [fn = fn](const Scope& s) {
      return fn(s, Ints(s, {3, 4}, 7), Ints(s, {4}, 8));
    }, 0, 0);
  }
}

TEST_CASE("AddN, BiasAdd, Softmax, Fill, Cast and the like-ops match the CPU", "[cuda]") {
  RequireGpu();
  for (int n : {1, 3, 20}) {  // 20 > one pass of kMaxAddN inputs
    Conform("AddN " + std::to_string(n), [n](const Scope& s) {
      std::vector<Output> inputs;
      for (int i = 0; i < n; ++i) inputs.push_back(Floats(s, {5, 7}, -1, 1, 10 + i));
      return AddN(s, InputList(inputs));
    }, 1e-5, 1e-5);
  }
  Conform("BiasAdd NHWC", [](const Scope& s) {
    return BiasAdd(s, Floats(s, {2, 3, 4, 5}, -1, 1, 11), Floats(s, {5}, -1, 1, 12));
  }, 1e-6, 1e-6);
  Conform("BiasAdd NCHW", [](const Scope& s) {
    return AddOp(s, "BiasAdd", {Floats(s, {2, 5, 3, 4}, -1, 1, 13), Floats(s, {5}, -1, 1, 14)},
                 {{"data_format", StringAttr("NCHW")}}).output(0);
  }, 1e-6, 1e-6);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 7}, {8, 1000}, {2, 3, 4}}) {
    Conform("Softmax", [shape](const Scope& s) { return Softmax(s, Floats(s, shape, -10, 10, 15)); },
            1e-7, 1e-5);
  }
  Conform("Fill", [](const Scope& s) {
    return Fill(s, Const(s, Input::Initializer(std::vector<int32_t>{2, 3}, {2})), Const(s, 1.5f));
  }, 0, 0);
  Conform("ZerosLike", [](const Scope& s) { return ZerosLike(s, Floats(s, {4, 4}, -1, 1, 16)); }, 0, 0);
  Conform("OnesLike", [](const Scope& s) { return OnesLike(s, Ints(s, {4, 4}, 17)); }, 0, 0);
  Conform("Cast f->i", [](const Scope& s) { return Cast(s, Floats(s, {50}, -9, 9, 18), DT_INT32); }, 0, 0);
  Conform("Cast i->f", [](const Scope& s) { return Cast(s, Ints(s, {50}, 19), DT_FLOAT); }, 0, 0);
}

TEST_CASE("Sum, Mean and Max reductions match the CPU on every axis pattern", "[cuda]") {
  RequireGpu();
  const std::vector<std::vector<int32_t>> axis_sets = {{0}, {1}, {2}, {0, 2}, {-1}, {0, 1, 2}, {}};
  for (const std::vector<int32_t>& axes : axis_sets) {
    for (bool keep : {false, true}) {
      const std::string what = "axes " + std::to_string(axes.size()) + (keep ? " keep" : "");
      Conform("Sum " + what, [&](const Scope& s) {
        return Sum(s, Floats(s, {6, 50, 33}, -1, 1, 20), Axes(s, axes), keep);
      }, 1e-5, 1e-5);
      Conform("Mean " + what, [&](const Scope& s) {
        return Mean(s, Floats(s, {6, 50, 33}, -1, 1, 21), Axes(s, axes), keep);
      }, 1e-6, 1e-5);
      Conform("Max " + what, [&](const Scope& s) {
        return Max(s, Floats(s, {6, 50, 33}, -1, 1, 22), Axes(s, axes), keep);
      }, 0, 0);
    }
  }
  Conform("Sum int32", [](const Scope& s) { return Sum(s, Ints(s, {7, 9}, 23), Axes(s, {1})); }, 0, 0);
  Conform("Sum long row", [](const Scope& s) {
    return Sum(s, Floats(s, {3, 300000}, -1, 1, 24), Axes(s, {1}));
  }, 1e-3, 1e-5);
}

TEST_CASE("Shape-only CUDA kernels match the CPU", "[cuda]") {
  RequireGpu();
  Conform("Identity", [](const Scope& s) { return Identity(s, Floats(s, {3, 4}, -1, 1, 30)); }, 0, 0);
  Conform("Reshape", [](const Scope& s) {
    return Reshape(s, Floats(s, {3, 4}, -1, 1, 31), Const(s, Input::Initializer(std::vector<int32_t>{2, -1}, {2})));
  }, 0, 0);
  Conform("Shape", [](const Scope& s) { return Shape(s, Floats(s, {3, 4, 5}, -1, 1, 32)); }, 0, 0);
  Conform("Shape int64", [](const Scope& s) { return Shape(s, Floats(s, {3, 4}, -1, 1, 33), DT_INT64); }, 0, 0);
  Conform("Shape feeds Reshape", [](const Scope& s) {
    Output x = Floats(s, {3, 4}, -1, 1, 34);
    return Reshape(s, Floats(s, {12}, -1, 1, 35), Shape(s, x));
  }, 0, 0);
  Conform("ExpandDims", [](const Scope& s) {
    return ExpandDims(s, Floats(s, {3, 4}, -1, 1, 36), Const(s, -1));
  }, 0, 0);
  Conform("Squeeze", [](const Scope& s) { return Squeeze(s, Floats(s, {3, 1, 4, 1}, -1, 1, 37), {1}); }, 0, 0);
}

TEST_CASE("MatMul, Conv2D and pooling match the CPU", "[cuda]") {
  RequireGpu();
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Conform(std::string("MatMul ") + (ta ? "T" : "N") + (tb ? "T" : "N"), [=](const Scope& s) {
        Output a = Floats(s, ta ? std::vector<int64_t>{33, 17} : std::vector<int64_t>{17, 33}, -1, 1, 40);
        Output b = Floats(s, tb ? std::vector<int64_t>{9, 33} : std::vector<int64_t>{33, 9}, -1, 1, 41);
        return MatMul(s, a, b, MatMulAttrs{ta, tb});
      }, 1e-5, 1e-4);
    }
  }
  struct ConvCase {
    std::string name;
    std::vector<int64_t> input, filter;
    std::vector<int64_t> strides, dilations;
    std::string padding;
  };
  const std::vector<ConvCase> convs = {
      {"same s2", {2, 9, 11, 3}, {3, 3, 3, 8}, {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME"},
      {"valid d2", {1, 12, 12, 4}, {3, 3, 4, 5}, {1, 1, 1, 1}, {1, 2, 2, 1}, "VALID"},
      {"1x1", {3, 5, 5, 6}, {1, 1, 6, 7}, {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID"},
      {"5x5 same", {4, 28, 28, 1}, {5, 5, 1, 32}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME"}};
  for (const ConvCase& c : convs) {
    Conform("Conv2D " + c.name, [&](const Scope& s) {
      return AddOp(s, "Conv2D", {Floats(s, c.input, -1, 1, 42), Floats(s, c.filter, -1, 1, 43)},
                   {{"strides", IntListAttr(c.strides)}, {"dilations", IntListAttr(c.dilations)},
                    {"padding", StringAttr(c.padding)}}).output(0);
    }, 1e-5, 1e-4);
  }
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (const char* padding : {"SAME", "VALID"}) {
      Conform(std::string(op) + " " + padding, [&](const Scope& s) {
        return AddOp(s, op, {Floats(s, {2, 9, 10, 3}, -1, 1, 44)},
                     {{"ksize", IntListAttr({1, 3, 3, 1})}, {"strides", IntListAttr({1, 2, 2, 1})},
                      {"padding", StringAttr(padding)}}).output(0);
      }, 1e-6, 1e-6);
    }
  }
}

}  // namespace
}  // namespace dflow::testing
