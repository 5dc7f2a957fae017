// Conv2D CPU kernel (oneDNN, kernels/cpu/conv_ops.cc) against a naive convolution
// written here, TensorFlow's own numbers, and TF's error cases.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::KernelRunner;
using testing::OpTester;
using testing::RandomValues;
using testing::RefWindow;
using testing::RefWindowFor;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterConvKernels); }

// A Conv2D call, NHWC sizes; pads {top, bottom, left, right} for EXPLICIT.
struct ConvCase {
  int64_t n, h, w, c;      // input
  int64_t fh, fw, fc, oc;  // filter [fh, fw, fc, oc]; c / fc groups
  std::string padding;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};
};

struct ConvResult {
  std::vector<int64_t> shape;  // NHWC
  std::vector<float> values;   // NHWC
};

// The convolution by definition: sum over the window, skipping padded positions.
ConvResult NaiveConv(const ConvCase& k, const std::vector<float>& x, const std::vector<float>& f) {
  const RefWindow rows = RefWindowFor(k.padding, k.h, k.fh, k.sh, k.dh, k.pads[0], k.pads[1]);
  const RefWindow cols = RefWindowFor(k.padding, k.w, k.fw, k.sw, k.dw, k.pads[2], k.pads[3]);
  const int64_t groups = k.c / k.fc, oc_per_group = k.oc / groups;
  ConvResult r{{k.n, rows.out, cols.out, k.oc}, {}};
  r.values.assign(k.n * rows.out * cols.out * k.oc, 0.0f);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < rows.out; ++oy)
      for (int64_t ox = 0; ox < cols.out; ++ox)
        for (int64_t o = 0; o < k.oc; ++o) {
          const int64_t g = o / oc_per_group;
          double sum = 0;
          for (int64_t i = 0; i < k.fh; ++i)
            for (int64_t j = 0; j < k.fw; ++j) {
              const int64_t y = oy * k.sh - rows.pad_before + i * k.dh;
              const int64_t xx = ox * k.sw - cols.pad_before + j * k.dw;
              if (y < 0 || y >= k.h || xx < 0 || xx >= k.w) continue;
              for (int64_t q = 0; q < k.fc; ++q) {
                sum += static_cast<double>(x[((b * k.h + y) * k.w + xx) * k.c + g * k.fc + q]) *
                       f[((i * k.fw + j) * k.fc + q) * k.oc + o];
              }
            }
          r.values[((b * rows.out + oy) * cols.out + ox) * k.oc + o] = static_cast<float>(sum);
        }
  return r;
}

OpTester ConvTester(const ConvCase& k, bool nchw) {
  OpTester t("Conv2D", Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", k.padding.c_str());
  if (nchw) {
    t.Attr("data_format", "NCHW")
        .Attr("strides", std::vector<int64_t>{1, 1, k.sh, k.sw})
        .Attr("dilations", std::vector<int64_t>{1, 1, k.dh, k.dw});
    if (k.padding == "EXPLICIT") {
      t.Attr("explicit_paddings",
             std::vector<int64_t>{0, 0, 0, 0, k.pads[0], k.pads[1], k.pads[2], k.pads[3]});
    }
  } else {
    t.Attr("strides", std::vector<int64_t>{1, k.sh, k.sw, 1})
        .Attr("dilations", std::vector<int64_t>{1, k.dh, k.dw, 1});
    if (k.padding == "EXPLICIT") {
      t.Attr("explicit_paddings",
             std::vector<int64_t>{0, 0, k.pads[0], k.pads[1], k.pads[2], k.pads[3], 0, 0});
    }
  }
  return t;
}

// Runs the kernel (NHWC or NCHW) on random data and compares with NaiveConv.
void CheckAgainstNaive(const ConvCase& k, bool nchw, uint32_t seed) {
  INFO("case n=" << k.n << " " << k.h << "x" << k.w << "x" << k.c << " filter " << k.fh << "x"
                 << k.fw << "x" << k.fc << "x" << k.oc << " " << k.padding << " s" << k.sh << ","
                 << k.sw << " d" << k.dh << "," << k.dw << (nchw ? " NCHW" : " NHWC"));
  const std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, seed);
  const std::vector<float> f = RandomValues(k.fh * k.fw * k.fc * k.oc, seed + 1);
  const ConvResult want = NaiveConv(k, x, f);
  Tensor input =
      nchw ? Filled<float>({k.n, k.c, k.h, k.w}, testing::NhwcToNchw(x, k.n, k.h, k.w, k.c))
           : Filled<float>({k.n, k.h, k.w, k.c}, x);
  auto out =
      ConvTester(k, nchw).Input(input).Input(Filled<float>({k.fh, k.fw, k.fc, k.oc}, f)).RunOne();
  REQUIRE(out.ok());
  const std::vector<int64_t>& s = want.shape;
  std::vector<int64_t> want_dims = nchw ? std::vector<int64_t>{s[0], s[3], s[1], s[2]} : s;
  const auto got_dims = out->shape().dim_sizes();
  CHECK(std::vector<int64_t>(got_dims.begin(), got_dims.end()) == want_dims);
  std::vector<float> got = Values<float>(*out);
  if (nchw) got = testing::NchwToNhwc(got, s[0], s[3], s[1], s[2]);
  CheckNear(got, want.values, 1e-4);
}

