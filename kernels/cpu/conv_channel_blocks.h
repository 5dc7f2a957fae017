// Channel blocks: a convolution of an image with few output rows split into blocks of
// output channels, so that a batch of 1 uses every thread of the pool with equal shares.
//
// Row bands (conv_row_bands.h) split an image's output rows over the threads; on the
// last layers of a CNN at batch 1 there are few rows to split (ResNet50's 7x7 layers
// ran as bands of 4 and 3 rows on 2 threads, InceptionV3's 5x5 ones at 224x224 as 3 and
// 2), so one thread carries up to a third more work and each band is a convolution too
// small for oneDNN's kernels to run at speed (58 GFLOP/s for InceptionV3's 448 -> 384
// channel 3x3 layer as bands, against ~120 for the whole image). A block of output
// channels reads the whole image and a slice of the filter, and its work is exactly its
// share of the channels.
#ifndef DFLOW_KERNELS_CPU_CONV_CHANNEL_BLOCKS_H_
#define DFLOW_KERNELS_CPU_CONV_CHANNEL_BLOCKS_H_

#include <cstdint>

namespace dflow {

struct ChannelBlocks {
  int64_t count = 1;  // 1: no split
  int64_t block = 0;  // channels per block (a multiple of 16; the last block may be fewer)
};

// Most blocks a convolution kernel keeps packed filters for.
inline constexpr int64_t kMaxChannelBlocks = 16;

// The split of `out_depth` output channels over `threads` for an image of `output_rows`
// rows: blocks of a multiple of 16 channels (oneDNN's vector width), one per thread,
// when the rows are too few for bands of 4 or more rows each and every block gets at
// least 32 channels; no split (count 1) otherwise.
ChannelBlocks SplitOutputChannels(int64_t out_depth, int64_t output_rows, int threads);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV_CHANNEL_BLOCKS_H_
