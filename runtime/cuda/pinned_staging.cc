#include "runtime/cuda/pinned_staging.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "graph/status_macros.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/scoped_activate_device.h"

namespace dflow::cuda {
namespace {

bool IsPinnedHostMemory(const void* ptr) {
  cudaPointerAttributes attributes;
  const bool pinned = cudaPointerGetAttributes(&attributes, ptr) == cudaSuccess &&
                      attributes.type == cudaMemoryTypeHost;
  cudaGetLastError();  // an unregistered pointer may leave an error behind on old drivers
  return pinned;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PinnedStaging>> PinnedStaging::Create(int ordinal) {
  std::unique_ptr<PinnedStaging> staging(new PinnedStaging(ordinal));
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(ordinal));
  for (int b = 0; b < 2; ++b) {
    DFLOW_CUDA_RETURN_IF_ERROR(
        cudaHostAlloc(&staging->buffers_[b], kChunkBytes, cudaHostAllocPortable));
    cudaEvent_t event = nullptr;
    DFLOW_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    staging->events_[b].reset(event);
  }
  return staging;
}

PinnedStaging::~PinnedStaging() {
  for (int b = 0; b < 2; ++b) {
    if (events_[b] != nullptr) cudaEventSynchronize(events_[b].get());
    if (buffers_[b] != nullptr) cudaFreeHost(buffers_[b]);
  }
}

absl::Status PinnedStaging::CopyToDevice(CudaStream& stream, void* dst, const void* src,
                                         size_t bytes) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(ordinal_));
  DFLOW_RETURN_IF_ERROR(stream.status());
  if (bytes <= kDirectMax || IsPinnedHostMemory(src)) {
    DFLOW_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.handle()));
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  int b = 0;
  for (size_t offset = 0; offset < bytes; offset += kChunkBytes, b ^= 1) {
    const size_t n = std::min(kChunkBytes, bytes - offset);
    // The previous DMA out of this buffer (this copy's or an earlier one's) must be done.
    DFLOW_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events_[b].get()));
    std::memcpy(buffers_[b], static_cast<const char*>(src) + offset, n);
    DFLOW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(static_cast<char*>(dst) + offset, buffers_[b],
                                               n, cudaMemcpyDefault, stream.handle()));
    DFLOW_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[b].get(), stream.handle()));
  }
  return absl::OkStatus();
}

absl::Status PinnedStaging::EnqueueChunkFromDevice(CudaStream& stream, const void* src,
                                                   size_t bytes, size_t index) {
  const size_t offset = index * kChunkBytes;
  const size_t n = std::min(kChunkBytes, bytes - offset);
  const int b = static_cast<int>(index % 2);
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(buffers_[b], static_cast<const char*>(src) + offset,
                                             n, cudaMemcpyDefault, stream.handle()));
  DFLOW_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[b].get(), stream.handle()));
  return absl::OkStatus();
}

absl::Status PinnedStaging::CopyFromDevice(CudaStream& stream, void* dst, const void* src,
                                           size_t bytes) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(ordinal_));
  DFLOW_RETURN_IF_ERROR(stream.status());
  if (bytes <= kDirectMax || IsPinnedHostMemory(dst)) {
    DFLOW_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.handle()));
    DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream.handle()));
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  const size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  // Two chunks in flight: the DMA of chunk i+1 overlaps the host's memcpy of chunk i.
  for (size_t i = 0; i < std::min<size_t>(2, chunks); ++i) {
    DFLOW_RETURN_IF_ERROR(EnqueueChunkFromDevice(stream, src, bytes, i));
  }
  for (size_t i = 0; i < chunks; ++i) {
    const int b = static_cast<int>(i % 2);
    const size_t offset = i * kChunkBytes;
    DFLOW_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events_[b].get()));
    std::memcpy(static_cast<char*>(dst) + offset, buffers_[b],
                std::min(kChunkBytes, bytes - offset));
    if (i + 2 < chunks) DFLOW_RETURN_IF_ERROR(EnqueueChunkFromDevice(stream, src, bytes, i + 2));
  }
  return absl::OkStatus();
}

}  // namespace dflow::cuda
