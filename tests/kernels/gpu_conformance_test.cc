// GPU kernel conformance suite (docs/STYLE.md #15, ggml test-backend-ops style): every
// op of kernels/sim/gpu_kernel_list.h runs on a GPU and on the CPU with the same inputs
// (several shapes, broadcasting, and every dtype the table lists for it), and the outputs
// must agree within the op's tolerance. Inputs reach the GPU and outputs leave it through the device's DeviceCopier,
// HostMemory args (KernelDef::host_memory_args) stay on the host, as in a real step.
//
//  - //tests/kernels:gpu_conformance_test       on a simulated GPU, in every test run;
//  - //tests/kernels:gpu_conformance_cuda_test  the same cases on the first real (non-
//    simulated) GPU a session finds; tagged requires-gpu and [cuda], it FAILS with "no
//    CUDA GPU found" where there is none (Catch2 2.13 cannot skip; a GPU test never
//    passes silently).
//
// The case list and gpu_kernel_list.h cannot drift: the cases take their dtypes from the
// table, and a test asserts every (op, type attr, dtype) the table lists has a case and
// every case's op is listed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "kernels/sim/gpu_kernel_list.h"
#include "runtime/device_copier.h"
#include "runtime/sim/sim_device.h"
#include "session/device_factory.h"
#include "session/kernel_library.h"

namespace dflow {
namespace {

// ---------------------------------------------------------------------------------------
// Cases.

struct Case {
  std::string op;
  std::string label;  // shapes, dtype, attrs: what makes this case different
  std::map<std::string, AttrValue> attrs;
  std::vector<Tensor> inputs;  // host tensors
  double tolerance = 1e-5;     // relative and absolute, for floating outputs
};

AttrValue TypeAttr(DataType t) {
  AttrValue v;
  v.set_type(t);
  return v;
}
AttrValue IntAttr(int64_t i) {
  AttrValue v;
  v.set_i(i);
  return v;
}
AttrValue BoolAttr(bool b) {
  AttrValue v;
  v.set_b(b);
  return v;
}
AttrValue StringAttr(const std::string& s) {
  AttrValue v;
  v.set_s(s);
  return v;
}
AttrValue IntsAttr(const std::vector<int64_t>& values) {
  AttrValue v;
  v.mutable_list();
  for (int64_t x : values) v.mutable_list()->add_i(x);
  return v;
}

// Deterministic inputs: uniform in [lo, hi] (rounded for integer dtypes).
class Inputs {
 public:
  Tensor Random(DataType dtype, const std::vector<int64_t>& shape, double lo = -2.0,
                double hi = 2.0) {
    Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), dtype,
                                 TensorShape(absl::MakeConstSpan(shape)));
    std::uniform_real_distribution<double> dist(lo, hi);
    DispatchNumeric(dtype, [&](auto zero) {
      using T = decltype(zero);
      for (T& x : t.flat<T>()) x = static_cast<T>(std::is_integral<T>::value ? std::round(dist(rng_)) : dist(rng_));
    });
    return t;
  }
  template <typename T>
  static Tensor Vector(const std::vector<T>& values) {
    Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), DataTypeOf<T>(),
                                 TensorShape({static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) t.flat<T>()[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), DataTypeOf<T>(), TensorShape({}));
    t.scalar<T>() = value;
    return t;
  }

 private:
  std::mt19937_64 rng_{20261122};
};

// A float or double tensor of `values` (NaN and infinities included).
Tensor Literal(DataType dtype, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), dtype, TensorShape(absl::MakeConstSpan(shape)));
  DispatchNumeric(dtype, [&](auto zero) {
    using T = decltype(zero);
    for (size_t i = 0; i < values.size(); ++i) t.flat<T>()[i] = static_cast<T>(values[i]);
  });
  return t;
}

AttrValue FloatAttr(float f) {
  AttrValue v;
  v.set_f(f);
  return v;
}

// The dtypes gpu_kernel_list.h lists for `op`'s type attr `attr` (empty when it lists
// none; the coverage test then fails).
std::vector<DataType> Types(const std::string& op, const std::string& attr = "T") {
  const GpuKernelSpec* spec = FindGpuKernelSpec(op);
  if (spec == nullptr) return {};
  for (const auto& [name, types] : spec->type_constraints) {
    if (name == attr) return types;
  }
  return {};
}

