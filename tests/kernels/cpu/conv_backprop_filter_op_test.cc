// Conv2DBackpropFilter (oneDNN backward weights, kernels/cpu/conv_backprop_filter_op.cc)
// against a naive reference written here: the HWIO filter gradient is the sum over the
// batch and the output positions of each input patch element times out_backprop. NHWC
// with VALID, SAME and EXPLICIT padding, strides 1 and 2, dilation 2, one NCHW case, a
// kernel reused across shapes and values (its primitive cache), empty inputs, and the
// shape errors (out_backprop size mismatch in TF's words).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::IntList;
using testing::KernelRunner;
using testing::NhwcToNchw;
using testing::OpTester;
using testing::RandomValues;
using testing::RefWindow;
using testing::RefWindowFor;
using testing::StringAttr;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterConvBackpropFilterKernels);
}

// One call in NHWC terms: input [n, h, w, ic], filter [fh, fw, ic, oc].
struct Case {
  int64_t n, h, w, ic;
  int64_t fh, fw, oc;
  std::string padding = "VALID";
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0};  // {top, bottom, left, right} for EXPLICIT
};

RefWindow Rows(const Case& c) {
  return RefWindowFor(c.padding, c.h, c.fh, c.stride_h, c.dilation_h, c.pads[0], c.pads[1]);
}
RefWindow Cols(const Case& c) {
  return RefWindowFor(c.padding, c.w, c.fw, c.stride_w, c.dilation_w, c.pads[2], c.pads[3]);
}
Dims InputDims(const Case& c) { return {c.n, c.h, c.w, c.ic}; }
Dims GradDims(const Case& c) { return {c.n, Rows(c).out, Cols(c).out, c.oc}; }
int64_t Count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// By definition, in double: dfilter[fy, fx, i, o] = sum over b, oy, ox of
// input[b, oy * sh - pad_top + fy * dh, ox * sw - pad_left + fx * dw, i] * dy[b, oy, ox, o],
// out-of-bounds input positions counting as zero.
std::vector<float> NaiveFilterGrad(const Case& c, const std::vector<float>& x,
                                   const std::vector<float>& dy) {
  const RefWindow rows = Rows(c), cols = Cols(c);
  std::vector<double> acc(c.fh * c.fw * c.ic * c.oc, 0.0);
  for (int64_t fy = 0; fy < c.fh; ++fy)
    for (int64_t fx = 0; fx < c.fw; ++fx)
      for (int64_t i = 0; i < c.ic; ++i)
        for (int64_t o = 0; o < c.oc; ++o) {
          double sum = 0;
          for (int64_t b = 0; b < c.n; ++b)
            for (int64_t oy = 0; oy < rows.out; ++oy)
              for (int64_t ox = 0; ox < cols.out; ++ox) {
                const int64_t y = oy * c.stride_h - rows.pad_before + fy * c.dilation_h;
                const int64_t xx = ox * c.stride_w - cols.pad_before + fx * c.dilation_w;
                if (y < 0 || y >= c.h || xx < 0 || xx >= c.w) continue;
                sum += static_cast<double>(x[((b * c.h + y) * c.w + xx) * c.ic + i]) *
                       dy[((b * rows.out + oy) * cols.out + ox) * c.oc + o];
              }
          acc[((fy * c.fw + fx) * c.ic + i) * c.oc + o] = sum;
        }
  return std::vector<float>(acc.begin(), acc.end());
}

NodeDef NodeFor(const Case& c, const std::string& format = "NHWC") {
  NodeDef node;
  node.set_name("conv_backprop_filter");
  node.set_op("Conv2DBackpropFilter");
  AttrValue t;
  t.set_type(DT_FLOAT);
  (*node.mutable_attr())["T"] = t;
  (*node.mutable_attr())["padding"] = StringAttr(c.padding);
  (*node.mutable_attr())["data_format"] = StringAttr(format);
  if (format == "NHWC") {
    (*node.mutable_attr())["strides"] = IntList({1, c.stride_h, c.stride_w, 1});
    (*node.mutable_attr())["dilations"] = IntList({1, c.dilation_h, c.dilation_w, 1});
    if (c.padding == "EXPLICIT") {
      (*node.mutable_attr())["explicit_paddings"] =
          IntList({0, 0, c.pads[0], c.pads[1], c.pads[2], c.pads[3], 0, 0});
    }
  } else {
    (*node.mutable_attr())["strides"] = IntList({1, 1, c.stride_h, c.stride_w});
    (*node.mutable_attr())["dilations"] = IntList({1, 1, c.dilation_h, c.dilation_w});
    if (c.padding == "EXPLICIT") {
      (*node.mutable_attr())["explicit_paddings"] =
          IntList({0, 0, 0, 0, c.pads[0], c.pads[1], c.pads[2], c.pads[3]});
    }
  }
  return node;
}

