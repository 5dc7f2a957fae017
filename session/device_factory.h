// Creates a session's devices and thread pool from its ConfigProto.
//
//  - CPUs: device_count["CPU"] (default 1) gives CPU:0 .. CPU:N-1, all sharing host memory.
//  - One thread pool for inter- and intra-op work (no oversubscription): its size is the
//    larger of inter_op_parallelism_threads and intra_op_parallelism_threads when either
//    is set, else the number of cores the process may use.
//  - Accelerators (simulated and CUDA GPUs) arrive with issue 4.
#ifndef DFLOW_SESSION_DEVICE_FACTORY_H_
#define DFLOW_SESSION_DEVICE_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "proto/config.pb.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/thread_pool.h"

namespace dflow {

// Everything device-related a session owns. Members are declared in destruction-safe
// order: devices go before the pool and allocator they borrow.
struct SessionDevices {
  std::unique_ptr<CpuAllocator> cpu_allocator;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<DeviceMgr> devices;
};

// INVALID_ARGUMENT for negative or absurd counts (naming the ConfigProto field).
absl::StatusOr<SessionDevices> CreateSessionDevices(const ConfigProto& config);

// The thread count CreateSessionDevices uses for `config`.
int SessionThreadCount(const ConfigProto& config);

}  // namespace dflow

#endif  // DFLOW_SESSION_DEVICE_FACTORY_H_