TEST_CASE("Conv2D matches numbers computed by TensorFlow") {
  // Inputs as in TF: x = seq(50, 7, 13, 6, 0.25) [1,5,5,2], f = seq(54, 5, 11, 5, 0.1)
  // [3,3,2,3]; see testing::Sequence.
  Tensor x = Filled<float>({1, 5, 5, 2}, testing::Sequence(50, 7, 13, 6, 0.25f));
  Tensor f = Filled<float>({3, 3, 2, 3}, testing::Sequence(54, 5, 11, 5, 0.1f));
  SECTION("tf.nn.conv2d(x, f, strides=[1,2,2,1], padding='SAME')") {
    auto out = OpTester("Conv2D", Registry())
                   .Attr("T", DT_FLOAT)
                   .Attr("strides", std::vector<int64_t>{1, 2, 2, 1})
                   .Attr("padding", "SAME")
                   .Input(x)
                   .Input(f)
                   .RunOne();
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape({1, 3, 3, 3}));
    CheckNear(Values<float>(*out),
              {-0.75f, 1.15f, 0.025f,  -0.925f, -0.325f, 0.55f,  -0.825f, -0.0249999f, -0.875f,
               -0.5f,  0.4f,  -0.9f,   0.275f,  0.8f,    0.5f,   0.6f,    -2.15f,      1.425f,
               0.775f, -0.8f, -0.175f, 0.95f,   0.15f,   -0.65f, 0.9f,    0.7f,        0.5f},
              1e-5);
  }
  SECTION("EXPLICIT pads [[0,0],[1,0],[0,2],[0,0]] with dilations [1,2,1,1]") {
    auto out = OpTester("Conv2D", Registry())
                   .Attr("T", DT_FLOAT)
                   .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                   .Attr("dilations", std::vector<int64_t>{1, 2, 1, 1})
                   .Attr("padding", "EXPLICIT")
                   .Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 0})
                   .Input(x)
                   .Input(f)
                   .RunOne();
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape({1, 2, 5, 3}));
    CheckNear(
        Values<float>(*out),
        {1.25f,  -1.2f,   -0.0750001f, 0.85f,  0.475f,  -0.175f, 1.75f,  -0.125f, 1.025f, 0.75f,
         -1.0f,  0.825f,  -0.75f,      0.975f, -0.6f,   1.0f,    -0.75f, -0.575f, 0.2f,   0.725f,
         -0.95f, -1.575f, 1.225f,      -2.3f,  -1.375f, 1.075f,  -2.25f, 0.35f,   0.575f, -0.3f},
        1e-5);
  }
}

TEST_CASE("Conv2D matches a naive convolution, NHWC and NCHW") {
  const std::vector<ConvCase> cases = {
      {1, 5, 5, 1, 3, 3, 1, 1, "VALID"},
      {1, 5, 5, 2, 3, 3, 2, 4, "SAME"},
      {2, 7, 6, 3, 3, 2, 3, 5, "SAME", 2, 2},
      {2, 8, 8, 3, 3, 3, 3, 4, "VALID", 2, 2},
      {1, 9, 7, 2, 2, 3, 2, 3, "SAME", 2, 3},  // even filter: odd pad after
      {1, 9, 9, 3, 3, 3, 3, 2, "SAME", 1, 1, 2, 2},
      {2, 10, 9, 2, 3, 2, 2, 3, "VALID", 1, 2, 2, 3},
      {1, 6, 6, 4, 1, 1, 4, 8, "SAME"},         // 1x1
      {3, 6, 5, 3, 1, 1, 3, 2, "VALID", 2, 2},  // 1x1 strided
      {2, 6, 7, 3, 3, 3, 3, 4, "EXPLICIT", 1, 1, 1, 1, {1, 2, 0, 3}},
      {1, 6, 7, 2, 2, 2, 2, 3, "EXPLICIT", 2, 1, 1, 2, {3, 0, 1, 1}},
      {1, 4, 4, 1, 5, 5, 1, 2, "SAME"},       // filter larger than input
      {4, 12, 12, 16, 3, 3, 16, 32, "SAME"},  // blocked channels
      {2, 8, 8, 6, 3, 3, 6, 16, "SAME", 2, 2},
  };
  uint32_t seed = 1;
  for (const ConvCase& k : cases) {
    CheckAgainstNaive(k, /*nchw=*/false, seed);
    CheckAgainstNaive(k, /*nchw=*/true, seed);
    seed += 10;
  }
}

