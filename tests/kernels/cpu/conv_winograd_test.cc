#include "kernels/cpu/conv_winograd.h"

#include <catch2/catch.hpp>

namespace dflow {
namespace {

WindowDim Dim(int64_t size, int64_t stride, int64_t dilation, int64_t output) {
  WindowDim d;
  d.size = size;
  d.stride = stride;
  d.dilation = dilation;
  d.output = output;
  return d;
}

TEST_CASE("PreferWinograd picks 3x3 unit-stride convolutions of large images") {
  // VGG16's and ResNet50's large layers, and a 14x28 band of a 28x28 layer.
  CHECK(PreferWinograd(Dim(3, 1, 1, 56), Dim(3, 1, 1, 56), 1, 64, 64));
  CHECK(PreferWinograd(Dim(3, 1, 1, 14), Dim(3, 1, 1, 28), 1, 512, 512));
  CHECK(PreferWinograd(Dim(3, 1, 1, 35), Dim(3, 1, 1, 35), 1, 48, 64));
}

TEST_CASE("PreferWinograd leaves other convolutions on the direct algorithm") {
  CHECK_FALSE(PreferWinograd(Dim(3, 1, 1, 14), Dim(3, 1, 1, 14), 1, 256, 256));  // small image
  CHECK_FALSE(PreferWinograd(Dim(3, 1, 1, 56), Dim(3, 1, 1, 56), 1, 128, 32));   // narrow out
  CHECK_FALSE(PreferWinograd(Dim(3, 1, 1, 224), Dim(3, 1, 1, 224), 1, 3, 64));   // RGB input
  CHECK_FALSE(PreferWinograd(Dim(3, 2, 1, 56), Dim(3, 2, 1, 56), 1, 64, 64));    // strided
  CHECK_FALSE(PreferWinograd(Dim(3, 1, 2, 56), Dim(3, 1, 2, 56), 1, 64, 64));    // dilated
  CHECK_FALSE(PreferWinograd(Dim(5, 1, 1, 56), Dim(5, 1, 1, 56), 1, 64, 64));    // 5x5
  CHECK_FALSE(PreferWinograd(Dim(3, 1, 1, 56), Dim(3, 1, 1, 56), 4, 64, 64));    // grouped
}

}  // namespace
}  // namespace dflow
