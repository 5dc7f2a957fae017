// DepthwiseConv2dNative CPU kernel (kernels/cpu/conv_ops.cc, oneDNN's grouped convolution)
// against TensorFlow's own numbers, a naive depthwise convolution written here, and TF's
// error cases.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::IntList;
using testing::KernelRunner;
using testing::OpTester;
using testing::RandomValues;
using testing::RefWindow;
using testing::RefWindowFor;
using testing::Sequence;
using testing::StringAttr;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterConvKernels); }

// A DepthwiseConv2dNative call, NHWC sizes; pads {top, bottom, left, right} for EXPLICIT.
struct DepthwiseCase {
  int64_t n, h, w, c;  // input
  int64_t fh, fw, m;   // filter [fh, fw, c, m]
  std::string padding;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};
};

// The depthwise convolution by definition: output channel c*m + q is input channel c
// convolved with filter[:, :, c, q]; padded positions are skipped. NHWC.
std::vector<float> NaiveDepthwise(const DepthwiseCase& k, const std::vector<float>& x,
                                  const std::vector<float>& f, std::vector<int64_t>* shape) {
  const RefWindow rows = RefWindowFor(k.padding, k.h, k.fh, k.sh, k.dh, k.pads[0], k.pads[1]);
  const RefWindow cols = RefWindowFor(k.padding, k.w, k.fw, k.sw, k.dw, k.pads[2], k.pads[3]);
  const int64_t out_depth = k.c * k.m;
  *shape = {k.n, rows.out, cols.out, out_depth};
  std::vector<float> out(k.n * rows.out * cols.out * out_depth, 0.0f);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < rows.out; ++oy)
      for (int64_t ox = 0; ox < cols.out; ++ox)
        for (int64_t c = 0; c < k.c; ++c)
          for (int64_t q = 0; q < k.m; ++q) {
            double sum = 0;
            for (int64_t i = 0; i < k.fh; ++i)
              for (int64_t j = 0; j < k.fw; ++j) {
                const int64_t y = oy * k.sh - rows.pad_before + i * k.dh;
                const int64_t xx = ox * k.sw - cols.pad_before + j * k.dw;
                if (y < 0 || y >= k.h || xx < 0 || xx >= k.w) continue;
                sum += static_cast<double>(x[((b * k.h + y) * k.w + xx) * k.c + c]) *
                       f[((i * k.fw + j) * k.c + c) * k.m + q];
              }
            out[((b * rows.out + oy) * cols.out + ox) * out_depth + c * k.m + q] =
                static_cast<float>(sum);
          }
  return out;
}

