#include "runtime/cuda/cuda_copier.h"

#include <cuda_runtime.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {
namespace {

bool IsPinned(const void* ptr) {
  cudaPointerAttributes attributes;
  const bool pinned = cudaPointerGetAttributes(&attributes, ptr) == cudaSuccess &&
                      attributes.type == cudaMemoryTypeHost;
  cudaGetLastError();
  return pinned;
}

// `waiter` waits on the device for everything enqueued on `producer` so far.
absl::Status WaitFor(CudaStream& waiter, CudaStream& producer) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Event> event, producer.RecordEvent());
  return waiter.WaitFor(*event);
}

// Keeps `src` and `dst` alive until `stream` has passed the copy just enqueued.
absl::Status HoldUntilDone(CudaStream& stream, const Tensor& src, const Tensor& dst) {
  return stream.ThenExecute([src, dst](const absl::Status&) {});
}

// `status` of a copy whose DMA may already be queued on `stream`: on failure, waits until
// the stream has drained, so that the caller may free the buffers once it has the error.
absl::Status DrainOnError(CudaStream& stream, absl::Status status) {
  if (!status.ok()) stream.BlockHostUntilDone().IgnoreError();
  return status;
}

}  // namespace

void CudaCopier::CopyDeviceToHostImpl(const Tensor& src, const Tensor& dst,
                                      StatusCallback done) {
  CudaStream* d2h = device_->device_to_host_stream();
  absl::Status status = [&]() -> absl::Status {
    DFLOW_RETURN_IF_ERROR(device_->Activate());
    return WaitFor(*d2h, *device_->compute_stream());
  }();
  if (!status.ok()) return done(status);
  ThreadPool* pool = device_->compute_pool();
  if (IsPinned(dst.raw_data())) {
    status = d2h->MemcpyDeviceToHost(dst.raw_data(), src.raw_data(), src.TotalBytes());
    if (status.ok()) {
      // `done` continues the step (it may run kernels): on the pool, not on the stream's
      // callback thread, which the stream's later callbacks wait for. The buffers are let
      // go first: when `done` runs, the copier holds nothing but `done` itself.
      status = d2h->ThenExecute(
          [src = src, dst = dst, pool, done](const absl::Status& copied) mutable {
            src = Tensor();
            dst = Tensor();
            pool->Schedule([copied, done = std::move(done)] { done(copied); });
          });
    }
    if (!status.ok()) done(DrainOnError(*d2h, status));
    return;
  }
  CudaGpuDevice* device = device_;
  pool->Schedule([device, d2h, src = src, dst = dst, done]() mutable {
    // On error a chunk may still be reading `src`: drain before letting go of it.
    absl::Status copied = DrainOnError(
        *d2h, device->d2h_staging()->CopyFromDevice(*d2h, dst.raw_data(), src.raw_data(),
                                                    src.TotalBytes()));
    src = Tensor();
    dst = Tensor();
    done(copied);
  });
}

absl::Status CudaCopier::CopyHostToDeviceNow(const Tensor& src, const Tensor& dst) {
  DFLOW_RETURN_IF_ERROR(CheckCopyable(src, dst));
  CudaStream* h2d = device_->host_to_device_stream();
  CudaStream* compute = device_->compute_stream();
  DFLOW_RETURN_IF_ERROR(device_->Activate());
  DFLOW_RETURN_IF_ERROR(WaitFor(*h2d, *compute));
  DFLOW_RETURN_IF_ERROR(DrainOnError(
      *h2d, device_->h2d_staging()->CopyToDevice(*h2d, dst.raw_data(), src.raw_data(),
                                                 src.TotalBytes())));
  DFLOW_RETURN_IF_ERROR(DrainOnError(*h2d, HoldUntilDone(*h2d, src, dst)));
  return WaitFor(*compute, *h2d);
}

void CudaCopier::CopyHostToDeviceImpl(const Tensor& src, const Tensor& dst,
                                      StatusCallback done) {
  if (src.TotalBytes() <= PinnedStaging::kDirectMax || IsPinned(src.raw_data())) {
    return done(CopyHostToDeviceNow(src, dst));
  }
  // A big pageable source is staged: its host memcpys last as long as the DMA, so they
  // run on a pool thread and the executor's thread goes on with other nodes.
  device_->compute_pool()->Schedule([this, src = src, dst = dst, done]() mutable {
    absl::Status copied = CopyHostToDeviceNow(src, dst);
    src = Tensor();
    dst = Tensor();
    done(copied);
  });
}

void CudaCopier::CopyDeviceToDeviceImpl(const Tensor& src, Device* dst_device, const Tensor& dst,
                                        StatusCallback done) {
  auto* receiver = dynamic_cast<CudaGpuDevice*>(dst_device);
  if (receiver == nullptr) {
    return done(absl::InvalidArgumentError(
        absl::StrCat("CudaCopier: cannot copy from ", device_->name(), " to ",
                     dst_device->name(), ", which is not a CUDA GPU")));
  }
  CudaStream* d2d = device_->device_to_device_stream();
  done([&]() -> absl::Status {
    DFLOW_RETURN_IF_ERROR(device_->Activate());
    DFLOW_RETURN_IF_ERROR(WaitFor(*d2d, *device_->compute_stream()));
    DFLOW_RETURN_IF_ERROR(WaitFor(*d2d, *receiver->compute_stream()));
    // cudaMemcpyDefault under unified addressing: a peer copy between two GPUs (staged
    // by the driver when they have no peer path), a plain copy within one card (virtual
    // devices), and correct for a source in pinned host memory (small Consts) too.
    // Not Stream::MemcpyDeviceToDevice, whose enqueue failure would fail the stream for
    // good: a failed peer copy fails this copy only.
    DFLOW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.TotalBytes(),
                                               cudaMemcpyDefault, d2d->handle()));
    DFLOW_RETURN_IF_ERROR(DrainOnError(*d2d, HoldUntilDone(*d2d, src, dst)));
    DFLOW_RETURN_IF_ERROR(receiver->Activate());
    absl::Status waited = WaitFor(*receiver->compute_stream(), *d2d);
    DFLOW_RETURN_IF_ERROR(device_->Activate());
    return waited;
  }());
}

}  // namespace dflow::cuda
