#include "kernels/cpu/conv_channel_blocks.h"

#include <catch2/catch.hpp>

namespace dflow {
namespace {

TEST_CASE("SplitOutputChannels: few rows split their channels, one block per thread") {
  // ResNet50's 7x7 layers on 2 threads: 512 channels as 2 x 256 (rows would be 4 + 3).
  ChannelBlocks blocks = SplitOutputChannels(512, 7, 2);
  CHECK(blocks.count == 2);
  CHECK(blocks.block == 256);
  // Blocks are whole vectors of 16; the last takes the rest.
  blocks = SplitOutputChannels(70, 5, 2);
  CHECK(blocks.count == 2);
  CHECK(blocks.block == 48);
  blocks = SplitOutputChannels(384, 5, 4);
  CHECK(blocks.count == 4);
  CHECK(blocks.block == 96);
}

TEST_CASE("SplitOutputChannels: no split for one thread, enough rows, or few channels") {
  CHECK(SplitOutputChannels(512, 7, 1).count == 1);   // one thread
  CHECK(SplitOutputChannels(512, 8, 2).count == 1);   // bands of 4 rows serve
  CHECK(SplitOutputChannels(512, 14, 2).count == 1);
  CHECK(SplitOutputChannels(63, 7, 2).count == 1);    // blocks under 32 channels
  CHECK(SplitOutputChannels(512, 7, 0).count == 1);
}

TEST_CASE("SplitOutputChannels: at most kMaxChannelBlocks blocks") {
  const ChannelBlocks blocks = SplitOutputChannels(4096, 3, 64);
  CHECK(blocks.count <= kMaxChannelBlocks);
  CHECK(blocks.count * blocks.block >= 4096);
}

}  // namespace
}  // namespace dflow
