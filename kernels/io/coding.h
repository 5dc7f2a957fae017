// Little-endian fixed-width and varint integer encoding (LevelDB's and protobuf's wire
// forms) for the table and tensor-bundle formats.
#ifndef DFLOW_KERNELS_IO_CODING_H_
#define DFLOW_KERNELS_IO_CODING_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace dflow::coding {

inline void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// REQUIRES: p points at 4 (8) readable bytes.
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  return DecodeFixed32(p) | (static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32);
}

// Consumes a varint from the front of `in`; false (and `in` unspecified) when `in` ends
// early or the value has more than 64 bits.
inline bool GetVarint64(absl::string_view* in, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}
inline bool GetVarint32(absl::string_view* in, uint32_t* value) {
  uint64_t v = 0;
  if (!GetVarint64(in, &v) || v > 0xffffffffu) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}

}  // namespace dflow::coding

#endif  // DFLOW_KERNELS_IO_CODING_H_
