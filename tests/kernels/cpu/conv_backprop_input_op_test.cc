// Conv2DBackpropInput (oneDNN deconvolution, kernels/cpu/conv_backprop_input_op.cc).
// Expected values and messages from TF 2.21 (tf.raw_ops on CPU). TF's CPU kernel
// refuses NCHW and dilations, so those values are TF's NHWC result transposed and TF's
// result for the zero-dilated filter.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterConvBackpropInputKernels);
}

// The inputs the TF script used: filter (i % 7 - 3) / 4, out_backprop (i % 5 - 2) / 2.
Tensor FilterOf(const Dims& shape) {
  std::vector<float> v;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i % 7 - 3) * 0.25f);
  return Filled<float>(shape, v);
}
Tensor GradOf(const Dims& shape) {
  std::vector<float> v;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i % 5 - 2) * 0.5f);
  return Filled<float>(shape, v);
}

struct Call {
  std::vector<int32_t> input_sizes;
  Dims filter, grad;
  std::string padding = "VALID";
  Dims strides = {1, 1, 1, 1};
  Dims dilations = {1, 1, 1, 1};
  Dims explicit_pads;
  std::string format = "NHWC";
};

absl::StatusOr<Tensor> Run(const Call& c, Tensor filter, Tensor grad) {
  OpTester t("Conv2DBackpropInput", Registry());
  t.Attr("T", DT_FLOAT)
      .Attr("padding", c.padding.c_str())
      .Attr("strides", c.strides)
      .Attr("dilations", c.dilations)
      .Attr("data_format", c.format.c_str());
  if (!c.explicit_pads.empty()) t.Attr("explicit_paddings", c.explicit_pads);
  return t.Input(Vec<int32_t>(c.input_sizes)).Input(filter).Input(grad).RunOne();
}
absl::StatusOr<Tensor> Run(const Call& c) { return Run(c, FilterOf(c.filter), GradOf(c.grad)); }

void CheckResult(const Call& c, const Dims& shape, const std::vector<float>& want) {
  absl::StatusOr<Tensor> out = Run(c);
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == shape);
  CheckNear(Values<float>(*out), want, 1e-5);
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  return std::string(result.status().message());
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("Conv2DBackpropInput matches TF for VALID, SAME and EXPLICIT padding",
          "[kernels][conv_backprop_input]") {
  CheckResult(
      {{1, 4, 4, 1}, {3, 3, 1, 2}, {1, 2, 2, 2}}, {1, 4, 4, 1},
      {1, 0, -0.5, 0.25, -0.625, 0.375, -0.375, 0, 0.625, 0.75, 0, 0, -0.25, -0.5, 0.125, 0.125});
  CheckResult({{1, 5, 5, 2}, {3, 3, 2, 3}, {1, 3, 3, 3}, "SAME", {1, 2, 2, 1}}, {1, 5, 5, 2},
              {-0.125, -0.375, 0.125,  -1.5,   -0.25,  0.125,  -0.125, 2.0,    0.25,   -0.625,
               2.75,   -0.5,   -1.25,  0.5,    -1.5,   0.0,    1.0,    -0.375, -0.125, 0.5,
               -0.5,   1.75,   0.625,  -0.375, 0.625,  -0.875, -0.25,  0.625,  -0.125, -0.375,
               0.0,    -0.875, 3.625,  0.375,  -1.125, 0.875,  -1.0,   -0.5,   2.75,   -0.5,
               -0.25,  0.125,  -0.125, 2.0,    0.25,   -0.625, -0.375, -0.75,  -0.5,   1.75});
  // SAME at stride 2 on an even size: the odd pad goes after.
  CheckResult(
      {{1, 4, 4, 1}, {3, 3, 1, 1}, {1, 2, 2, 1}, "SAME", {1, 2, 2, 1}}, {1, 4, 4, 1},
      {0.75, 0.5, 0.625, 0.25, 0, -0.25, -0.5, -0.125, -0.75, 0.75, -0.25, 0.125, 0, 0, 0, 0.125});
  // VALID at stride 2 leaving the last row and column uncovered (zero gradient).
  CheckResult(
      {{1, 5, 5, 1}, {2, 2, 1, 2}, {1, 2, 2, 2}, "VALID", {1, 2, 2, 1}}, {1, 5, 5, 1},
      {1,     0.25, -0.25, 0,   0,      -0.5,   -0.375, 0.25, -0.375, 0, -0.25, -0.25, 0.375,
       0.125, 0,    -0.25, 1.5, -0.125, -0.375, 0,      0,    0,      0, 0,     0});
  Call ex{{2, 3, 4, 1}, {2, 2, 1, 1}, {2, 3, 4, 1}, "EXPLICIT"};
  ex.explicit_pads = {0, 0, 1, 0, 0, 1, 0, 0};
  CheckResult(ex, {2, 3, 4, 1}, {-0.5,   0.375, 0.875, 0.125,  -0.625, -0.75, 0.375,  0.875,
                                 -0.125, -0.25, 0.25,  0.125,  0.375,  0.125, -0.625, -0.75,
                                 0.875,  0.875, 0.125, -0.625, 0.25,   0.125, 0,      -0.125});
  // input_sizes of 2 values: rows and columns.
  CheckResult(
      {{4, 4}, {3, 3, 1, 2}, {1, 2, 2, 2}}, {1, 4, 4, 1},
      {1, 0, -0.5, 0.25, -0.625, 0.375, -0.375, 0, 0.625, 0.75, 0, 0, -0.25, -0.5, 0.125, 0.125});
}