using Shapes = std::vector<std::vector<int64_t>>;
std::string ShapeText(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

void AddUnary(std::vector<Case>* cases, Inputs& in, const std::string& op,
              std::vector<DataType> dtypes, double lo = -2.0, double hi = 2.0,
              double tolerance = 1e-5) {
  for (DataType dtype : dtypes) {
    for (const auto& shape : Shapes{{}, {7}, {2, 3}, {2, 3, 4}}) {
      cases->push_back({op, DataTypeString(dtype) + ShapeText(shape),
                        {{"T", TypeAttr(dtype)}},
                        {in.Random(dtype, shape, lo, hi)},
                        tolerance});
    }
  }
}

void AddBinary(std::vector<Case>* cases, Inputs& in, const std::string& op,
               std::vector<DataType> dtypes, double lo = -2.0, double hi = 2.0) {
  // Same shapes, trailing broadcast, both sides broadcasting, scalar with tensor.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {4}}, {{3, 1, 2}, {4, 1}}};
  for (DataType dtype : dtypes) {
    for (const auto& [a, b] : pairs) {
      cases->push_back({op, DataTypeString(dtype) + ShapeText(a) + ShapeText(b),
                        {{"T", TypeAttr(dtype)}},
                        {in.Random(dtype, a, lo, hi), in.Random(dtype, b, lo, hi)}});
    }
  }
}

void AddMath(std::vector<Case>* c, Inputs& in) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference"}) {
    AddBinary(c, in, op, Types(op));
  }
  AddBinary(c, in, "RealDiv", Types("RealDiv"), 0.5, 3.0);
  for (const char* op : {"Neg", "Abs", "Square"}) AddUnary(c, in, op, Types(op));
  AddUnary(c, in, "Exp", Types("Exp"), -3.0, 3.0, 1e-5);
  for (const char* op : {"Sqrt", "Rsqrt", "Log"}) AddUnary(c, in, op, Types(op), 0.1, 5.0);
  for (const auto& [a, b, ta, tb] :
       std::vector<std::tuple<std::vector<int64_t>, std::vector<int64_t>, bool, bool>>{
           {{2, 3}, {3, 4}, false, false}, {{3, 2}, {3, 4}, true, false},
           {{2, 3}, {4, 3}, false, true}, {{17, 33}, {33, 9}, false, false}}) {
    for (DataType dtype : Types("MatMul")) {
      c->push_back({"MatMul",
                    DataTypeString(dtype) + ShapeText(a) + ShapeText(b) +
                        (ta ? " transpose_a" : "") + (tb ? " transpose_b" : ""),
                    {{"T", TypeAttr(dtype)}, {"transpose_a", BoolAttr(ta)},
                     {"transpose_b", BoolAttr(tb)}},
                    {in.Random(dtype, a), in.Random(dtype, b)},
                    1e-4});
    }
  }
  // Erf, Erfc, Round, Rint, the predicates and the no-NaN products: special values too.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* op : {"Erf", "Erfc"}) {
    AddUnary(c, in, op, Types(op), -4.0, 4.0);
    for (DataType dtype : Types(op)) {
      c->push_back({op, DataTypeString(dtype) + " specials", {{"T", TypeAttr(dtype)}},
                    {Literal(dtype, {6}, {0.0, -0.0, 30.0, -30.0, inf, -inf})}});
    }
  }
  for (const char* op : {"Round", "Rint"}) {
    AddUnary(c, in, op, Types(op), -9.0, 9.0);
    for (DataType dtype : Types(op)) {
      if (dtype != DT_FLOAT && dtype != DT_DOUBLE) continue;
      c->push_back({op, DataTypeString(dtype) + " halves", {{"T", TypeAttr(dtype)}},
                    {Literal(dtype, {8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, nan})}});
    }
  }
  for (const char* op : {"IsNan", "IsInf", "IsFinite"}) {
    for (DataType dtype : Types(op)) {
      c->push_back({op, DataTypeString(dtype) + " specials", {{"T", TypeAttr(dtype)}},
                    {Literal(dtype, {2, 3}, {1.0, -0.0, inf, -inf, nan, -1e30})}});
    }
  }
  for (const char* op : {"DivNoNan", "MulNoNan"}) {
    AddBinary(c, in, op, Types(op), 0.5, 3.0);
    for (DataType dtype : Types(op)) {
      c->push_back({op, DataTypeString(dtype) + "[6] zeros and specials",
                    {{"T", TypeAttr(dtype)}},
                    {Literal(dtype, {6}, {1.0, nan, inf, 0.0, 2.0, -3.0}),
                     Literal(dtype, {6}, {0.0, 0.0, 0.0, 0.0, nan, -0.0})}});
      c->push_back({op, DataTypeString(dtype) + "[2,3]/[3] broadcast zero",
                    {{"T", TypeAttr(dtype)}},
                    {in.Random(dtype, {2, 3}), Literal(dtype, {3}, {2.0, 0.0, -0.5})}});
    }
  }
  for (DataType dtype : Types("AddN")) {
    for (int n : {1, 3}) {
      Case addn{"AddN", absl::StrCat(DataTypeString(dtype), "[2,3] x", n),
                {{"T", TypeAttr(dtype)}, {"N", IntAttr(n)}}, {}};
      for (int i = 0; i < n; ++i) addn.inputs.push_back(in.Random(dtype, {2, 3}));
      c->push_back(std::move(addn));
    }
  }
}

void AddNn(std::vector<Case>* c, Inputs& in) {
  for (DataType dtype : Types("BiasAdd")) {
    c->push_back({"BiasAdd", DataTypeString(dtype) + "[2,3,4]+[4] NHWC",
                  {{"T", TypeAttr(dtype)}},
                  {in.Random(dtype, {2, 3, 4}), in.Random(dtype, {4})}});
  }
  for (const char* op : {"Relu", "Relu6"}) AddUnary(c, in, op, Types(op), -8.0, 8.0);
  for (const char* op : {"Sigmoid", "Tanh"}) AddUnary(c, in, op, Types(op), -6.0, 6.0);
  // Activations; Softplus over both of its thresholds (about -13.9 and 13.9 for float,
  // -34 and 34 for double).
  for (const char* op : {"Elu", "Selu", "Softsign"}) AddUnary(c, in, op, Types(op), -5.0, 5.0);
  AddUnary(c, in, "Softplus", Types("Softplus"), -40.0, 40.0);
  for (DataType dtype : Types("Softplus")) {
    c->push_back({"Softplus", DataTypeString(dtype) + " around thresholds",
                  {{"T", TypeAttr(dtype)}},
                  {Literal(dtype, {8}, {-50.0, -35.0, -14.0, -13.0, 0.0, 13.0, 14.0, 50.0})}});
  }
  for (DataType dtype : Types("LeakyRelu")) {
    for (float alpha : {0.2f, 0.01f, -0.3f}) {
      c->push_back({"LeakyRelu", absl::StrCat(DataTypeString(dtype), "[3,5] alpha ", alpha),
                    {{"T", TypeAttr(dtype)}, {"alpha", FloatAttr(alpha)}},
                    {in.Random(dtype, {3, 5}, -3.0, 3.0)}});
    }
  }
  for (DataType dtype : Types("Softmax")) {
    for (const auto& shape : Shapes{{5}, {3, 4}, {2, 3, 10}}) {
      c->push_back({"Softmax", DataTypeString(dtype) + ShapeText(shape),
                    {{"T", TypeAttr(dtype)}}, {in.Random(dtype, shape, -5.0, 5.0)}});
    }
  }
  // Conv2D and pooling: float only (the table says so; the coverage test would flag more).
  for (const char* padding : {"SAME", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      c->push_back({"Conv2D", absl::StrCat("float[1,6,7,2]*[3,3,2,4] ", padding, " s", stride),
                    {{"T", TypeAttr(DT_FLOAT)}, {"strides", IntsAttr({1, stride, stride, 1})},
                     {"padding", StringAttr(padding)}},
                    {in.Random(DT_FLOAT, {1, 6, 7, 2}), in.Random(DT_FLOAT, {3, 3, 2, 4})},
                    1e-4});
      for (const char* pool : {"MaxPool", "AvgPool"}) {
        c->push_back({pool, absl::StrCat("float[2,5,6,3] k2 ", padding, " s", stride),
                      {{"T", TypeAttr(DT_FLOAT)}, {"ksize", IntsAttr({1, 2, 2, 1})},
                       {"strides", IntsAttr({1, stride, stride, 1})},
                       {"padding", StringAttr(padding)}},
                      {in.Random(DT_FLOAT, {2, 5, 6, 3})}});
      }
    }
  }
}

