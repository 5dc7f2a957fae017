// BundleReader: reads tensors from a TensorFlow V2 checkpoint (tensor bundle).
//
//   DFLOW_ASSIGN_OR_RETURN(auto reader, BundleReader::Open("/ckpt/model.ckpt-1999"));
//   DFLOW_ASSIGN_OR_RETURN(Tensor w, reader->Lookup("hidden1/weights", allocator));
//
// Open decodes the whole `.index` (one small entry per tensor); data files open on first
// use. Every tensor's crc32c is verified on read. Errors: NOT_FOUND naming the missing
// file or key; DATA_LOSS naming the file and tensor for corrupt or truncated files;
// UNIMPLEMENTED for partitioned (sliced) tensors, big-endian bundles and snappy tables.
//
// Thread-safety: all methods may be called concurrently.
#ifndef DFLOW_KERNELS_IO_TENSOR_BUNDLE_READER_H_
#define DFLOW_KERNELS_IO_TENSOR_BUNDLE_READER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kernels/io/file_io.h"
#include "proto/tensor_bundle.pb.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

class BundleReader {
 public:
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return header_.num_shards(); }
  // The tensor names, sorted.
  std::vector<std::string> Keys() const;
  bool Contains(const std::string& key) const { return entries_.count(key) > 0; }

  // NOT_FOUND "Key <key> not found in checkpoint <prefix>" (TF's words, plus the prefix).
  absl::StatusOr<BundleEntryProto> LookupEntry(const std::string& key) const;
  // The tensor's value, allocated from `allocator`.
  absl::StatusOr<Tensor> Lookup(const std::string& key, Allocator* allocator) const;

 private:
  BundleReader(std::string prefix, BundleHeaderProto header,
               std::map<std::string, BundleEntryProto> entries);

  absl::StatusOr<const RandomAccessFile*> Shard(int shard_id) const;
  absl::Status ReadString(const std::string& key, const BundleEntryProto& entry,
                          const RandomAccessFile& file, Tensor* tensor) const;
  absl::Status ChecksumError(const std::string& key, const BundleEntryProto& entry,
                             const RandomAccessFile& file, uint32_t actual) const;

  const std::string prefix_;
  const BundleHeaderProto header_;
  const std::map<std::string, BundleEntryProto> entries_;
  mutable absl::Mutex mu_;
  mutable std::vector<std::unique_ptr<RandomAccessFile>> shards_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_TENSOR_BUNDLE_READER_H_
