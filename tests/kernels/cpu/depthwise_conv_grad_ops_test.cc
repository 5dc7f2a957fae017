// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter (oneDNN
// backward primitives, kernels/cpu/depthwise_conv_grad_ops.cc) against TensorFlow's own
// numbers (testdata/depthwise_conv_grad_tf.py), naive gradients written here, and TF's
// error texts. TF's CPU kernels run NHWC only: the NCHW runs expect TF's NHWC numbers
// transposed.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <sstream>
#include <utility>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::IntList;
using testing::KernelRunner;
using testing::NchwToNhwc;
using testing::NhwcToNchw;
using testing::OpTester;
using testing::RandomValues;
using testing::RefWindow;
using testing::RefWindowFor;
using testing::Sequence;
using testing::StringAttr;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterDepthwiseConvGradKernels);
}

// A depthwise convolution, NHWC sizes; pads {top, bottom, left, right} for EXPLICIT.
struct Case {
  int64_t n, h, w, c;  // input
  int64_t fh, fw, m;   // filter [fh, fw, c, m]
  std::string padding;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};

  RefWindow Rows() const { return RefWindowFor(padding, h, fh, sh, dh, pads[0], pads[1]); }
  RefWindow Cols() const { return RefWindowFor(padding, w, fw, sw, dw, pads[2], pads[3]); }
  Dims InputDims() const { return {n, h, w, c}; }
  Dims FilterDims() const { return {fh, fw, c, m}; }
  Dims GradDims() const { return {n, Rows().out, Cols().out, c * m}; }
};

int64_t Count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Calls `fn(b, oy, ox, y, x)` for every output position and the input position filter
// tap (i, j) reads there, skipping taps in the padding.
template <typename Fn>
void ForEachTap(const Case& k, int64_t i, int64_t j, Fn&& fn) {
  const RefWindow rows = k.Rows(), cols = k.Cols();
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < rows.out; ++oy)
      for (int64_t ox = 0; ox < cols.out; ++ox) {
        const int64_t y = oy * k.sh - rows.pad_before + i * k.dh;
        const int64_t x = ox * k.sw - cols.pad_before + j * k.dw;
        if (y >= 0 && y < k.h && x >= 0 && x < k.w) fn(b, oy, ox, y, x);
      }
}

// By definition, in double, NHWC: dx[b, y, x, c] = sum of dy[b, oy, ox, c*m + q] *
// f[i, j, c, q] over the taps reading (y, x); df[i, j, c, q] = sum of x[b, y, x, c] *
// dy[b, oy, ox, c*m + q] over the batch and the output positions.
std::vector<float> NaiveInputGrad(const Case& k, const std::vector<float>& f,
                                  const std::vector<float>& dy) {
  const int64_t oh = k.Rows().out, ow = k.Cols().out, od = k.c * k.m;
  std::vector<double> dx(Count(k.InputDims()), 0.0);
  for (int64_t i = 0; i < k.fh; ++i)
    for (int64_t j = 0; j < k.fw; ++j)
      ForEachTap(k, i, j, [&](int64_t b, int64_t oy, int64_t ox, int64_t y, int64_t x) {
        for (int64_t c = 0; c < k.c; ++c)
          for (int64_t q = 0; q < k.m; ++q)
            dx[((b * k.h + y) * k.w + x) * k.c + c] +=
                static_cast<double>(dy[((b * oh + oy) * ow + ox) * od + c * k.m + q]) *
                f[((i * k.fw + j) * k.c + c) * k.m + q];
      });
  return std::vector<float>(dx.begin(), dx.end());
}

std::vector<float> NaiveFilterGrad(const Case& k, const std::vector<float>& xs,
                                   const std::vector<float>& dy) {
  const int64_t oh = k.Rows().out, ow = k.Cols().out, od = k.c * k.m;
  std::vector<double> df(Count(k.FilterDims()), 0.0);
  for (int64_t i = 0; i < k.fh; ++i)
    for (int64_t j = 0; j < k.fw; ++j)
      ForEachTap(k, i, j, [&](int64_t b, int64_t oy, int64_t ox, int64_t y, int64_t x) {
        for (int64_t c = 0; c < k.c; ++c)
          for (int64_t q = 0; q < k.m; ++q)
            df[((i * k.fw + j) * k.c + c) * k.m + q] +=
                static_cast<double>(xs[((b * k.h + y) * k.w + x) * k.c + c]) *
                dy[((b * oh + oy) * ow + ox) * od + c * k.m + q];
      });
  return std::vector<float>(df.begin(), df.end());
}

// The attrs of `k` on a tester for `op` (T float unless the caller sets it).
OpTester Tester(const char* op, const Case& k, bool nchw, DataType dtype = DT_FLOAT) {
  OpTester t(op, Registry());
  t.Attr("T", dtype).Attr("padding", k.padding.c_str());
  std::vector<int64_t> pads(8, 0);
  if (nchw) {
    t.Attr("data_format", "NCHW")
        .Attr("strides", std::vector<int64_t>{1, 1, k.sh, k.sw})
        .Attr("dilations", std::vector<int64_t>{1, 1, k.dh, k.dw});
    std::copy(k.pads.begin(), k.pads.end(), pads.begin() + 4);
  } else {
    t.Attr("strides", std::vector<int64_t>{1, k.sh, k.sw, 1})
        .Attr("dilations", std::vector<int64_t>{1, k.dh, k.dw, 1});
    std::copy(k.pads.begin(), k.pads.end(), pads.begin() + 2);
  }
  if (k.padding == "EXPLICIT") t.Attr("explicit_paddings", pads);
  return t;
}

