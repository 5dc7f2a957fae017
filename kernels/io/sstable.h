// LevelDB's immutable sorted table ("SSTable"), the container of a tensor bundle's
// `.index` file.
//
// Layout: data blocks, a metaindex block, an index block, then a 48-byte footer (the
// metaindex and index BlockHandles as varints, zero-padded to 40 bytes, and the magic
// 0xdb4775248b80fb57 as fixed64). Each block is followed by a 1-byte compression type and
// a masked crc32c of contents+type. Within a block, entries share key prefixes with the
// previous key (shared, non-shared and value lengths as varint32), and a trailer of
// uint32 restart offsets plus their count ends it. The index block maps a key >= every
// key of a data block to that block's handle (offset, size as varints).
//
// Index files are small (one entry per tensor), so ReadSSTable decodes the whole table
// at once rather than seeking through it.
#ifndef DFLOW_KERNELS_IO_SSTABLE_H_
#define DFLOW_KERNELS_IO_SSTABLE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dflow {

using SSTableEntries = std::vector<std::pair<std::string, std::string>>;

inline constexpr uint64_t kSSTableMagic = 0xdb4775248b80fb57ull;
inline constexpr size_t kSSTableFooterSize = 48;

// Every (key, value) of the table in `contents`, in key order. DATA_LOSS naming
// `filename` for a bad magic, checksum or block structure; UNIMPLEMENTED for
// snappy-compressed blocks (TensorFlow writes bundles uncompressed).
absl::StatusOr<SSTableEntries> ReadSSTable(absl::string_view contents,
                                           absl::string_view filename);

// A table holding `entries`, uncompressed, with data blocks of about `block_size` bytes.
// REQUIRES: keys strictly increasing (bytewise).
std::string BuildSSTable(const SSTableEntries& entries, size_t block_size = 256 * 1024);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_SSTABLE_H_