Tensor FilterSizes(const Case& c) {
  return Vec<int32_t>({static_cast<int32_t>(c.fh), static_cast<int32_t>(c.fw),
                       static_cast<int32_t>(c.ic), static_cast<int32_t>(c.oc)});
}

// Runs the NHWC case on random inputs from `seed` and compares with the reference.
void CheckCase(const KernelRunner& runner, const Case& c, uint32_t seed) {
  const Dims in_dims = InputDims(c), grad_dims = GradDims(c);
  const std::vector<float> x = RandomValues(Count(in_dims), seed);
  const std::vector<float> dy = RandomValues(Count(grad_dims), seed + 1000);
  absl::StatusOr<Tensor> out =
      runner.Run({Filled<float>(in_dims, x), FilterSizes(c), Filled<float>(grad_dims, dy)});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{c.fh, c.fw, c.ic, c.oc});
  CheckNear(Values<float>(*out), NaiveFilterGrad(c, x, dy), 1e-4);
}

void CheckCase(const Case& c, uint32_t seed) {
  KernelRunner runner(NodeFor(c), Registry());
  CheckCase(runner, c, seed);
}

TEST_CASE("Conv2DBackpropFilter matches the naive sum for VALID and SAME, stride 1 and 2",
          "[kernels][conv_backprop_filter]") {
  SECTION("VALID, stride 1") { CheckCase({2, 5, 5, 3, 3, 3, 4}, 1); }
  SECTION("SAME, stride 1") { CheckCase({1, 5, 4, 2, 3, 3, 3, "SAME"}, 2); }
  SECTION("SAME, stride 2, odd pad after") {
    Case c{2, 7, 6, 3, 3, 3, 2, "SAME", 2, 2};
    CheckCase(c, 3);
  }
  SECTION("SAME, stride 2, even filter") {
    Case c{1, 8, 8, 2, 4, 4, 3, "SAME", 2, 2};
    CheckCase(c, 4);
  }
  SECTION("VALID, stride 2, last row and column uncovered") {
    Case c{1, 6, 7, 2, 2, 3, 2, "VALID", 2, 2};
    CheckCase(c, 5);
  }
  SECTION("VALID, strides 2 x 1") {
    Case c{3, 7, 5, 1, 3, 2, 2, "VALID", 2, 1};
    CheckCase(c, 6);
  }
}

// LeNet-5's layers take oneDNN's direct kernels on the NHWC images as they are (no
// reorder; kernels/cpu/conv_backprop_filter_op.cc), over a batch large enough to shard.
TEST_CASE("Conv2DBackpropFilter matches the naive sum on LeNet-5's layers",
          "[kernels][conv_backprop_filter]") {
  SECTION("28x28, 1 -> 6 channels, 5x5 SAME") { CheckCase({16, 28, 28, 1, 5, 5, 6, "SAME"}, 11); }
  SECTION("14x14, 6 -> 16 channels, 5x5 VALID") { CheckCase({16, 14, 14, 6, 5, 5, 16}, 12); }
  SECTION("odd channel counts, stride 2") {
    CheckCase({5, 9, 11, 3, 3, 3, 5, "SAME", 2, 2}, 13);
  }
}

TEST_CASE("Conv2DBackpropFilter matches the naive sum with dilation 2",
          "[kernels][conv_backprop_filter]") {
  SECTION("VALID") {
    Case c{1, 7, 7, 2, 3, 3, 2, "VALID"};
    c.dilation_h = c.dilation_w = 2;
    CheckCase(c, 7);
  }
  SECTION("SAME") {
    Case c{2, 6, 7, 2, 3, 2, 3, "SAME"};
    c.dilation_h = c.dilation_w = 2;
    CheckCase(c, 8);
  }
  SECTION("SAME, dilation 2 x 1, stride 2") {
    Case c{1, 9, 8, 3, 3, 3, 2, "SAME", 2, 2};
    c.dilation_h = 2;
    CheckCase(c, 9);
  }
}