// NHWC dims `d` in the layout asked for.
Dims Layout(const Dims& d, bool nchw) { return nchw ? Dims{d[0], d[3], d[1], d[2]} : d; }
std::vector<int32_t> Sizes(const Dims& d) { return std::vector<int32_t>(d.begin(), d.end()); }

// An NHWC image tensor of `values` in the layout asked for.
Tensor Image(const Dims& d, const std::vector<float>& values, bool nchw) {
  return nchw ? Filled<float>(Layout(d, true), NhwcToNchw(values, d[0], d[1], d[2], d[3]))
              : Filled<float>(d, values);
}

// The input gradient for filter `f` and NHWC out_backprop `dy`, back in NHWC.
absl::StatusOr<std::vector<float>> RunInputGrad(const Case& k, bool nchw,
                                                const std::vector<float>& f,
                                                const std::vector<float>& dy) {
  const Dims in = k.InputDims();
  auto out = Tester("DepthwiseConv2dNativeBackpropInput", k, nchw)
                 .Input(Vec<int32_t>(Sizes(Layout(in, nchw))))
                 .Input(Filled<float>(k.FilterDims(), f))
                 .Input(Image(k.GradDims(), dy, nchw))
                 .RunOne();
  if (!out.ok()) return out.status();
  CHECK(DimsOf(*out) == Layout(in, nchw));
  const std::vector<float> got = Values<float>(*out);
  return nchw ? NchwToNhwc(got, in[0], in[3], in[1], in[2]) : got;
}

// The filter gradient for NHWC input `x` and out_backprop `dy`.
absl::StatusOr<std::vector<float>> RunFilterGrad(const Case& k, bool nchw,
                                                 const std::vector<float>& x,
                                                 const std::vector<float>& dy) {
  auto out = Tester("DepthwiseConv2dNativeBackpropFilter", k, nchw)
                 .Input(Image(k.InputDims(), x, nchw))
                 .Input(Vec<int32_t>(Sizes(k.FilterDims())))
                 .Input(Image(k.GradDims(), dy, nchw))
                 .RunOne();
  if (!out.ok()) return out.status();
  CHECK(DimsOf(*out) == k.FilterDims());
  return Values<float>(*out);
}

std::string Describe(const Case& k, bool nchw) {
  std::ostringstream s;
  s << "n=" << k.n << " " << k.h << "x" << k.w << "x" << k.c << " filter " << k.fh << "x" << k.fw
    << " m=" << k.m << " " << k.padding << " s" << k.sh << "," << k.sw << " d" << k.dh << ","
    << k.dw << (nchw ? " NCHW" : " NHWC");
  return s.str();
}

// The script's inputs: x = Sequence(7, 13, 6, 0.25), filter = Sequence(5, 11, 5, 0.1),
// out_backprop = Sequence(3, 7, 3, 0.5), NHWC.
std::vector<float> TfInput(const Case& k) {
  return Sequence(Count(k.InputDims()), 7, 13, 6, 0.25f);
}
std::vector<float> TfFilter(const Case& k) {
  return Sequence(Count(k.FilterDims()), 5, 11, 5, 0.1f);
}
std::vector<float> TfGrad(const Case& k) { return Sequence(Count(k.GradDims()), 3, 7, 3, 0.5f); }

void CheckAgainstTf(const Case& k, const std::vector<float>& want_input,
                    const std::vector<float>& want_filter) {
  for (bool nchw : {false, true}) {
    INFO(Describe(k, nchw));
    auto dx = RunInputGrad(k, nchw, TfFilter(k), TfGrad(k));
    REQUIRE(dx.ok());
    CheckNear(*dx, want_input, 1e-5);
    auto df = RunFilterGrad(k, nchw, TfInput(k), TfGrad(k));
    REQUIRE(df.ok());
    CheckNear(*df, want_filter, 1e-5);
  }
}

