#include "kernels/io/sstable.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/io/coding.h"
#include "kernels/io/crc32c.h"

namespace dflow {
namespace {

constexpr size_t kBlockTrailerSize = 5;  // compression type + masked crc32c
constexpr size_t kFooterHandlesSize = kSSTableFooterSize - 8;
constexpr char kNoCompression = 0;
constexpr char kSnappyCompression = 1;
constexpr int kRestartInterval = 16;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

bool GetBlockHandle(absl::string_view* in, BlockHandle* handle) {
  return coding::GetVarint64(in, &handle->offset) && coding::GetVarint64(in, &handle->size);
}

void PutBlockHandle(std::string* out, const BlockHandle& handle) {
  coding::PutVarint64(out, handle.offset);
  coding::PutVarint64(out, handle.size);
}

absl::Status Corrupt(absl::string_view filename, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("Corrupt table file ", filename, ": ", what));
}

// The contents of the block at `handle`, after checking its trailer's checksum.
absl::StatusOr<absl::string_view> ReadBlock(absl::string_view file, const BlockHandle& handle,
                                            absl::string_view filename) {
  if (handle.offset > file.size() || handle.size > file.size() - handle.offset ||
      file.size() - handle.offset - handle.size < kBlockTrailerSize) {
    return Corrupt(filename, absl::StrCat("block at offset ", handle.offset, " (", handle.size,
                                          " bytes) lies past the end of the file (",
                                          file.size(), " bytes)"));
  }
  const absl::string_view contents = file.substr(handle.offset, handle.size);
  const char* trailer = file.data() + handle.offset + handle.size;
  const uint32_t actual = crc32c::Extend(crc32c::Value(contents), trailer, 1);
  if (crc32c::Unmask(coding::DecodeFixed32(trailer + 1)) != actual) {
    return Corrupt(filename, absl::StrCat("block checksum mismatch (block at offset ",
                                          handle.offset, ", ", handle.size, " bytes)"));
  }
  if (trailer[0] == kSnappyCompression) {
    return absl::UnimplementedError(absl::StrCat(
        "Table file ", filename, " has snappy-compressed blocks; dflow reads only "
        "uncompressed tables (TensorFlow writes tensor bundles uncompressed)"));
  }
  if (trailer[0] != kNoCompression) {
    return Corrupt(filename, absl::StrCat("unknown block compression type ",
                                          static_cast<int>(trailer[0])));
  }
  return contents;
}

// Appends the prefix-compressed entries of `block` to `out`.
absl::Status ParseBlock(absl::string_view block, absl::string_view filename,
                        SSTableEntries* out) {
  if (block.size() < 4) return Corrupt(filename, "block shorter than its restart count");
  const uint32_t num_restarts = coding::DecodeFixed32(block.data() + block.size() - 4);
  if (num_restarts > (block.size() - 4) / 4) {
    return Corrupt(filename, absl::StrCat("block claims ", num_restarts, " restart points"));
  }
  absl::string_view data = block.substr(0, block.size() - 4 - 4 * size_t{num_restarts});
  std::string key;
  while (!data.empty()) {
    uint32_t shared = 0, non_shared = 0, value_size = 0;
    if (!coding::GetVarint32(&data, &shared) || !coding::GetVarint32(&data, &non_shared) ||
        !coding::GetVarint32(&data, &value_size) || shared > key.size() ||
        uint64_t{non_shared} + value_size > data.size()) {
      return Corrupt(filename, "bad entry in block");
    }
    key.resize(shared);
    key.append(data.data(), non_shared);
    out->emplace_back(key, std::string(data.substr(non_shared, value_size)));
    data.remove_prefix(non_shared + value_size);
  }
  return absl::OkStatus();
}

// Accumulates one block's entries with a restart point every kRestartInterval keys.
class BlockBuilder {
 public:
  explicit BlockBuilder(int restart_interval) : restart_interval_(restart_interval) {}

  void Add(absl::string_view key, absl::string_view value) {
    size_t shared = 0;
    if (counter_ == restart_interval_) {
      restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
      counter_ = 0;
    } else {
      const size_t limit = std::min(last_key_.size(), key.size());
      while (shared < limit && last_key_[shared] == key[shared]) ++shared;
    }
    coding::PutVarint64(&buffer_, shared);
    coding::PutVarint64(&buffer_, key.size() - shared);
    coding::PutVarint64(&buffer_, value.size());
    buffer_.append(key.data() + shared, key.size() - shared);
    buffer_.append(value.data(), value.size());
    last_key_.assign(key.data(), key.size());
    ++counter_;
  }

