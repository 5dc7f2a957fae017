#include "kernels/cpu/conv_channel_blocks.h"

#include <algorithm>

namespace dflow {
namespace {

constexpr int64_t kChannelAlign = 16;
constexpr int64_t kMinChannelsPerBlock = 32;
constexpr int64_t kMinRowsPerBand = 4;

}  // namespace

ChannelBlocks SplitOutputChannels(int64_t out_depth, int64_t output_rows, int threads) {
  const int64_t parts = std::min<int64_t>(threads, kMaxChannelBlocks);
  if (parts < 2 || output_rows >= kMinRowsPerBand * parts ||
      out_depth < kMinChannelsPerBlock * parts) {
    return {};
  }
  const int64_t per_part = (out_depth + parts - 1) / parts;
  ChannelBlocks blocks;
  blocks.block = (per_part + kChannelAlign - 1) / kChannelAlign * kChannelAlign;
  blocks.count = (out_depth + blocks.block - 1) / blocks.block;
  if (blocks.count < 2) return {};
  return blocks;
}

}  // namespace dflow
