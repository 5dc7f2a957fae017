// The simulated GPUs a session gets: DFLOW_SIMULATED_GPUS ("N" or "N:MiB") cards, filtered
// and ordered by CUDA_VISIBLE_DEVICES and split by ConfigProto gpu_options exactly as real
// cards are (runtime/gpu_options.h), with the test knobs of DFLOW_SIMULATED_GPU_OPTIONS
// (sim_gpu_spec.h). The simulated-GPU backend (kernels/sim/sim_backend.cc) offers them.
#ifndef DFLOW_RUNTIME_SIM_SIM_GPUS_H_
#define DFLOW_RUNTIME_SIM_SIM_GPUS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/config.pb.h"
#include "runtime/device.h"
#include "runtime/thread_pool.h"

namespace dflow::sim {

// Appends the simulated GPUs the environment and `config` ask for to `devices` (none
// when DFLOW_SIMULATED_GPUS is unset or 0). INVALID_ARGUMENT naming the variable or the
// gpu_options field at fault.
absl::Status AddSimulatedGpus(const ConfigProto& config, ThreadPool* pool,
                              std::vector<std::unique_ptr<Device>>* devices,
                              std::vector<std::string>* warnings);

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_GPUS_H_
