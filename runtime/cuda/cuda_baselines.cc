#include "runtime/cuda/cuda_baselines.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "graph/status_macros.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/scoped_activate_device.h"

namespace dflow::cuda {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start, int iterations) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / iterations;
}

// Owners for the raw CUDA resources of one measurement.
struct DeviceBuffer {
  void* ptr = nullptr;
  ~DeviceBuffer() { cudaFree(ptr); }
};
struct HostBuffer {
  void* ptr = nullptr;
  ~HostBuffer() { cudaFreeHost(ptr); }
};
struct StreamOwner {
  cudaStream_t stream = nullptr;
  ~StreamOwner() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};
struct CublasOwner {
  cublasHandle_t handle = nullptr;
  ~CublasOwner() {
    if (handle != nullptr) cublasDestroy(handle);
  }
};

}  // namespace

absl::StatusOr<double> TimeBareSgemmMs(int ordinal, int n, int iterations) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(ordinal));
  const size_t bytes = static_cast<size_t>(n) * n * sizeof(float);
  DeviceBuffer a, b, c;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMalloc(&a.ptr, bytes));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMalloc(&b.ptr, bytes));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMalloc(&c.ptr, bytes));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMemset(a.ptr, 0, bytes));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMemset(b.ptr, 0, bytes));
  StreamOwner stream;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream.stream, cudaStreamNonBlocking));
  CublasOwner cublas;
  DFLOW_CUBLAS_RETURN_IF_ERROR(cublasCreate(&cublas.handle));
  DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSetStream(cublas.handle, stream.stream));
  DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(cublas.handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.f, beta = 0.f;
  auto gemm = [&]() -> absl::Status {
    DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSgemm(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
                                             &alpha, static_cast<const float*>(b.ptr), n,
                                             static_cast<const float*>(a.ptr), n, &beta,
                                             static_cast<float*>(c.ptr), n));
    return absl::OkStatus();
  };
  DFLOW_RETURN_IF_ERROR(gemm());  // warm-up: cuBLAS picks and loads its kernel
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.stream));
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) DFLOW_RETURN_IF_ERROR(gemm());
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.stream));
  return MsSince(start, iterations);
}

absl::StatusOr<double> TimePinnedCopyMs(int ordinal, size_t bytes, bool to_device,
                                        int iterations) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(ordinal));
  DeviceBuffer on_device;
  HostBuffer on_host;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMalloc(&on_device.ptr, bytes));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&on_host.ptr, bytes, cudaHostAllocPortable));
  // Written once, as gpu_bench writes dflow's feed, so both sides copy touched pages. (On
  // the H200 this changed nothing: the bare copy still read 27 GB/s against dflow's 52.)
  std::memset(on_host.ptr, 0, bytes);
  StreamOwner stream;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream.stream, cudaStreamNonBlocking));
  void* dst = to_device ? on_device.ptr : on_host.ptr;
  const void* src = to_device ? on_host.ptr : on_device.ptr;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.stream));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.stream));
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    DFLOW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.stream));
  }
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.stream));
  return MsSince(start, iterations);
}

std::string GpuName(int ordinal) {
  cudaDeviceProp prop;
  const cudaError_t error = cudaGetDeviceProperties(&prop, ordinal);
  if (error != cudaSuccess) {
    return CudaErrorToStatus(error, "cudaGetDeviceProperties", __FILE__, __LINE__).ToString();
  }
  return prop.name;
}

}  // namespace dflow::cuda
