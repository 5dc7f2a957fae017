// BundleWriter: writes a single-shard TensorFlow V2 checkpoint that TensorFlow and
// BundleReader read.
//
//   DFLOW_ASSIGN_OR_RETURN(auto writer, BundleWriter::Create(prefix));
//   DFLOW_RETURN_IF_ERROR(writer->Add("w", w));
//   DFLOW_RETURN_IF_ERROR(writer->Finish());   // P.data-00000-of-00001, then P.index
//
// Tensor bytes stream to the data file as they are added; the index is written last, so
// a crash leaves no index naming missing data. Not thread-safe.
#ifndef DFLOW_KERNELS_IO_TENSOR_BUNDLE_WRITER_H_
#define DFLOW_KERNELS_IO_TENSOR_BUNDLE_WRITER_H_

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tensor_bundle.pb.h"
#include "runtime/tensor.h"

namespace dflow {

class BundleWriter {
 public:
  // Creates the prefix's directory if needed and opens the data file.
  static absl::StatusOr<std::unique_ptr<BundleWriter>> Create(const std::string& prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // INVALID_ARGUMENT for an empty or duplicate key or an unsupported dtype.
  absl::Status Add(const std::string& key, const Tensor& tensor);
  absl::Status Finish();

 private:
  BundleWriter(std::string prefix, std::FILE* data) : prefix_(std::move(prefix)), data_(data) {}
  absl::Status Append(absl::string_view bytes, uint32_t* crc);

  const std::string prefix_;
  std::FILE* data_;  // owned; null after Finish
  uint64_t size_ = 0;
  std::map<std::string, BundleEntryProto> entries_;
};

// Merges the bundles at `prefixes` into one bundle at `merged_prefix`: data files are
// renamed (never copied), the indexes combined, and the old indexes deleted.
// INVALID_ARGUMENT when two bundles hold the same tensor.
absl::Status MergeBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_TENSOR_BUNDLE_WRITER_H_