TEST_CASE("Conv2D with input depth a multiple of the filter depth is grouped") {
  CheckAgainstNaive({1, 5, 5, 4, 3, 3, 2, 6, "SAME"}, false, 7);
  CheckAgainstNaive({2, 6, 6, 6, 3, 3, 2, 9, "VALID", 2, 2}, false, 8);
  CheckAgainstNaive({2, 6, 6, 8, 3, 3, 2, 8, "SAME"}, true, 9);
}

TEST_CASE("Conv2D on batches large enough to shard over the pool") {
  // LeNet-5's two convolutions; odd batches leave a smaller last shard.
  CheckAgainstNaive({65, 32, 32, 1, 5, 5, 1, 6, "VALID"}, false, 21);
  CheckAgainstNaive({33, 14, 14, 6, 5, 5, 6, 16, "VALID"}, false, 22);
  CheckAgainstNaive({9, 16, 16, 8, 3, 3, 8, 16, "SAME"}, true, 23);
}

TEST_CASE("Conv2D with few output channels (column pairs folded into channels)") {
  // conv_column_fold.h: NHWC, stride 1 along the columns, even widths and left pad.
  CheckAgainstNaive({3, 28, 28, 1, 5, 5, 1, 6, "EXPLICIT", 1, 1, 1, 1, {2, 2, 2, 2}}, false, 31);
  CheckAgainstNaive({2, 8, 12, 3, 5, 5, 3, 4, "SAME"}, false, 32);      // pads 2, 2
  CheckAgainstNaive({2, 6, 16, 1, 3, 5, 1, 4, "VALID"}, false, 33);     // column quads
  CheckAgainstNaive({2, 7, 10, 2, 3, 3, 2, 6, "EXPLICIT", 1, 1, 1, 1, {1, 1, 2, 2}}, false, 34);
  CheckAgainstNaive({2, 9, 12, 1, 5, 5, 1, 6, "VALID", 2, 1}, false, 35);  // rows strided
  CheckAgainstNaive({2, 6, 10, 3, 3, 3, 3, 8, "EXPLICIT", 1, 1, 1, 1, {1, 0, 2, 0}}, false, 36);
  CheckAgainstNaive({2, 7, 11, 1, 5, 5, 1, 6, "SAME"}, false, 37);      // odd width: unfolded
}

TEST_CASE("Conv2D with an empty output") {
  auto out = ConvTester({1, 4, 4, 1, 5, 5, 1, 2, "VALID"}, false)
                 .Input(Filled<float>({1, 4, 4, 1}, RandomValues(16, 1)))
                 .Input(Filled<float>({5, 5, 1, 2}, RandomValues(50, 2)))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({1, 0, 0, 2}));
  auto empty_batch = ConvTester({0, 4, 4, 1, 3, 3, 1, 2, "SAME"}, false)
                         .Input(Filled<float>({0, 4, 4, 1}, {}))
                         .Input(Filled<float>({3, 3, 1, 2}, RandomValues(18, 2)))
                         .RunOne();
  REQUIRE(empty_batch.ok());
  CHECK(empty_batch->shape() == TensorShape({0, 4, 4, 2}));
}

// The error of a Conv2D with `attrs` on `input` and `filter` shapes.
absl::Status ConvError(const std::vector<int64_t>& input, const std::vector<int64_t>& filter,
                       const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  OpTester t("Conv2D", Registry());
  t.Attr("T", DT_FLOAT).Attr("padding", "VALID").Attr("strides", std::vector<int64_t>{1, 1, 1, 1});
  for (const auto& [name, value] : attrs) t.Attr(name, value);
  int64_t in_count = 1, f_count = 1;
  for (int64_t d : input) in_count *= d;
  for (int64_t d : filter) f_count *= d;
  auto out = t.Input(Filled<float>(input, RandomValues(in_count, 1)))
                 .Input(Filled<float>(filter, RandomValues(f_count, 2)))
                 .RunOne();
  return out.status();
}