// DepthwiseConv2dNative, FusedBatchNorm*, the resizes: float (nearest: every listed dtype).
void AddVision(std::vector<Case>* c, Inputs& in) {
  struct Depthwise {
    std::vector<int64_t> input, filter;
    std::string format, padding;
    int64_t stride, dilation;
  };
  const std::vector<Depthwise> depthwise = {
      {{2, 6, 7, 3}, {3, 3, 3, 1}, "NHWC", "SAME", 1, 1},
      {{2, 6, 7, 3}, {3, 3, 3, 2}, "NHWC", "SAME", 2, 1},
      {{1, 7, 6, 4}, {3, 2, 4, 1}, "NHWC", "VALID", 2, 1},
      {{1, 9, 9, 2}, {3, 3, 2, 2}, "NHWC", "SAME", 1, 2},
      {{2, 3, 6, 7}, {3, 3, 3, 1}, "NCHW", "SAME", 1, 1},
      {{2, 3, 6, 7}, {3, 3, 3, 2}, "NCHW", "VALID", 2, 1},
  };
  for (const Depthwise& d : depthwise) {
    const bool nchw = d.format == "NCHW";
    const std::vector<int64_t> four = nchw ? std::vector<int64_t>{1, 1, d.stride, d.stride}
                                           : std::vector<int64_t>{1, d.stride, d.stride, 1};
    const std::vector<int64_t> dil = nchw ? std::vector<int64_t>{1, 1, d.dilation, d.dilation}
                                          : std::vector<int64_t>{1, d.dilation, d.dilation, 1};
    c->push_back({"DepthwiseConv2dNative",
                  absl::StrCat("float", ShapeText(d.input), "*", ShapeText(d.filter), " ",
                               d.format, " ", d.padding, " s", d.stride, " d", d.dilation),
                  {{"T", TypeAttr(DT_FLOAT)}, {"strides", IntsAttr(four)},
                   {"dilations", IntsAttr(dil)}, {"padding", StringAttr(d.padding)},
                   {"data_format", StringAttr(d.format)}},
                  {in.Random(DT_FLOAT, d.input), in.Random(DT_FLOAT, d.filter)},
                  1e-4});
  }
  struct BatchNorm {
    std::string format;
    std::vector<int64_t> x;
    int64_t channels;
    bool training;
    float factor;
  };
  const std::vector<BatchNorm> batch_norms = {
      {"NHWC", {2, 3, 4, 5}, 5, false, 1.0f}, {"NCHW", {2, 5, 3, 4}, 5, false, 1.0f},
      {"NHWC", {2, 3, 4, 5}, 5, true, 1.0f},  {"NCHW", {2, 5, 3, 4}, 5, true, 0.5f},
      {"NDHWC", {1, 2, 3, 2, 4}, 4, false, 1.0f},
  };
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    for (const BatchNorm& b : batch_norms) {
      std::map<std::string, AttrValue> attrs = {{"T", TypeAttr(DT_FLOAT)},
                                                {"epsilon", FloatAttr(1e-3f)},
                                                {"is_training", BoolAttr(b.training)},
                                                {"data_format", StringAttr(b.format)}};
      if (std::string(op) != "FusedBatchNorm") {
        attrs["U"] = TypeAttr(DT_FLOAT);
        attrs["exponential_avg_factor"] = FloatAttr(b.factor);
      } else if (b.factor != 1.0f) {
        continue;
      }
      c->push_back({op,
                    absl::StrCat("float", ShapeText(b.x), " ", b.format,
                                 b.training ? " training" : " inference", " f", b.factor),
                    attrs,
                    {in.Random(DT_FLOAT, b.x, -3.0, 3.0), in.Random(DT_FLOAT, {b.channels}),
                     in.Random(DT_FLOAT, {b.channels}), in.Random(DT_FLOAT, {b.channels}),
                     in.Random(DT_FLOAT, {b.channels}, 0.1, 2.0)},
                    1e-4});
    }
  }
  // Resizes: up, down and odd sizes in each coordinate mode.
  const std::vector<std::vector<int32_t>> sizes = {{8, 10}, {2, 3}, {5, 4}, {1, 1}};
  const std::vector<std::pair<bool, bool>> modes = {{false, false}, {true, false}, {false, true}};
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic"}) {
    for (DataType dtype : Types(op)) {
      for (const auto& size : sizes) {
        for (const auto& [align, half] : modes) {
          if (dtype != DT_FLOAT && size != sizes[0]) continue;
          c->push_back({op,
                        absl::StrCat(DataTypeString(dtype), "[2,4,5,3] -> ", ShapeText({size[0], size[1]}),
                                     align ? " align_corners" : "", half ? " half_pixel" : ""),
                        {{"T", TypeAttr(dtype)}, {"align_corners", BoolAttr(align)},
                         {"half_pixel_centers", BoolAttr(half)}},
                        {in.Random(dtype, {2, 4, 5, 3}, -9.0, 9.0), Inputs::Vector<int32_t>(size)},
                        1e-4});
        }
      }
    }
  }
}

void AddReductions(std::vector<Case>* c, Inputs& in) {
  for (const char* op : {"Sum", "Mean", "Max"}) {
    for (DataType dtype : Types(op)) {
      for (const auto& axes : Shapes{{0}, {1}, {0, 2}, {}, {-1}}) {
        for (bool keep : {false, true}) {
          c->push_back({op,
                        absl::StrCat(DataTypeString(dtype), "[3,4,5] axes ", ShapeText(axes),
                                     keep ? " keep_dims" : ""),
                        {{"T", TypeAttr(dtype)}, {"Tidx", TypeAttr(DT_INT32)},
                         {"keep_dims", BoolAttr(keep)}},
                        {in.Random(dtype, {3, 4, 5}, -9.0, 9.0),
                         Inputs::Vector<int32_t>(std::vector<int32_t>(axes.begin(), axes.end()))}});
        }
      }
    }
  }
}

// An int32 or int64 index vector.
Tensor IndexVector(DataType dtype, const std::vector<int32_t>& values) {
  if (dtype == DT_INT32) return Inputs::Vector<int32_t>(values);
  return Inputs::Vector<int64_t>(std::vector<int64_t>(values.begin(), values.end()));
}

void AddFillAndCast(std::vector<Case>* c, Inputs& in) {
  for (DataType dtype : Types("Fill")) {
    for (DataType index : Types("Fill", "index_type")) {
      c->push_back({"Fill", DataTypeString(dtype) + " [2,3] dims " + DataTypeString(index),
                    {{"T", TypeAttr(dtype)}, {"index_type", TypeAttr(index)}},
                    {IndexVector(index, {2, 3}), in.Random(dtype, {}, -9.0, 9.0)}});
    }
    c->push_back({"Fill", DataTypeString(dtype) + " []",
                  {{"T", TypeAttr(dtype)}, {"index_type", TypeAttr(DT_INT32)}},
                  {Inputs::Vector<int32_t>({}), in.Random(dtype, {}, -9.0, 9.0)}});
  }
  for (DataType from : Types("Cast", "SrcT")) {
    for (DataType to : Types("Cast", "DstT")) {
      c->push_back({"Cast", DataTypeString(from) + "->" + DataTypeString(to),
                    {{"SrcT", TypeAttr(from)}, {"DstT", TypeAttr(to)}, {"Truncate", BoolAttr(false)}},
                    {in.Random(from, {2, 5}, -4.0, 4.0)}});
    }
  }
}

