// MaxPool3D, AvgPool3D, MaxPool3DGrad, AvgPool3DGrad and MaxPool3DGradGrad CPU kernels
// (kernels/cpu/pool3d_ops.cc) against TensorFlow 2.21's own CPU kernels: the tables below
// were printed by testdata/pool3d_tf.py (oneDNN off). Also NCDHW against NDHWC, and TF's
// error texts.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterPool3DKernels); }

// The input of most cases, NDHWC: batch 2, depth 4, 5x5, 3 channels (600 elements).
const std::vector<int64_t> kShape = {2, 4, 5, 5, 3};

// pool3d_tf.py's seq: ((i * a) % m - off) * scale.
std::vector<float> Seq(int64_t n, int a, int m, int off, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * a) % m - off) * scale;
  return v;
}

std::vector<float> XInput() { return Seq(600, 37, 101, 50, 0.125f); }

// Values 0..4: most windows hold their maximum more than once.
std::vector<float> TieInput() {
  std::vector<float> v(600);
  for (int i = 0; i < 600; ++i) v[i] = static_cast<float>(i * 7 % 5);
  return v;
}

std::vector<float> GradFor(int64_t n) { return Seq(n, 13, 29, 14, 0.25f); }

// ksize and strides over planes, rows and cols, and the padding.
struct Window {
  int64_t k[3], s[3];
  const char* padding;
};
const Window kValid = {{2, 2, 2}, {2, 2, 2}, "VALID"};
const Window kSame = {{3, 3, 3}, {1, 1, 1}, "SAME"};

