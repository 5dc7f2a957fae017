#include "kernels/cpu/conv_row_bands.h"

#include <algorithm>

namespace dflow {

std::optional<RowBand> OutputRowBand(const WindowDim& rows, int64_t first, int64_t count) {
  if (first < 0 || count <= 0 || first + count > rows.output) return std::nullopt;
  const int64_t extent = (rows.size - 1) * rows.dilation + 1;  // the dilated window
  // The input rows the band's windows span, in unpadded input coordinates.
  const int64_t begin = first * rows.stride - rows.pad_before;
  const int64_t end = (first + count - 1) * rows.stride - rows.pad_before + extent;
  const int64_t read_begin = std::max<int64_t>(begin, 0);
  const int64_t read_end = std::min(end, rows.input);
  if (read_end <= read_begin) return std::nullopt;
  RowBand band;
  band.first_output_row = first;
  band.first_input_row = read_begin;
  band.rows = rows;
  band.rows.input = read_end - read_begin;
  band.rows.output = count;
  band.rows.pad_before = read_begin - begin;
  band.rows.pad_after = end - read_end;
  return band;
}

std::optional<std::vector<RowBand>> SplitOutputRows(const WindowDim& rows, int64_t bands) {
  if (bands <= 0 || rows.output <= 0) return std::nullopt;
  const int64_t rows_per_band = (rows.output + bands - 1) / bands;
  std::vector<RowBand> split;
  for (int64_t first = 0; first < rows.output; first += rows_per_band) {
    std::optional<RowBand> band =
        OutputRowBand(rows, first, std::min(rows_per_band, rows.output - first));
    if (!band.has_value()) return std::nullopt;
    split.push_back(*band);
  }
  return split;
}

int64_t RowBandsPerImage(int64_t batch, int64_t output_rows, double flops_per_image,
                         int threads, double min_flops) {
  if (batch <= 0 || threads <= batch || output_rows <= 1) return 1;
  int64_t bands = (threads + batch - 1) / batch;
  bands = std::min(bands, output_rows);
  if (min_flops > 0) {
    bands = std::min(bands, static_cast<int64_t>(flops_per_image / min_flops));
  }
  return std::max<int64_t>(bands, 1);
}

}  // namespace dflow
