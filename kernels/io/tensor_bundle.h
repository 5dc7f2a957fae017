// TensorFlow's tensor bundle ("V2 checkpoint") layout shared by its reader and writer.
//
// A bundle with prefix P is `P.index`, an SSTable (kernels/io/sstable.h) whose key ""
// holds a BundleHeaderProto (num_shards, endianness, version) and whose other keys are
// tensor names mapping to BundleEntryProto (dtype, shape, shard_id, offset, size, masked
// crc32c of the bytes), and the data files `P.data-SSSSS-of-NNNNN` holding the tensors'
// bytes: raw little-endian elements, or for strings the element lengths as varint64,
// a masked crc32c of those lengths (as uint32 each), then the bytes.
#ifndef DFLOW_KERNELS_IO_TENSOR_BUNDLE_H_
#define DFLOW_KERNELS_IO_TENSOR_BUNDLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace dflow {

// The key of the header entry; it sorts first.
inline constexpr absl::string_view kBundleHeaderKey = "";
// The bundle format version written and understood (TF's kTensorBundleVersion).
inline constexpr int kBundleVersion = 1;

// "P.index".
std::string BundleIndexFilename(absl::string_view prefix);
// "P.data-00000-of-00001".
std::string BundleDataFilename(absl::string_view prefix, int shard, int num_shards);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_TENSOR_BUNDLE_H_
