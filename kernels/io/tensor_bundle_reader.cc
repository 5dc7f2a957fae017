#include "kernels/io/tensor_bundle_reader.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "kernels/io/coding.h"
#include "kernels/io/crc32c.h"
#include "kernels/io/sstable.h"
#include "kernels/io/tensor_bundle.h"

namespace dflow {
namespace {

absl::Status CorruptIndex(const std::string& filename, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("Unable to read checkpoint index ", filename, ": ", what));
}

// TF's CheckVersions for the bundle format (producer 1, any min_consumer <= 1).
absl::Status CheckHeader(const BundleHeaderProto& header, const std::string& filename) {
  if (header.endianness() != BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(absl::StrCat(
        "Checkpoint ", filename, " was written on a big-endian machine; dflow reads only "
        "little-endian checkpoints"));
  }
  if (header.version().min_consumer() > kBundleVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Checkpoint min consumer version ", header.version().min_consumer(),
        " above current version ", kBundleVersion, " for checkpoint ", filename));
  }
  for (int bad : header.version().bad_consumers()) {
    if (bad == kBundleVersion) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Checkpoint disallows consumer version ", kBundleVersion, " (", filename, ")"));
    }
  }
  if (header.num_shards() < 1) {
    return CorruptIndex(filename, absl::StrCat("num_shards is ", header.num_shards()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  const std::string filename = BundleIndexFilename(prefix);
  absl::StatusOr<std::string> contents = ReadFileToString(filename);
  if (absl::IsNotFound(contents.status())) {
    return absl::NotFoundError(absl::StrCat("Failed to find checkpoint index ", filename,
                                            " (no checkpoint with prefix ", prefix, ")"));
  }
  if (!contents.ok()) return contents.status();
  DFLOW_ASSIGN_OR_RETURN(SSTableEntries table, ReadSSTable(*contents, filename));
  if (table.empty() || table.front().first != kBundleHeaderKey) {
    return CorruptIndex(filename, "no header entry");
  }
  BundleHeaderProto header;
  if (!header.ParseFromString(table.front().second)) {
    return CorruptIndex(filename, "unable to parse header");
  }
  DFLOW_RETURN_IF_ERROR(CheckHeader(header, filename));
  std::map<std::string, BundleEntryProto> entries;
  for (size_t i = 1; i < table.size(); ++i) {
    BundleEntryProto entry;
    if (!entry.ParseFromString(table[i].second)) {
      return CorruptIndex(filename, absl::StrCat("entry for key ", table[i].first,
                                                 " not parseable"));
    }
    entries.emplace(std::move(table[i].first), std::move(entry));
  }
  return std::unique_ptr<BundleReader>(
      new BundleReader(prefix, std::move(header), std::move(entries)));
}

BundleReader::BundleReader(std::string prefix, BundleHeaderProto header,
                           std::map<std::string, BundleEntryProto> entries)
    : prefix_(std::move(prefix)),
      header_(std::move(header)),
      entries_(std::move(entries)),
      shards_(header_.num_shards()) {}

std::vector<std::string> BundleReader::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) keys.push_back(key);
  return keys;
}

absl::StatusOr<BundleEntryProto> BundleReader::LookupEntry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    return absl::NotFoundError(
        absl::StrCat("Key ", key, " not found in checkpoint ", prefix_));
  }
  return it->second;
}

absl::StatusOr<const RandomAccessFile*> BundleReader::Shard(int shard_id) const {
  if (shard_id < 0 || shard_id >= num_shards()) {
    return CorruptIndex(BundleIndexFilename(prefix_),
                        absl::StrCat("shard_id ", shard_id, " out of range [0, ",
                                     num_shards(), ")"));
  }
  absl::MutexLock lock(&mu_);
  if (shards_[shard_id] == nullptr) {
    DFLOW_ASSIGN_OR_RETURN(
        shards_[shard_id],
        RandomAccessFile::Open(BundleDataFilename(prefix_, shard_id, num_shards())));
  }
  return shards_[shard_id].get();
}