OpTester DepthwiseTester(const DepthwiseCase& k, bool nchw) {
  OpTester t("DepthwiseConv2dNative", Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", k.padding.c_str());
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

// Runs the kernel on NHWC values `x` (transposed for NCHW) and filter `f`; the result
// comes back NHWC.
absl::StatusOr<std::vector<float>> RunDepthwise(const DepthwiseCase& k, bool nchw,
                                                const std::vector<float>& x,
                                                const std::vector<float>& f,
                                                const std::vector<int64_t>& want_shape) {
  Tensor input =
      nchw ? Filled<float>({k.n, k.c, k.h, k.w}, testing::NhwcToNchw(x, k.n, k.h, k.w, k.c))
           : Filled<float>({k.n, k.h, k.w, k.c}, x);
  auto out = DepthwiseTester(k, nchw)
                 .Input(input)
                 .Input(Filled<float>({k.fh, k.fw, k.c, k.m}, f))
                 .RunOne();
  if (!out.ok()) return out.status();
  const std::vector<int64_t>& s = want_shape;
  CHECK(testing::DimsOf(*out) ==
        (nchw ? std::vector<int64_t>{s[0], s[3], s[1], s[2]} : want_shape));
  std::vector<float> got = Values<float>(*out);
  return nchw ? testing::NchwToNhwc(got, s[0], s[3], s[1], s[2]) : got;
}

void CheckAgainstNaive(const DepthwiseCase& k, bool nchw, uint32_t seed) {
  INFO("case n=" << k.n << " " << k.h << "x" << k.w << "x" << k.c << " filter " << k.fh << "x"
                 << k.fw << " m=" << k.m << " " << k.padding << " s" << k.sh << "," << k.sw << " d"
                 << k.dh << "," << k.dw << (nchw ? " NCHW" : " NHWC"));
  const std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, seed);
  const std::vector<float> f = RandomValues(k.fh * k.fw * k.c * k.m, seed + 1);
  std::vector<int64_t> shape;
  const std::vector<float> want = NaiveDepthwise(k, x, f, &shape);
  auto got = RunDepthwise(k, nchw, x, f, shape);
  REQUIRE(got.ok());
  CheckNear(*got, want, 1e-4);
}

// A case whose inputs are TF's reference sequences: x = Sequence(.., 7, 13, 6, 0.25),
// filter = Sequence(.., 5, 11, 5, 0.1), in NHWC and (transposed) NCHW.
void CheckAgainstTf(const DepthwiseCase& k, const std::vector<int64_t>& shape,
                    const std::vector<float>& want) {
  const std::vector<float> x = Sequence(k.n * k.h * k.w * k.c, 7, 13, 6, 0.25f);
  const std::vector<float> f = Sequence(k.fh * k.fw * k.c * k.m, 5, 11, 5, 0.1f);
  for (bool nchw : {false, true}) {
    INFO((nchw ? "NCHW" : "NHWC"));
    auto got = RunDepthwise(k, nchw, x, f, shape);
    REQUIRE(got.ok());
    CheckNear(*got, want, 1e-5);
  }
}

TEST_CASE("DepthwiseConv2dNative matches numbers computed by TensorFlow") {
  // TF's CPU kernel runs NHWC only; the NCHW runs expect its NHWC numbers transposed.
  SECTION("VALID, channel multiplier 2") {
    CheckAgainstTf(
        {1, 5, 5, 2, 3, 3, 2, "VALID"}, {1, 3, 3, 4},
        {0.97500002f,  -0.67500007f, 1.0250001f,   -0.050000004f, 0.75f,         0.79999995f,
         1.5f,         -1.45f,       -0.12500003f, 1.625f,        1.65f,         -1.5500001f,
         -1.4499999f,  1.5f,         0.80000001f,  0.75f,         -0.050000004f, 1.0250001f,
         -0.67500007f, 0.97499996f,  0.70000011f,  -0.10000002f,  -0.52500004f,  -0.75f,
         1.0000001f,   -2.175f,      -2.0250001f,  0.89999998f,   0.45000002f,   -1.0250001f,
         -1.875f,      0.79999995f,  -0.75000006f, -0.52499998f,  -0.10000003f,  0.69999999f});
  }
  SECTION("SAME, stride 2, odd sizes, batch 2") {
    CheckAgainstTf(
        {2, 5, 4, 3, 3, 3, 2, "SAME", 2, 2}, {2, 3, 2, 6},
        {1.3500001f,    -0.32500002f,  -0.57499999f, -0.5f,         0.47500002f,  -0.72500002f,
         0.97500002f,   -0.024999995f, -0.97500002f, -0.075000003f, 0.27500004f,  -0.22499999f,
         -0.075000033f, 1.0749999f,    -1.7249999f,  0.27500001f,   0.22500005f,  0.050000012f,
         0.52500004f,   -0.025000006f, -0.92500001f, -0.55000007f,  0.64999998f,  -0.24999999f,
         -0.95000005f,  1.45f,         0.44999999f,  -0.62499994f,  -0.94999999f, 0.27500004f,
         0.27499998f,   -0.099999994f, -0.80000001f, -0.099999994f, 1.05f,        -0.20000002f,
         0.34999996f,   0.32500002f,   -1.1999999f,  0.52500004f,   -0.95000005f, 1.45f,
         -0.625f,       -0.40000001f,  1.25f,        -0.2f,         0.27499998f,  -0.099999994f,
         1.0f,          -1.0f,         -1.1f,        0.22499998f,   0.72500008f,  -0.12500006f,
         0.024999969f,  0.60000002f,   1.35f,        0.12499999f,   -0.15000001f, -0.175f,
         0.22500004f,   0.69999999f,   -0.47499999f, -1.0f,         1.425f,       -0.90000004f,
         -1.35f,        0.025000006f,  -0.75f,       0.59999996f,   -0.92500001f, 0.42500001f});
  }
  SECTION("VALID, dilation 2 (TF: tf.nn.depthwise_conv2d(dilations=[2, 2]))") {
    // TF's kernel refuses dilations; tf.nn.depthwise_conv2d gets them by space_to_batch.
    CheckAgainstTf(
        {1, 6, 5, 2, 2, 2, 2, "VALID", 1, 1, 2, 2}, {1, 4, 3, 4},
        {0.55000001f,  0.55000001f,   0.30000001f,  0.0f,         0.57499999f,   -1.1f,
         0.50000006f,  -0.12500003f,  0.60000002f,  -1.125f,      0.69999999f,   -0.24999999f,
         0.024999991f, 0.099999994f,  0.32499999f,  0.34999999f,  0.049999997f,  0.075000018f,
         -1.0999999f,  0.55000007f,   0.07500001f,  0.049999997f, -0.57500005f,  -0.875f,
         0.15000002f,  -0.025000006f, -0.30000001f, 0.375f,       -1.125f,       0.60000002f,
         -0.10000001f, 0.24999999f,   -1.1f,        0.57499999f,  0.1f,          0.12499999f,
         0.60000002f,  -1.125f,       0.69999999f,  -0.24999999f, -0.025000006f, 0.15000004f,
         0.90000004f,  -0.375f,       0.0f,         0.125f,       0.12499998f,   0.47500002f});
  }
  SECTION("EXPLICIT pads [[0,0],[1,0],[0,2],[0,0]], multiplier 1") {
    CheckAgainstTf(
        {1, 4, 5, 2, 2, 3, 1, "EXPLICIT", 1, 1, 1, 1, {1, 0, 0, 2}}, {1, 4, 5, 2},
        {-0.80000007f,  -0.64999998f,  -0.64999998f, -0.95000005f, -0.5f,        -1.25f,
         -0.32500002f,  -0.80000001f,  -0.15000001f, -0.375f,      -0.32500002f, 0.57499999f,
         -0.075000018f, 1.175f,        0.17500001f,  0.80000001f,  0.42500001f,  0.47500002f,
         0.47500002f,   0.22500001f,   0.92499995f,  0.65000004f,  0.85000002f,  0.27499998f,
         0.44999999f,   -0.099999994f, -0.57500005f, -0.2f,        -0.75f,       -0.15000001f,
         0.22500001f,   -1.225f,       -0.82500005f, -1.6f,        -2.2f,        -0.35000002f,
         0.049999997f,  0.10000002f,   0.625f,       0.45000002f});
  }
}

TEST_CASE("DepthwiseConv2dNative matches a naive depthwise convolution, NHWC and NCHW") {
  const std::vector<DepthwiseCase> cases = {
      {1, 5, 5, 1, 3, 3, 1, "VALID"},
      {2, 7, 6, 3, 3, 3, 1, "SAME"},
      {2, 7, 6, 3, 3, 2, 2, "SAME", 2, 2},  // even filter width: odd pad after
      {1, 9, 7, 4, 3, 3, 3, "SAME", 2, 1},  // unequal strides
      {2, 9, 9, 2, 3, 3, 2, "SAME", 1, 1, 2, 2},
      {1, 10, 9, 3, 2, 3, 2, "VALID", 2, 2, 2, 3},
      {2, 6, 7, 5, 3, 3, 1, "EXPLICIT", 1, 1, 1, 1, {1, 2, 0, 3}},
      {1, 4, 4, 2, 5, 5, 2, "SAME"},     // filter larger than input
      {3, 12, 12, 16, 3, 3, 1, "SAME"},  // blocked channels, oneDNN's depthwise kernel
      {2, 10, 10, 32, 3, 3, 2, "SAME", 2, 2},
      {2, 6, 5, 8, 1, 1, 4, "VALID"},  // 1x1
      {2, 8, 12, 1, 5, 5, 6, "SAME"},  // one channel: a plain convolution (folded NHWC)
      {2, 6, 6, 1, 1, 1, 4, "VALID"},  // one channel, 1x1: a matrix product in NHWC
  };
  uint32_t seed = 1;
  for (const DepthwiseCase& k : cases) {
    CheckAgainstNaive(k, /*nchw=*/false, seed);
    CheckAgainstNaive(k, /*nchw=*/true, seed);
    seed += 10;
  }
}

TEST_CASE("DepthwiseConv2dNative on batches large enough to shard over the pool") {
  CheckAgainstNaive({33, 16, 16, 8, 3, 3, 2, "SAME"}, false, 41);
  CheckAgainstNaive({17, 14, 14, 12, 5, 5, 1, "VALID", 2, 2}, true, 42);
}

TEST_CASE("DepthwiseConv2dNative of one image runs in bands of output rows") {
  // >= 1 MFLOP (an eighth of a dense band's threshold, two threads): EfficientNet's
  // 28x28x240 layer, and a strided one with a folded Pad's uneven padding.
  CheckAgainstNaive({1, 28, 28, 240, 3, 3, 1, "SAME"}, false, 43);
  CheckAgainstNaive({1, 29, 29, 96, 3, 3, 1, "EXPLICIT", 2, 2, 1, 1, {0, 1, 0, 1}}, false, 44);
}

TEST_CASE("DepthwiseConv2dNative with an empty batch, input or output") {
  auto empty_batch = DepthwiseTester({0, 4, 4, 3, 3, 3, 2, "SAME"}, false)
                         .Input(Filled<float>({0, 4, 4, 3}, {}))
                         .Input(Filled<float>({3, 3, 3, 2}, RandomValues(54, 2)))
                         .RunOne();
  REQUIRE(empty_batch.ok());
  CHECK(empty_batch->shape() == TensorShape({0, 4, 4, 6}));
  auto no_channels = DepthwiseTester({1, 4, 4, 0, 3, 3, 2, "SAME"}, true)
                         .Input(Filled<float>({1, 0, 4, 4}, {}))
                         .Input(Filled<float>({3, 3, 0, 2}, {}))
                         .RunOne();
  REQUIRE(no_channels.ok());
  CHECK(no_channels->shape() == TensorShape({1, 0, 4, 4}));
  auto empty_output = DepthwiseTester({1, 4, 4, 2, 5, 5, 1, "VALID"}, false)
                          .Input(Filled<float>({1, 4, 4, 2}, RandomValues(32, 1)))
                          .Input(Filled<float>({5, 5, 2, 1}, RandomValues(50, 2)))
                          .RunOne();
  REQUIRE(empty_output.ok());
  CHECK(empty_output->shape() == TensorShape({1, 0, 0, 2}));
}

// The status of a DepthwiseConv2dNative with `attrs` on `input` and `filter` shapes.
absl::Status DepthwiseError(const std::vector<int64_t>& input, const std::vector<int64_t>& filter,
                            const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  OpTester t("DepthwiseConv2dNative", Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", "VALID").Attr("strides", std::vector<int64_t>{1, 1, 1, 1});
  for (const auto& [name, value] : attrs) t.Attr(name, value);
  int64_t in_count = 1, f_count = 1;
  for (int64_t d : input) in_count *= d;
  for (int64_t d : filter) f_count *= d;
  return t.Input(Filled<float>(input, RandomValues(in_count, 1)))
      .Input(Filled<float>(filter, RandomValues(f_count, 2)))
      .RunOne()
      .status();
}

TEST_CASE("DepthwiseConv2dNative rejects bad shapes and attrs with TF's errors") {
  auto invalid = [](const absl::Status& s, const std::string& text) {
    INFO(s.ToString());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find(text) != std::string::npos);
  };
  // TF's texts, checked against TF 2.21 (note the missing ": " in the first).
  invalid(DepthwiseError({5, 5, 2}, {3, 3, 2, 1}, {}), "input must be 4-dimensional[5,5,2]");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 2, 2}, {}), "filter must be 4-dimensional: [3,2,2]");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 1, 2}, {}),
          "input and filter must have the same depth: 2 vs 1");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 2, 2}, {{"data_format", StringAttr("NCHW")}}),
          "input and filter must have the same depth: 5 vs 2");
  invalid(DepthwiseError({1, 5, 5, 2}, {7, 7, 2, 2}, {}),
          "Computed output size would be negative: -1 [input_size: 5, effective_filter_size: 7, "
          "stride: 1]");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 2, 1}, {{"strides", IntList({2, 1, 1, 1})}}),
          "Current implementation does not yet support strides in the batch and depth "
          "dimensions");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 2, 1}, {{"strides", IntList({1, 1, 1})}}),
          "Sliding window strides field must specify 4 dimensions");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 2, 1},
                         {{"padding", StringAttr("EXPLICIT")},
                          {"explicit_paddings", IntList({0, 0, 1, 1, 1, 1})}}),
          "explicit_paddings attribute must contain 8 values, but got: 6");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 2, 1},
                         {{"padding", StringAttr("EXPLICIT")},
                          {"explicit_paddings", IntList({1, 0, 1, 1, 1, 1, 0, 0})}}),
          "Nonzero explicit padding in the batch or depth dimensions is not supported");
  invalid(DepthwiseError({1, 5, 5, 2}, {3, 3, 2, 1},
                         {{"explicit_paddings", IntList({0, 0, 1, 1, 1, 1, 0, 0})}}),
          "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
}