void AddArray(std::vector<Case>* c, Inputs& in) {
  AddFillAndCast(c, in);
  for (DataType dtype : Types("Identity")) {
    c->push_back({"Identity", DataTypeString(dtype) + "[3,2]", {{"T", TypeAttr(dtype)}},
                  {in.Random(dtype, {3, 2})}});
  }
  for (const char* op : {"ZerosLike", "OnesLike"}) {
    for (DataType dtype : Types(op)) {
      c->push_back({op, DataTypeString(dtype) + "[2,2]", {{"T", TypeAttr(dtype)}},
                    {in.Random(dtype, {2, 2})}});
    }
  }
  for (DataType dtype : Types("Const", "dtype")) {
    AttrValue value;
    *value.mutable_tensor() = in.Random(dtype, {2, 3}).ToProto();
    c->push_back({"Const", DataTypeString(dtype) + "[2,3]",
                  {{"dtype", TypeAttr(dtype)}, {"value", value}}, {}});
  }
  // The shape-only ops: every element dtype with an int32 index, every index dtype with
  // float, and a few shapes.
  for (DataType dtype : Types("Reshape")) {
    for (DataType index : Types("Reshape", "Tshape")) {
      if (dtype != DT_FLOAT && index != DT_INT32) continue;
      for (const auto& shape : std::vector<std::vector<int32_t>>{{6}, {3, -1}, {1, 2, 3}}) {
        c->push_back({"Reshape",
                      DataTypeString(dtype) + "[2,3] -> " + absl::StrJoin(shape, ",") + " " +
                          DataTypeString(index),
                      {{"T", TypeAttr(dtype)}, {"Tshape", TypeAttr(index)}},
                      {in.Random(dtype, {2, 3}), IndexVector(index, shape)}});
      }
    }
  }
  for (DataType dtype : Types("Shape")) {
    for (DataType index : Types("Shape", "out_type")) {
      if (dtype != DT_FLOAT && index != DT_INT32) continue;
      for (const auto& shape : Shapes{{}, {4}, {2, 3, 1}}) {
        c->push_back({"Shape", DataTypeString(dtype) + ShapeText(shape) + " " + DataTypeString(index),
                      {{"T", TypeAttr(dtype)}, {"out_type", TypeAttr(index)}},
                      {in.Random(dtype, shape)}});
      }
    }
  }
  for (DataType dtype : Types("ExpandDims")) {
    for (DataType index : Types("ExpandDims", "Tdim")) {
      if (dtype != DT_FLOAT && index != DT_INT32) continue;
      for (int32_t dim : {0, 1, -1}) {
        c->push_back({"ExpandDims",
                      absl::StrCat(DataTypeString(dtype), "[2,3] dim ", dim, " ",
                                   DataTypeString(index)),
                      {{"T", TypeAttr(dtype)}, {"Tdim", TypeAttr(index)}},
                      {in.Random(dtype, {2, 3}),
                       index == DT_INT32 ? Inputs::Scalar<int32_t>(dim)
                                         : Inputs::Scalar<int64_t>(dim)}});
      }
    }
  }
  for (DataType dtype : Types("Squeeze")) {
    for (const auto& dims : Shapes{{}, {0}, {2}}) {
      c->push_back({"Squeeze", DataTypeString(dtype) + "[1,3,1] dims " + ShapeText(dims),
                    {{"T", TypeAttr(dtype)}, {"squeeze_dims", IntsAttr(dims)}},
                    {in.Random(dtype, {1, 3, 1})}});
    }
  }
}

// Conv2DBackpropInput/Filter, MaxPoolGrad, AvgPoolGrad: NHWC, every dtype the table lists.
void AddConvGradKernels(std::vector<Case>* c, Inputs& in) {
  struct Conv {
    std::vector<int64_t> input, filter;
    std::string padding;
    int64_t stride, dilation;
    std::vector<int64_t> pads;  // EXPLICIT only: {top, bottom, left, right}
  };
  const std::vector<Conv> convs = {
      {{2, 6, 7, 3}, {3, 3, 3, 4}, "SAME", 1, 1, {}},
      {{2, 6, 7, 3}, {3, 3, 3, 4}, "SAME", 2, 1, {}},
      {{1, 7, 5, 2}, {3, 2, 2, 3}, "VALID", 2, 1, {}},
      {{2, 9, 8, 2}, {3, 3, 2, 2}, "SAME", 1, 2, {}},
      {{1, 9, 7, 3}, {2, 3, 3, 2}, "VALID", 1, 2, {}},
      {{2, 5, 5, 4}, {1, 1, 4, 3}, "VALID", 1, 1, {}},  // pointwise: a plain GEMM
      {{2, 5, 5, 4}, {1, 1, 4, 3}, "SAME", 2, 1, {}},
      {{1, 5, 6, 2}, {3, 3, 2, 3}, "EXPLICIT", 2, 1, {1, 2, 2, 0}},
      {{0, 4, 4, 2}, {3, 3, 2, 3}, "SAME", 1, 1, {}},  // empty batch
      {{1, 4, 4, 2}, {3, 3, 2, 0}, "SAME", 1, 1, {}},  // no output channel: zero gradients
  };
  const auto out_size = [](const Conv& v, int dim) {
    const int64_t size = v.input[dim], window = (v.filter[dim - 1] - 1) * v.dilation + 1;
    if (v.padding == "SAME") return (size + v.stride - 1) / v.stride;
    const int64_t pad = v.pads.empty() ? 0 : v.pads[2 * dim - 2] + v.pads[2 * dim - 1];
    return (size + pad - window) / v.stride + 1;
  };
  for (const Conv& v : convs) {
    const std::vector<int64_t> dy = {v.input[0], out_size(v, 1), out_size(v, 2), v.filter[3]};
    const std::vector<int32_t> input32(v.input.begin(), v.input.end());
    const std::vector<int32_t> filter32(v.filter.begin(), v.filter.end());
    const std::vector<int64_t> pads =
        v.pads.empty()
            ? std::vector<int64_t>{}
            : std::vector<int64_t>{0, 0, v.pads[0], v.pads[1], v.pads[2], v.pads[3], 0, 0};
    const std::string label = absl::StrCat(ShapeText(v.input), "*", ShapeText(v.filter), " ",
                                           v.padding, " s", v.stride, " d", v.dilation);
    for (const char* op : {"Conv2DBackpropInput", "Conv2DBackpropFilter"}) {
      const bool input_grad = std::string(op) == "Conv2DBackpropInput";
      for (DataType dtype : Types(op)) {
        c->push_back({op, DataTypeString(dtype) + label,
                      {{"T", TypeAttr(dtype)}, {"strides", IntsAttr({1, v.stride, v.stride, 1})},
                       {"dilations", IntsAttr({1, v.dilation, v.dilation, 1})},
                       {"padding", StringAttr(v.padding)}, {"explicit_paddings", IntsAttr(pads)}},
                      {input_grad ? Inputs::Vector<int32_t>(input32) : in.Random(dtype, v.input),
                       input_grad ? in.Random(dtype, v.filter) : Inputs::Vector<int32_t>(filter32),
                       in.Random(dtype, dy)},
                      1e-4});
      }
    }
  }
  struct Pool {
    std::vector<int64_t> input;
    int64_t window, stride;
    std::string padding;
  };
  const std::vector<Pool> pools = {
      {{2, 7, 9, 3}, 3, 2, "SAME"}, {{2, 7, 9, 3}, 3, 2, "VALID"},  // overlapping windows
      {{2, 6, 8, 3}, 2, 2, "VALID"}, {{1, 5, 7, 2}, 2, 2, "SAME"},  // disjoint ones
      {{1, 5, 5, 2}, 3, 1, "SAME"},  {{0, 5, 5, 2}, 3, 2, "SAME"},  // last: empty
  };
  for (const Pool& p : pools) {
    std::vector<int64_t> out = p.input;
    for (int d : {1, 2}) {
      out[d] = p.padding == "SAME" ? (p.input[d] + p.stride - 1) / p.stride
                                   : (p.input[d] - p.window) / p.stride + 1;
    }
    const std::map<std::string, AttrValue> attrs = {
        {"ksize", IntsAttr({1, p.window, p.window, 1})},
        {"strides", IntsAttr({1, p.stride, p.stride, 1})}, {"padding", StringAttr(p.padding)}};
    const std::string label = absl::StrCat(ShapeText(p.input), " k", p.window, " s", p.stride,
                                           " ", p.padding);
    for (DataType dtype : Types("MaxPoolGrad")) {
      std::map<std::string, AttrValue> a = attrs;
      a["T"] = TypeAttr(dtype);
      // orig_output is only shape-checked; the max is found again in orig_input.
      c->push_back({"MaxPoolGrad", DataTypeString(dtype) + label, a,
                    {in.Random(dtype, p.input), in.Random(dtype, out), in.Random(dtype, out)}});
      // Small integers: many ties, which go to the window's first maximum.
      Tensor ties = in.Random(dtype, p.input, -1.5, 1.5);
      DispatchNumeric(dtype, [&](auto zero) {
        using T = decltype(zero);
        for (T& x : ties.flat<T>()) x = static_cast<T>(std::round(static_cast<double>(x)));
      });
      c->push_back({"MaxPoolGrad", DataTypeString(dtype) + label + " ties", a,
                    {ties, in.Random(dtype, out), in.Random(dtype, out)}});
    }
    for (DataType dtype : Types("AvgPoolGrad")) {
      std::map<std::string, AttrValue> a = attrs;
      a["T"] = TypeAttr(dtype);
      const std::vector<int32_t> shape32(p.input.begin(), p.input.end());
      c->push_back({"AvgPoolGrad", DataTypeString(dtype) + label, a,
                    {Inputs::Vector<int32_t>(shape32), in.Random(dtype, out)}});
    }
  }
}

