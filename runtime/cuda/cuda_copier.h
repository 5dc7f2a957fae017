// CudaCopier: a CudaGpuDevice's DeviceCopier (runtime/device_copier.h).
//
//  - device -> host: the device_to_host stream waits (Event) for the compute stream as it
//    is at the call. A pinned destination gets one cudaMemcpyAsync and `done` runs from a
//    ThenExecute callback, hopped onto the device's pool (CUDA forbids CUDA calls on its
//    callback thread, and `done` may launch kernels). A pageable destination is copied on
//    a pool thread through PinnedStaging (DMA into two pinned chunks, memcpy out,
//    overlapped), and `done` runs there. Either way `done` means the bytes are on the host.
//  - host -> device: the host_to_device stream waits for the compute stream (the fresh
//    `dst` may be memory that queued compute work still uses), the bytes go through
//    PinnedStaging (pipelined, on a pool thread; pinned or small sources directly, on the
//    caller's thread), then the COMPUTE stream
//    waits (on the device) for an event recorded after the copy, and `done` is called at
//    once. Device-side completion, as TF does: every reader of a GPU tensor is a kernel
//    on that compute stream or a copy that first waits for it.
//  - device -> device: on the sender's device_to_device stream, after waits for both
//    compute streams; cudaMemcpyAsync(cudaMemcpyDefault), which under unified addressing
//    is a direct NVLink/PCIe peer copy when peer access was enabled (cuda_gpus.cc enables
//    every pair cudaDeviceCanAccessPeer allows) and is otherwise staged through host
//    memory by the driver (as cudaMemcpyPeerAsync would be). The receiver's
//    compute stream then waits for the copy and `done` is called at once.
//  - buffer lifetime: a ThenExecute callback on the copy stream holds `src` and `dst`
//    until the copy has run.
//
// This header includes no CUDA header. Ownership: owned by its CudaGpuDevice.
#ifndef DFLOW_RUNTIME_CUDA_CUDA_COPIER_H_
#define DFLOW_RUNTIME_CUDA_CUDA_COPIER_H_

#include "runtime/device_copier.h"

namespace dflow::cuda {

class CudaGpuDevice;

class CudaCopier final : public DeviceCopier {
 public:
  // `device` owns the copier and outlives it.
  explicit CudaCopier(CudaGpuDevice* device) : device_(device) {}

  // The host -> device copy of CopyHostToDevice, on the calling thread whatever the
  // source (a pageable one is staged here): returns once the compute stream is ordered
  // after the copy. For callers that must not wait for a pool thread (Const upload while
  // an executor is built).
  absl::Status CopyHostToDeviceNow(const Tensor& src, const Tensor& dst);

 private:
  void CopyDeviceToHostImpl(const Tensor& src, const Tensor& dst, StatusCallback done) override;
  void CopyHostToDeviceImpl(const Tensor& src, const Tensor& dst, StatusCallback done) override;
  void CopyDeviceToDeviceImpl(const Tensor& src, Device* dst_device, const Tensor& dst,
                              StatusCallback done) override;

  CudaGpuDevice* const device_;
};

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_COPIER_H_
