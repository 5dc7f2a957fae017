#include "kernels/io/crc32c.h"

#include <array>
#include <cstring>

#include <nmmintrin.h>

namespace dflow::crc32c {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;  // reflected Castagnoli

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

uint32_t ExtendPortable(uint32_t state, const uint8_t* p, size_t n) {
  static const std::array<uint32_t, 256> table = MakeTable();
  for (size_t i = 0; i < n; ++i) state = table[(state ^ p[i]) & 0xff] ^ (state >> 8);
  return state;
}

// Checkpoints reach gigabytes; the crc32 instruction checksums 8 bytes per cycle.
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t state, const uint8_t* p,
                                                      size_t n) {
  uint64_t s = state;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    s = _mm_crc32_u64(s, word);
    p += 8;
    n -= 8;
  }
  uint32_t s32 = static_cast<uint32_t>(s);
  while (n > 0) {
    s32 = _mm_crc32_u8(s32, *p++);
    --n;
  }
  return s32;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}

}  // namespace

uint32_t Extend(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint32_t state = ~crc;
  const uint32_t out = HasSse42() ? ExtendSse42(state, p, size) : ExtendPortable(state, p, size);
  return ~out;
}

}  // namespace dflow::crc32c
