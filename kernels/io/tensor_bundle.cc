#include "kernels/io/tensor_bundle.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dflow {

std::string BundleIndexFilename(absl::string_view prefix) {
  return absl::StrCat(prefix, ".index");
}

std::string BundleDataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

}  // namespace dflow