// The training kernels (kernels/cuda/train_kernels.cc): activation gradients, BiasAddGrad,
// the cross-entropies, comparisons, selects, ArgMax (ties and NaNs too), BroadcastTo,
// Tile and Transpose; every listed dtype, broadcasting, and an empty tensor where cheap.
void AddTrainingKernels(std::vector<Case>* c, Inputs& in) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* op : {"ReluGrad", "Relu6Grad", "SigmoidGrad", "TanhGrad", "EluGrad",
                         "SeluGrad", "LeakyReluGrad", "SoftplusGrad", "SoftsignGrad"}) {
    for (DataType dtype : Types(op)) {
      for (const auto& shape : Shapes{{}, {7}, {2, 3, 4}, {0, 3}}) {
        c->push_back({op, DataTypeString(dtype) + ShapeText(shape), {{"T", TypeAttr(dtype)}},
                      {in.Random(dtype, shape), in.Random(dtype, shape, -8.0, 8.0)}});
      }
      // Zeros, the Relu6 bounds and NaN (Difference cannot compare infinite outputs).
      c->push_back({op, DataTypeString(dtype) + " specials", {{"T", TypeAttr(dtype)}},
                    {Literal(dtype, {8}, {1.5, 1.0, 2.0, 3.0, -1.0, 1.0, -2.0, 0.5}),
                     Literal(dtype, {8}, {-1.0, 0.0, 3.0, 6.0, 7.0, nan, -0.0, 0.5})}});
    }
  }
  // Infinite gradients where the features mask them: a select gives 0, Relu6Grad's
  // product gives NaN.
  for (const char* op : {"ReluGrad", "Relu6Grad"}) {
    for (DataType dtype : Types(op)) {
      c->push_back({op, DataTypeString(dtype) + " masked infinities", {{"T", TypeAttr(dtype)}},
                    {Literal(dtype, {3}, {inf, inf, -inf}),
                     Literal(dtype, {3}, {-3.0, -1.0, 0.0})}});
    }
  }
  for (DataType dtype : Types("LeakyReluGrad")) {
    for (float alpha : {0.01f, -0.3f}) {
      c->push_back({"LeakyReluGrad", absl::StrCat(DataTypeString(dtype), "[3,5] alpha ", alpha),
                    {{"T", TypeAttr(dtype)}, {"alpha", FloatAttr(alpha)}},
                    {in.Random(dtype, {3, 5}), in.Random(dtype, {3, 5})}});
    }
  }
  for (DataType dtype : Types("BiasAddGrad")) {
    for (const char* format : {"NHWC", "NCHW"}) {
      for (const auto& shape : Shapes{{2, 3}, {1, 4}, {4, 1}, {2, 3, 4}, {2, 3, 4, 5},
                                      {64, 33, 17}, {0, 3, 4}, {2, 0, 3}}) {
        c->push_back({"BiasAddGrad", DataTypeString(dtype) + ShapeText(shape) + " " + format,
                      {{"T", TypeAttr(dtype)}, {"data_format", StringAttr(format)}},
                      {in.Random(dtype, shape)}, 1e-4});
      }
    }
  }
  // Dense cross-entropy: same shapes, either side broadcast along a dim of 1, long rows.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> xent = {
      {{3, 5}, {3, 5}}, {{1, 5}, {4, 5}}, {{4, 5}, {1, 5}}, {{4, 1}, {4, 6}},
      {{2, 300}, {2, 300}}, {{0, 4}, {0, 4}}, {{3, 0}, {3, 0}}};
  for (DataType dtype : Types("SoftmaxCrossEntropyWithLogits")) {
    for (const auto& [logits, labels] : xent) {
      c->push_back({"SoftmaxCrossEntropyWithLogits",
                    DataTypeString(dtype) + ShapeText(logits) + ShapeText(labels),
                    {{"T", TypeAttr(dtype)}},
                    {in.Random(dtype, logits, -5.0, 5.0), in.Random(dtype, labels, 0.0, 1.0)},
                    1e-4});
    }
  }
  for (DataType dtype : Types("SparseSoftmaxCrossEntropyWithLogits")) {
    for (DataType label : Types("SparseSoftmaxCrossEntropyWithLogits", "Tlabels")) {
      for (const auto& shape : Shapes{{4, 5}, {3, 300}, {1, 1}, {0, 5}}) {
        c->push_back({"SparseSoftmaxCrossEntropyWithLogits",
                      DataTypeString(dtype) + ShapeText(shape) + " " + DataTypeString(label),
                      {{"T", TypeAttr(dtype)}, {"Tlabels", TypeAttr(label)}},
                      {in.Random(dtype, shape, -5.0, 5.0),
                       in.Random(label, {shape[0]}, 0.0, static_cast<double>(shape[1] - 1))},
                      1e-4});
      }
    }
  }
  // Comparisons: small integer-valued inputs, so equal pairs occur for every dtype.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {4}}, {{3, 1, 2}, {4, 1}},
      {{0, 3}, {3}}};
  for (const char* op : {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"}) {
    for (DataType dtype : Types(op)) {
      for (const auto& [a, b] : pairs) {
        Tensor x = in.Random(DT_INT32, a, -2.0, 2.0), y = in.Random(DT_INT32, b, -2.0, 2.0);
        auto cast = [dtype](const Tensor& t) {
          std::vector<double> values;
          for (int32_t v : t.flat<int32_t>()) values.push_back(v);
          std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
          return Literal(dtype, dims, values);
        };
        c->push_back({op, DataTypeString(dtype) + ShapeText(a) + ShapeText(b),
                      {{"T", TypeAttr(dtype)}}, {cast(x), cast(y)}});
      }
    }
  }
  for (const char* op : {"Equal", "NotEqual"}) {
    for (bool error : {true, false}) {
      c->push_back({op, absl::StrCat("float[3]=[3] incompatible_shape_error ", error),
                    {{"T", TypeAttr(DT_FLOAT)}, {"incompatible_shape_error", BoolAttr(error)}},
                    {Literal(DT_FLOAT, {3}, {1.0, nan, 2.0}),
                     Literal(DT_FLOAT, {3}, {1.0, nan, 3.0})}});
    }
    c->push_back({op, "float[2,3] vs [4] incompatible_shape_error false",
                  {{"T", TypeAttr(DT_FLOAT)}, {"incompatible_shape_error", BoolAttr(false)}},
                  {in.Random(DT_FLOAT, {2, 3}), in.Random(DT_FLOAT, {4})}});
  }
  // Select: scalar, vector (first-dim rows) and same-shape conditions; SelectV2 broadcasts.
  const std::vector<std::vector<std::vector<int64_t>>> select = {
      {{}, {2, 3}, {2, 3}}, {{3}, {3, 4}, {3, 4}}, {{2, 3}, {2, 3}, {2, 3}}, {{4}, {4}, {4}},
      {{0}, {0, 4}, {0, 4}}};
  const std::vector<std::vector<std::vector<int64_t>>> select_v2 = {
      {{2, 1}, {1, 3}, {2, 3}}, {{}, {2, 3}, {2, 3}}, {{3}, {2, 3}, {}},
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{4, 1, 1}, {1, 3, 1}, {1, 1, 5}}, {{0, 3}, {3}, {1}}};
  for (DataType dtype : Types("Select")) {
    for (const auto& shapes : select) {
      c->push_back({"Select",
                    DataTypeString(dtype) + ShapeText(shapes[0]) + ShapeText(shapes[1]) +
                        ShapeText(shapes[2]),
                    {{"T", TypeAttr(dtype)}},
                    {in.Random(DT_BOOL, shapes[0], 0.0, 1.0), in.Random(dtype, shapes[1]),
                     in.Random(dtype, shapes[2])}});
    }
  }
  for (DataType dtype : Types("SelectV2")) {
    for (const auto& shapes : select_v2) {
      c->push_back({"SelectV2",
                    DataTypeString(dtype) + ShapeText(shapes[0]) + ShapeText(shapes[1]) +
                        ShapeText(shapes[2]),
                    {{"T", TypeAttr(dtype)}},
                    {in.Random(DT_BOOL, shapes[0], 0.0, 1.0), in.Random(dtype, shapes[1]),
                     in.Random(dtype, shapes[2])}});
    }
  }
  // ArgMax: short rows, rows of >= 32 (the CPU's lane scan), columns, a long column (one
  // block per output); small integer values, so ties must pick the first index.
  const std::vector<std::pair<std::vector<int64_t>, int32_t>> arg_shapes = {
      {{5, 7}, 1}, {{5, 7}, 0}, {{3, 4, 5}, 1}, {{3, 4, 5}, -1}, {{2, 40}, 1},
      {{3, 100}, -1}, {{2000, 3}, 0}, {{9}, 0}, {{0, 4}, 1}};
  for (DataType dtype : Types("ArgMax")) {
    for (const auto& [shape, axis] : arg_shapes) {
      c->push_back({"ArgMax", absl::StrCat(DataTypeString(dtype), ShapeText(shape), " axis ", axis),
                    {{"T", TypeAttr(dtype)}, {"Tidx", TypeAttr(DT_INT32)},
                     {"output_type", TypeAttr(DT_INT64)}},
                    {in.Random(dtype, shape, -3.0, 3.0), Inputs::Scalar<int32_t>(axis)}});
    }
  }
  for (DataType index : Types("ArgMax", "Tidx")) {
    for (DataType out : Types("ArgMax", "output_type")) {
      c->push_back({"ArgMax",
                    "float[4,33] axis 1 " + DataTypeString(index) + "->" + DataTypeString(out),
                    {{"T", TypeAttr(DT_FLOAT)}, {"Tidx", TypeAttr(index)},
                     {"output_type", TypeAttr(out)}},
                    {in.Random(DT_FLOAT, {4, 33}),
                     index == DT_INT32 ? Inputs::Scalar<int32_t>(1) : Inputs::Scalar<int64_t>(1)}});
    }
  }
  // NaN rows as the CPU scans them: a leading NaN sticks; in a lane scan a NaN lane wins
  // ties by index; ties between equal floats pick the first.
  for (DataType dtype : Types("ArgMax")) {
    if (dtype != DT_FLOAT && dtype != DT_DOUBLE) continue;
    for (int64_t len : {10, 40, 70}) {
      std::vector<double> values;
      for (int64_t row = 0; row < 5; ++row) {
        for (int64_t i = 0; i < len; ++i) {
          double v = static_cast<double>((i * 7 + row * 3) % 11);
          if ((row == 0 && i == 0) || (row == 1 && i == 5) || (row == 2 && i == len - 1) ||
              (row == 3 && i % 16 == 3 && i > 0)) {
            v = nan;
          }
          values.push_back(v);
        }
      }
      for (int32_t axis : {0, 1}) {
        c->push_back({"ArgMax",
                      absl::StrCat(DataTypeString(dtype), "[5,", len, "] NaNs axis ", axis),
                      {{"T", TypeAttr(dtype)}, {"Tidx", TypeAttr(DT_INT32)},
                       {"output_type", TypeAttr(DT_INT32)}},
                      {Literal(dtype, {5, len}, values), Inputs::Scalar<int32_t>(axis)}});
      }
    }
  }
  // BroadcastTo and Tile.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int32_t>>> broadcasts = {
      {{3}, {2, 3}}, {{2, 1}, {2, 3}}, {{}, {2, 2}}, {{1, 3, 1}, {2, 3, 4}},
      {{2, 3}, {2, 3}}, {{1, 3}, {0, 3}}, {{2, 1, 3}, {4, 2, 5, 3}}};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int32_t>>> tiles = {
      {{2, 3}, {2, 1}}, {{2, 3}, {1, 3}}, {{3}, {4}}, {{2, 1, 3}, {2, 3, 1}}, {{2, 3}, {1, 1}},
      {{2, 3}, {0, 2}}, {{}, {}}, {{1, 2, 3}, {3, 2, 2}}};
  for (DataType dtype : Types("BroadcastTo")) {
    for (DataType index : Types("BroadcastTo", "Tidx")) {
      for (const auto& [shape, to] : broadcasts) {
        c->push_back({"BroadcastTo",
                      DataTypeString(dtype) + ShapeText(shape) + " -> " +
                          absl::StrJoin(to, ",") + " " + DataTypeString(index),
                      {{"T", TypeAttr(dtype)}, {"Tidx", TypeAttr(index)}},
                      {in.Random(dtype, shape), IndexVector(index, to)}});
      }
    }
  }
  for (DataType dtype : Types("Tile")) {
    for (DataType index : Types("Tile", "Tmultiples")) {
      for (const auto& [shape, multiples] : tiles) {
        c->push_back({"Tile",
                      DataTypeString(dtype) + ShapeText(shape) + " x " +
                          absl::StrJoin(multiples, ",") + " " + DataTypeString(index),
                      {{"T", TypeAttr(dtype)}, {"Tmultiples", TypeAttr(index)}},
                      {in.Random(dtype, shape), IndexVector(index, multiples)}});
      }
    }
  }
  // Transpose: 2-D and batched 2-D (tiled kernel, ragged tiles), general permutations
  // (gather), size-1 dims, views, empty; every element size.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int32_t>>> transposes = {
      {{2, 3}, {1, 0}}, {{33, 70}, {1, 0}}, {{2, 3, 4}, {0, 2, 1}}, {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4, 5}, {0, 3, 1, 2}}, {{2, 3, 4, 5}, {3, 1, 2, 0}}, {{1, 3, 1}, {2, 1, 0}},
      {{4, 1, 5, 2}, {2, 3, 0, 1}}, {{0, 3}, {1, 0}}, {{}, {}}};
  for (DataType dtype : Types("Transpose")) {
    for (DataType index : Types("Transpose", "Tperm")) {
      for (const auto& [shape, perm] : transposes) {
        if (index != DT_INT32 && shape.size() != 4) continue;
        c->push_back({"Transpose",
                      DataTypeString(dtype) + ShapeText(shape) + " perm " +
                          absl::StrJoin(perm, ",") + " " + DataTypeString(index),
                      {{"T", TypeAttr(dtype)}, {"Tperm", TypeAttr(index)}},
                      {in.Random(dtype, shape, 0.0, 100.0), IndexVector(index, perm)}});
      }
    }
  }
}

