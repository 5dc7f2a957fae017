#include "kernels/cpu/conv_row_bands.h"

#include <catch2/catch.hpp>

namespace dflow {
namespace {

// TF's SAME rows for 7 input rows, a 3-row filter at stride 1: 1 pad each side.
WindowDim SameRows() { return {7, 3, 1, 1, 1, 1, 7}; }

TEST_CASE("OutputRowBand: the first band keeps the top padding only") {
  auto band = OutputRowBand(SameRows(), 0, 4);
  REQUIRE(band.has_value());
  CHECK(band->first_output_row == 0);
  CHECK(band->first_input_row == 0);
  CHECK(band->rows.input == 5);  // output rows 0-3 read input rows -1..4
  CHECK(band->rows.output == 4);
  CHECK(band->rows.pad_before == 1);
  CHECK(band->rows.pad_after == 0);
}

TEST_CASE("OutputRowBand: the last band keeps the bottom padding only") {
  auto band = OutputRowBand(SameRows(), 4, 3);
  REQUIRE(band.has_value());
  CHECK(band->first_input_row == 3);  // output rows 4-6 read input rows 3..7
  CHECK(band->rows.input == 4);
  CHECK(band->rows.pad_before == 0);
  CHECK(band->rows.pad_after == 1);
}

TEST_CASE("OutputRowBand: a strided, dilated band is consistent with the output rule") {
  // 20 rows, 3-row filter dilated by 2 (extent 5), stride 2, pads 2 and 1: 9 outputs.
  const WindowDim rows{20, 3, 2, 2, 2, 1, 9};
  for (int64_t first = 0; first < 9; ++first) {
    for (int64_t count = 1; first + count <= 9; ++count) {
      auto band = OutputRowBand(rows, first, count);
      REQUIRE(band.has_value());
      const WindowDim& b = band->rows;
      CHECK(b.pad_before >= 0);
      CHECK(b.pad_after >= 0);
      CHECK(band->first_input_row + b.input <= rows.input);
      CHECK((b.input + b.pad_before + b.pad_after - 5) / 2 + 1 == count);
      CHECK(band->first_input_row - b.pad_before == first * 2 - 2);
    }
  }
}

TEST_CASE("OutputRowBand refuses bands outside the output or wholly in padding") {
  CHECK_FALSE(OutputRowBand(SameRows(), 5, 3).has_value());
  CHECK_FALSE(OutputRowBand(SameRows(), -1, 2).has_value());
  CHECK_FALSE(OutputRowBand(SameRows(), 0, 0).has_value());
  // 2 input rows padded by 4 on top, 1-row filter: output rows 0-3 read only padding.
  const WindowDim padded{2, 1, 1, 1, 4, 0, 6};
  CHECK_FALSE(OutputRowBand(padded, 0, 3).has_value());
  CHECK(OutputRowBand(padded, 3, 3).has_value());
}

TEST_CASE("SplitOutputRows: equal bands, the last shorter, covering every output row") {
  auto split = SplitOutputRows(SameRows(), 3);  // 7 rows: 3 + 3 + 1
  REQUIRE(split.has_value());
  REQUIRE(split->size() == 3);
  CHECK((*split)[0].first_output_row == 0);
  CHECK((*split)[1].first_output_row == 3);
  CHECK((*split)[2].first_output_row == 6);
  CHECK((*split)[2].rows.output == 1);
  CHECK((*split)[0].rows.pad_before == 1);
  CHECK((*split)[2].rows.pad_after == 1);
  split = SplitOutputRows(SameRows(), 4);  // 2 rows a band: 4 bands, the last of 1
  REQUIRE(split.has_value());
  CHECK(split->size() == 4);
  CHECK_FALSE(SplitOutputRows(SameRows(), 0).has_value());
}

TEST_CASE("RowBandsPerImage fills the pool only where the batch does not") {
  CHECK(RowBandsPerImage(1, 56, 1e9, 2, 4e6) == 2);
  CHECK(RowBandsPerImage(1, 56, 1e9, 8, 4e6) == 8);
  CHECK(RowBandsPerImage(3, 56, 1e9, 8, 4e6) == 3);
  CHECK(RowBandsPerImage(2, 56, 1e9, 2, 4e6) == 1);  // one image per thread already
  CHECK(RowBandsPerImage(1, 56, 1e9, 1, 4e6) == 1);
  CHECK(RowBandsPerImage(1, 3, 1e9, 8, 4e6) == 3);   // no more bands than rows
  CHECK(RowBandsPerImage(1, 56, 6e6, 2, 4e6) == 1);  // too little work to split
}

}  // namespace
}  // namespace dflow
