// Creates a session's devices and thread pool from its ConfigProto.
//
//  - CPUs: device_count["CPU"] (default 1) gives CPU:0 .. CPU:N-1, all sharing host memory.
//  - One thread pool for inter- and intra-op work (no oversubscription): its size is the
//    larger of inter_op_parallelism_threads and intra_op_parallelism_threads when either
//    is set, else the number of cores the process may use.
//  - Simulated GPUs: when DFLOW_SIMULATED_GPUS=N or N:MiB is set (read with getenv at each
//    call), N simulated cards of MiB (default 16384) each, turned into logical GPUs by
//    gpu_options (visible_device_list, virtual_devices, memory fraction, allow_growth,
//    TF_FORCE_GPU_ALLOW_GROWTH) and device_count["GPU"] exactly as real GPUs are
//    (runtime/gpu_options.h). They follow the CPUs in device order. Without the variable
//    there are no GPUs and gpu_options is ignored. CUDA_VISIBLE_DEVICES filters and
//    reorders the simulated cards first, as the CUDA runtime does for real ones
//    (CudaVisibleCards: "1,0" swaps two cards, "" hides all, an invalid or out-of-range
//    entry ends the list); visible_device_list then indexes what remains, and
//    physical_device_desc keeps the card's own index (pci bus id sim:<card>).
//  - Real CUDA GPUs (runtime/cuda/cuda_gpus.h) replace the simulated ones whenever the
//    CUDA runtime finds any (DFLOW_SIMULATED_GPUS is then ignored), with the same options.
//    DFLOW_SIMULATED_GPU_OPTIONS adds test knobs to every simulated GPU (chaos ordering,
//    no peer access, a failing or slow copy: runtime/sim/sim_gpu_spec.h).
#ifndef DFLOW_SESSION_DEVICE_FACTORY_H_
#define DFLOW_SESSION_DEVICE_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/config.pb.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/gpu_options.h"  // kSimulatedGpusEnv, kCudaVisibleDevicesEnv
#include "runtime/thread_pool.h"

namespace dflow {

// Everything device-related a session owns. Members are declared in destruction-safe
// order: devices go before the pool they borrow. Host memory comes from the process's
// CPU allocator (ProcessCpuAllocator), as in TF: tensors a Run returned stay valid after
// their session is gone.
struct SessionDevices {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<DeviceMgr> devices;
  // What TF would log while creating the devices (e.g. an invalid
  // TF_FORCE_GPU_ALLOW_GROWTH value); NewSession hands them to the session's LogSink.
  std::vector<std::string> warnings;
};

// INVALID_ARGUMENT for negative or absurd counts (naming the ConfigProto field), a
// malformed DFLOW_SIMULATED_GPUS (naming it) or invalid gpu_options (naming the field).
absl::StatusOr<SessionDevices> CreateSessionDevices(const ConfigProto& config);

// The thread count CreateSessionDevices uses for `config`.
int SessionThreadCount(const ConfigProto& config);

}  // namespace dflow

#endif  // DFLOW_SESSION_DEVICE_FACTORY_H_