// The random ops with a fixed (seed, seed2): each kernel starts TF's Philox stream at the
// same place, so the GPU's numbers are the CPU's.
void AddRandom(std::vector<Case>* c) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    for (DataType dtype : Types(op, "dtype")) {
      for (DataType index : Types(op, "T")) {
        Tensor shape = index == DT_INT32 ? Inputs::Vector<int32_t>({2, 3, 5})
                                         : Inputs::Vector<int64_t>({2, 3, 5});
        c->push_back({op, DataTypeString(dtype) + "[2,3,5] shape " + DataTypeString(index),
                      {{"dtype", TypeAttr(dtype)}, {"T", TypeAttr(index)},
                       {"seed", IntAttr(7)}, {"seed2", IntAttr(3)}},
                      {shape}});
      }
    }
  }
}

const std::vector<Case>& AllCases() {
  static const std::vector<Case>* cases = [] {
    auto* all = new std::vector<Case>();
    Inputs in;
    AddMath(all, in);
    AddNn(all, in);
    AddVision(all, in);
    AddReductions(all, in);
    AddArray(all, in);
    AddRandom(all);
    AddConvGradKernels(all, in);
    AddTrainingKernels(all, in);
    return all;
  }();
  return *cases;
}

// ---------------------------------------------------------------------------------------
// Running one case on one device.

