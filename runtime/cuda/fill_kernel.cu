// A minimal nvcc-compiled kernel proving the .cu build path end to end.
#include "runtime/cuda/cuda_probe.h"
#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {
namespace {

__global__ void FillKernel(float* data, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

}  // namespace

absl::Status FillOnDevice(float* data, int n, float value) {
  constexpr int kThreads = 256;
  FillKernel<<<(n + kThreads - 1) / kThreads, kThreads>>>(data, n, value);
  DFLOW_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  DFLOW_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return absl::OkStatus();
}

}  // namespace dflow::cuda