TEST_CASE("Depthwise convolution gradients match numbers computed by TensorFlow",
          "[kernels][depthwise_grad]") {
  SECTION("VALID, channel multiplier 2") {
    CheckAgainstTf({1, 5, 5, 2, 3, 3, 2, "VALID"},
                   {0.75f,
                    0.800000011920929f,
                    -1.100000023841858f,
                    1.0f,
                    0.30000001192092896f,
                    0.6500000357627869f,
                    0.30000001192092896f,
                    0.34999996423721313f,
                    -0.6000000238418579f,
                    -0.550000011920929f,
                    0.5f,
                    -1.100000023841858f,
                    -1.4500000476837158f,
                    -1.0500000715255737f,
                    0.9000000357627869f,
                    -0.44999998807907104f,
                    0.9500000476837158f,
                    0.2499999850988388f,
                    0.8500000238418579f,
                    -0.5f,
                    -0.25f,
                    0.30000004172325134f,
                    0.5999999642372131f,
                    1.2999999523162842f,
                    -2.049999952316284f,
                    1.5500000715255737f,
                    -0.75f,
                    -0.44999995827674866f,
                    -0.5f,
                    1.2999999523162842f,
                    -0.050000011920928955f,
                    -0.30000001192092896f,
                    0.75f,
                    0.3499999940395355f,
                    0.75f,
                    -0.40000003576278687f,
                    1.100000023841858f,
                    -2.3000001907348633f,
                    0.29999998211860657f,
                    0.5f,
                    -0.3499999940395355f,
                    -0.5f,
                    -1.2000000476837158f,
                    0.30000004172325134f,
                    -0.40000003576278687f,
                    1.25f,
                    0.45000001788139343f,
                    0.45000001788139343f,
                    0.6000000238418579f,
                    -0.75f},
                   {0.5f,    -1.25f,  -3.375f, -0.625f, -2.875f, 1.75f,  2.0f,   -1.125f, 1.875f,
                    1.5f,    2.5f,    -1.625f, 3.125f,  -2.5f,   4.0f,   -1.5f,  1.375f,  2.125f,
                    -0.375f, -0.375f, -3.625f, 3.5f,    -1.5f,   4.0f,   -0.75f, 1.125f,  -1.625f,
                    2.5f,    -0.875f, -4.0f,   -1.125f, 2.0f,    -4.25f, -1.0f,  -0.625f, -3.375f});
  }
  SECTION("SAME, stride 2, odd sizes, batch 2") {
    CheckAgainstTf({2, 5, 4, 3, 3, 3, 2, "SAME", 2, 2},
                   {0.45000001788139343f,
                    -0.6500000357627869f,
                    -0.5f,
                    -0.75f,
                    0.7000000476837158f,
                    0.6000000238418579f,
                    -0.75f,
                    0.550000011920929f,
                    -0.25f,
                    0.4000000059604645f,
                    -0.30000001192092896f,
                    -0.45000001788139343f,
                    0.6499999761581421f,
                    -1.1999999284744263f,
                    0.20000001788139343f,
                    0.15000000596046448f,
                    -1.0499999523162842f,
                    1.0f,
                    -1.5000001192092896f,
                    1.600000023841858f,
                    0.20000000298023224f,
                    0.25f,
                    0.7000000476837158f,
                    -1.100000023841858f,
                    0.4000000059604645f,
                    0.6000000238418579f,
                    -0.75f,
                    -0.550000011920929f,
                    -0.6000000238418579f,
                    0.6000000238418579f,
                    -0.8999999761581421f,
                    -0.5f,
                    -0.25f,
                    0.6000000238418579f,
                    0.5f,
                    -0.45000001788139343f,
                    0.550000011920929f,
                    -0.2499999850988388f,
                    -1.1500000953674316f,
                    0.0f,
                    0.3500000238418579f,
                    0.6500000357627869f,
                    -1.25f,
                    -0.10000002384185791f,
                    1.600000023841858f,
                    0.10000001639127731f,
                    0.3500000238418579f,
                    0.6500000357627869f,
                    0.3500000238418579f,
                    0.45000001788139343f,
                    0.75f,
                    -0.3499999940395355f,
                    -0.5f,
                    -0.45000001788139343f,
                    -1.0499999523162842f,
                    -0.8500000238418579f,
                    -0.25f,
                    0.800000011920929f,
                    0.6000000238418579f,
                    0.6000000238418579f,
                    0.30000001192092896f,
                    0.30000001192092896f,
                    0.5f,
                    -0.15000000596046448f,
                    -0.4000000059604645f,
                    -0.45000001788139343f,
                    -0.15000000596046448f,
                    -1.2000000476837158f,
                    -0.25f,
                    -0.75f,
                    0.7000000476837158f,
                    0.6000000238418579f,
                    0.3500000238418579f,
                    0.25f,
                    7.450580596923828e-09f,
                    0.75f,
                    -0.3500000238418579f,
                    -1.100000023841858f,
                    -0.3999999761581421f,
                    -1.0499999523162842f,
                    0.20000003278255463f,
                    0.15000000596046448f,
                    -1.0499999523162842f,
                    1.0f,
                    -0.45000001788139343f,
                    0.15000000596046448f,
                    0.25f,
                    0.4000000059604645f,
                    -0.30000001192092896f,
                    -0.45000001788139343f,
                    1.100000023841858f,
                    -0.1499999761581421f,
                    -0.25f,
                    -0.550000011920929f,
                    -0.6000000238418579f,
                    0.6000000238418579f,
                    -1.1500000953674316f,
                    0.8500000238418579f,
                    0.04999999701976776f,
                    0.25f,
                    0.7000000476837158f,
                    -1.100000023841858f,
                    0.550000011920929f,
                    -1.350000023841858f,
                    -1.2000000476837158f,
                    0.0f,
                    0.3500000238418579f,
                    0.6500000357627869f,
                    -0.5f,
                    -0.3500000238418579f,
                    0.0f,
                    0.6000000238418579f,
                    0.5f,
                    -0.45000001788139343f,
                    0.9500000476837158f,
                    1.25f,
                    1.5f,
                    -0.3499999940395355f,
                    -0.5f,
                    -0.45000001788139343f},
                   {3.625f, -2.75f,  -1.375f, 3.25f,   0.5f,    3.625f, -0.875f, 0.125f,  4.0f,
                    -3.0f,  0.5f,    0.125f,  -0.25f,  1.625f,  2.125f, -0.125f, 1.0f,    -4.0f,
                    -4.75f, 5.875f,  0.125f,  2.625f,  -4.625f, -0.5f,  6.875f,  -5.875f, 0.75f,
                    1.0f,   1.25f,   4.75f,   2.5f,    -1.125f, 1.25f,  -6.0f,   -0.75f,  1.375f,
                    2.25f,  -0.625f, -4.375f, -0.625f, -5.5f,   5.5f,   1.125f,  1.25f,   0.5f,
                    4.0f,   -1.125f, -0.625f, -0.875f, -4.25f,  0.25f,  0.625f,  4.125f,  -3.5f});
  }
  SECTION("EXPLICIT pads {top 1, bottom 0, left 0, right 2}, multiplier 1") {
    CheckAgainstTf({1, 4, 5, 2, 2, 3, 1, "EXPLICIT", 1, 1, 1, 1, {1, 0, 0, 2}},
                   {-0.20000001788139343f,
                    0.0f,
                    0.40000003576278687f,
                    0.05000000447034836f,
                    0.5f,
                    0.25f,
                    -1.399999976158142f,
                    1.0f,
                    -0.15000003576278687f,
                    0.7000000476837158f,
                    -0.4000000059604645f,
                    -0.30000001192092896f,
                    -0.15000000596046448f,
                    -0.4000000059604645f,
                    -0.2500000298023224f,
                    -0.550000011920929f,
                    0.30000004172325134f,
                    -0.5f,
                    0.5f,
                    0.25f,
                    -0.6000000238418579f,
                    0.45000001788139343f,
                    0.3499999940395355f,
                    0.20000001788139343f,
                    0.7500000596046448f,
                    0.04999995231628418f,
                    0.2499999701976776f,
                    -0.949999988079071f,
                    -0.2500000298023224f,
                    -0.550000011920929f,
                    0.45000001788139343f,
                    0.15000000596046448f,
                    0.6000000238418579f,
                    0.5f,
                    0.5f,
                    1.100000023841858f,
                    0.20000000298023224f,
                    0.6499999761581421f,
                    -0.10000000894069672f,
                    -0.15000003576278687f},
                   {4.125f, -6.125f, 3.625f, -0.25f, 1.875f, -0.125f, 0.875f, -0.625f, 0.375f,
                    -10.375f, -1.5f, -2.5f});
  }
  SECTION("dilation 2 (TF: GradientTape of tf.nn.depthwise_conv2d(dilations=[2, 2]))") {
    CheckAgainstTf({1, 6, 5, 2, 2, 2, 2, "VALID", 1, 1, 2, 2},
                   {0.75f,
                    0.800000011920929f,
                    -0.5f,
                    0.4000000059604645f,
                    -0.6000000238418579f,
                    0.2500000298023224f,
                    0.6000000238418579f,
                    0.6000000238418579f,
                    -0.30000001192092896f,
                    -0.45000001788139343f,
                    0.5f,
                    -0.75f,
                    -0.75f,
                    0.6000000238418579f,
                    -0.75f,
                    -0.6000000238418579f,
                    0.7000000476837158f,
                    0.6000000238418579f,
                    0.5f,
                    -0.45000001788139343f,
                    -0.050000011920928955f,
                    -0.14999999105930328f,
                    1.350000023841858f,
                    1.600000023841858f,
                    -1.5f,
                    -0.949999988079071f,
                    -1.100000023841858f,
                    -0.050000011920928955f,
                    1.350000023841858f,
                    1.0500000715255737f,
                    -0.4000000059604645f,
                    -0.5f,
                    1.0f,
                    -0.1499999761581421f,
                    -0.09999996423721313f,
                    -0.4500000476837158f,
                    -0.75f,
                    -0.9500000476837158f,
                    -0.04999995231628418f,
                    1.2000000476837158f,
                    -0.5f,
                    -0.3499999940395355f,
                    -0.30000001192092896f,
                    0.4000000059604645f,
                    1.100000023841858f,
                    1.100000023841858f,
                    0.0f,
                    -0.3500000238418579f,
                    -0.5f,
                    -0.6500000357627869f,
                    -0.6000000238418579f,
                    -0.550000011920929f,
                    -0.4000000059604645f,
                    -0.15000000596046448f,
                    1.25f,
                    1.0499999523162842f,
                    0.25f,
                    0.15000000596046448f,
                    -0.25f,
                    -0.5f},
                   {0.5f, -2.875f, -4.0f, -1.125f, 2.125f, 0.625f, -1.875f, 1.125f, -1.125f, 3.25f,
                    -1.5f, 2.0f, -4.375f, -3.0f, -1.0f, -3.875f});
  }
  SECTION("strides 2 and 1, multiplier 3 (TF: GradientTape of one conv2d per channel)") {
    CheckAgainstTf({1, 5, 6, 2, 3, 2, 3, "SAME", 2, 1},
                   {-0.15000000596046448f,
                    -0.7000000476837158f,
                    -0.8999999761581421f,
                    0.44999998807907104f,
                    -0.050000011920928955f,
                    -0.050000011920928955f,
                    0.44999998807907104f,
                    -0.8999999761581421f,
                    -0.09999996423721313f,
                    0.3499999940395355f,
                    0.4000000059604645f,
                    -0.15000003576278687f,
                    -0.3999999761581421f,
                    0.10000002384185791f,
                    1.2000000476837158f,
                    -1.0999999046325684f,
                    -0.8499999046325684f,
                    0.6000000834465027f,
                    0.6000000238418579f,
                    -0.8500000238418579f,
                    -1.0999999046325684f,
                    1.2000000476837158f,
                    1.0500000715255737f,
                    -0.24999994039535522f,
                    0.800000011920929f,
                    0.75f,
                    0.3499999940395355f,
                    -0.10000002384185791f,
                    -0.8999999761581421f,
                    0.44999998807907104f,
                    -0.050000011920928955f,
                    -0.050000011920928955f,
                    0.44999998807907104f,
                    -0.8999999761581421f,
                    -0.09999996423721313f,
                    0.3499999940395355f,
                    -0.6000000238418579f,
                    -0.04999995231628418f,
                    -0.25f,
                    1.0500000715255737f,
                    1.2000000476837158f,
                    -1.0999999046325684f,
                    -0.8499999046325684f,
                    0.6000000834465027f,
                    0.6000000238418579f,
                    -0.8500000238418579f,
                    -1.0999999046325684f,
                    1.2000000476837158f,
                    -0.3499999940395355f,
                    -0.9500000476837158f,
                    -0.15000003576278687f,
                    0.4000000059604645f,
                    0.3499999940395355f,
                    -0.10000002384185791f,
                    -0.8999999761581421f,
                    0.44999998807907104f,
                    -0.050000011920928955f,
                    -0.050000011920928955f,
                    0.44999998807907104f,
                    -0.8999999761581421f},
                   {-0.75f,  -1.375f, -2.0f,  -4.875f, 0.375f, -4.0f,   -1.5f,   -1.75f,  -1.125f,
                    -1.875f, -1.0f,   1.625f, 7.625f,  9.375f, -2.875f, -2.625f, 0.25f,   2.25f,
                    7.75f,   -1.125f, 0.5f,   0.125f,  2.125f, 3.25f,   1.625f,  -0.75f,  -1.375f,
                    1.25f,   -4.875f, 0.375f, -0.375f, -1.5f,  -1.75f,  -1.875f, -1.875f, -1.0f});
  }
}