// Waits for a DeviceCopier callback.
absl::Status CopyAndWait(const std::function<void(DeviceCopier::StatusCallback)>& copy) {
  absl::Notification done;
  absl::Status status;
  copy([&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

// Which of a node's inputs (or outputs) a kernel keeps in host memory.
std::vector<bool> HostMemoryFlags(const NodeDef& node, const OpDef& op_def,
                                  const KernelDef* kernel, bool outputs) {
  std::vector<bool> flags;
  const auto& args = outputs ? op_def.output_arg() : op_def.input_arg();
  for (const OpDef::ArgDef& arg : args) {
    int64_t count = 1;
    if (!arg.number_attr().empty()) count = *GetIntAttr(node, arg.number_attr());
    bool host = false;
    if (kernel != nullptr) {
      for (const std::string& name : kernel->host_memory_args) host = host || name == arg.name();
    }
    flags.insert(flags.end(), count, host);
  }
  return flags;
}

// Runs `c` on `device` with the kernels of `registry`; returns the outputs as host tensors.
absl::StatusOr<std::vector<Tensor>> RunOn(const Case& c, Device* device,
                                          const KernelRegistry& registry) {
  const OpDef* op_def = OpRegistry::Global().Find(c.op);
  if (op_def == nullptr) return absl::NotFoundError("unknown op " + c.op);
  NodeDef node;
  node.set_name("conformance");
  node.set_op(c.op);
  for (const auto& [name, value] : c.attrs) (*node.mutable_attr())[name] = value;
  AddDefaultAttrs(*op_def, &node);
  DataTypeVector in, out;
  DFLOW_RETURN_IF_ERROR(InOutTypesForNode(node, *op_def, &in, &out));
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                         registry.CreateKernel(node, *op_def, in, out, device));
  const KernelDef* def = registry.Find(node, device->device_type());
  DeviceCopier* copier = device->copier();
  const std::vector<bool> host_in = HostMemoryFlags(node, *op_def, def, false);
  const std::vector<bool> host_out = HostMemoryFlags(node, *op_def, def, true);

  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (copier == nullptr || host_in[i]) {
      inputs.push_back(c.inputs[i]);
      continue;
    }
    DFLOW_ASSIGN_OR_RETURN(Tensor on_device, Tensor::Allocate(device->allocator(),
                                                              c.inputs[i].dtype(),
                                                              c.inputs[i].shape()));
    DFLOW_RETURN_IF_ERROR(CopyAndWait([&](DeviceCopier::StatusCallback done) {
      copier->CopyHostToDevice(c.inputs[i], on_device, std::move(done));
    }));
    inputs.push_back(std::move(on_device));
  }
  OpKernelContext::Params params;
  params.kernel = kernel.get();
  params.device = device;
  params.inputs = absl::MakeSpan(inputs);
  OpKernelContext context(params, static_cast<int>(out.size()));
  kernel->Compute(&context);  // an async kernel's Compute waits for it
  DFLOW_RETURN_IF_ERROR(context.status());

  std::vector<Tensor> outputs;
  for (int i = 0; i < context.num_outputs(); ++i) {
    const Tensor& result = *context.mutable_output(i);
    if (copier == nullptr || host_out[i] || !result.IsInitialized()) {
      outputs.push_back(result);
      continue;
    }
    DFLOW_ASSIGN_OR_RETURN(Tensor host, Tensor::Allocate(ProcessCpuAllocator(), result.dtype(),
                                                         result.shape()));
    DFLOW_RETURN_IF_ERROR(CopyAndWait([&](DeviceCopier::StatusCallback done) {
      copier->CopyDeviceToHost(result, host, std::move(done));
    }));
    outputs.push_back(std::move(host));
  }
  return outputs;
}

// The first element where `got` and `want` differ beyond `tolerance`, or "" when they agree.
std::string Difference(const Tensor& got, const Tensor& want, double tolerance) {
  if (got.dtype() != want.dtype() || !(got.shape() == want.shape())) {
    return absl::StrCat("got ", DataTypeString(got.dtype()), got.shape().DebugString(),
                        ", want ", DataTypeString(want.dtype()), want.shape().DebugString());
  }
  std::string diff;
  DispatchNumeric(want.dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto g = got.flat<T>();
    auto w = want.flat<T>();
    for (size_t i = 0; i < w.size() && diff.empty(); ++i) {
      const double a = static_cast<double>(g[i]), b = static_cast<double>(w[i]);
      const bool close = std::is_floating_point<T>::value
                             ? std::fabs(a - b) <= tolerance * (1.0 + std::fabs(b)) ||
                                   (std::isnan(a) && std::isnan(b))
                             : a == b;
      if (!close) diff = absl::StrCat("element ", i, ": got ", a, ", want ", b);
    }
  });
  return diff;
}