// The pooled NDHWC shape of an NDHWC input.
std::vector<int64_t> Pooled(const std::vector<int64_t>& in, const Window& w) {
  std::vector<int64_t> out = in;
  for (int i = 0; i < 3; ++i) {
    out[i + 1] = std::string(w.padding) == "SAME" ? (in[i + 1] + w.s[i] - 1) / w.s[i]
                                                  : (in[i + 1] - w.k[i]) / w.s[i] + 1;
  }
  return out;
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A float or bfloat16 tensor holding `values`.
Tensor Volume(const std::vector<int64_t>& shape, const std::vector<float>& values,
              DataType dtype = DT_FLOAT) {
  if (dtype == DT_FLOAT) return Filled<float>(shape, values);
  std::vector<Bfloat16> b;
  for (float v : values) b.push_back(Bfloat16::FromFloat(v));
  return Filled<Bfloat16>(shape, b);
}

std::vector<float> FloatsOf(const Tensor& t) {
  if (t.dtype() == DT_FLOAT) return Values<float>(t);
  std::vector<float> v;
  for (Bfloat16 b : Values<Bfloat16>(t)) v.push_back(b.ToFloat());
  return v;
}

// An NDHWC tensor of `shape` and `values` transposed to NCDHW.
Tensor ToNcdhw(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  const int64_t n = shape[0], spatial = shape[1] * shape[2] * shape[3], c = shape[4];
  std::vector<float> t(values.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t s = 0; s < spatial; ++s)
      for (int64_t ch = 0; ch < c; ++ch)
        t[(b * c + ch) * spatial + s] = values[(b * spatial + s) * c + ch];
  return Filled<float>({n, c, shape[1], shape[2], shape[3]}, t);
}

// An NCDHW result of NDHWC `shape` back in NDHWC order.
std::vector<float> FromNcdhw(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  const int64_t n = shape[0], spatial = shape[1] * shape[2] * shape[3], c = shape[4];
  std::vector<float> t(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t s = 0; s < spatial; ++s)
      for (int64_t ch = 0; ch < c; ++ch)
        t[(b * spatial + s) * c + ch] = v[(b * c + ch) * spatial + s];
  return t;
}

// A tester for `op` with `w`'s ksize, strides and padding.
OpTester Tester(const std::string& op, const Window& w, DataType dtype = DT_FLOAT,
                bool ncdhw = false) {
  OpTester t(op, Registry());
  const std::vector<int64_t> ksize = ncdhw ? std::vector<int64_t>{1, 1, w.k[0], w.k[1], w.k[2]}
                                           : std::vector<int64_t>{1, w.k[0], w.k[1], w.k[2], 1};
  const std::vector<int64_t> strides = ncdhw
                                           ? std::vector<int64_t>{1, 1, w.s[0], w.s[1], w.s[2]}
                                           : std::vector<int64_t>{1, w.s[0], w.s[1], w.s[2], 1};
  t.Attr("T", dtype).Attr("ksize", ksize).Attr("strides", strides).Attr("padding", w.padding);
  if (op == "MaxPool3DGrad") t.Attr("TInput", dtype);
  if (ncdhw) t.Attr("data_format", "NCDHW");
  return t;
}

// Runs `t`, which must succeed, and returns its output as floats.
std::vector<float> RunOk(OpTester& t) {
  absl::StatusOr<Tensor> out = t.RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return FloatsOf(*out);
}

// The ops on kShape inputs, NDHWC, through the kernels (orig_output from MaxPool3D).
std::vector<float> Pool(const std::string& op, const Window& w, const std::vector<float>& x,
                        DataType dtype = DT_FLOAT) {
  OpTester t = Tester(op, w, dtype);
  t.Input(Volume(kShape, x, dtype));
  return RunOk(t);
}

std::vector<float> MaxPoolGrad(const Window& w, const std::vector<float>& x,
                               DataType dtype = DT_FLOAT) {
  const std::vector<int64_t> pooled = Pooled(kShape, w);
  OpTester t = Tester("MaxPool3DGrad", w, dtype);
  t.Input(Volume(kShape, x, dtype))
      .Input(Volume(pooled, Pool("MaxPool3D", w, x, dtype), dtype))
      .Input(Volume(pooled, GradFor(Count(pooled)), dtype));
  return RunOk(t);
}

std::vector<float> AvgPoolGrad(const Window& w, DataType dtype = DT_FLOAT) {
  const std::vector<int64_t> pooled = Pooled(kShape, w);
  std::vector<int32_t> sizes(kShape.begin(), kShape.end());
  OpTester t = Tester("AvgPool3DGrad", w, dtype);
  t.Input(testing::Vec(sizes)).Input(Volume(pooled, GradFor(Count(pooled)), dtype));
  return RunOk(t);
}

std::vector<float> MaxPoolGradGrad(const Window& w, const std::vector<float>& x) {
  const std::vector<int64_t> pooled = Pooled(kShape, w);
  OpTester t = Tester("MaxPool3DGradGrad", w);
  t.Input(Volume(kShape, x))
      .Input(Volume(pooled, Pool("MaxPool3D", w, x)))
      .Input(Volume(kShape, Seq(600, 11, 23, 11, 0.5f)));
  return RunOk(t);
}

// One element of a TF result.
struct Sample {
  int64_t index;
  float value;
};

// `got` holds TF's `samples` (exactly, or within 1e-6 unless `exact`) and sums to `sum`.
void CheckSamples(const std::vector<float>& got, const std::vector<Sample>& samples, double sum,
                  bool exact = true) {
  for (const Sample& s : samples) {
    INFO("element " << s.index);
    REQUIRE(s.index < static_cast<int64_t>(got.size()));
    if (exact) {
      CHECK(got[s.index] == s.value);
    } else {
      CHECK(got[s.index] == Approx(s.value).epsilon(1e-6).margin(1e-6));
    }
  }
  double total = 0;
  for (float v : got) total += v;
  CHECK(total == Approx(sum).epsilon(1e-6).margin(1e-6));
}

// `got` is zero but at TF's `nonzeros`.
void CheckSparse(const std::vector<float>& got, const std::vector<Sample>& nonzeros) {
  std::vector<float> want(got.size(), 0.0f);
  for (const Sample& s : nonzeros) want[s.index] = s.value;
  CHECK(got == want);
}

int Nonzeros(const std::vector<float>& v) {
  int n = 0;
  for (float x : v) n += x != 0.0f;
  return n;
}

// ---- TF 2.21's values, printed by testdata/pool3d_tf.py.

const std::vector<float> kMaxPool3DValid = {
    6, 5.875, 4.25, 3.75, 2.125, 5.5, 6.25, 5.75, 4.125, 3.625, 2, 6.25, 5.75, 5.25, 3.625, 3.125,
    6.25, 6.125, 5.625, 5.125, 3.5, 3, 6.125, 6, 6, 4.625, 3, 2.5, 5.875, 5.5, 6.25, 4.5, 2.875,
    2.375, 5.75, 5.375, 5.75, 4, 2.375, 1.875, 6.25, 4.875, 5.625, 3.875, 2.25, 1.75, 6.125, 4.75};
const std::vector<Sample> kMaxPool3DSame = {
    {0, 6}, {37, 5.875}, {74, 6.25}, {111, 3.75}, {148, 3.125}, {185, 5.125}, {222, 4.5},
    {259, 6.125}, {296, 5.875}, {333, 6.25}, {370, 5.75}, {407, 2.875}, {444, 3.625}, {481, 4.25},
    {518, 5}, {555, 5.625}, {592, 6}, {599, 5.875}};
const double kMaxPool3DSameSum = 3039.875;
const std::vector<float> kAvgPool3DValid = {
    -1.078125, 1.96875, 0.28125, -0.15625, -1.84375, -0.375, 0.375, 1.84375, 0.15625, -0.28125,
    -1.96875, 1.078125, -0.125, 1.34375, -0.34375, -0.78125, -0.890625, 2.15625, -0.25, 1.21875,
    -0.46875, -0.90625, -1.015625, 2.03125, 0.828125, 0.71875, -0.96875, -1.40625, 0.0625, 1.53125,
    2.28125, 0.59375, -1.09375, -1.53125, -0.0625, 1.40625, 1.78125, 0.09375, -1.59375, -2.03125,
    1.015625, 0.90625, 1.65625, -0.03125, -1.71875, -2.15625, 0.890625, 0.78125};
const std::vector<Sample> kAvgPool3DSame = {
    {0, -1.078125}, {37, -0.458333343}, {74, -0.890625}, {111, -0.680555582}, {148, -0.9375},
    {185, 0.694444418}, {222, 0.4375}, {259, 0.472222209}, {296, 0.489583343}, {333, 0.833333313},
    {370, -0.552083313}, {407, -1.56944442}, {444, -1.125}, {481, -0.194444448}, {518, 0.25},
    {555, 1.6875}, {592, 0.729166687}, {599, 1.96875}};
const double kAvgPool3DSameSum = -0.97685131430625916;
const std::vector<Sample> kMaxPool3DGradValid = {
    {5, 3}, {8, -1.75}, {10, 2.25}, {19, -0.25}, {24, -1}, {30, 1.5}, {35, 0.75}, {49, -2.5},
    {54, -3.25}, {90, -3.5}, {131, 3.25}, {150, -0.75}, {155, -1.5}, {161, 1}, {169, 2.5},
    {174, 1.75}, {180, -3}, {185, 3.5}, {191, -1.25}, {199, 0.25}, {204, -0.5}, {232, -2.25},
    {262, 2.75}, {305, 1.25}, {311, -3.5}, {319, -2}, {322, 0.5}, {324, -2.75}, {333, -0.25},
    {335, -1}, {341, 1.5}, {349, 3}, {352, -1.75}, {354, 2.25}, {393, 2}, {453, -2.5},
    {455, -3.25}, {461, -0.75}, {469, 0.75}, {483, 2.5}, {485, 1.75}, {491, -3}, {499, -1.5},
    {504, -2.25}, {535, 3.25}, {565, 1}};
const int kMaxPool3DGradSameNonzeros = 119;
const std::vector<Sample> kMaxPool3DGradSame = {
    {5, 2.5}, {24, -4}, {35, 1}, {54, 1.5}, {68, -0.5}, {87, -5}, {103, -0.5}, {120, -1},
    {133, 1.75}, {150, 4.75}, {163, 1}, {180, -4}, {193, 0.25}, {210, -0.75}, {223, 0.75},
    {305, -5.25}, {322, 0.75}, {338, 3.25}, {352, -1.5}, {368, -0.75}, {382, -1.5}, {398, 4.5},
    {423, 5.25}, {434, 8.25}, {453, -4.25}, {464, -11}, {483, 0.75}, {494, 0.75}, {513, 2.25},
    {535, 5.5}};
const double kMaxPool3DGradSameSum = -3.5;
const std::vector<Sample> kMaxPool3DGradTiesValid = {
    {2, 3}, {3, -3.5}, {4, -0.25}, {7, 2.25}, {9, -1}, {11, -1.75}, {17, 3}, {18, -3.5},
    {19, -0.25}, {22, 2.25}, {24, -1}, {26, -1.75}, {32, 0.75}, {33, 1.5}, {34, -2.5}, {39, -3.25},
    {41, 3.25}, {47, 0.75}, {48, 1.5}, {49, -2.5}, {54, -3.25}, {56, 3.25}, {77, 3}, {78, -3.5},
    {79, -0.25}, {82, 2.25}, {84, -1}, {86, -1.75}, {92, 3}, {93, -3.5}, {94, -0.25}, {97, 2.25},
    {99, -1}, {101, -1.75}, {107, 0.75}, {108, 1.5}, {109, -2.5}, {114, -3.25}, {116, 3.25},
    {122, 0.75}, {123, 1.5}, {124, -2.5}, {129, -3.25}, {131, 3.25}, {152, -1.5}, {153, -0.75},
    {154, 2.5}, {157, -2.25}, {159, 1.75}, {161, 1}, {167, -1.5}, {168, -0.75}, {169, 2.5},
    {172, -2.25}, {174, 1.75}, {176, 1}, {182, 3.5}, {183, -3}, {184, 0.25}, {187, 2.75},
    {189, -0.5}, {191, -1.25}, {197, 3.5}, {198, -3}, {199, 0.25}, {202, 2.75}, {204, -0.5},
    {206, -1.25}, {227, -1.5}, {228, -0.75}, {229, 2.5}, {232, -2.25}, {234, 1.75}, {236, 1},
    {242, -1.5}, {243, -0.75}, {244, 2.5}, {247, -2.25}, {249, 1.75}, {251, 1}, {257, 3.5},
    {258, -3}, {259, 0.25}, {262, 2.75}, {264, -0.5}, {266, -1.25}, {272, 3.5}, {273, -3},
    {274, 0.25}, {277, 2.75}, {279, -0.5}, {281, -1.25}, {302, 1.25}, {303, 2}, {304, -2},
    {307, 0.5}, {309, -2.75}, {311, -3.5}, {317, 1.25}, {318, 2}, {319, -2}, {322, 0.5},
    {324, -2.75}, {326, -3.5}, {332, -1}, {333, -0.25}, {334, 3}, {337, -1.75}, {339, 2.25},
    {341, 1.5}, {347, -1}, {348, -0.25}, {349, 3}, {352, -1.75}, {354, 2.25}, {356, 1.5},
    {377, 1.25}, {378, 2}, {379, -2}, {382, 0.5}, {384, -2.75}, {386, -3.5}, {392, 1.25}, {393, 2},
    {394, -2}, {397, 0.5}, {399, -2.75}, {401, -3.5}, {407, -1}, {408, -0.25}, {409, 3},
    {412, -1.75}, {414, 2.25}, {416, 1.5}, {422, -1}, {423, -0.25}, {424, 3}, {427, -1.75},
    {429, 2.25}, {431, 1.5}, {452, -3.25}, {453, -2.5}, {454, 0.75}, {457, 3.25}, {461, -0.75},
    {467, -3.25}, {468, -2.5}, {469, 0.75}, {472, 3.25}, {476, -0.75}, {482, 1.75}, {483, 2.5},
    {484, -1.5}, {487, 1}, {489, -2.25}, {491, -3}, {497, 1.75}, {498, 2.5}, {499, -1.5}, {502, 1},
    {504, -2.25}, {506, -3}, {527, -3.25}, {528, -2.5}, {529, 0.75}, {532, 3.25}, {536, -0.75},
    {542, -3.25}, {543, -2.5}, {544, 0.75}, {547, 3.25}, {551, -0.75}, {557, 1.75}, {558, 2.5},
    {559, -1.5}, {562, 1}, {564, -2.25}, {566, -3}, {572, 1.75}, {573, 2.5}, {574, -1.5}, {577, 1},
    {579, -2.25}, {581, -3}};
const int kMaxPool3DGradTiesSameNonzeros = 383;
const std::vector<Sample> kMaxPool3DGradTiesSame = {
    {2, 7.75}, {7, -0.5}, {13, 0.5}, {21, 2.75}, {27, -6.5}, {33, -2.5}, {39, -1.5}, {44, -10.5},
    {52, 3.5}, {58, -0.25}, {64, 1.75}, {72, 4}, {79, -2.25}, {86, 3.75}, {92, 12.75}, {99, -0.25},
    {104, 2.75}, {111, -4.5}, {117, -5.25}, {123, -1.5}, {131, -6.75}, {137, -8}, {142, 4.25},
    {149, -5}, {156, 5.75}, {162, -0.5}, {168, 2.5}, {174, -3.25}, {179, 4}, {186, -0.25},
    {192, -4}, {199, 3}, {206, -2.5}, {212, -4.75}, {217, 5.5}, {224, -1.75}, {232, -8.5},
    {238, 0.25}, {244, -4}, {251, 2}, {258, 0.75}, {264, -5.5}, {269, 10.5}, {276, -3.5},
    {282, -4.5}, {288, -4.25}, {294, 1.25}, {299, -2.5}, {306, 0.5}, {312, 0.25}, {319, -0.75},
    {326, -2}, {332, -0.5}, {337, -6.25}, {343, -3.5}, {349, -3}, {356, 3}, {362, 2.25},
    {367, -1.5}, {373, -2.25}, {379, 4.25}, {386, -4.25}, {392, -4}, {397, 7.5}, {403, -3.25},
    {409, -2.5}, {416, -0.75}, {422, 3.75}, {427, -6.25}, {434, 8.25}, {442, -5.25}, {448, -0.75},
    {454, 2.25}, {461, 1}, {467, -2.75}, {472, 13}, {478, 1}, {484, 1.75}, {491, -3.75},
    {497, -2.25}, {502, -8}, {509, 2.25}, {516, 5.25}, {522, -1.5}, {528, -2.5}, {534, -4.25},
    {542, 1}, {547, 10.5}, {553, -2.75}, {561, 0.5}, {567, 3.5}, {573, 2.5}, {579, 3.5},
    {584, -0.5}, {591, 5.25}, {597, 2.5}};
const double kMaxPool3DGradTiesSameSum = -8.25;
const std::vector<Sample> kAvgPool3DGradValid = {
    {0, -0.4375}, {37, 0}, {74, 0}, {111, -0.40625}, {148, 0}, {185, 0.4375}, {222, 0},
    {259, 0.03125}, {296, 0}, {333, -0.03125}, {370, 0}, {407, -0.125}, {444, 0}, {481, -0.1875},
    {518, 0}, {555, 0.3125}, {592, 0}, {599, 0}};
const double kAvgPool3DGradValidSum = -3.75;
const std::vector<Sample> kAvgPool3DGradSame = {
    {0, -0.263888866}, {37, 0.513888836}, {74, -0.174768507}, {111, -0.430555612},
    {148, 0.0173610747}, {185, 0.516203701}, {222, -0.0763888955}, {259, -0.206018567},
    {296, -0.413194448}, {333, 0.347222209}, {370, -0.0416666567}, {407, -0.164351851},
    {444, -0.518518567}, {481, 0.287037045}, {518, 0.196759284}, {555, 0}, {592, -0.543981552},
    {599, 0.262731493}};
const double kAvgPool3DGradSameSum = -3.5000016819685698;
const std::vector<float> kMaxPool3DGradGradValid = {
    -5, -4.5, -1, 0, 3.5, 4, -1.5, -0.5, 3, 4, -4, 2, 3, 4, -4, -3, 5.5, -5.5, -4.5, -3.5, 0, 1,
    -2, -1.5, 5.5, 1, 4.5, 5.5, -5.5, 3, -2.5, 5, -3, -2, -1.5, -4.5, 2, -2, 1.5, 2.5, 4.5, 0,
    -5.5, 2, 5.5, -5, -3, 4};
const std::vector<Sample> kMaxPool3DGradGradSame = {
    {0, -5}, {37, -4.5}, {74, 2}, {111, 0}, {148, 5}, {185, 4.5}, {222, -2}, {259, -2}, {296, 2.5},
    {333, -2.5}, {370, -1.5}, {407, -3}, {444, 3}, {481, 1.5}, {518, -4}, {555, -5.5}, {592, 1},
    {599, 1.5}};
const double kMaxPool3DGradGradSameSum = -35;
const std::vector<Sample> kBf16AvgPool3DGradSame = {
    {0, -0.26171875}, {37, 0.515625}, {74, -0.17578125}, {111, -0.427734375}, {148, 0.013671875},
    {185, 0.515625}, {222, -0.0771484375}, {259, -0.205078125}, {296, -0.412109375},
    {333, 0.345703125}, {370, -0.041015625}, {407, -0.1640625}, {444, -0.5234375},
    {481, 0.28515625}, {518, 0.197265625}, {555, 0.0009765625}, {592, -0.546875},
    {599, 0.263671875}};
const double kBf16AvgPool3DGradSameSum = -3.6605224609375;

TEST_CASE("MaxPool3D and AvgPool3D match TensorFlow, VALID 2x2x2/2 and SAME 3x3x3/1") {
  const std::vector<float> x = XInput();
  CHECK(Pool("MaxPool3D", kValid, x) == kMaxPool3DValid);
  CheckSamples(Pool("MaxPool3D", kSame, x), kMaxPool3DSame, kMaxPool3DSameSum);
  // Exact here (the sums round as TF's), but another order may differ in the last bit.
  testing::CheckNear(Pool("AvgPool3D", kValid, x), kAvgPool3DValid);
  CheckSamples(Pool("AvgPool3D", kSame, x), kAvgPool3DSame, kAvgPool3DSameSum, false);
}

TEST_CASE("MaxPool3D skips NaNs as TensorFlow does with 8 channels") {
  // A 2x2x2 window per channel, holding 0..7 in scan order; channel c < 7 has NaN at
  // positions c, c + 3, c + 6, channel 7 is all NaN (pool3d_tf.py's nan_table).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(64);
  for (int pos = 0; pos < 8; ++pos) {
    for (int c = 0; c < 8; ++c) {
      const bool is_nan = c == 7 || (pos >= c && (pos - c) % 3 == 0);
      x[pos * 8 + c] = is_nan ? nan : static_cast<float>(pos);
    }
  }
  OpTester t = Tester("MaxPool3D", kValid);
  t.Input(Filled<float>({1, 2, 2, 2, 8}, x));
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(RunOk(t) == std::vector<float>{7, 6, 7, 7, 6, 7, 7, -inf});
}

TEST_CASE("MaxPool3DGrad gives every element within 1e-5 of the maximum the gradient, as TF") {
  SECTION("distinct values") {
    CheckSparse(MaxPoolGrad(kValid, XInput()), kMaxPool3DGradValid);
    const std::vector<float> same = MaxPoolGrad(kSame, XInput());
    CHECK(Nonzeros(same) == kMaxPool3DGradSameNonzeros);
    CheckSamples(same, kMaxPool3DGradSame, kMaxPool3DGradSameSum);
  }
  SECTION("tied maxima all receive the gradient") {
    CheckSparse(MaxPoolGrad(kValid, TieInput()), kMaxPool3DGradTiesValid);
    const std::vector<float> same = MaxPoolGrad(kSame, TieInput());
    CHECK(Nonzeros(same) == kMaxPool3DGradTiesSameNonzeros);
    CheckSamples(same, kMaxPool3DGradTiesSame, kMaxPool3DGradTiesSameSum);
  }
  SECTION("a near tie counts; orig_output is taken as given") {
    auto run = [](float orig_output) {
      OpTester t = Tester("MaxPool3DGrad", kValid);
      t.Input(Filled<float>({1, 2, 2, 2, 1}, {1.0f, 1.000001f, 0, 0, 0, 0, 0, 0}))
          .Input(Filled<float>({1, 1, 1, 1, 1}, {orig_output}))
          .Input(Filled<float>({1, 1, 1, 1, 1}, {5.0f}));
      return RunOk(t);
    };
    CHECK(run(1.000001f) == std::vector<float>{5, 5, 0, 0, 0, 0, 0, 0});
    CHECK(run(7.0f) == std::vector<float>(8, 0.0f));
  }
}

TEST_CASE("AvgPool3DGrad spreads each gradient over its window as TF does") {
  CheckSamples(AvgPoolGrad(kValid), kAvgPool3DGradValid, kAvgPool3DGradValidSum);
  CheckSamples(AvgPoolGrad(kSame), kAvgPool3DGradSame, kAvgPool3DGradSameSum);
}

TEST_CASE("Pool3D gradients use TF's range for a window sticking out on both sides") {
  // Planes: input 4, window 5, stride 3, SAME: window 0 covers [0, 3) of the input, but
  // TF's gradients spread it over [0, 4) (GetBroadcastSize).
  const Window w = {{5, 1, 1}, {3, 1, 1}, "SAME"};
  OpTester avg = Tester("AvgPool3DGrad", w);
  avg.Input(testing::Vec(std::vector<int32_t>{1, 4, 1, 1, 1}))
      .Input(Filled<float>({1, 2, 1, 1, 1}, {1.0f, 1.0f}));
  CHECK(RunOk(avg) == std::vector<float>{0.25f, 0.583333373f, 0.583333373f, 0.583333373f});
  OpTester max = Tester("MaxPool3DGrad", w);
  max.Input(Filled<float>({1, 4, 1, 1, 1}, {1, 2, 3, 3}))
      .Input(Filled<float>({1, 2, 1, 1, 1}, {3, 3}))
      .Input(Filled<float>({1, 2, 1, 1, 1}, {1, 10}));
  CHECK(RunOk(max) == std::vector<float>{0, 0, 11, 11});
}

TEST_CASE("MaxPool3DGradGrad takes grad at the window's first maximum, as TF does") {
  CHECK(MaxPoolGradGrad(kValid, XInput()) == kMaxPool3DGradGradValid);
  CheckSamples(MaxPoolGradGrad(kSame, XInput()), kMaxPool3DGradGradSame,
               kMaxPool3DGradGradSameSum);
}

TEST_CASE("bfloat16 pools and gradients match TensorFlow's bits") {
  const std::vector<float> x = XInput();  // multiples of 1/8: exact in bfloat16
  // TF's bfloat16 results equal its float ones here (pool3d_tf.py prints both).
  CHECK(Pool("MaxPool3D", kValid, x, DT_BFLOAT16) == kMaxPool3DValid);
  CHECK(Pool("AvgPool3D", kValid, x, DT_BFLOAT16) == kAvgPool3DValid);
  const std::vector<float> max_grad = MaxPoolGrad(kSame, x, DT_BFLOAT16);
  CHECK(Nonzeros(max_grad) == kMaxPool3DGradSameNonzeros);
  CheckSamples(max_grad, kMaxPool3DGradSame, kMaxPool3DGradSameSum);
  // Rounded to bfloat16 after every multiply and add, in TF's order.
  CheckSamples(AvgPoolGrad(kSame, DT_BFLOAT16), kBf16AvgPool3DGradSame, kBf16AvgPool3DGradSameSum);
}

TEST_CASE("NCDHW gives the NDHWC results, transposed") {
  const std::vector<float> x = XInput();
  const std::vector<float> gg = Seq(600, 11, 23, 11, 0.5f);
  for (const Window& w : {kValid, kSame}) {
    INFO(w.padding);
    const std::vector<int64_t> pooled = Pooled(kShape, w);
    const std::vector<float> y = Pool("MaxPool3D", w, x);
    const std::vector<float> dy = GradFor(Count(pooled));
    for (const char* op : {"MaxPool3D", "AvgPool3D"}) {
      OpTester t = Tester(op, w, DT_FLOAT, /*ncdhw=*/true);
      t.Input(ToNcdhw(kShape, x));
      CHECK(FromNcdhw(pooled, RunOk(t)) == Pool(op, w, x));
    }
    OpTester max_grad = Tester("MaxPool3DGrad", w, DT_FLOAT, true);
    max_grad.Input(ToNcdhw(kShape, x)).Input(ToNcdhw(pooled, y)).Input(ToNcdhw(pooled, dy));
    CHECK(FromNcdhw(kShape, RunOk(max_grad)) == MaxPoolGrad(w, x));
    OpTester avg_grad = Tester("AvgPool3DGrad", w, DT_FLOAT, true);
    avg_grad.Input(testing::Vec(std::vector<int32_t>{2, 3, 4, 5, 5})).Input(ToNcdhw(pooled, dy));
    CHECK(FromNcdhw(kShape, RunOk(avg_grad)) == AvgPoolGrad(w));
    OpTester grad_grad = Tester("MaxPool3DGradGrad", w, DT_FLOAT, true);
    grad_grad.Input(ToNcdhw(kShape, x)).Input(ToNcdhw(pooled, y)).Input(ToNcdhw(kShape, gg));
    CHECK(FromNcdhw(pooled, RunOk(grad_grad)) == MaxPoolGradGrad(w, x));
  }
}

TEST_CASE("Pool3D kernels take empty batches") {
  OpTester pool = Tester("MaxPool3D", kValid);
  pool.Input(Filled<float>({0, 4, 4, 4, 3}, {}));
  absl::StatusOr<Tensor> out = pool.RunOne();
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({0, 2, 2, 2, 3}));
  OpTester grad = Tester("MaxPool3DGrad", kValid);
  grad.Input(Filled<float>({0, 4, 4, 4, 3}, {}))
      .Input(Filled<float>({0, 2, 2, 2, 3}, {}))
      .Input(Filled<float>({0, 2, 2, 2, 3}, {}));
  out = grad.RunOne();
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({0, 4, 4, 4, 3}));
}