// TF's half and bfloat16 results for the "VALID, channel multiplier 2" case. TF's CPU
// kernels compute in the 16-bit type and dflow's in float (rounding once), so the values
// agree to the 16-bit type's precision, not bit for bit.
const std::vector<uint16_t> kValidHalfInputGrad = {
    0x3a00, 0x3a66, 0xbc66, 0x3c00, 0x34cc, 0x3933, 0x34cd, 0x3599, 0xb8cc, 0xb866,
    0x3800, 0xbc66, 0xbdce, 0xbc34, 0x3b32, 0xb732, 0x3b99, 0x33fe, 0x3acc, 0xb800,
    0xb400, 0x34cc, 0x38cd, 0x3d33, 0xc01a, 0x3e32, 0xb9ff, 0xb732, 0xb800, 0x3d33,
    0xaa68, 0xb4cd, 0x3a00, 0x3599, 0x3a01, 0xb665, 0x3c66, 0xc099, 0x34cd, 0x3800,
    0xb59a, 0xb800, 0xbccd, 0x34cc, 0xb666, 0x3d00, 0x3734, 0x3732, 0x38cd, 0xba00};
const std::vector<uint16_t> kValidHalfFilterGrad = {
    0x3800, 0xbd00, 0xc2c0, 0xb900, 0xc1c0, 0x3f00, 0x4000, 0xbc80, 0x3f80, 0x3e00, 0x4100, 0xbe80,
    0x4240, 0xc100, 0x4400, 0xbe00, 0x3d80, 0x4040, 0xb600, 0xb600, 0xc340, 0x4300, 0xbe00, 0x4400,
    0xba00, 0x3c80, 0xbe80, 0x4100, 0xbb00, 0xc400, 0xbc80, 0x4000, 0xc440, 0xbc00, 0xb900, 0xc2c0};
