// PhiloxRandom: the Philox4x32-10 counter-based generator (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011), laid out exactly as TensorFlow's
// tensorflow/core/lib/random/philox_random.h so that the same (seed, seed2) gives the
// same bits:
//   - the 64-bit key is `seed` (low word first);
//   - the 128-bit counter starts at (0, 0, low(seed2), high(seed2));
//   - each call returns four uint32 and advances the counter by one;
//   - Skip(n) advances the counter by n, as n calls would.
// A copy of a generator is an independent stream at the same position, which is how
// kernels hand disjoint ranges of one stream to parallel shards.
//
// Thread-safety: none (a value type); share it behind a mutex (random_ops.cc does).
#ifndef DFLOW_KERNELS_CPU_PHILOX_RANDOM_H_
#define DFLOW_KERNELS_CPU_PHILOX_RANDOM_H_

#include <array>
#include <cstdint>
#include <cstring>

namespace dflow {

class PhiloxRandom {
 public:
  using ResultType = std::array<uint32_t, 4>;
  static constexpr int kResultElementCount = 4;

  PhiloxRandom() = default;
  PhiloxRandom(uint64_t seed_lo, uint64_t seed_hi) {
    key_ = {static_cast<uint32_t>(seed_lo), static_cast<uint32_t>(seed_lo >> 32)};
    counter_[2] = static_cast<uint32_t>(seed_hi);
    counter_[3] = static_cast<uint32_t>(seed_hi >> 32);
  }

  // Advances the 128-bit counter by `count` (as `count` calls of operator() would).
  void Skip(uint64_t count) {
    const uint32_t count_lo = static_cast<uint32_t>(count);
    uint32_t count_hi = static_cast<uint32_t>(count >> 32);
    counter_[0] += count_lo;
    if (counter_[0] < count_lo) ++count_hi;
    counter_[1] += count_hi;
    if (counter_[1] < count_hi) {
      if (++counter_[2] == 0) ++counter_[3];
    }
  }

  // The next four 32-bit samples: ten rounds over the counter, then counter += 1.
  ResultType operator()() {
    ResultType counter = counter_;
    std::array<uint32_t, 2> key = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += kWeylA;
        key[1] += kWeylB;
      }
      counter = Round(counter, key);
    }
    Skip(1);
    return counter;
  }

 private:
  static constexpr uint32_t kWeylA = 0x9E3779B9;  // golden ratio
  static constexpr uint32_t kWeylB = 0xBB67AE85;  // sqrt(3) - 1
  static constexpr uint32_t kMulA = 0xD2511F53;
  static constexpr uint32_t kMulB = 0xCD9E8D57;

  static ResultType Round(const ResultType& c, const std::array<uint32_t, 2>& key) {
    const uint64_t p0 = uint64_t{kMulA} * c[0];
    const uint64_t p1 = uint64_t{kMulB} * c[2];
    return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(p1),
            static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(p0)};
  }

  ResultType counter_ = {0, 0, 0, 0};
  std::array<uint32_t, 2> key_ = {0, 0};
};

// A double in [0, 1) from 52 random bits of two samples (TF's Uint64ToDouble: the bits as
// the mantissa of a number in [1, 2), minus 1).
inline double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t mantissa = (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
  const uint64_t bits = (uint64_t{1023} << 52) | mantissa;
  double result;
  std::memcpy(&result, &bits, sizeof(bits));
  return result - 1.0;
}

// Hands out one sample at a time from a PhiloxRandom (TF's SingleSampleAdapter), for
// distributions that consume a variable number of samples (rejection sampling).
class SingleSampleAdapter {
 public:
  explicit SingleSampleAdapter(PhiloxRandom* generator) : generator_(generator) {}
  uint32_t operator()() {
    if (used_ == PhiloxRandom::kResultElementCount) {
      unused_ = (*generator_)();
      used_ = 0;
    }
    return unused_[used_++];
  }

 private:
  PhiloxRandom* generator_;  // not owned
  PhiloxRandom::ResultType unused_ = {};
  int used_ = PhiloxRandom::kResultElementCount;
};

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_PHILOX_RANDOM_H_
