// CRC-32C (Castagnoli), the checksum of TensorFlow's tensor bundles and LevelDB tables.
//
// Stored checksums are "masked" (rotated and offset) so that a CRC computed over data
// that itself embeds CRCs stays well distributed; Mask/Unmask convert.
#ifndef DFLOW_KERNELS_IO_CRC32C_H_
#define DFLOW_KERNELS_IO_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace dflow::crc32c {

// The CRC of `crc`'s data followed by `data`. Uses SSE4.2 when the CPU has it.
uint32_t Extend(uint32_t crc, const void* data, size_t size);
inline uint32_t Value(const void* data, size_t size) { return Extend(0, data, size); }
inline uint32_t Value(absl::string_view data) { return Extend(0, data.data(), data.size()); }

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace dflow::crc32c

#endif  // DFLOW_KERNELS_IO_CRC32C_H_