const std::vector<uint16_t> kValidBf16InputGrad = {
    0x3f40, 0x3f4d, 0xbf8d, 0x3f80, 0x3e9a, 0x3f27, 0x3e9a, 0x3eb2, 0xbf1a, 0xbf0d,
    0x3f00, 0xbf8d, 0xbfba, 0xbf87, 0x3f66, 0xbee6, 0x3f74, 0x3e7f, 0x3f5a, 0xbf00,
    0xbe80, 0x3e9a, 0x3f19, 0x3fa6, 0xc003, 0x3fc7, 0xbf40, 0xbee5, 0xbf00, 0x3fa6,
    0xbd50, 0xbe9a, 0x3f40, 0x3eb3, 0x3f40, 0xbece, 0x3f8d, 0xc014, 0x3e99, 0x3f00,
    0xbeb3, 0xbf00, 0xbf9a, 0x3e9b, 0xbece, 0x3fa0, 0x3ee7, 0x3ee7, 0x3f1a, 0xbf40};
const std::vector<uint16_t> kValidBf16FilterGrad = {
    0x3f00, 0xbfa0, 0xc058, 0xbf20, 0xc038, 0x3fe0, 0x4000, 0xbf90, 0x3ff0, 0x3fc0, 0x4020, 0xbfd0,
    0x4048, 0xc020, 0x4080, 0xbfc0, 0x3fb0, 0x4008, 0xbec0, 0xbec0, 0xc068, 0x4060, 0xbfc0, 0x4080,
    0xbf40, 0x3f90, 0xbfd0, 0x4020, 0xbf60, 0xc080, 0xbf90, 0x4000, 0xc088, 0xbf80, 0xbf20, 0xc058};