TEST_CASE("Conv2DBackpropFilter takes EXPLICIT padding and NCHW",
          "[kernels][conv_backprop_filter]") {
  Case ex{2, 4, 5, 2, 3, 2, 2, "EXPLICIT"};
  ex.pads = {1, 0, 2, 1};
  CheckCase(ex, 10);

  // NCHW: the same sums, the input and out_backprop transposed.
  Case c{2, 6, 5, 3, 3, 3, 2, "SAME", 2, 2};
  const Dims in_dims = InputDims(c), grad_dims = GradDims(c);
  const std::vector<float> x = RandomValues(Count(in_dims), 11);
  const std::vector<float> dy = RandomValues(Count(grad_dims), 12);
  KernelRunner runner(NodeFor(c, "NCHW"), Registry());
  absl::StatusOr<Tensor> out = runner.Run(
      {Filled<float>({c.n, c.ic, c.h, c.w}, NhwcToNchw(x, c.n, c.h, c.w, c.ic)), FilterSizes(c),
       Filled<float>({c.n, c.oc, grad_dims[1], grad_dims[2]},
                     NhwcToNchw(dy, c.n, grad_dims[1], grad_dims[2], c.oc))});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{c.fh, c.fw, c.ic, c.oc});
  CheckNear(Values<float>(*out), NaiveFilterGrad(c, x, dy), 1e-4);
}

TEST_CASE("One Conv2DBackpropFilter kernel serves several shapes and values",
          "[kernels][conv_backprop_filter]") {
  Case a{2, 6, 6, 2, 3, 3, 2, "SAME", 2, 2};
  KernelRunner runner(NodeFor(a), Registry());
  CheckCase(runner, a, 20);
  CheckCase(runner, a, 21);  // same shape (cached primitive), new values
  Case b = a;
  b.n = 3;
  b.h = 9;
  CheckCase(runner, b, 22);
  CheckCase(runner, a, 23);
}

TEST_CASE("Conv2DBackpropFilter gives zeros for an empty batch",
          "[kernels][conv_backprop_filter]") {
  Case c{0, 4, 4, 1, 3, 3, 2};
  KernelRunner runner(NodeFor(c), Registry());
  absl::StatusOr<Tensor> out = runner.Run(
      {Filled<float>({0, 4, 4, 1}, {}), FilterSizes(c), Filled<float>({0, 2, 2, 2}, {})});
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{3, 3, 1, 2});
  CHECK(Values<float>(*out) == std::vector<float>(18, 0.0f));
}

absl::Status RunShapes(const Dims& input, const std::vector<int32_t>& filter, const Dims& grad,
                       const char* padding = "VALID") {
  return OpTester("Conv2DBackpropFilter", Registry())
      .Attr("T", DT_FLOAT)
      .Attr("padding", padding)
      .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
      .Input(Filled<float>(input, {}))
      .Input(Vec<int32_t>(filter))
      .Input(Filled<float>(grad, {}))
      .Run()
      .status();
}

std::string ErrorOf(const absl::Status& status) {
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST_CASE("Conv2DBackpropFilter rejects bad shapes with TF's words",
          "[kernels][conv_backprop_filter]") {
  using Catch::Matchers::Contains;
  // A VALID 3x3 filter over 5x5 gives 3x3, not 2x3.
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5, 1}, {3, 3, 1, 2}, {1, 2, 3, 2})),
             Contains("Size of out_backprop doesn't match computed: actual = 2, computed = 3 "
                      "spatial_dim: 1 input: 5 filter: 3 output: 2 stride: 1 dilation: 1"));
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5, 1}, {3, 3, 1, 2}, {1, 3, 4, 2})),
             Contains("Size of out_backprop doesn't match computed: actual = 4, computed = 3 "
                      "spatial_dim: 2"));
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5, 1}, {3, 3, 1, 2}, {1, 4, 5, 2}, "SAME")),
             Contains("actual = 4, computed = 5"));
  CHECK_THAT(ErrorOf(RunShapes({2, 5, 5, 1}, {3, 3, 1, 2}, {1, 3, 3, 2})),
             Contains("input and out_backprop must have the same batch size. Input batch: 2, "
                      "outbackprop batch: 1, batch_dim: 0"));
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5, 1}, {3, 3, 1, 2}, {1, 3, 3, 3})),
             Contains("filter and out_backprop must have the same out_depth"));
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5, 2}, {3, 3, 1, 2}, {1, 3, 3, 2})),
             Contains("Computed input depth 2 doesn't match filter input depth 1"));
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5}, {3, 3, 1, 2}, {1, 3, 3, 2})),
             Contains("input must be 4-dimensional"));
  CHECK_THAT(ErrorOf(RunShapes({1, 5, 5, 1}, {3, 3, 1}, {1, 3, 3, 2})),
             Contains("filter_sizes must have 4 values"));
}

}  // namespace
}  // namespace dflow