TEST_CASE("Conv2DBackpropInput takes dilations and NCHW", "[kernels][conv_backprop_input]") {
  Call dilated{{1, 5, 5, 1}, {2, 2, 1, 2}, {1, 3, 3, 2}};
  dilated.dilations = {1, 2, 2, 1};
  CheckResult(dilated, {1, 5, 5, 1},
              {1,      -0.25,  0,    0,     -0.25,  0.375, -0.875, 1.125, -0.125,
               0.25,   -0.75,  0,    -0.25, -0.625, 1.625, -0.125, 0.625, -0.875,
               -0.375, -0.375, 0.25, -0.25, -0.5,   1.5,   -0.375});
  Call nchw{{1, 2, 4, 4}, {3, 3, 2, 1}, {1, 1, 2, 2}, "SAME", {1, 1, 2, 2}};
  nchw.format = "NCHW";
  CheckResult(nchw, {1, 2, 4, 4},
              {0.75,  0.25,  0.125, 0.125, -0.75,  0.5,  -0.375, 0.25,  -0.5,   0.75,  -0.375,
               0.25,  0,     0,     0.375, -0.25,  0.5,  0,      -0.25, 0,      0.75,  0.25,
               0.125, 0.125, -0.75, 0.5,   -0.625, 0.25, 0,      0,     -0.375, -0.125});
}

TEST_CASE("Conv2DBackpropInput splits a batch over the pool", "[kernels][conv_backprop_input]") {
  absl::StatusOr<Tensor> out =
      Run({{6, 9, 9, 3}, {3, 3, 3, 4}, {6, 5, 5, 4}, "SAME", {1, 2, 2, 1}});
  REQUIRE(out.ok());
  const std::vector<float> v = Values<float>(*out);
  double sum = 0, squares = 0;
  for (float x : v) {
    sum += x;
    squares += static_cast<double>(x) * x;
  }
  CHECK(sum == Approx(15.0).margin(1e-3));
  CHECK(squares == Approx(1786.3125).epsilon(1e-6));
  CheckNear(std::vector<float>(v.begin(), v.begin() + 8),
            {-0.5, 0.25, 1.0, -1.125, 0.875, -1.5, 1.75, -0.5});
  CheckNear(std::vector<float>(v.end() - 4, v.end()), {0.875, -0.875, 1.0, 0.25});
}

TEST_CASE("Conv2DBackpropInput gives zeros or nothing for empty inputs",
          "[kernels][conv_backprop_input]") {
  CheckResult({{1, 4, 4, 1}, {5, 5, 1, 2}, {1, 0, 0, 2}}, {1, 4, 4, 1},
              std::vector<float>(16, 0.0f));
  CheckResult({{1, 4, 4, 1}, {3, 3, 1, 0}, {1, 2, 2, 0}}, {1, 4, 4, 1},
              std::vector<float>(16, 0.0f));
  CheckResult({{0, 4, 4, 1}, {3, 3, 1, 2}, {0, 2, 2, 2}}, {0, 4, 4, 1}, {});
}