template <typename T>
std::vector<float> ToFloats(const std::vector<uint16_t>& bits) {
  std::vector<float> v;
  for (uint16_t b : bits) v.push_back(T{b}.ToFloat());
  return v;
}

template <typename T>
Tensor Narrowed(const Dims& shape, const std::vector<float>& v) {
  std::vector<T> out;
  for (float x : v) out.push_back(T::FromFloat(x));
  return Filled<T>(shape, out);
}

template <typename T>
void CheckSixteenBit(DataType dtype, const std::vector<uint16_t>& want_input,
                     const std::vector<uint16_t>& want_filter, double eps) {
  const Case k = {1, 5, 5, 2, 3, 3, 2, "VALID"};
  auto dx = Tester("DepthwiseConv2dNativeBackpropInput", k, false, dtype)
                .Input(Vec<int32_t>(Sizes(k.InputDims())))
                .Input(Narrowed<T>(k.FilterDims(), TfFilter(k)))
                .Input(Narrowed<T>(k.GradDims(), TfGrad(k)))
                .RunOne();
  REQUIRE(dx.ok());
  REQUIRE(dx->dtype() == dtype);
  std::vector<float> got;
  for (T v : Values<T>(*dx)) got.push_back(v.ToFloat());
  CheckNear(got, ToFloats<T>(want_input), eps);
  auto df = Tester("DepthwiseConv2dNativeBackpropFilter", k, false, dtype)
                .Input(Narrowed<T>(k.InputDims(), TfInput(k)))
                .Input(Vec<int32_t>(Sizes(k.FilterDims())))
                .Input(Narrowed<T>(k.GradDims(), TfGrad(k)))
                .RunOne();
  REQUIRE(df.ok());
  got.clear();
  for (T v : Values<T>(*df)) got.push_back(v.ToFloat());
  CheckNear(got, ToFloats<T>(want_filter), eps);
}

TEST_CASE("Depthwise convolution gradients in half and bfloat16 (computed in float)",
          "[kernels][depthwise_grad]") {
  CheckSixteenBit<Half>(DT_HALF, kValidHalfInputGrad, kValidHalfFilterGrad, 2e-3);
  CheckSixteenBit<Bfloat16>(DT_BFLOAT16, kValidBf16InputGrad, kValidBf16FilterGrad, 1e-2);
}

void CheckAgainstNaive(const Case& k, bool nchw, uint32_t seed) {
  INFO(Describe(k, nchw));
  const std::vector<float> x = RandomValues(Count(k.InputDims()), seed);
  const std::vector<float> f = RandomValues(Count(k.FilterDims()), seed + 1);
  const std::vector<float> dy = RandomValues(Count(k.GradDims()), seed + 2);
  auto dx = RunInputGrad(k, nchw, f, dy);
  REQUIRE(dx.ok());
  CheckNear(*dx, NaiveInputGrad(k, f, dy), 1e-4);
  auto df = RunFilterGrad(k, nchw, x, dy);
  REQUIRE(df.ok());
  // Sums over the batch and every output position: a looser bound for long sums.
  CheckNear(*df, NaiveFilterGrad(k, x, dy), 1e-3);
}

TEST_CASE("Depthwise convolution gradients match naive ones, NHWC and NCHW",
          "[kernels][depthwise_grad]") {
  const std::vector<Case> cases = {
      {1, 5, 5, 1, 3, 3, 1, "VALID"},
      {2, 7, 6, 3, 3, 3, 1, "SAME"},
      {2, 7, 6, 3, 3, 2, 2, "SAME", 2, 2},  // even filter width: odd pad after
      {1, 9, 7, 4, 3, 3, 3, "SAME", 2, 1},  // unequal strides
      {2, 9, 9, 2, 3, 3, 2, "SAME", 1, 1, 2, 2},
      {1, 10, 9, 3, 2, 3, 2, "VALID", 2, 2, 2, 3},
      {2, 6, 7, 5, 3, 3, 1, "EXPLICIT", 1, 1, 1, 1, {1, 2, 0, 3}},
      {1, 4, 4, 2, 5, 5, 2, "SAME"},     // filter larger than the input
      {3, 12, 12, 16, 3, 3, 1, "SAME"},  // blocked channels: oneDNN's depthwise kernels
      {2, 10, 10, 32, 3, 3, 2, "SAME", 2, 2},
      {2, 6, 5, 8, 1, 1, 4, "VALID"},  // 1x1
      {2, 8, 12, 1, 5, 5, 6, "SAME"},  // one channel: a plain convolution
      {1, 7, 7, 24, 5, 5, 1, "SAME", 2, 2},
  };
  uint32_t seed = 1;
  for (const Case& k : cases) {
    CheckAgainstNaive(k, /*nchw=*/false, seed);
    CheckAgainstNaive(k, /*nchw=*/true, seed);
    seed += 10;
  }
}

