#include "kernels/io/tensor_bundle_writer.h"

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "kernels/io/coding.h"
#include "kernels/io/crc32c.h"
#include "kernels/io/file_io.h"
#include "kernels/io/sstable.h"
#include "kernels/io/tensor_bundle.h"
#include "kernels/io/tensor_bundle_reader.h"

namespace dflow {
namespace {

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

BundleHeaderProto MakeHeader(int num_shards) {
  BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  return header;
}

absl::Status WriteIndex(const std::string& prefix, const BundleHeaderProto& header,
                        const std::map<std::string, BundleEntryProto>& entries) {
  SSTableEntries table;
  table.reserve(entries.size() + 1);
  table.emplace_back(std::string(kBundleHeaderKey), header.SerializeAsString());
  for (const auto& [key, entry] : entries) table.emplace_back(key, entry.SerializeAsString());
  return WriteStringToFile(BundleIndexFilename(prefix), BuildSSTable(table));
}

}  // namespace

absl::StatusOr<std::unique_ptr<BundleWriter>> BundleWriter::Create(const std::string& prefix) {
  DFLOW_RETURN_IF_ERROR(RecursivelyCreateDir(Dirname(prefix)));
  const std::string path = BundleDataFilename(prefix, 0, 1);
  std::FILE* data = std::fopen(path.c_str(), "wb");
  if (data == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat("Cannot create ", path));
  return std::unique_ptr<BundleWriter>(new BundleWriter(prefix, data));
}

BundleWriter::~BundleWriter() {
  if (data_ != nullptr) std::fclose(data_);
}

absl::Status BundleWriter::Append(absl::string_view bytes, uint32_t* crc) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), data_) != bytes.size()) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("Cannot write ", BundleDataFilename(prefix_, 0, 1)));
  }
  *crc = crc32c::Extend(*crc, bytes.data(), bytes.size());
  size_ += bytes.size();
  return absl::OkStatus();
}

absl::Status BundleWriter::Add(const std::string& key, const Tensor& tensor) {
  if (data_ == nullptr) return absl::FailedPreconditionError("BundleWriter is closed");
  if (key.empty()) return absl::InvalidArgumentError("Cannot save a tensor with an empty name");
  if (entries_.count(key) > 0) {
    return absl::InvalidArgumentError(absl::StrCat("Adding duplicate key: ", key));
  }
  const DataType dtype = tensor.dtype();
  if (dtype != DT_STRING && !DataTypeIsMemcpyable(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("Cannot save tensor ", key, " of dtype ",
                                                   DataTypeString(dtype)));
  }
  BundleEntryProto entry;
  entry.set_dtype(dtype);
  *entry.mutable_shape() = tensor.shape().ToProto();
  entry.set_shard_id(0);
  entry.set_offset(static_cast<int64_t>(size_));
  uint32_t crc = 0;
  if (dtype == DT_STRING) {
    // Lengths as varint64, their checksum (over uint32 lengths), then the bytes.
    std::string lengths;
    uint32_t length_crc = 0;
    for (const std::string& s : tensor.flat<std::string>()) {
      coding::PutVarint64(&lengths, s.size());
      const uint32_t len32 = static_cast<uint32_t>(s.size());
      const uint64_t len64 = s.size();
      length_crc = s.size() <= 0xffffffffu ? crc32c::Extend(length_crc, &len32, 4)
                                           : crc32c::Extend(length_crc, &len64, 8);
    }
    uint32_t ignored = 0;
    DFLOW_RETURN_IF_ERROR(Append(lengths, &ignored));
    crc = length_crc;
    std::string masked;
    coding::PutFixed32(&masked, crc32c::Mask(length_crc));
    DFLOW_RETURN_IF_ERROR(Append(masked, &crc));
    for (const std::string& s : tensor.flat<std::string>()) {
      DFLOW_RETURN_IF_ERROR(Append(s, &crc));
    }
  } else {
    DFLOW_RETURN_IF_ERROR(Append(
        absl::string_view(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes()),
        &crc));
  }
  entry.set_size(static_cast<int64_t>(size_) - entry.offset());
  entry.set_crc32c(crc32c::Mask(crc));
  entries_.emplace(key, std::move(entry));
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  if (data_ == nullptr) return absl::FailedPreconditionError("BundleWriter is closed");
  const int close_result = std::fclose(data_);
  data_ = nullptr;
  if (close_result != 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("Cannot close ", BundleDataFilename(prefix_, 0, 1)));
  }
  return WriteIndex(prefix_, MakeHeader(1), entries_);
}

absl::Status MergeBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix) {
  // Shard files are numbered in the merged bundle in the order they are met.
  std::vector<std::string> shard_files;
  std::map<std::string, BundleEntryProto> entries;
  for (const std::string& prefix : prefixes) {
    DFLOW_ASSIGN_OR_RETURN(auto reader, BundleReader::Open(prefix));
    const int first_shard = static_cast<int>(shard_files.size());
    for (int s = 0; s < reader->num_shards(); ++s) {
      shard_files.push_back(BundleDataFilename(prefix, s, reader->num_shards()));
    }
    for (const std::string& key : reader->Keys()) {
      DFLOW_ASSIGN_OR_RETURN(BundleEntryProto entry, reader->LookupEntry(key));
      entry.set_shard_id(first_shard + entry.shard_id());
      if (!entries.emplace(key, std::move(entry)).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Duplicate tensor keyed by ", key, " encountered, when merging prefix: ", prefix));
      }
    }
  }
  DFLOW_RETURN_IF_ERROR(RecursivelyCreateDir(Dirname(merged_prefix)));
  const int num_shards = static_cast<int>(shard_files.size());
  for (int s = 0; s < num_shards; ++s) {
    DFLOW_RETURN_IF_ERROR(
        RenameFile(shard_files[s], BundleDataFilename(merged_prefix, s, num_shards)));
  }
  DFLOW_RETURN_IF_ERROR(WriteIndex(merged_prefix, MakeHeader(num_shards), entries));
  for (const std::string& prefix : prefixes) {
    if (prefix != merged_prefix) DeleteFile(BundleIndexFilename(prefix)).IgnoreError();
  }
  return absl::OkStatus();
}

}  // namespace dflow
