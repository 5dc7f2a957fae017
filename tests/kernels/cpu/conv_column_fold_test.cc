// When column folding applies (conv_column_fold.h) and what the folded geometry and
// filter are; conv_ops_test checks the folded convolutions against a naive one.
#include "kernels/cpu/conv_column_fold.h"

#include <catch2/catch.hpp>
#include <vector>

namespace dflow {
namespace {

// Columns of a stride-1 convolution: input width, filter width, pads; output by TF's rule.
WindowDim Cols(int64_t input, int64_t size, int64_t pad_before, int64_t pad_after) {
  WindowDim d{input, size, 1, 1, pad_before, pad_after};
  d.output = input + pad_before + pad_after - size + 1;
  return d;
}

TEST_CASE("ChooseColumnFold folds where lanes idle and the columns allow it") {
  // LeNet's first convolution, Pad folded in: 6 of 16 lanes busy; pairs fill 12.
  CHECK(ChooseColumnFold(Cols(28, 5, 2, 2), 6, 1, 16) == 2);
  CHECK(ChooseColumnFold(Cols(32, 5, 0, 0), 6, 1, 16) == 2);
  // 4 channels: quads fill all 16 lanes (8/5 taps) when the left pad allows them.
  CHECK(ChooseColumnFold(Cols(16, 5, 0, 0), 4, 1, 16) == 4);
  CHECK(ChooseColumnFold(Cols(12, 5, 2, 2), 4, 1, 16) == 2);
  // Full vectors, too many channels, groups, odd sizes, odd left pad: no fold.
  CHECK(ChooseColumnFold(Cols(28, 5, 2, 2), 16, 1, 16) == 1);
  CHECK(ChooseColumnFold(Cols(28, 5, 2, 2), 40, 1, 16) == 1);
  CHECK(ChooseColumnFold(Cols(28, 5, 2, 2), 6, 2, 16) == 1);
  CHECK(ChooseColumnFold(Cols(27, 5, 2, 2), 6, 1, 16) == 1);
  CHECK(ChooseColumnFold(Cols(28, 5, 1, 2), 6, 1, 16) == 1);
  CHECK(ChooseColumnFold(Cols(28, 1, 0, 0), 6, 1, 16) == 1);
  // 8-lane vectors (AVX2): 6 of 8 lanes busy, pairs would waste as much in zero taps.
  CHECK(ChooseColumnFold(Cols(28, 5, 2, 2), 6, 1, 8) == 1);
  WindowDim strided = Cols(28, 5, 2, 2);
  strided.stride = 2;
  CHECK(ChooseColumnFold(strided, 6, 1, 16) == 1);
}

TEST_CASE("FoldColumns counts in column groups") {
  const WindowDim f = FoldColumns(Cols(28, 5, 2, 2), 2);
  CHECK(f.input == 14);
  CHECK(f.size == 3);
  CHECK(f.output == 14);
  CHECK(f.pad_before == 1);
  CHECK(f.pad_after == 1);  // 14 + 1 + 1 - 3 + 1 == 14
  const WindowDim q = FoldColumns(Cols(16, 5, 0, 0), 4);
  CHECK(q.input == 4);
  CHECK(q.size == 2);
  CHECK(q.output == 3);
  CHECK(q.pad_after == 0);
}

TEST_CASE("FoldFilter places each tap at k*kx' + j_in - j_out") {
  // One row, fw = 3, c = 1, o = 2; taps w[kx][o] = 10*kx + o + 1.
  const std::vector<float> w = {1, 2, 11, 12, 21, 22};
  std::vector<float> f(1 * 2 * 2 * 4, -1.0f);  // [1, fw' = 2, k*c = 2, k*o = 4]
  FoldFilter(w.data(), 1, 3, 1, 2, 2, f.data());
  // Folded [kx'][j_in][j_out, o]: kx = 2*kx' + j_in - j_out.
  const std::vector<float> want = {
      1,  2,  0,  0,   // kx'=0 j_in=0: j_out=0 -> kx 0; j_out=1 -> kx -1
      11, 12, 1,  2,   // kx'=0 j_in=1: kx 1; kx 0
      21, 22, 11, 12,  // kx'=1 j_in=0: kx 2; kx 1
      0,  0,  21, 22,  // kx'=1 j_in=1: kx 3 (none); kx 2
  };
  CHECK(f == want);
}

}  // namespace
}  // namespace dflow