TEST_CASE("Depthwise convolution gradients on batches large enough to shard over the pool",
          "[kernels][depthwise_grad]") {
  // The filter gradient sums one partial filter per shard.
  // 2 shards of 17 and 16 images (two primitives), one NCHW shard, 2 shards of 8.
  CheckAgainstNaive({33, 32, 32, 8, 3, 3, 2, "SAME"}, false, 41);
  CheckAgainstNaive({17, 24, 24, 16, 5, 5, 1, "VALID", 2, 2}, true, 42);
  CheckAgainstNaive({16, 32, 32, 32, 3, 3, 1, "SAME"}, false, 43);
}

TEST_CASE("Depthwise convolution gradients with empty inputs", "[kernels][depthwise_grad]") {
  SECTION("an empty batch") {
    const Case k = {0, 4, 4, 3, 3, 3, 2, "SAME"};
    auto dx = RunInputGrad(k, false, RandomValues(54, 1), {});
    REQUIRE(dx.ok());
    CHECK(dx->empty());
    auto df = RunFilterGrad(k, false, {}, {});
    REQUIRE(df.ok());
    CHECK(*df == std::vector<float>(54, 0.0f));
  }
  SECTION("no output pixel: zero gradients") {
    const Case k = {1, 4, 4, 2, 5, 5, 1, "VALID"};
    auto dx = RunInputGrad(k, false, RandomValues(50, 1), {});
    REQUIRE(dx.ok());
    CHECK(*dx == std::vector<float>(32, 0.0f));
    auto df = RunFilterGrad(k, true, RandomValues(32, 2), {});
    REQUIRE(df.ok());
    CHECK(*df == std::vector<float>(50, 0.0f));
  }
  SECTION("multiplier 0: no output channel") {
    const Case k = {1, 4, 4, 2, 3, 3, 0, "SAME"};
    auto dx = RunInputGrad(k, false, {}, {});
    REQUIRE(dx.ok());
    CHECK(*dx == std::vector<float>(32, 0.0f));
    auto df = RunFilterGrad(k, false, RandomValues(32, 2), {});
    REQUIRE(df.ok());
    CHECK(df->empty());
  }
}

TEST_CASE("One depthwise input-gradient kernel across shapes and in-place filter updates",
          "[kernels][depthwise_grad]") {
  NodeDef node;
  node.set_name("dw_grad");
  node.set_op("DepthwiseConv2dNativeBackpropInput");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  (*node.mutable_attr())["strides"] = IntList({1, 1, 1, 1});
  (*node.mutable_attr())["padding"] = StringAttr("SAME");
  KernelRunner runner(node, Registry());
  std::vector<float> f = RandomValues(3 * 3 * 16, 7);
  Tensor filter = Filled<float>({3, 3, 16, 1}, f);
  for (uint32_t step = 0; step < 4; ++step) {
    INFO("step " << step);
    const Case k = {1 + step % 2 * 2, 6, 6, 16, 3, 3, 1, "SAME"};  // batch 1, 3, 1, 3
    const std::vector<float> dy = RandomValues(Count(k.GradDims()), 50 + step);
    auto out =
        runner.Run({Vec<int32_t>(Sizes(k.InputDims())), filter, Filled<float>(k.GradDims(), dy)});
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out), NaiveInputGrad(k, f, dy), 1e-4);
    // As Assign does to a variable: the next step must not use the old packed filter.
    f[5 + step] += 0.5f;
    filter.flat<float>()[5 + step] = f[5 + step];
  }
}

// The status of a gradient op on the shapes of `k` with its sizes input, out_backprop
// and attrs overridden.
struct BadCall {
  Dims sizes = {1, 5, 5, 2};   // input_sizes or filter_sizes
  Dims tensor = {3, 3, 2, 2};  // filter or input
  Dims grad = {1, 3, 3, 4};
  std::vector<std::pair<std::string, AttrValue>> attrs;
};

BadCall WithAttrs(std::vector<std::pair<std::string, AttrValue>> attrs) {
  BadCall b;
  b.attrs = std::move(attrs);
  return b;
}

absl::Status Error(const char* op, const BadCall& b) {
  const bool input_grad = std::string(op) == "DepthwiseConv2dNativeBackpropInput";
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", "VALID").Attr("strides", std::vector<int64_t>{1, 1, 1, 1});
  for (const auto& [name, value] : b.attrs) t.Attr(name, value);
  Tensor sizes =
      b.sizes.size() == 2 ? Filled<int32_t>({1, 2}, Sizes(b.sizes)) : Vec<int32_t>(Sizes(b.sizes));
  Tensor tensor = Filled<float>(b.tensor, RandomValues(Count(b.tensor), 1));
  Tensor grad = Filled<float>(b.grad, RandomValues(Count(b.grad), 2));
  if (input_grad) return t.Input(sizes).Input(tensor).Input(grad).RunOne().status();
  return t.Input(tensor).Input(sizes).Input(grad).RunOne().status();
}

void CheckInvalid(const absl::Status& s, const std::string& text) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find(text) != std::string::npos);
}

