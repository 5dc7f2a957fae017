// CudaGpuDevice: one logical TF GPU on a real CUDA GPU.
//
//  - type "GPU", name /job:localhost/replica:0/task:0/device:GPU:<tf_id>, an accelerator;
//    physical_device_desc in TF's words: "device: <cuda ordinal>, name: <cudaDeviceProp
//    name>, pci bus id: <bus id>, compute capability: <major>.<minor>";
//  - memory: a BfcAllocator "GPU_<tf_id>_bfc" over cudaMalloc (CudaSubAllocator) with the
//    logical GPU's limit and allow_growth (runtime/gpu_options.h computed them from
//    cudaMemGetInfo); several logical GPUs of one card (virtual devices) each have one;
//  - host_allocator(): page-locked host memory for copies and HostMemory outputs, the
//    process-wide "gpu_host_bfc" (pinned_host_allocator.h), so fetched results outlive
//    the session;
//  - four CudaStreams (compute, host_to_device, device_to_host, device_to_device). Kernels
//    enqueue on the compute stream only; copies use the others and order themselves
//    against the compute stream with events;
//  - one cuBLAS handle bound to the compute stream (WithCublas serialises its use);
//    TF32 tensor-core math only when allow_tf32 (DFLOW_GPU_ALLOW_TF32=1, see README);
//  - copier(): a CudaCopier (cuda_copier.h) on those streams, with PinnedStaging per
//    direction for copies from and to pageable host memory.
//
// Memory safety across streams: a device buffer freed on the host goes back to the BFC at
// once; that is safe because every later user of a recycled buffer is either a kernel on
// the same compute stream (ordered after every earlier kernel) or a copy that first waits
// for an event recorded on the compute stream. Copies keep their tensors alive until done.
//
// Destruction: the streams drain first, then the cuBLAS handle, then the allocators.
// REQUIRES: no tensor from allocator() outlives the device.
// This header includes no CUDA header. Thread-safety: as Device.
#ifndef DFLOW_RUNTIME_CUDA_CUDA_DEVICE_H_
#define DFLOW_RUNTIME_CUDA_CUDA_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/bfc_allocator.h"
#include "runtime/cuda/cuda_copier.h"
#include "runtime/cuda/cuda_stream.h"
#include "runtime/cuda/pinned_staging.h"
#include "runtime/device.h"
#include "runtime/thread_pool.h"

struct cublasContext;  // cublasHandle_t is cublasContext*.

namespace dflow::cuda {

struct CudaGpuOptions {
  int tf_id = 0;
  int ordinal = 0;            // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  int64_t memory_limit = 0;   // BFC limit in bytes; must be > 0
  bool allow_growth = false;
  bool allow_tf32 = false;
};

class CudaGpuDevice final : public Device {
 public:
  // INTERNAL naming the CUDA call when the GPU, its streams or cuBLAS cannot be set up.
  // `pool` is borrowed and must outlive the device.
  static absl::StatusOr<std::unique_ptr<CudaGpuDevice>> Create(const CudaGpuOptions& options,
                                                               ThreadPool* pool);
  ~CudaGpuDevice() override;

  BfcAllocator* allocator() override { return allocator_.get(); }
  BfcAllocator* host_allocator() override;
  ThreadPool* compute_pool() override { return pool_; }
  bool IsAccelerator() const override { return true; }
  // Waits for every stream; the first error as INTERNAL "GPU sync failed: ...".
  absl::Status Sync() override;

  CudaStream* compute_stream() { return compute_.get(); }
  CudaStream* host_to_device_stream() { return host_to_device_.get(); }
  CudaStream* device_to_host_stream() { return device_to_host_.get(); }
  CudaStream* device_to_device_stream() { return device_to_device_.get(); }
  DeviceCopier* copier() override { return copier_.get(); }
  CudaCopier* cuda_copier() { return copier_.get(); }
  PinnedStaging* h2d_staging() { return h2d_staging_.get(); }
  PinnedStaging* d2h_staging() { return d2h_staging_.get(); }

  int tf_id() const { return options_.tf_id; }
  int ordinal() const { return options_.ordinal; }
  bool allow_tf32() const { return options_.allow_tf32; }

  // Makes this GPU the calling thread's current device (kernels launch on it). Cheap.
  absl::Status Activate() const;
  // Runs `fn` with the cuBLAS handle (bound to the compute stream) under a mutex, on this
  // device.
  absl::Status WithCublas(const std::function<absl::Status(cublasContext*)>& fn);

 private:
  CudaGpuDevice(DeviceAttributes attributes, const CudaGpuOptions& options, ThreadPool* pool);
  absl::Status Init();

  const CudaGpuOptions options_;
  ThreadPool* const pool_;
  // Declared before the streams so that the streams are destroyed first.
  std::unique_ptr<BfcAllocator> allocator_;
  std::unique_ptr<PinnedStaging> h2d_staging_;
  std::unique_ptr<PinnedStaging> d2h_staging_;
  std::unique_ptr<CudaStream> compute_;
  std::unique_ptr<CudaStream> host_to_device_;
  std::unique_ptr<CudaStream> device_to_host_;
  std::unique_ptr<CudaStream> device_to_device_;
  std::unique_ptr<CudaCopier> copier_;
  absl::Mutex cublas_mu_;
  cublasContext* cublas_ = nullptr;  // owned (cublasDestroy)
};

// DeviceAttributes for GPU `ordinal` as logical GPU `tf_id` with `memory_limit`.
absl::StatusOr<DeviceAttributes> CudaGpuAttributes(int tf_id, int ordinal,
                                                   int64_t memory_limit);

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_DEVICE_H_