// The status of `op` on a [1, 4, 4, 4, 1] volume (and its VALID 2x2x2/2 pool) with the
// ksize and strides given; `inputs` replaces the usual inputs when not empty.
absl::Status Error(const std::string& op, std::vector<int64_t> ksize,
                   std::vector<int64_t> strides, std::vector<Tensor> inputs = {}) {
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Attr("ksize", ksize).Attr("strides", strides).Attr("padding", "VALID");
  if (inputs.empty()) {
    const Tensor volume = Filled<float>({1, 4, 4, 4, 1}, std::vector<float>(64, 0.0f));
    const Tensor pooled = Filled<float>({1, 2, 2, 2, 1}, std::vector<float>(8, 0.0f));
    if (op == "AvgPool3DGrad") {
      inputs = {testing::Vec(std::vector<int32_t>{1, 4, 4, 4, 1}), pooled};
    } else if (op == "MaxPool3DGrad") {
      inputs = {volume, pooled, pooled};
    } else if (op == "MaxPool3DGradGrad") {
      inputs = {volume, pooled, volume};
    } else {
      inputs = {volume};
    }
  }
  for (Tensor& input : inputs) t.Input(input);
  return t.RunOne().status();
}

void CheckError(const absl::Status& status, absl::StatusCode code, const std::string& text) {
  INFO(status.ToString());
  CHECK(status.code() == code);
  CHECK(std::string(status.message()).find(text) != std::string::npos);
}