TEST_CASE("One DepthwiseConv2dNative kernel sees a filter updated in place") {
  NodeDef node;
  node.set_name("depthwise");
  node.set_op("DepthwiseConv2dNative");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  (*node.mutable_attr())["strides"] = IntList({1, 1, 1, 1});
  (*node.mutable_attr())["padding"] = StringAttr("SAME");
  KernelRunner depthwise(node, Registry());
  const DepthwiseCase k = {2, 6, 6, 16, 3, 3, 1, "SAME"};
  std::vector<float> f = RandomValues(3 * 3 * 16, 7);
  Tensor filter = Filled<float>({3, 3, 16, 1}, f);
  std::vector<int64_t> shape;
  for (uint32_t step = 0; step < 3; ++step) {
    INFO("step " << step);
    const std::vector<float> x = RandomValues(2 * 6 * 6 * 16, 50 + step);
    auto out = depthwise.Run({Filled<float>({2, 6, 6, 16}, x), filter});
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out), NaiveDepthwise(k, x, f, &shape), 1e-4);
    // As Assign does to a variable: the next step must not use the old packed filter.
    f[5 + step] += 0.5f;
    filter.flat<float>()[5 + step] = f[5 + step];
  }
}

TEST_CASE("_DflowFusedDepthwiseConv2dNative: a folded Pad as EXPLICIT pads, bias and Relu6") {
  // graph/fusion.h folds Keras' ZeroPadding2D into MobileNet's stride-2 depthwise
  // convolutions; TF's _FusedDepthwiseConv2dNative has no explicit_paddings.
  const DepthwiseCase k = {1, 57, 56, 32, 3, 3, 1, "EXPLICIT", 2, 2, 1, 1, {0, 1, 0, 1}};
  std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, 61);
  for (float& v : x) v *= 8.0f;  // so that Relu6 clips some outputs
  const std::vector<float> f = RandomValues(k.fh * k.fw * k.c * k.m, 62);
  const std::vector<float> bias = RandomValues(k.c * k.m, 63);
  std::vector<int64_t> shape;
  std::vector<float> want = NaiveDepthwise(k, x, f, &shape);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = std::min(std::max(want[i] + bias[i % bias.size()], 0.0f), 6.0f);
  }
  AttrValue fused_ops;
  for (const char* op : {"BiasAdd", "Relu6"}) fused_ops.mutable_list()->add_s(op);
  OpTester t("_DflowFusedDepthwiseConv2dNative", Registry());
  t.Attr("T", DT_FLOAT)
      .Attr("padding", "EXPLICIT")
      .Attr("explicit_paddings", std::vector<int64_t>{0, 0, 0, 1, 0, 1, 0, 0})
      .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
      .Attr("num_args", 1)
      .Attr("fused_ops", fused_ops)
      .Input(Filled<float>({k.n, k.h, k.w, k.c}, x))
      .Input(Filled<float>({k.fh, k.fw, k.c, k.m}, f))
      .Input(Filled<float>({k.c * k.m}, bias));
  auto got = t.RunOne();
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(testing::DimsOf(*got) == shape);
  CheckNear(Values<float>(*got), want, 1e-4);
}

}  // namespace
}  // namespace dflow
