// Conv3D, Conv3DBackpropInput(V2) and Conv3DBackpropFilter(V2) on oneDNN
// (kernels/cpu/conv3d_ops.cc, conv3d_backprop_ops.cc). Expected values and texts from
// TF 2.21 (testdata/conv3d_tf.py). Every value is a multiple of 1/8, so the tables hold
// eighths. TF's CPU kernels refuse dilations and NCDHW: the dilated tables are TF's
// results for the zero-dilated filter, and NCDHW runs are checked against the NDHWC tables
// transposed.
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterConv3DKernels); }

const Dims kInput = {2, 4, 5, 5, 3};
const Dims kFilter = {2, 3, 3, 3, 2};

// ((i % m) - off) * scale over the row-major index, as conv3d_tf.py makes its inputs.
Tensor Pattern(const Dims& shape, int m, int off, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % m - off) * scale;
  return Filled<float>(shape, v);
}
Tensor InputOf(const Dims& shape) { return Pattern(shape, 11, 5, 0.5f); }
Tensor FilterOf(const Dims& shape) { return Pattern(shape, 7, 3, 0.25f); }
Tensor GradOf(const Dims& shape) { return Pattern(shape, 5, 2, 0.5f); }

std::vector<float> Eighths(const std::vector<int>& k) {
  std::vector<float> v;
  for (int x : k) v.push_back(static_cast<float>(x) / 8.0f);
  return v;
}

std::vector<int32_t> Int32s(const Dims& dims) {
  return std::vector<int32_t>(dims.begin(), dims.end());
}

// One of conv3d_tf.py's cases on input kInput and filter kFilter: attrs (NDHWC order)
// and TF's results in eighths.
struct Case {
  std::string name, padding;
  Dims strides, dilations;
  Dims out;  // the forward output's shape
  std::vector<int> output, input_grad, filter_grad;
};

