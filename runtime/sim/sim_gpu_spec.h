// DFLOW_SIMULATED_GPU_OPTIONS: the simulated GPUs' test knobs from the environment, so a
// Session (which builds its devices from a ConfigProto, session/device_factory.h) can run
// on GPUs with chaos ordering, without peer access, or with faulty / slow copies:
//
//   DFLOW_SIMULATED_GPU_OPTIONS="chaos_seed=7,peer_access=0,fail_copy=2,copy_delay_us=500"
//
// Keys (each optional, applied to every simulated GPU of the session):
//   chaos_seed=N       SimGpuOptions::chaos_seed (all four streams; 0 = off)
//   peer_access=0|1    SimGpuOptions::peer_access (0: GPU<->GPU copies staged via host)
//   fail_copy=N        SimGpuOptions::fail_copy_number (each GPU's Nth copy fails)
//   copy_delay_us=N    SimGpuOptions::copy_delay_micros
//   compute_threads=N  SimGpuOptions::compute_threads (0 = the session's pool; N >= 1 =
//                      each GPU computes with threads of its own, at most 256)
#ifndef DFLOW_RUNTIME_SIM_SIM_GPU_SPEC_H_
#define DFLOW_RUNTIME_SIM_SIM_GPU_SPEC_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/sim/sim_device.h"

namespace dflow::sim {

inline constexpr char kSimulatedGpuOptionsEnv[] = "DFLOW_SIMULATED_GPU_OPTIONS";

// Sets the fields `spec` names on `options`. INVALID_ARGUMENT naming the variable and the
// bad entry for unknown keys, missing '=' or values that are not non-negative integers
// (0 or 1 for peer_access). An empty spec changes nothing.
absl::Status ApplySimGpuSpec(absl::string_view spec, SimGpuOptions* options);

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_GPU_SPEC_H_
