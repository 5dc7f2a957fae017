// Fuzz target: reading a TensorFlow V2 checkpoint (tensor bundle). The input is
// [4-byte little-endian L][L bytes of `.index`][the rest: the one `.data` shard], written
// to a private directory, opened with BundleReader and every tensor looked up.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "graph/proto_io.h"
#include "kernels/io/tensor_bundle_reader.h"
#include "runtime/allocator.h"

namespace {

const std::string& Prefix() {
  static const std::string* prefix = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/dflow_ckpt_fuzz_XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    return new std::string(dir + "/ckpt");
  }();
  return *prefix;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const uint32_t index_size = data[0] | data[1] << 8 | data[2] << 16 | uint32_t{data[3]} << 24;
  if (index_size > size - 4) return 0;
  const char* bytes = reinterpret_cast<const char*>(data + 4);
  const std::string& prefix = Prefix();
  if (!dflow::WriteStringToFile(prefix + ".index", std::string(bytes, index_size)).ok() ||
      !dflow::WriteStringToFile(prefix + ".data-00000-of-00001",
                                std::string(bytes + index_size, size - 4 - index_size))
           .ok()) {
    std::abort();
  }
  absl::StatusOr<std::unique_ptr<dflow::BundleReader>> reader = dflow::BundleReader::Open(prefix);
  if (!reader.ok()) return 0;
  static dflow::CpuAllocator* allocator = new dflow::CpuAllocator();
  for (const std::string& key : (*reader)->Keys()) (void)(*reader)->Lookup(key, allocator);
  return 0;
}