TEST_CASE("Conv2D rejects bad shapes and attrs with TF's errors") {
  using testing::IntList;
  using testing::StringAttr;
  auto invalid = [](const absl::Status& s, const std::string& text) {
    INFO(s.ToString());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).find(text) != std::string::npos);
  };
  invalid(ConvError({5, 5, 1}, {3, 3, 1, 1}, {}), "input must be 4-dimensional");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1}, {}), "filter must be 4-dimensional");
  invalid(ConvError({1, 5, 5, 3}, {3, 3, 2, 1}, {}),
          "input depth must be evenly divisible by filter depth: 3 vs 2");
  invalid(ConvError({1, 5, 5, 4}, {3, 3, 2, 3}, {}),
          "output depth must be evenly divisible by number of groups: 3 vs 2");
  invalid(ConvError({1, 3, 3, 1}, {5, 5, 1, 1}, {}), "Computed output size would be negative");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1}, {{"strides", IntList({2, 1, 1, 1})}}),
          "does not yet support strides in the batch and depth dimensions");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1}, {{"strides", IntList({1, 1, 1})}}),
          "strides field must specify 4 dimensions");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1}, {{"strides", IntList({1, 0, 1, 1})}}),
          "must be positive");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1}, {{"dilations", IntList({1, 1, 1, 2})}}),
          "does not yet support dilations in the batch and depth dimensions");
  // Dilations of 2^62 overflowed the window arithmetic and reached oneDNN (INTERNAL).
  for (const char* padding : {"SAME", "VALID"}) {
    invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1},
                      {{"padding", StringAttr(padding)},
                       {"dilations", IntList({1, int64_t{1} << 62, 1, 1})}}),
            "Window too large: size 3 dilated by 4611686018427387904");
  }
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1},
                    {{"data_format", StringAttr("NCHW")}, {"strides", IntList({1, 2, 1, 1})}}),
          "does not yet support strides in the batch and depth dimensions");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1},
                    {{"padding", StringAttr("EXPLICIT")},
                     {"explicit_paddings", IntList({0, 0, 1, 1, 1, 1})}}),
          "explicit_paddings attribute must contain 8 values, but got: 6");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1},
                    {{"padding", StringAttr("EXPLICIT")},
                     {"explicit_paddings", IntList({1, 0, 1, 1, 1, 1, 0, 0})}}),
          "Nonzero explicit padding in the batch or depth dimensions");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1},
                    {{"padding", StringAttr("EXPLICIT")},
                     {"explicit_paddings", IntList({0, 0, -1, 1, 1, 1, 0, 0})}}),
          "must be nonnegative");
  invalid(ConvError({1, 5, 5, 1}, {3, 3, 1, 1},
                    {{"explicit_paddings", IntList({0, 0, 1, 1, 1, 1, 0, 0})}}),
          "must be empty if the padding attribute is not EXPLICIT");
}

NodeDef ConvNode(const std::string& padding) {
  NodeDef node;
  node.set_name("conv");
  node.set_op("Conv2D");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  (*node.mutable_attr())["strides"] = testing::IntList({1, 1, 1, 1});
  (*node.mutable_attr())["padding"] = testing::StringAttr(padding);
  return node;
}

TEST_CASE("One Conv2D kernel serves new shapes and new filters (its caches)") {
  KernelRunner conv(ConvNode("SAME"), Registry());
  const std::vector<ConvCase> steps = {
      {2, 6, 6, 3, 3, 3, 3, 4, "SAME"},
      {2, 6, 6, 3, 3, 3, 3, 4, "SAME"},  // same shape again: cached primitive and filter
      {5, 8, 7, 3, 3, 3, 3, 4, "SAME"},  // new input shape, same filter shape
      {1, 6, 6, 2, 1, 1, 2, 5, "SAME"},  // new filter shape
  };
  uint32_t seed = 100;
  for (const ConvCase& k : steps) {
    INFO("seed " << seed);
    const std::vector<float> x = RandomValues(k.n * k.h * k.w * k.c, seed);
    const std::vector<float> f = RandomValues(k.fh * k.fw * k.fc * k.oc, seed + 1);
    auto out = conv.Run(
        {Filled<float>({k.n, k.h, k.w, k.c}, x), Filled<float>({k.fh, k.fw, k.fc, k.oc}, f)});
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out), NaiveConv(k, x, f).values, 1e-4);
    seed += 2;
  }
  // The same filter tensor (one buffer, as a Const gives) on several inputs.
  const ConvCase k = {3, 5, 5, 3, 3, 3, 3, 4, "SAME"};
  const std::vector<float> f = RandomValues(3 * 3 * 3 * 4, 7);
  Tensor filter = Filled<float>({3, 3, 3, 4}, f);
  for (uint32_t s = 0; s < 3; ++s) {
    const std::vector<float> x = RandomValues(3 * 5 * 5 * 3, 50 + s);
    auto out = conv.Run({Filled<float>({3, 5, 5, 3}, x), filter});
    REQUIRE(out.ok());
    CheckNear(Values<float>(*out), NaiveConv(k, x, f).values, 1e-4);
  }
  // That buffer updated in place, as Assign or ApplyGradientDescent do to a variable:
  // the kernel must not keep using the filter it reordered before.
  std::vector<float> updated = f;
  updated[5] += 0.5f;
  filter.flat<float>()[5] = updated[5];
  const std::vector<float> x = RandomValues(3 * 5 * 5 * 3, 60);
  auto out = conv.Run({Filled<float>({3, 5, 5, 3}, x), filter});
  REQUIRE(out.ok());
  CheckNear(Values<float>(*out), NaiveConv(k, x, updated).values, 1e-4);
}

