// SimStreamOptions: knobs of the simulated accelerator's streams that a real device does
// not have. Both exist to make tests find bugs that a well-behaved backend hides:
//
//  - chaos_seed: every queued item is delayed by a pseudo-random 0..kMaxChaosDelayMicros
//    microseconds before it runs, so the relative completion order of different streams
//    varies from seed to seed. A consumer stream that forgot to WaitFor its producer then
//    reads stale data for some seed instead of "usually working" (the sim's worker threads
//    are otherwise fast enough to hide such races).
//  - fault injection: the Nth operation fails with a given status when the worker reaches
//    it, as a device error would (LevelDB's FaultInjectionTestEnv, docs/STYLE.md #15).
//
// The defaults give a plain, undelayed, fault-free stream.
#ifndef DFLOW_RUNTIME_SIM_SIM_OPTIONS_H_
#define DFLOW_RUNTIME_SIM_SIM_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"

namespace dflow::sim {

struct SimStreamOptions {
  // Upper bound of the per-item chaos delay.
  static constexpr int64_t kMaxChaosDelayMicros = 200;

  // 0: no delays. Otherwise the seed of the delay sequence. Each stream mixes its name into
  // the seed, so two streams given the same seed still get different sequences, and a
  // stream's sequence is the same on every run (thread scheduling still adds its own noise).
  uint64_t chaos_seed = 0;

  // 0: no fault. N >= 1: the Nth operation enqueued on the stream (counting host functions
  // and copies from 1; events, waits and ThenExecute callbacks are bookkeeping and are not
  // counted) is not run; the stream fails with `injected_fault` instead, and is sticky-failed
  // from then on exactly as if the operation had returned that error.
  int64_t fail_operation_number = 0;
  absl::Status injected_fault = absl::InternalError("injected fault (SimStreamOptions)");
};

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_OPTIONS_H_
