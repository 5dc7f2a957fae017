// PinnedStaging: copies between pageable host memory and a GPU through two page-locked
// buffers, so the DMA engine runs at pinned speed while the host fills (or drains) the
// other buffer. A device owns one per direction.
//
// A cudaMemcpyAsync from pageable memory is staged by the driver into a small internal
// buffer and is synchronous with the host; pipelining our own chunks through pinned
// buffers overlaps the host memcpy of chunk i+1 with the DMA of chunk i. Each buffer has
// an event recorded after its DMA; before it is refilled the host waits on that event.
//
// CopyToDevice blocks the calling thread until the last chunk is handed to the DMA engine
// (the host source may then be freed); the last DMA may still run, ordered on `stream`.
// One copy at a time per PinnedStaging (a mutex); copies of at most kDirectMax bytes go
// straight to cudaMemcpyAsync (the driver's own staging is cheaper for them).
//
// This header includes no CUDA header. Thread-safe.
#ifndef DFLOW_RUNTIME_CUDA_PINNED_STAGING_H_
#define DFLOW_RUNTIME_CUDA_PINNED_STAGING_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/cuda/cuda_stream.h"

namespace dflow::cuda {

class PinnedStaging {
 public:
  static constexpr size_t kChunkBytes = size_t{8} << 20;
  static constexpr size_t kDirectMax = size_t{1} << 20;

  // Two pinned buffers of kChunkBytes and their events on GPU `ordinal`.
  static absl::StatusOr<std::unique_ptr<PinnedStaging>> Create(int ordinal);
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Copies `bytes` from host `src` (pageable or pinned) to device `dst`, ordered on
  // `stream` (a stream of this GPU).
  absl::Status CopyToDevice(CudaStream& stream, void* dst, const void* src, size_t bytes);
  // Copies `bytes` from device `src` to host `dst` (pageable or pinned), ordered on
  // `stream` after the work already queued there; returns once `dst` holds the bytes.
  absl::Status CopyFromDevice(CudaStream& stream, void* dst, const void* src, size_t bytes);

 private:
  explicit PinnedStaging(int ordinal) : ordinal_(ordinal) {}
  // Enqueues the device-to-host DMA of chunk `index` into buffer index % 2.
  absl::Status EnqueueChunkFromDevice(CudaStream& stream, const void* src, size_t bytes,
                                      size_t index);

  const int ordinal_;
  absl::Mutex mu_;
  void* buffers_[2] = {nullptr, nullptr};
  CudaEventHandle events_[2];
};

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_PINNED_STAGING_H_