// Runs every case on `gpu` and on a CPU device, checking they agree.
void CheckAllCases(Device* gpu) {
  const KernelRegistry& registry = DefaultKernelRegistry();
  ThreadPool pool(1, "conformance_cpu");
  CpuDevice cpu(0, ProcessCpuAllocator(), &pool);
  for (const Case& c : AllCases()) {
    INFO(c.op << " " << c.label);
    absl::StatusOr<std::vector<Tensor>> want = RunOn(c, &cpu, registry);
    INFO("CPU: " << want.status().ToString());
    REQUIRE(want.ok());
    absl::StatusOr<std::vector<Tensor>> got = RunOn(c, gpu, registry);
    INFO("GPU: " << got.status().ToString());
    REQUIRE(got.ok());
    REQUIRE(got->size() == want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      INFO("output " << i);
      CHECK(Difference((*got)[i], (*want)[i], c.tolerance) == "");
    }
  }
}

// ---------------------------------------------------------------------------------------
// Tests.

// The GPU table's resource-variable ops (handles, reads, assignments, optimizer updates).
bool IsResourceVariableOp(const std::string& op) {
  return op == "VarHandleOp" || op == "VarIsInitializedOp" ||
         absl::StrContains(op, "VariableOp") || absl::StartsWith(op, "ResourceApply");
}

TEST_CASE("Every dtype gpu_kernel_list.h lists has a conformance case, and only those",
          "[gpu_conformance]") {
  // (op, attr, dtype) triples the cases exercise.
  std::set<std::tuple<std::string, std::string, DataType>> covered;
  std::set<std::string> ops;
  for (const Case& c : AllCases()) {
    ops.insert(c.op);
    for (const auto& [attr, value] : c.attrs) {
      if (value.value_case() == AttrValue::kType) covered.insert({c.op, attr, value.type()});
    }
  }
  std::set<std::string> listed;
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    listed.insert(spec.op);
    // Stateful ops cannot run as one isolated kernel: gpu_training_test.cc runs them in
    // whole training steps, on the GPU against the CPU.
    if (IsResourceVariableOp(spec.op)) continue;
    for (const auto& [attr, types] : spec.type_constraints) {
      for (DataType t : types) {
        INFO(spec.op << " " << attr << "=" << DataTypeString(t));
        CHECK(covered.count({spec.op, attr, t}) == 1);
      }
    }
  }
  for (const std::string& op : ops) {
    INFO(op);
    CHECK(listed.count(op) == 1);
  }
  // Every case's dtypes for constrained attrs are ones the table lists.
  for (const auto& [op, attr, t] : covered) {
    const std::vector<DataType> types = Types(op, attr);
    if (types.empty()) continue;  // an attr no GPU kernel constrains (Tidx)
    INFO(op << " " << attr << "=" << DataTypeString(t));
    CHECK(std::find(types.begin(), types.end(), t) != types.end());
  }
}

TEST_CASE("Simulated GPU kernels agree with the CPU kernels on every case",
          "[gpu_conformance][sim]") {
  ThreadPool pool(2, "conformance_gpu");
  sim::SimGpuOptions options;
  options.total_bytes = int64_t{256} << 20;
  sim::SimGpuDevice gpu(0, &pool, options);
  CheckAllCases(&gpu);
}

TEST_CASE("CUDA GPU kernels agree with the CPU kernels on every case", "[.][cuda]") {
  // Whatever real GPUs the session's device factory finds; simulated ones do not count.
  unsetenv("DFLOW_SIMULATED_GPUS");
  absl::StatusOr<SessionDevices> devices = CreateSessionDevices(ConfigProto());
  REQUIRE(devices.ok());
  Device* cuda = nullptr;
  for (Device* device : devices->devices->devices()) {
    if (device->device_type() == "GPU" && dynamic_cast<sim::SimGpuDevice*>(device) == nullptr) {
      cuda = device;
      break;
    }
  }
  if (cuda == nullptr) FAIL("no CUDA GPU found");
  CheckAllCases(cuda);
}

}  // namespace
}  // namespace dflow