  bool empty() const { return buffer_.empty(); }
  size_t EstimatedSize() const { return buffer_.size() + 4 * (restarts_.size() + 1); }
  const std::string& last_key() const { return last_key_; }

  // The finished block; the builder is empty again afterwards.
  std::string Finish() {
    std::string block = std::move(buffer_);
    for (uint32_t r : restarts_) coding::PutFixed32(&block, r);
    coding::PutFixed32(&block, static_cast<uint32_t>(restarts_.size()));
    buffer_.clear();
    restarts_.assign(1, 0);
    counter_ = 0;
    last_key_.clear();
    return block;
  }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_{0};
  int counter_ = 0;
  std::string last_key_;
};

// Appends `contents` and its trailer to `file`; returns where it went.
BlockHandle AppendBlock(std::string* file, const std::string& contents) {
  BlockHandle handle{file->size(), contents.size()};
  file->append(contents);
  file->push_back(kNoCompression);
  const uint32_t crc = crc32c::Extend(crc32c::Value(contents), &kNoCompression, 1);
  coding::PutFixed32(file, crc32c::Mask(crc));
  return handle;
}

}  // namespace

absl::StatusOr<SSTableEntries> ReadSSTable(absl::string_view contents,
                                           absl::string_view filename) {
  if (contents.size() < kSSTableFooterSize ||
      coding::DecodeFixed64(contents.data() + contents.size() - 8) != kSSTableMagic) {
    return Corrupt(filename, absl::StrCat("not a table (", contents.size(),
                                          " bytes, no table magic number at the end; "
                                          "truncated?)"));
  }
  absl::string_view footer = contents.substr(contents.size() - kSSTableFooterSize,
                                             kFooterHandlesSize);
  BlockHandle metaindex, index;
  if (!GetBlockHandle(&footer, &metaindex) || !GetBlockHandle(&footer, &index)) {
    return Corrupt(filename, "bad footer");
  }
  DFLOW_ASSIGN_OR_RETURN(absl::string_view index_block, ReadBlock(contents, index, filename));
  SSTableEntries index_entries;
  DFLOW_RETURN_IF_ERROR(ParseBlock(index_block, filename, &index_entries));
  SSTableEntries entries;
  for (const auto& [last_key, encoded_handle] : index_entries) {
    absl::string_view in = encoded_handle;
    BlockHandle handle;
    if (!GetBlockHandle(&in, &handle)) return Corrupt(filename, "bad block handle in index");
    DFLOW_ASSIGN_OR_RETURN(absl::string_view block, ReadBlock(contents, handle, filename));
    DFLOW_RETURN_IF_ERROR(ParseBlock(block, filename, &entries));
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (!(entries[i - 1].first < entries[i].first)) {
      return Corrupt(filename, absl::StrCat("keys out of order at '", entries[i].first, "'"));
    }
  }
  return entries;
}

std::string BuildSSTable(const SSTableEntries& entries, size_t block_size) {
  std::string file;
  BlockBuilder data(kRestartInterval);
  BlockBuilder index(1);
  auto flush = [&] {
    if (data.empty()) return;
    const std::string last_key = data.last_key();
    std::string handle;
    PutBlockHandle(&handle, AppendBlock(&file, data.Finish()));
    // The block's last key separates it from the next block: readers seek the first
    // index entry >= their key.
    index.Add(last_key, handle);
  };
  for (const auto& [key, value] : entries) {
    data.Add(key, value);
    if (data.EstimatedSize() >= block_size) flush();
  }
  flush();
  const BlockHandle metaindex_handle = AppendBlock(&file, BlockBuilder(1).Finish());
  const BlockHandle index_handle = AppendBlock(&file, index.Finish());
  std::string footer;
  PutBlockHandle(&footer, metaindex_handle);
  PutBlockHandle(&footer, index_handle);
  footer.resize(kFooterHandlesSize, '\0');
  coding::PutFixed64(&footer, kSSTableMagic);
  file += footer;
  return file;
}

}  // namespace dflow
