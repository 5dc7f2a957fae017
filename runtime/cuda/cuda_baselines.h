// Bare CUDA baselines for bench/gpu: the same work as a dflow Session does, with no dflow
// in the loop, timed the same way (host wall clock around `iterations` enqueued calls and
// one final synchronize), so that the benchmark's ratios compare like with like.
// This header includes no CUDA header (bench/ stays free of CUDA types).
#ifndef DFLOW_RUNTIME_CUDA_CUDA_BASELINES_H_
#define DFLOW_RUNTIME_CUDA_CUDA_BASELINES_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace dflow::cuda {

// Milliseconds per cublasSgemm of n x n x n floats (FP32, default math mode, one handle
// on a non-blocking stream, as CudaGpuDevice sets it up) on GPU `ordinal`.
absl::StatusOr<double> TimeBareSgemmMs(int ordinal, int n, int iterations);

// Milliseconds per cudaMemcpyAsync of `bytes` between pinned host memory (cudaHostAlloc)
// and the GPU, host-to-device when `to_device`, else device-to-host.
absl::StatusOr<double> TimePinnedCopyMs(int ordinal, size_t bytes, bool to_device, int iterations);

// "NVIDIA H100 80GB HBM3" (cudaGetDeviceProperties), or the error text.
std::string GpuName(int ordinal);

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_BASELINES_H_