TEST_CASE("DepthwiseConv2dNativeBackpropInput rejects bad shapes with TF's errors",
          "[kernels][depthwise_grad]") {
  const char* op = "DepthwiseConv2dNativeBackpropInput";
  const std::string label = "DepthwiseConv2DBackpropInput: ";
  // Texts checked against TF 2.21 (tf.raw_ops on CPU).
  CheckInvalid(Error(op, {{1, 2}}), "Conv2DBackpropInput: input_sizes input must be 1-dim, not 2");
  CheckInvalid(Error(op, {{1, -5, 5, 2}}), "Dimension 1 of input_sizes must be >= 0");
  CheckInvalid(Error(op, {{5, 5, 2}}), label + "input must be 4-dimensional");
  CheckInvalid(Error(op, {{1, 5, 5, 2}, {3, 3, 2}}), label + "filter must be 4-dimensional");
  CheckInvalid(Error(op, {{1, 5, 5, 2}, {3, 3, 2, 2}, {3, 3, 4}}),
               label + "out_backprop must be 4-dimensional");
  CheckInvalid(Error(op, {{2, 5, 5, 2}}),
               label + "input and out_backprop must have the same batch size");
  CheckInvalid(Error(op, {{1, 5, 5, 3}}), label + "input and filter must have the same in_depth");
  CheckInvalid(Error(op, {{1, 5, 5, 2}, {3, 3, 2, 2}, {1, 3, 3, 3}}),
               label + "depth_multiplier * in_depth not equal to out_depth");
  CheckInvalid(Error(op, {{1, 6, 5, 2}}),
               label +
                   "Number of rows of out_backprop doesn't match computed: actual = 3, "
                   "computed = 4");
  CheckInvalid(Error(op, {{1, 5, 6, 2}}),
               label +
                   "Number of cols of out_backprop doesn't match computed: actual = 3, "
                   "computed = 4");
  CheckInvalid(Error(op, WithAttrs({{"strides", IntList({2, 1, 1, 1})}})),
               "Current implementation does not yet support strides in the batch and depth "
               "dimensions");
  CheckInvalid(Error(op, WithAttrs({{"strides", IntList({1, 1, 1})}})),
               "Sliding window strides field must specify 4 dimensions");
  CheckInvalid(Error(op, WithAttrs({{"padding", StringAttr("EXPLICIT")},
                                    {"explicit_paddings", IntList({0, 0, 1, 1, 1, 1})}})),
               "explicit_paddings attribute must contain 8 values, but got: 6");
  CheckInvalid(Error(op, WithAttrs({{"explicit_paddings", IntList({0, 0, 1, 1, 1, 1, 0, 0})}})),
               "explicit_paddings attribute must be empty if the padding attribute is not "
               "EXPLICIT");
  CheckInvalid(Error(op, WithAttrs({{"padding", StringAttr("EXPLICIT")},
                                    {"explicit_paddings", IntList({1, 0, 1, 1, 1, 1, 0, 0})}})),
               "Nonzero explicit padding in the batch or depth dimensions is not supported");
  CheckInvalid(Error(op, WithAttrs({{"padding", StringAttr("EXPLICIT")},
                                    {"explicit_paddings", IntList({0, 0, -1, 1, 1, 1, 0, 0})}})),
               "All elements of explicit_paddings must be nonnegative");
}

TEST_CASE("DepthwiseConv2dNativeBackpropFilter rejects bad shapes with TF's errors",
          "[kernels][depthwise_grad]") {
  const char* op = "DepthwiseConv2dNativeBackpropFilter";
  const std::string label = "DepthwiseConv2DBackpropFilter: ";
  const Dims x = {1, 5, 5, 2};
  CheckInvalid(Error(op, {{3, 3}, x}),
               "Conv2DBackpropFilter: filter_sizes input must be 1-dim, not 2");
  CheckInvalid(Error(op, {{3, -3, 2, 2}, x}), "Dimension 1 of filter_sizes must be >= 0");
  CheckInvalid(Error(op, {{3, 3, 2, 2}, {5, 5, 2}}), label + "input must be 4-dimensional");
  CheckInvalid(Error(op, {{3, 3, 2}, x}), label + "filter must be 4-dimensional");
  CheckInvalid(Error(op, {{3, 3, 2, 2}, {2, 5, 5, 2}}),
               label + "input and out_backprop must have the same batch size");
  CheckInvalid(Error(op, {{3, 3, 3, 2}, x}),
               label + "input and filter must have the same in_depth");
  CheckInvalid(Error(op, {{3, 3, 2, 3}, x}),
               label + "depth_multiplier * in_depth not equal to out_depth");
  CheckInvalid(Error(op, {{2, 3, 2, 2}, x}),
               label +
                   "Number of rows of out_backprop doesn't match computed: actual = 3, "
                   "computed = 4");
  CheckInvalid(Error(op, {{3, 3, 2, 2}, x, {1, 3, 3, 4}, {{"strides", IntList({1, 2, 2, 1})}}}),
               label +
                   "Number of rows of out_backprop doesn't match computed: actual = 3, "
                   "computed = 2");
}

TEST_CASE("Depthwise convolution gradients have no double kernel (oneDNN has no f64)",
          "[kernels][depthwise_grad]") {
  auto out = OpTester("DepthwiseConv2dNativeBackpropInput", Registry())
                 .Attr("T", DT_DOUBLE)
                 .Attr("padding", "VALID")
                 .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                 .Input(Vec<int32_t>({1, 3, 3, 1}))
                 .Input(Filled<double>({1, 1, 1, 1}, {1.0}))
                 .Input(Filled<double>({1, 3, 3, 1}, std::vector<double>(9, 1.0)))
                 .RunOne();
  CHECK(out.status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dflow
