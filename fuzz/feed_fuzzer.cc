// Fuzz target: `--feed` values. The first byte picks the fed dtype; the rest is a JSON
// value, or a .npy file (converted to that dtype) when it starts with NumPy's magic.
#include <cstdint>

#include "absl/strings/string_view.h"
#include "runtime/allocator.h"
#include "tools/feed_parser.h"
#include "tools/npy.h"

namespace {

constexpr dflow::DataType kDtypes[] = {
    dflow::DT_FLOAT, dflow::DT_DOUBLE, dflow::DT_INT32, dflow::DT_INT64, dflow::DT_UINT8,
    dflow::DT_INT8,  dflow::DT_BOOL,   dflow::DT_HALF,  dflow::DT_BFLOAT16, dflow::DT_STRING,
    dflow::DT_UINT64, dflow::DT_COMPLEX64};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static dflow::CpuAllocator* allocator = new dflow::CpuAllocator();
  const dflow::DataType dtype = kDtypes[data[0] % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
  const absl::string_view value(reinterpret_cast<const char*>(data + 1), size - 1);
  if (value.substr(0, 6) == "\x93NUMPY") {
    absl::StatusOr<dflow::Tensor> npy = dflow::ParseNpy(value, allocator);
    if (npy.ok()) (void)dflow::ConvertTensor(*npy, dtype, allocator);
  } else {
    (void)dflow::ParseJsonTensor(value, dtype, allocator);
  }
  return 0;
}