TEST_CASE("Pool3D kernels reject bad attrs and shapes with TF's errors") {
  const auto invalid = absl::StatusCode::kInvalidArgument;
  const auto unimplemented = absl::StatusCode::kUnimplemented;
  const std::vector<int64_t> k2 = {1, 2, 2, 2, 1};
  CheckError(Error("MaxPool3D", {1, 2, 2, 2, 2}, k2), unimplemented,
             "Pooling is not yet supported on the depth dimension.");
  CheckError(Error("AvgPool3D", {1, 0, 2, 2, 1}, k2), invalid,
             "Sliding window ksize field must have non-negative dimensions");
  CheckError(Error("MaxPool3D", k2, {1, 0, 2, 2, 1}), invalid, "Stride must be > 0, but got 0");
  CheckError(Error("MaxPool3D", {1, 7, 1, 1, 1}, {1, 1, 1, 1, 1}), invalid,
             "Computed output size would be negative: -2 [input_size: 4, "
             "effective_filter_size: 7, stride: 1]");
  CheckError(Error("MaxPool3D", k2, k2, {Filled<float>({1, 4, 4, 1}, {})}), invalid,
             "tensor_in must be 5-dimensional");
  const Tensor volume = Filled<float>({1, 4, 4, 4, 1}, {});
  const Tensor pooled = Filled<float>({1, 2, 2, 2, 1}, {});
  CheckError(Error("MaxPool3DGrad", k2, k2, {volume, pooled, Filled<float>({1, 2, 2, 3, 1}, {})}),
             invalid, "Expected grad shape to be [1,2,2,2,1], but got [1,2,2,3,1]");
  CheckError(Error("AvgPool3DGrad", k2, k2,
                   {testing::Vec(std::vector<int32_t>{2, 4, 4, 4, 1}), pooled}),
             invalid,
             "Expected first dimension of tensor_in_shape and out_backprop to match, got 2 and 1");
  CheckError(Error("AvgPool3DGrad", {1, 0, 2, 2, 1}, k2), invalid,
             "ksize must be positive, got: 0");
  CheckError(Error("MaxPool3DGradGrad", {1, 2, 2, 2, 2}, k2), unimplemented,
             "MaxPooling3dGradGrad is not yet supported on the depth dimension.");
  CheckError(Error("MaxPool3DGradGrad", k2, k2,
                   {Filled<float>({0, 4, 4, 4, 1}, {}), Filled<float>({0, 2, 2, 2, 1}, {}),
                    Filled<float>({0, 4, 4, 4, 1}, {})}),
             invalid,
             "received empty tensor tensor_in: Tensor<type: float shape: [0,4,4,4,1] values: >");
}

}  // namespace
}  // namespace dflow