absl::StatusOr<Tensor> BundleReader::Lookup(const std::string& key,
                                            Allocator* allocator) const {
  DFLOW_ASSIGN_OR_RETURN(BundleEntryProto entry, LookupEntry(key));
  if (entry.slices_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(
        "Tensor ", key, " in checkpoint ", prefix_,
        " is saved in slices (a partitioned variable); dflow restores only whole tensors"));
  }
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(entry.shape());
  if (!shape.ok()) {
    return absl::DataLossError(absl::StrCat("Invalid tensor shape: ", key, " ",
                                            entry.shape().ShortDebugString()));
  }
  const DataType dtype = entry.dtype();
  if (dtype != DT_STRING && !DataTypeIsMemcpyable(dtype)) {
    return absl::UnimplementedError(absl::StrCat("Tensor ", key, " in checkpoint ", prefix_,
                                                 " has dtype ", DataTypeString(dtype),
                                                 ", which dflow cannot restore"));
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(allocator, dtype, *shape));
  DFLOW_ASSIGN_OR_RETURN(const RandomAccessFile* file, Shard(entry.shard_id()));
  if (dtype == DT_STRING) {
    DFLOW_RETURN_IF_ERROR(ReadString(key, entry, *file, &tensor));
    return tensor;
  }
  if (static_cast<uint64_t>(entry.size()) != tensor.TotalBytes()) {
    return absl::DataLossError(absl::StrCat("Invalid size in bundle entry: key ", key,
                                            "; stored size ", entry.size(),
                                            "; expected size ", tensor.TotalBytes()));
  }
  auto* dst = static_cast<char*>(tensor.raw_data());
  DFLOW_RETURN_IF_ERROR(Annotate(file->Read(entry.offset(), entry.size(), dst),
                                 absl::StrCat("Reading tensor ", key, ": ")));
  const uint32_t actual = crc32c::Value(dst, entry.size());
  if (crc32c::Unmask(entry.crc32c()) != actual) {
    return ChecksumError(key, entry, *file, actual);
  }
  return tensor;
}

absl::Status BundleReader::ChecksumError(const std::string& key, const BundleEntryProto& entry,
                                         const RandomAccessFile& file, uint32_t actual) const {
  return absl::DataLossError(absl::StrCat(
      "Checksum does not match for tensor ", key, " in ", file.path(), " (", entry.size(),
      " bytes at offset ", entry.offset(), "): stored ", crc32c::Unmask(entry.crc32c()),
      " vs. calculated on the restored bytes ", actual, "; the checkpoint is corrupt"));
}

// [varint64 length]*n [masked crc32c of the lengths] [bytes]*n; the entry's checksum
// covers the lengths (as uint32, or uint64 when larger), the length checksum and bytes.
absl::Status BundleReader::ReadString(const std::string& key, const BundleEntryProto& entry,
                                      const RandomAccessFile& file, Tensor* tensor) const {
  const int64_t n = tensor->NumElements();
  if (n == 0) return absl::OkStatus();
  if (entry.size() < n + 4) {
    return absl::DataLossError(absl::StrCat("Invalid size in bundle entry: key ", key,
                                            "; stored size ", entry.size(),
                                            "; expected size is at least ", n + 4));
  }
  std::string bytes(entry.size(), '\0');
  DFLOW_RETURN_IF_ERROR(Annotate(file.Read(entry.offset(), entry.size(), bytes.data()),
                                 absl::StrCat("Reading tensor ", key, ": ")));
  absl::string_view in = bytes;
  std::vector<uint64_t> lengths(n);
  uint32_t crc = 0;
  auto corrupt = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("Corrupt string tensor ", key, " in ", file.path(),
                                            ": ", what));
  };
  for (int64_t i = 0; i < n; ++i) {
    if (!coding::GetVarint64(&in, &lengths[i])) return corrupt("bad element length");
    if (lengths[i] <= 0xffffffffu) {
      const uint32_t len32 = static_cast<uint32_t>(lengths[i]);
      crc = crc32c::Extend(crc, &len32, sizeof(len32));
    } else {
      crc = crc32c::Extend(crc, &lengths[i], sizeof(uint64_t));
    }
  }
  if (in.size() < 4) return corrupt("missing length checksum");
  const uint32_t stored_length_crc = coding::DecodeFixed32(in.data());
  if (crc32c::Unmask(stored_length_crc) != crc) return corrupt("length checksum mismatch");
  crc = crc32c::Extend(crc, in.data(), 4);
  in.remove_prefix(4);
  absl::Span<std::string> out = tensor->flat<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    if (lengths[i] > in.size()) return corrupt("element runs past the entry's bytes");
    out[i].assign(in.data(), lengths[i]);
    crc = crc32c::Extend(crc, in.data(), lengths[i]);
    in.remove_prefix(lengths[i]);
  }
  if (crc32c::Unmask(entry.crc32c()) != crc) return ChecksumError(key, entry, file, crc);
  return absl::OkStatus();
}

}  // namespace dflow
