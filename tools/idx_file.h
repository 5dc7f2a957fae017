// IDX files: the format of the MNIST data set (a big-endian header giving the element
// type and the dimensions, then the elements, row-major). Read as downloaded: a gzip
// file (magic 1f 8b) is decompressed on the fly.
#ifndef DFLOW_TOOLS_IDX_FILE_H_
#define DFLOW_TOOLS_IDX_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

struct IdxFile {
  DataType dtype = DT_INVALID;  // uint8, int8, int16, int32, float or double
  std::vector<int64_t> dims;
  Tensor values;                // dims as its shape, host byte order
};

// NOT_FOUND naming the path when missing; DATA_LOSS naming the path for a bad magic,
// an unknown element type, or a file shorter than its header says.
absl::StatusOr<IdxFile> ReadIdxFile(const std::string& path, Allocator* allocator);

// Rows [begin, begin + count) of an MNIST image file ([N, rows, cols] uint8) as float32
// pixels / 255 of shape [count, rows * cols]: the input TensorFlow's MNIST models expect.
// INVALID_ARGUMENT when the file is not uint8 rank 3 or the range is out of bounds.
absl::StatusOr<Tensor> MnistImagesAsFloat(const IdxFile& images, int64_t begin, int64_t count,
                                          Allocator* allocator);

}  // namespace dflow

#endif  // DFLOW_TOOLS_IDX_FILE_H_