TEST_CASE("Conv2DBackpropInput rejects bad shapes with TF's words",
          "[kernels][conv_backprop_input]") {
  CHECK(Contains(ErrorOf(Run({{1, 4, 4, 1}, {3, 3, 1, 2}, {2, 2, 2}})),
                 "input_sizes must be 4-dimensional, got: 3"));
  CHECK(Contains(ErrorOf(Run({{1, 4, 4}, {3, 3, 1, 2}, {1, 2, 2, 2}})),
                 "Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but "
                 "got: 3"));
  CHECK(Contains(ErrorOf(Run({{1, 4, 4, 1}, {3, 3, 2}, {1, 2, 2, 2}})),
                 "Conv2DCustomBackpropInput: filter must be 4-dimensional"));
  CHECK(Contains(ErrorOf(Run({{1, 4, 4, 2}, {3, 3, 1, 2}, {1, 2, 2, 2}})),
                 "Gradients for grouped convolutions are not supported on CPU. Please file a "
                 "feature request if you run into this issue. Computed input depth 2 doesn't "
                 "match filter input depth 1"));
  CHECK(Contains(ErrorOf(Run({{1, 4, 4, 1}, {3, 3, 1, 2}, {1, 2, 2, 3}})),
                 "Conv2DCustomBackpropInput: filter and out_backprop must have the same "
                 "out_depth"));
  CHECK(Contains(ErrorOf(Run({{1, 4, 4, 1}, {3, 3, 1, 2}, {1, 3, 2, 2}})),
                 "Conv2DCustomBackpropInput: Size of out_backprop doesn't match computed: actual "
                 "= 3, computed = 2 spatial_dim: 1 input: 4 filter: 3 output: 3 stride: 1 "
                 "dilation: 1"));
  CHECK(Contains(ErrorOf(Run({{2, 4, 4, 1}, {3, 3, 1, 2}, {1, 2, 2, 2}})),
                 "Conv2DCustomBackpropInput: input and out_backprop must have the same batch "
                 "size. Input batch: 2, outbackprop batch: 1, batch_dim: 0"));
  CHECK(Contains(ErrorOf(Run({{1, 4, 4, 0}, {3, 3, 0, 2}, {1, 2, 2, 2}})),
                 "Conv2DCustomBackpropInput: filter depth must be strictly greated than zero"));
  CHECK(!ErrorOf(Run({{1, -4, 4, 1}, {3, 3, 1, 2}, {1, 2, 2, 2}})).empty());
  Call big{{1, 4, 4, 1}, {3, 3, 1, 2}, {1, 2, 2, 2}};
  big.input_sizes = {1, 2147483647, 2147483647, 1};
  big.padding = "SAME";
  big.strides = {1, 2147483647, 2147483647, 1};
  big.filter = {3, 3, 1, 2};
  big.grad = {1, 1, 1, 2};
  CHECK(!ErrorOf(Run(big)).empty());  // 2^62 floats: a clean error, no crash
}

TEST_CASE("Conv2DBackpropInput rejects bad attrs", "[kernels][conv_backprop_input]") {
  Call c{{1, 4, 4, 1}, {3, 3, 1, 2}, {1, 2, 2, 2}};
  c.strides = {2, 1, 1, 1};
  CHECK(
      Contains(ErrorOf(Run(c)), "does not yet support strides in the batch and depth dimensions"));
  c.strides = {1, 1, 1};
  CHECK(Contains(ErrorOf(Run(c)), "Sliding window strides field must specify 4 dimensions"));
  c.strides = {1, 1, 1, 1};
  c.padding = "EXPLICIT";
  c.explicit_pads = {0, 0, -1, 1, 1, 1, 0, 0};
  CHECK(Contains(ErrorOf(Run(c)), "All elements of explicit_paddings must be nonnegative"));
}

}  // namespace
}  // namespace dflow