TEST_CASE("One Conv2D kernel computes correctly from several threads at once") {
  KernelRunner conv(ConvNode("VALID"), Registry());
  const ConvCase k = {12, 14, 14, 6, 5, 5, 6, 16, "VALID"};
  const std::vector<float> f = RandomValues(5 * 5 * 6 * 16, 3);
  Tensor filter = Filled<float>({5, 5, 6, 16}, f);
  std::vector<std::vector<float>> inputs, wants, gots(4);
  std::vector<absl::Status> statuses(4);
  for (uint32_t t = 0; t < 4; ++t) {
    inputs.push_back(RandomValues(12 * 14 * 14 * 6, 200 + t));
    wants.push_back(NaiveConv(k, inputs.back(), f).values);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) {
        auto out = conv.Run({Filled<float>({12, 14, 14, 6}, inputs[t]), filter});
        statuses[t] = out.status();
        if (!out.ok()) return;
        gots[t] = Values<float>(*out);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    REQUIRE(statuses[t].ok());
    CheckNear(gots[t], wants[t], 1e-4);
  }
}

}  // namespace
TEST_CASE("Conv2D of one image runs in bands of output rows on the pool") {
  // conv_row_bands.h: a batch of 1 (>= 8 MFLOP, the pool's 2 threads) splits its output
  // rows in two bands, each with the padding of the edge it touches.
  CheckAgainstNaive({1, 32, 32, 16, 3, 3, 16, 32, "SAME"}, false, 41);
  CheckAgainstNaive({1, 33, 20, 32, 3, 3, 32, 64, "SAME", 2, 1}, false, 42);  // odd rows, stride 2
  CheckAgainstNaive({1, 40, 32, 32, 4, 3, 32, 48, "SAME", 2, 2}, false, 43);  // even filter
  CheckAgainstNaive({1, 30, 24, 16, 3, 3, 16, 64, "VALID", 1, 1, 2, 2}, false, 44);  // dilated
  CheckAgainstNaive({1, 31, 24, 16, 5, 3, 16, 48, "EXPLICIT", 1, 1, 1, 1, {3, 1, 0, 2}},
                    false, 45);
  CheckAgainstNaive({1, 28, 28, 64, 1, 1, 64, 128, "VALID"}, false, 46);  // pointwise
  CheckAgainstNaive({1, 28, 28, 64, 3, 3, 16, 64, "SAME"}, false, 47);     // grouped
  // Two images on two threads stay whole (a batch shard each).
  CheckAgainstNaive({2, 32, 32, 16, 3, 3, 16, 32, "SAME"}, false, 48);
}

}  // namespace dflow

namespace dflow {
namespace {

TEST_CASE("Conv2D runs large 3x3 convolutions as Winograd (conv_winograd.h) with direct results") {
  // Each case passes PreferWinograd, whole (batch shards) or in two row bands of one
  // image (the pool's 2 threads); oneDNN's Winograd on blocked activations, reordered
  // from and back to the graph's layout, agrees with the naive sums.
  CheckAgainstNaive({1, 28, 28, 64, 3, 3, 64, 64, "SAME"}, false, 51);   // bands of 14x28
  CheckAgainstNaive({1, 40, 30, 32, 3, 3, 32, 48, "VALID"}, false, 52);  // odd rows
  CheckAgainstNaive({3, 20, 24, 16, 3, 3, 16, 64, "EXPLICIT", 1, 1, 1, 1, {1, 0, 2, 1}}, false,
                    53);                                                   // uneven pads, shards
  CheckAgainstNaive({2, 24, 24, 32, 3, 3, 32, 64, "SAME"}, true, 54);    // NCHW
}

}  // namespace
}  // namespace dflow
