// GuardedPhilox: one kernel's Philox stream (TF's GuardedPhiloxRandom), from the node's
// (seed, seed2) attrs; both 0 seeds it from the OS (a fresh, nondeterministic stream per
// kernel, as TF). Each Compute reserves a range of the stream and draws from a copy of
// its start, so draws never depend on sharding, and the stream lives as long as the
// kernel: each Run gives new numbers (and with runtime/stateful_kernels.h the stream
// continues across a session's run signatures, as TF's shared stateful kernels).
//
// Thread-safe.
#ifndef DFLOW_KERNELS_CPU_GUARDED_PHILOX_H_
#define DFLOW_KERNELS_CPU_GUARDED_PHILOX_H_

#include <cstdint>
#include <random>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "kernels/cpu/philox_random.h"
#include "runtime/op_kernel.h"

namespace dflow {

class GuardedPhilox {
 public:
  absl::Status Init(OpKernelConstruction* ctx) {
    int64_t seed = 0, seed2 = 0;
    DFLOW_RETURN_IF_ERROR(ctx->GetAttr("seed", &seed));
    DFLOW_RETURN_IF_ERROR(ctx->GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {  // unseeded: a fresh stream per kernel
      std::random_device device;
      const auto random64 = [&] { return (uint64_t{device()} << 32) | device(); };
      seed = static_cast<int64_t>(random64());
      seed2 = static_cast<int64_t>(random64());
    }
    absl::MutexLock lock(&mu_);
    generator_ = PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
    return absl::OkStatus();
  }

  // The stream's current position, moved past `calls` Philox calls (128 bits each).
  PhiloxRandom ReserveSamples128(uint64_t calls) {
    absl::MutexLock lock(&mu_);
    PhiloxRandom local = generator_;
    generator_.Skip(calls);
    return local;
  }
  // ... past `samples` 32-bit samples (four per call).
  PhiloxRandom ReserveSamples32(uint64_t samples) { return ReserveSamples128((samples + 3) / 4); }

 private:
  absl::Mutex mu_;
  PhiloxRandom generator_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_GUARDED_PHILOX_H_