Case Valid() {
  Case c{"valid", "VALID", {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {2, 3, 3, 3, 2}};
  c.output = {
      -42, 54, 40, -35, 34, -47, 71, -50, 32, -29, -117, 36, -3, 33, -42, 54, 40, -35, -82, 51, 0,
      39, 71, -50, -2, -20, 69, -32, -3, 33, 34, -47, -82, 51, 0, 39, 32, -29, -117, 36, -2, -20,
      -42, 54, 40, -35, 34, -47, 71, -50, 32, -29, -117, 36, 40, -35, 34, -47, -82, 51, 32, -29,
      -117, 36, -2, -20, -42, 54, 40, -35, 34, -47, 0, 39, 71, -50, 32, -29, 69, -32, -3, 33, -42,
      54, -82, 51, 0, 39, 71, -50, -117, 36, -2, -20, 69, -32, 40, -35, 34, -47, -82, 51, 32, -29,
      -117, 36, -2, -20};
  c.input_grad = {
      8, 2, -4, -5, 5, 1, -12, 5, 1, 15, -4, -2, -2, -2, -2, -1, -2, 4, -9, -9, 12, 4, 12, -8, 3,
      -2, -7, -9, 6, 14, 2, -4, -3, 7, -5, -3, 10, 4, -9, -12, -5, 2, 12, -3, -4, 4, -3, -3, -2, 18,
      3, -8, -3, -5, 3, -6, 13, -2, 4, -4, -1, 1, 3, -4, -2, 0, -3, -3, -3, 15, -1, -3, -3, 2, 0,
      -14, 7, 7, 4, -7, 3, 2, -14, 5, -11, 22, -1, 1, -4, -2, 3, -6, -8, 25, -5, -14, -9, -2, 19,
      -8, 1, -4, 5, -14, 2, 3, 18, -2, -19, 5, -6, 4, 7, 17, 8, -4, -16, 0, 14, -7, -9, -1, 0, -7,
      -14, 21, 13, 4, -5, -14, 4, -6, -6, -8, 18, 2, -2, -6, 22, -1, -3, -10, 0, -4, -9, 12, -2, 11,
      -5, 0, 11, -6, -2, -12, 6, 3, 4, 4, -3, 6, -12, 5, -6, 11, 0, -6, 0, -1, -6, 5, 2, 20, -11,
      -14, 5, -4, 1, 0, 7, -7, -15, -2, 18, 6, 6, -1, -12, -10, -8, -10, 14, 24, -6, -4, -2, 18, -8,
      -6, -6, 4, -14, -5, 4, 13, 21, -14, -7, 0, -1, -9, -7, 7, 7, -12, 5, 1, 15, -8, 4, -5, 0, -2,
      -5, 11, -1, -2, 3, 1, 7, -10, 1, -2, 3, 1, -2, 5, -2, -1, -7, 8, 4, -3, -3, 1, 0, -8, -2, 17,
      1, -5, -7, -2, 8, 0, -1, 5, -3, -4, -10, 3, 16, 2, -5, -5, -1, -7, 1, 0, 1, 2, -4, 4, -2, 13,
      -6, 3, -5, -3, -8, 3, 18, -2, -3, -3, 4, -3, -4, 2, 5, -2, -2, -5, 4, -1, -1, -5, 5, 2, -3,
      -1, -2, -2, -2, 15, -1, -3, -12, -1, 3, -5, -1, 3, 8, -7, -1, 6, 14, -6, -8, 0, 1, -9, -2, 12,
      18, 3, -12, -3, 3, -5, -3, -4, 2, -9, -11, 8, 15, 13, -3, -7, -1, -2, -12, 2, 16, 4, -4, -5,
      12, -2, -2, -8, 7, -6, -7, -5, 4, 14, -6, -5, 2, 0, -2, -1, 3, 7, -5, 0, -2, 5, -2, -2, -3, 5,
      -1, -4, -2, 0, -9, 12, -2, 23, -15, -4, 0, -5, -3, 0, 11, -6, -14, 2, 18, 2, 5, -6, -2, -14,
      -5, -14, 21, 21, -5, -6, 0, 14, -7, -7, 16, -7, -16, -19, 6, 17, 14, -10, -6, 7, -15, -2, -8,
      18, 2, -14, 5, -4, 19, -16, 19, -4, 5, -14, 2, 18, -8, -5, 0, -2, -5, -3, -1, 15, -4, 5, -12,
      6, 3, -7, -7, 7, 11, 0, -4, -5, 0, -2, -15, 23, -2, 12, -9, -2, -2, -4, 1, 7, -7, 0, -14, -5,
      25, 2, 12, -13, 4, -14, -4, -5, 10, 11, -4, -2, -7, 16, 4, -1, 10, -11, -18, -4, 8, -1, 11, 2,
      -7, -1, -9, 11, 2, 13, -4, -14, 4, -13, 1, -8, 25, -7, 0, 0, 11, -1, 1, -9, -2, -2, -10, 8,
      -2, 22, -11, -2, 2, -1, -4, -7, 8, 2, -1, -5, 5, -1, -12, 5, -1, 15, -4, -2, -2, -2, 0, -1,
      -2, 12, -9, -9, 3, 4, 12, -6, 3, -2, -3, -9, 6, 1, 2, -4, -9, 7, -5, 9, 10, 4, -5, -12, -5, 6,
      12, -3, -3, 4, -3, -8, -2, 18, 1, -8, -3, -2, 3, -6, -1, -2, 4, -3, -1, 1, 15, -4, -2, -3, -3,
      -3, -4, 15, -1, -1, -3, 2};
  c.filter_grad = {
      -32, 76, -12, 72, -58, 24, -38, -24, 70, -50, 134, -10, 88, -14, 20, -84, -48, -66, 70, -50,
      134, -10, 88, -14, 20, -84, -48, -66, -72, 18, -52, 58, -32, 76, -12, 72, -48, -66, -72, 18,
      -52, 58, -32, 76, -12, 72, -58, 24, -38, -24, 70, -50, 134, -10, -72, 18, -52, 58, -32, 76,
      -12, 72, -58, 24, -38, -24, 70, -50, 134, -10, 88, -14, -58, 24, -38, -24, 70, -50, 134, -10,
      88, -14, 20, -84, -48, -66, -72, 18, -52, 58, 88, -14, 20, -84, -48, -66, -72, 18, -52, 58,
      -32, 76, -12, 72, -58, 24, -38, -24};
  return c;
}

Case SameStrides2() {
  Case c{"same_s2", "SAME", {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1}, {2, 2, 3, 3, 2}};
  c.output = {
      1, -34, -69, 45, 21, -25, -24, 36, 32, -29, 40, -4, 2, 29, 38, -20, -52, 2, -31, 32, 29, -9,
      21, 18, 43, 11, 40, -35, -84, 22, 28, -23, -46, 24, 17, -23, 36, -34, 6, -19, -45, 17, 22,
      -14, -117, 36, 23, -40, -56, 2, 13, -20, 42, 29, 26, 10, -39, 37, 32, -61, -54, 38, 34, -47,
      53, 52, 36, -6, 28, 2, -54, 26};
  c.input_grad = {
      -1, -7, 8, 4, -7, -4, 1, 3, -2, -2, 14, -5, -2, -2, -2, 5, 4, -4, -13, 8, 8, -5, -4, 4, 11,
      -8, -6, -5, 3, -3, 0, -2, 3, 6, -4, -7, 2, 8, -7, -5, 2, 2, -1, -7, 8, 0, 0, 0, -6, 0, 6, 5,
      -3, 3, 3, -6, -8, 5, 4, -4, 1, 3, -2, -2, 14, -5, -2, -2, -2, -3, -5, 14, 0, -2, 3, 5, -1, -7,
      8, 4, -7, -1, 1, 3, -4, -2, 14, -2, -2, -2, -8, 5, 4, 1, -13, 8, 8, -5, -4, 9, 11, -8, -6, -5,
      3, 2, 0, -2, 2, 6, -4, -4, 2, 8, -5, -5, 2, 5, -1, -7, 0, 0, 0, -5, -6, 0, 6, 5, -3, -2, 3,
      -6, -8, 5, 4, -1, 1, 3, -4, -2, 14, -2, -2, -2, -1, -3, -5, 2, 0, -2, 2, 8, -7, -5, 2, 2, -1,
      -7, 8, 4, -7, -4, 1, 3, -2, 5, -3, 3, 3, -6, -8, 5, 4, -4, -13, 8, 8, -5, -4, 4, -2, -2, -2,
      -3, -5, 14, 0, -2, 3, 6, -4, -7, 2, 8, -7, -5, 3, -3, 5, 6, 0, 0, 0, 0, -6, 0, 6, 5, -3, 3,
      -1, -7, 8, 4, -7, -4, 1, 3, -2, -2, 14, -5, -2, -2, -2, -4, 2, 8, -5, -5, 2, 5, -1, -7, 8, 4,
      -7, -1, 1, 3, 6, 5, -3, -2, 3, -6, -8, 5, 4, 1, -13, 8, 8, -5, -4, -2, -2, -2, -1, -3, -5, 2,
      0, -2, 2, 6, -4, -4, 2, 8, -6, -5, 3, -3, 5, 6, 0, 0, 0, -5, -6, 0, 6, 5, -3, 5, -1, -7, 8, 4,
      -7, -1, 1, 3, -4, -2, 14, -2, -2, -2, 0, -2, 3, 6, -4, -7, 2, 8, -7, -5, 2, 2, -1, -7, 8, 0,
      0, 0, -6, 0, 6, 5, -3, 3, 3, -6, -8, 5, 4, -4, 1, 3, -2, -2, 14, -5, -2, -2, -2, -3, -5, 14,
      0, -2, 3, -5, -4, 4, 11, -8, -6, -5, 3, -3, 5, 6, 0, 0, 0, 0, 2, 8, -7, -5, 2, 2, -1, -7, 8,
      4, -7, -4, 1, 3, -2, 2, 0, -2, 2, 6, -4, -4, 2, 8, -5, -5, 2, 5, -1, -7, 0, 0, 0, -5, -6, 0,
      6, 5, -3, -2, 3, -6, -8, 5, 4, -1, 1, 3, -4, -2, 14, -2, -2, -2, -1, -3, -5, 2, 0, -2, 8, -5,
      -4, 9, 11, -8, -6, -5, 3, -3, 5, 6, 0, 0, 0, -4, 2, 8, -5, -5, 2, 5, -1, -7, 8, 4, -7, -1, 1,
      3, -2, -2, -2, -3, -5, 14, 0, -2, 3, 6, -4, -7, 2, 8, -7, -5, 3, -3, 5, 6, 0, 0, 0, 0, -6, 0,
      6, 5, -3, 3, -1, -7, 8, 4, -7, -4, 1, 3, -2, -2, 14, -5, -2, -2, -2, 5, 4, -4, -13, 8, 8, -5,
      -4, 4, 11, -8, -6, -5, 3, -3, 0, -2, 3, 6, -4, -7, 2, 8, -7, -5, 2, 2, -1, -7, 8, -2, -2, -2,
      -1, -3, -5, 2, 0, -2, 2, 6, -4, -4, 2, 8, -6, -5, 3, -3, 5, 6, 0, 0, 0, -5, -6, 0, 6, 5, -3,
      5, -1, -7, 8, 4, -7, -1, 1, 3, -4, -2, 14, -2, -2, -2, -8, 5, 4, 1, -13, 8, 8, -5, -4, 9, 11,
      -8, -6, -5, 3, 2, 0, -2, 2, 6, -4, -4, 2, 8, -5, -5, 2, 5, -1, -7};
  c.filter_grad = {
      -6, -8, -24, 32, 2, 6, -8, 12, 12, -14, -34, 4, 38, 16, -6, 40, -6, -2, 58, -30, 60, 14, 40,
      58, 30, 66, -18, 64, 0, 18, -16, -14, 2, -54, -46, -28, 16, -6, 40, -24, -2, 2, 22, -8, -22,
      12, -22, -34, -40, 38, -42, -6, 0, -6, 30, -22, -10, 18, -6, -8, -4, 20, 16, -28, -8, 12, -6,
      12, -6, -8, 38, 16, -12, -30, 34, -8, 58, -30, 38, 4, 56, 68, 30, 66, 14, 66, -12, 26, -16,
      -14, 12, 30, -8, -10, 16, -6, 22, -4, 0, 16, 22, -8, -14, -6, 6, -6, -40, 38};
  return c;
}

Case ValidStrides212() {
  Case c{"valid_s212", "VALID", {1, 2, 1, 2, 1}, {1, 1, 1, 1, 1}, {2, 2, 3, 2, 2}};
  c.output = {
      -42, 54, 34, -47, 71, -50, -117, 36, -3, 33, 40, -35, 32, -29, -2, -20, -42, 54, 34, -47, 71,
      -50, -117, 36, 40, -35, -82, 51, 32, -29, -2, -20, -42, 54, 34, -47, -117, 36, 69, -32, 40,
      -35, -82, 51, 32, -29, -2, -20};
  c.input_grad = {
      8, 2, -4, -3, 5, -1, -9, 8, 4, -3, -1, 1, 3, -2, 0, -6, -5, 3, 11, -9, 6, 5, -8, -7, -2, 5,
      -2, -2, 5, -2, -4, 10, -4, 3, -4, -4, 9, -4, 11, -5, 3, 4, -9, 6, 0, 3, -5, -6, 0, 6, -9, 9,
      0, -2, 2, -6, 7, -1, -2, -3, -4, 2, 8, -7, -1, 5, 2, -5, -5, 8, 2, -4, -3, 5, -1, -7, 8, 2,
      -4, -3, 5, 2, -9, 8, 2, -3, -1, 1, 3, -2, 0, -6, -5, 3, 11, -9, 4, 5, -8, -2, -2, 5, -2, -2,
      5, 3, -4, 10, -4, 3, -4, -13, 9, -4, 1, -5, 3, 4, -9, 6, 11, 3, -5, -6, 0, 6, -10, 9, 0, 3, 2,
      -6, 7, -1, -2, -3, -4, 2, 8, -7, -1, 2, 2, -5, -7, 8, 2, -4, -3, 5, -2, 0, 2, -3, -1, 1, 1,
      -4, -2, 12, -2, -2, -2, -2, -2, 5, -2, -2, -2, 5, -2, -11, 16, 1, -5, -6, 0, 6, -9, 11, 6, 0,
      1, -5, 3, 4, -8, 1, -4, -3, 5, -8, 14, 1, -5, -2, -3, 3, 2, -6, 7, -3, -3, 4, -6, 2, 3, -3,
      -2, -1, 5, -1, -7, 8, 2, -4, -4, 6, 2, -2, 0, 2, -3, -1, 1, 3, -2, 0, 2, -3, -1, -1, 1, -4,
      -2, 12, -2, -2, -2, -2, -2, 5, -2, -2, -2, 5, 4, -11, 16, 3, -5, -6, 0, 6, -9, -9, 6, 0, 1,
      -5, 3, 18, -8, 1, -4, -3, 5, -8, 14, 1, -1, -2, -3, 3, 2, -6, 4, -3, -3, 7, -6, 2, 3, -3, -2,
      -3, 5, -1, -7, 8, 2, -7, -4, 6, 3, -2, 0, 2, -3, -1, -2, -2, -2, 12, -2, -2, 1, -1, -3, -3, 2,
      0, -2, 3, 1, -9, 11, 3, -5, -6, 0, 13, -10, 9, -3, 3, 2, -6, 7, -1, 1, -5, -4, -3, 5, -8, 10,
      -4, -4, 14, -8, 5, -3, -4, -5, -2, -1, 7, -6, 2, 3, 0, 9, -10, 6, 0, -6, -5, 3, 11, -1, 1, 3,
      -2, 0, 2, -5, -3, -1, -2, -2, -2, 12, -2, -2, -2, -2, -2, -2, 12, -2, -4, 1, -1, -1, -3, 2, 0,
      -2, 3, 6, -9, 11, 3, -5, -6, -6, 13, -10, -2, -3, 3, 2, -6, 7, 14, 1, -5, -4, -3, 5, -11, 10,
      -4, 1, 14, -8, 5, -3, -4, -3, -2, -1, 7, -6, 2, -2, 0, 9, -9, 6, 0, -6, -5, 3, -3, -1, 1, 3,
      -2, 0, 14, -5, -3, -2, -2, -2, -2, 12, -2, 3, 1, -1, -3, 2, 0, -9, 2, 6, -3, -4, 2, 8, -7, -1,
      7, -1, -2, -3, 3, 2, -3, 4, -3, -1, 7, -6, 2, 3, -3, -4, -5, 1, 14, -8, 5, -2, -4, 1, -9, 4,
      3, -5, 1, 0, 3, 11, -9, 6, 0, -6, -7, 1, 16, -2, -2, 5, -2, -2, -2, -2, -2, -2, -2, -2, -2,
      14, -2, -4, 3, 1, -1, -3, 2, 0, -2, 3, 1, -1, -3, 2, 8, -9, 2, 5, -3, -4, 2, 8, -7, -6, 7, -1,
      -2, -3, 3, 4, -3, 4, -2, -1, 7, -6, 2, 3, -3, -4, -5, 1, 14, -8, 0, -2, -4, 6, -9, 4, 3, -5,
      1, -5, 3, 11, -9, 6, 0, -8, -7, 1, 5, -2, -2, 5, -2, -2, 12, -2, -2, -2, -2, -2, -5, 14, -2,
      -2, 3, 1, -1, -3, 2};
  c.filter_grad = {
      40, 76, 82, 50, 102, 24, 78, -24, 10, -50, -58, -76, -82, -124, -84, -62, -42, 22, 10, -50,
      -58, -76, -82, -124, -84, -62, -42, 22, -22, 84, -24, 80, 40, 76, 82, 50, -42, 22, -22, 84,
      -24, 80, 40, 76, 82, 50, 102, 24, 78, -24, 10, -50, -58, -76, -22, 84, -24, 80, 40, 76, 82,
      50, 102, 24, 78, -24, 10, -50, -58, -76, -82, -124, 102, 24, 78, -24, 10, -50, -58, -76, -82,
      -124, -84, -62, -42, 22, -22, 84, -24, 80, -82, -124, -84, -62, -42, 22, -22, 84, -24, 80, 40,
      76, 82, 50, 102, 24, 78, -24};
  return c;
}

Case SameDilated() {
  Case c{"same_dilated", "SAME", {1, 1, 1, 1, 1}, {1, 2, 2, 2, 1}, {2, 4, 5, 5, 2}};
  c.output = {
      -30, -8, -6, -2, -19, -6, -2, -12, -29, -12, 24, 22, 26, -5, 18, 8, -5, -1, 23, -12, 71, 3,
      -45, -2, -3, -3, -2, 6, -7, 14, -31, -12, -4, -14, 2, -8, -14, 18, -5, -12, -17, -33, 43, 9,
      -35, -7, 9, -11, -4, 14, 8, 38, -34, 5, 26, 24, 5, 23, 5, -34, -26, -6, 9, -39, 38, 1, -39,
      -31, 16, 44, -28, -7, -4, 75, -32, 13, 75, 49, 3, 24, 34, 40, -2, 13, 11, -54, 13, 14, -47,
      -47, -14, -18, -28, -12, -4, 34, -12, -38, 38, 0, 47, 38, -17, -6, 9, 8, -6, -16, -6, -7, -31,
      -39, -7, -6, -56, -4, -6, -26, -6, -17, 22, -36, 35, 35, -6, -12, 35, 7, 29, -40, 36, 14, -11,
      -24, 2, 12, -24, 40, -18, 34, -45, 0, -15, -38, 9, 34, -38, -12, 34, -18, 21, -8, -1, 8, 6,
      -36, 8, 45, -31, -12, -1, -5, -1, 22, -8, 4, 22, 24, -17, -33, -11, -12, 41, -24, -21, 15,
      -24, -47, 19, 41, -20, 18, 5, -7, 7, 5, -7, -12, 12, 45, 39, 14, -24, -11, 7, -7, -11, 9, -14,
      -33, -6, -2, -4, -29, 6, 21, -29, -12, 43, 21, 26, -5, -5, 23, -12, 2, 23, -12, -4, -1, -45,
      -2, -7, -7, -14, -28, -7, 14, -45, -11, -4, -14, 23, -5, -12, 23, -5, -12, 26, -20, 43, 9,
      -29, -4, 6, -9, -4, 14, -6, 39, -34, 5, 23, 5, 24, 26, 5, -34, 38, 8, 9, -39, 44, 16, -30,
      -30, 16, 44, -39, 9, -4, 75, -46, 3, 61, 12, 3, 24, -36, -45, -2, 13, -5, -47, 19, 12, -47,
      -47, 14, 13, -28, -12, 13, 38, -29, -10, 38, 0, 0, 38, -17, -6, -26, -6, -4, -56, -6, -7, -39,
      -31, -7, -6, -16, -6, 8, 9, -6, -17, 38, 47, 35, 35, -7, 29, 32, 31, 29, -40, 12, 1, -11, -24,
      -14, -18, -45, 12, -18, 34, -12, -38, -15, -38, 37, 34, 6, 12, 34, -18, 40, -24, -1, 8, -1,
      -31, 1, 38, -31, -12, -4, -14, -1, 22, -1, -17, 20, 34, -17, -33, 43, 9, 41, -24, -17, 19, -5,
      -60, 19, 41, -37, 8, 5, -7, -14, 12, -15, -15, 12, 45, -24, -30, -24, -11, 12, -14, -15, 6,
      -14, -33, 5, 24};
  c.input_grad = {
      -8, 8, 3, 0, 0, 0, 3, -4, -4, 0, 0, 0, -5, 0, 5, -8, 8, 3, 0, 0, 0, 3, -4, -4, 0, 0, 0, -5, 0,
      5, -2, 8, -3, 0, 0, 0, -6, 1, 1, 0, 0, 0, 0, -3, 8, 3, 5, 0, 0, 0, 0, -4, -4, -4, 0, 0, 0, 5,
      3, 8, 3, 5, 0, 0, 0, 0, -4, -4, -4, 0, 0, 0, 5, 3, 8, -11, 0, 11, 0, 0, 0, 13, -1, -8, 0, 0,
      0, -8, -5, 5, -11, 0, 11, 0, 0, 0, 13, -1, -8, 0, 0, 0, -8, -5, 5, 0, 6, 5, 0, 0, 0, -5, -5,
      2, 0, 0, 0, 3, -3, 5, 11, 8, 5, 0, 0, 0, -8, -8, -8, 0, 0, 0, 5, 8, 11, 11, 8, 5, 0, 0, 0, -8,
      -8, -8, 0, 0, 0, 5, 8, 11, -11, 0, 11, 0, 0, 0, 13, -1, -8, 0, 0, 0, -8, -5, 5, -11, 0, 11, 0,
      0, 0, 13, -1, -8, 0, 0, 0, -8, -5, 5, 0, 6, 5, 0, 0, 0, -5, -5, 2, 0, 0, 0, 3, -3, 5, 11, 8,
      5, 0, 0, 0, -8, -8, -8, 0, 0, 0, 5, 8, 11, 11, 8, 5, 0, 0, 0, -8, -8, -8, 0, 0, 0, 5, 8, 11,
      -3, -8, 8, 0, 0, 0, 10, 3, -4, 0, 0, 0, -3, -5, 0, -3, -8, 8, 0, 0, 0, 10, 3, -4, 0, 0, 0, -3,
      -5, 0, 2, -2, 8, 0, 0, 0, 1, -6, 1, 0, 0, 0, 3, 0, -3, 8, 3, 5, 0, 0, 0, -4, -4, -4, 0, 0, 0,
      0, 5, 3, 8, 3, 5, 0, 0, 0, -4, -4, -4, 0, 0, 0, 0, 5, 3, -8, 8, 3, 0, 0, 0, 3, -4, -4, 0, 0,
      0, -5, 0, 5, -8, 8, 3, 0, 0, 0, 3, -4, -4, 0, 0, 0, -5, 0, 5, -2, 8, -3, 0, 0, 0, -6, 1, 1, 0,
      0, 0, 0, -3, 8, 3, 5, 0, 0, 0, 0, -4, -4, -4, 0, 0, 0, 5, 3, 8, 3, 5, 0, 0, 0, 0, -4, -4, -4,
      0, 0, 0, 5, 3, 8, -11, 0, 11, 0, 0, 0, 13, -1, -8, 0, 0, 0, -8, -5, 5, -11, 0, 11, 0, 0, 0,
      13, -1, -8, 0, 0, 0, -8, -5, 5, 0, 6, 5, 0, 0, 0, -5, -5, 2, 0, 0, 0, 3, -3, 5, 11, 8, 5, 0,
      0, 0, -8, -8, -8, 0, 0, 0, 5, 8, 11, 11, 8, 5, 0, 0, 0, -8, -8, -8, 0, 0, 0, 5, 8, 11, -11, 0,
      11, 0, 0, 0, 13, -1, -8, 0, 0, 0, -8, -5, 5, -11, 0, 11, 0, 0, 0, 13, -1, -8, 0, 0, 0, -8, -5,
      5, 0, 6, 5, 0, 0, 0, -5, -5, 2, 0, 0, 0, 3, -3, 5, 11, 8, 5, 0, 0, 0, -8, -8, -8, 0, 0, 0, 5,
      8, 11, 11, 8, 5, 0, 0, 0, -8, -8, -8, 0, 0, 0, 5, 8, 11, -3, -8, 8, 0, 0, 0, 10, 3, -4, 0, 0,
      0, -3, -5, 0, -3, -8, 8, 0, 0, 0, 10, 3, -4, 0, 0, 0, -3, -5, 0, 2, -2, 8, 0, 0, 0, 1, -6, 1,
      0, 0, 0, 3, 0, -3, 8, 3, 5, 0, 0, 0, -4, -4, -4, 0, 0, 0, 0, 5, 3, 8, 3, 5, 0, 0, 0, -4, -4,
      -4, 0, 0, 0, 0, 5, 3};
  c.filter_grad = {
      -22, 36, 28, -8, -10, -8, 34, 12, -32, -32, 12, 34, -8, -10, -8, 28, 36, -22, -26, 104, -16,
      16, -6, -28, 86, -46, 20, 20, -2, 20, -72, 2, 16, -8, 16, -18, 4, 36, -12, -52, 38, -52, 34,
      -10, -32, 78, -54, -32, -8, -14, 80, -20, -8, 18, -12, -52, 38, -52, -22, 36, -32, 78, -54,
      -32, 34, 12, 80, -20, -8, 18, -8, -10, 20, -28, 8, 16, -26, 104, -24, -2, -2, -68, 86, -46,
      16, 0, -72, 34, -72, 2, 14, -8, -24, -8, 4, 36, 12, -10, -10, 12, 34, -10, -8, -24, -8, 14,
      -8, -14};
  return c;
}
std::vector<Case> Cases() { return {Valid(), SameStrides2(), ValidStrides212(), SameDilated()}; }

// NDHWC attr values or dims in NCDHW order.
Dims ToNcdhw(const Dims& d) { return {d[0], d[4], d[1], d[2], d[3]}; }

// An NDHWC tensor [n, d, h, w, c] transposed to NCDHW [n, c, d, h, w].
Tensor ToNcdhw(const Tensor& t) {
  const Dims d = DimsOf(t);
  const int64_t volume = d[1] * d[2] * d[3], c = d[4];
  const std::vector<float> in = Values<float>(t);
  std::vector<float> out(in.size());
  for (int64_t b = 0; b < d[0]; ++b) {
    for (int64_t v = 0; v < volume; ++v) {
      for (int64_t ch = 0; ch < c; ++ch) {
        out[(b * c + ch) * volume + v] = in[(b * volume + v) * c + ch];
      }
    }
  }
  return Filled<float>(ToNcdhw(d), out);
}

// A tester for `op` with c's attrs; `format` empty: no data_format attr (the V1 ops).
OpTester Op(const std::string& op, const Case& c, const std::string& format = "NDHWC") {
  OpTester t(op, Registry());
  const bool ncdhw = format == "NCDHW";
  t.Attr("T", DT_FLOAT)
      .Attr("padding", c.padding.c_str())
      .Attr("strides", ncdhw ? ToNcdhw(c.strides) : c.strides)
      .Attr("dilations", ncdhw ? ToNcdhw(c.dilations) : c.dilations);
  if (!format.empty()) t.Attr("data_format", format.c_str());
  return t;
}

void CheckResult(const absl::StatusOr<Tensor>& got, const Dims& shape,
                 const std::vector<float>& want) {
  REQUIRE(got.ok());
  CHECK(DimsOf(*got) == shape);
  CheckNear(Values<float>(*got), want, 1e-5);
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  return std::string(result.status().message());
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("Conv3D matches TF for VALID, SAME, strides and dilations", "[kernels][conv3d]") {
  for (const Case& c : Cases()) {
    INFO(c.name);
    CheckResult(Op("Conv3D", c).Input(InputOf(kInput)).Input(FilterOf(kFilter)).RunOne(), c.out,
                Eighths(c.output));
  }
}

TEST_CASE("Conv3DBackpropInputV2 matches TF", "[kernels][conv3d]") {
  for (const Case& c : Cases()) {
    INFO(c.name);
    CheckResult(Op("Conv3DBackpropInputV2", c)
                    .Input(Vec<int32_t>(Int32s(kInput)))
                    .Input(FilterOf(kFilter))
                    .Input(GradOf(c.out))
                    .RunOne(),
                kInput, Eighths(c.input_grad));
  }
  const Case c = SameStrides2();  // input_sizes may be int64
  CheckResult(Op("Conv3DBackpropInputV2", c)
                  .Attr("Tshape", DT_INT64)
                  .Input(Vec<int64_t>(kInput))
                  .Input(FilterOf(kFilter))
                  .Input(GradOf(c.out))
                  .RunOne(),
              kInput, Eighths(c.input_grad));
}

TEST_CASE("Conv3DBackpropFilterV2 matches TF", "[kernels][conv3d]") {
  for (const Case& c : Cases()) {
    INFO(c.name);
    CheckResult(Op("Conv3DBackpropFilterV2", c)
                    .Input(InputOf(kInput))
                    .Input(Vec<int32_t>(Int32s(kFilter)))
                    .Input(GradOf(c.out))
                    .RunOne(),
                kFilter, Eighths(c.filter_grad));
  }
}

TEST_CASE("Conv3DBackpropInput and Conv3DBackpropFilter (V1) take the tensors themselves",
          "[kernels][conv3d]") {
  // conv3d_tf.py checked that TF's V1 results equal its V2 results.
  for (const Case& c : {Valid(), SameStrides2(), ValidStrides212()}) {
    INFO(c.name);
    CheckResult(Op("Conv3DBackpropInput", c, "")
                    .Input(InputOf(kInput))
                    .Input(FilterOf(kFilter))
                    .Input(GradOf(c.out))
                    .RunOne(),
                kInput, Eighths(c.input_grad));
    CheckResult(Op("Conv3DBackpropFilter", c, "")
                    .Input(InputOf(kInput))
                    .Input(FilterOf(kFilter))
                    .Input(GradOf(c.out))
                    .RunOne(),
                kFilter, Eighths(c.filter_grad));
  }
}

TEST_CASE("Conv3D and its gradients take NCDHW", "[kernels][conv3d]") {
  for (const Case& c : {SameStrides2(), SameDilated()}) {
    INFO(c.name);
    const Tensor input = ToNcdhw(InputOf(kInput));
    const Tensor grad = ToNcdhw(GradOf(c.out));
    const Tensor want_output = ToNcdhw(Filled<float>(c.out, Eighths(c.output)));
    CheckResult(Op("Conv3D", c, "NCDHW").Input(input).Input(FilterOf(kFilter)).RunOne(),
                DimsOf(want_output), Values<float>(want_output));
    const Tensor want_input_grad = ToNcdhw(Filled<float>(kInput, Eighths(c.input_grad)));
    CheckResult(Op("Conv3DBackpropInputV2", c, "NCDHW")
                    .Input(Vec<int32_t>(Int32s(ToNcdhw(kInput))))
                    .Input(FilterOf(kFilter))
                    .Input(grad)
                    .RunOne(),
                DimsOf(want_input_grad), Values<float>(want_input_grad));
    CheckResult(Op("Conv3DBackpropFilterV2", c, "NCDHW")
                    .Input(input)
                    .Input(Vec<int32_t>(Int32s(kFilter)))
                    .Input(grad)
                    .RunOne(),
                kFilter, Eighths(c.filter_grad));
  }
}

// Image b of an [n, ...] tensor, as a batch of one.
Tensor ImageOf(const Tensor& t, int64_t b) {
  Dims d = DimsOf(t);
  const int64_t size = t.NumElements() / d[0];
  const std::vector<float> v = Values<float>(t);
  d[0] = 1;
  return Filled<float>(d, std::vector<float>(v.begin() + b * size, v.begin() + (b + 1) * size));
}

TEST_CASE("Conv3D and Conv3DBackpropInputV2 split a batch over the pool", "[kernels][conv3d]") {
  // ~4M FLOPs an image: 3 images run as shards of 2 and 1 on the test device's 2 threads.
  const Dims input_shape = {3, 8, 12, 12, 8}, filter_shape = {3, 3, 3, 8, 8};
  const Dims out_shape = {3, 8, 12, 12, 8};
  const Case c{"same", "SAME", {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, out_shape};
  const Tensor input = InputOf(input_shape), filter = FilterOf(filter_shape);
  const Tensor grad = GradOf(out_shape);
  absl::StatusOr<Tensor> output = Op("Conv3D", c).Input(input).Input(filter).RunOne();
  absl::StatusOr<Tensor> input_grad = Op("Conv3DBackpropInputV2", c)
                                          .Input(Vec<int32_t>(Int32s(input_shape)))
                                          .Input(filter)
                                          .Input(grad)
                                          .RunOne();
  REQUIRE(output.ok());
  REQUIRE(input_grad.ok());
  Dims one_input = input_shape, one_out = out_shape;
  one_input[0] = one_out[0] = 1;
  for (int64_t b = 0; b < 3; ++b) {
    INFO("image " << b);
    CheckResult(Op("Conv3D", c).Input(ImageOf(input, b)).Input(filter).RunOne(), one_out,
                Values<float>(ImageOf(*output, b)));
    CheckResult(Op("Conv3DBackpropInputV2", c)
                    .Input(Vec<int32_t>(Int32s(one_input)))
                    .Input(filter)
                    .Input(ImageOf(grad, b))
                    .RunOne(),
                one_input, Values<float>(ImageOf(*input_grad, b)));
  }
}

TEST_CASE("Conv3D and its gradients give empty or zero results for empty inputs",
          "[kernels][conv3d]") {
  const Case c = Valid();
  CheckResult(Op("Conv3D", c).Input(InputOf({0, 4, 5, 5, 3})).Input(FilterOf(kFilter)).RunOne(),
              {0, 3, 3, 3, 2}, {});
  CheckResult(Op("Conv3DBackpropFilterV2", c)
                  .Input(InputOf({0, 4, 5, 5, 3}))
                  .Input(Vec<int32_t>(Int32s(kFilter)))
                  .Input(GradOf({0, 3, 3, 3, 2}))
                  .RunOne(),
              kFilter, std::vector<float>(108, 0.0f));
  CheckResult(Op("Conv3DBackpropInputV2", c)
                  .Input(Vec<int32_t>({0, 4, 5, 5, 3}))
                  .Input(FilterOf(kFilter))
                  .Input(GradOf({0, 3, 3, 3, 2}))
                  .RunOne(),
              {0, 4, 5, 5, 3}, {});
  // A filter deeper than the input (VALID): no output, a zero input gradient.
  CheckResult(Op("Conv3DBackpropInputV2", c)
                  .Input(Vec<int32_t>(Int32s(kInput)))
                  .Input(FilterOf({5, 3, 3, 3, 2}))
                  .Input(GradOf({2, 0, 3, 3, 2}))
                  .RunOne(),
              kInput, std::vector<float>(600, 0.0f));
}

TEST_CASE("Conv3D and its gradients reject bad attrs and shapes with TF's words",
          "[kernels][conv3d]") {
  Case c = Valid();
  const Tensor input = InputOf(kInput), filter = FilterOf(kFilter), grad = GradOf(c.out);
  const Tensor sizes = Vec<int32_t>(Int32s(kInput)), filter_sizes = Vec<int32_t>(Int32s(kFilter));
  CHECK(Contains(ErrorOf(Op("Conv3D", c).Input(InputOf({4, 5, 5, 3})).Input(filter).RunOne()),
                 "input must be 5-dimensional"));
  CHECK(Contains(
      ErrorOf(Op("Conv3D", c).Input(input).Input(FilterOf({2, 3, 3, 2, 2})).RunOne()),
      "Input depth must be evenly divisible by filter depth: 3 vs 2"));
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropInputV2", c)
                             .Input(sizes)
                             .Input(filter)
                             .Input(GradOf({2, 3, 3, 3, 3}))
                             .RunOne()),
                 "out_backprop and filter_sizes must have the same number of channels. Got 3 "
                 "for out_backprop and 2 for filter_sizes"));
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropInputV2", c)
                             .Input(sizes)
                             .Input(filter)
                             .Input(GradOf({2, 3, 3, 4, 2}))
                             .RunOne()),
                 "Conv3DBackpropInputOp: Size of out_backprop doesn't match computed: actual = "
                 "4, computed = 3 spatial_dim: 3 input: 5 filter: 3 output: 4 stride: 1 "
                 "dilation: 1"));
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropInputV2", c)
                             .Input(Filled<int32_t>({1, 5}, Int32s(kInput)))
                             .Input(filter)
                             .Input(grad)
                             .RunOne()),
                 "shape must be a vector of {int32,int64}, got shape [1,5]"));
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropFilterV2", c)
                             .Input(input)
                             .Input(filter_sizes)
                             .Input(ImageOf(grad, 0))
                             .RunOne()),
                 "Conv3DBackpropFilterOp: input and out_backprop must have the same batch size. "
                 "Input batch: 2, outbackprop batch: 1, batch_dim: 0"));
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropFilterV2", c)
                             .Input(input)
                             .Input(Filled<int32_t>({1, 5}, Int32s(kFilter)))
                             .Input(grad)
                             .RunOne()),
                 "filter_sizes shape must be rank 1 but is rank 2"));
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropFilterV2", c)
                             .Input(input)
                             .Input(filter_sizes)
                             .Input(GradOf({2, 3, 3, 6}))
                             .RunOne()),
                 "out_backprop tensor must have 5 dimensions"));
  c.strides = {2, 1, 1, 1, 1};
  CHECK(Contains(ErrorOf(Op("Conv3D", c).Input(input).Input(filter).RunOne()),
                 "Current implementation does not yet support strides in the batch and depth "
                 "dimensions."));
  c.strides = {1, 0, 1, 1, 1};
  CHECK(Contains(ErrorOf(Op("Conv3DBackpropInputV2", c)
                             .Input(sizes)
                             .Input(filter)
                             .Input(grad)
                             .RunOne()),
                 "Stride must be > 0, but got 0"));
  c.strides = {1, 1, 1, 1, 1};
  c.dilations = {1, 1, 1, 1};
  CHECK(Contains(ErrorOf(Op("Conv3D", c).Input(input).Input(filter).RunOne()),
                 "Dilation rates field must specify 5 dimensions"));
}

}  // namespace
}  // namespace dflow
