#include "runtime/cuda/cuda_device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/device_name.h"
#include "graph/status_macros.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/cuda_sub_allocator.h"
#include "runtime/cuda/scoped_activate_device.h"
#include "runtime/cuda/pinned_host_allocator.h"

namespace dflow::cuda {

absl::StatusOr<DeviceAttributes> CudaGpuAttributes(int tf_id, int ordinal,
                                                   int64_t memory_limit) {
  cudaDeviceProp prop;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, ordinal));
  char bus_id[64] = {0};
  DFLOW_CUDA_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), ordinal));
  DeviceAttributes attributes;
  attributes.set_name(FullDeviceName("GPU", tf_id));
  attributes.set_device_type("GPU");
  attributes.set_memory_limit(memory_limit);
  attributes.mutable_locality()->set_bus_id(1);
  // TF names the platform (CUDA) ordinal here and lower-cases the bus id.
  attributes.set_physical_device_desc(absl::StrCat(
      "device: ", ordinal, ", name: ", prop.name, ", pci bus id: ",
      absl::AsciiStrToLower(bus_id), ", compute capability: ", prop.major, ".", prop.minor));
  return attributes;
}

absl::StatusOr<std::unique_ptr<CudaGpuDevice>> CudaGpuDevice::Create(
    const CudaGpuOptions& options, ThreadPool* pool) {
  if (options.memory_limit <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("GPU:", options.tf_id, " (CUDA device ",
                                                   options.ordinal, ") has no memory to use: limit ",
                                                   options.memory_limit, " bytes"));
  }
  DFLOW_ASSIGN_OR_RETURN(DeviceAttributes attributes,
                         CudaGpuAttributes(options.tf_id, options.ordinal, options.memory_limit));
  std::unique_ptr<CudaGpuDevice> device(new CudaGpuDevice(std::move(attributes), options, pool));
  DFLOW_RETURN_IF_ERROR(device->Init());
  return device;
}

CudaGpuDevice::CudaGpuDevice(DeviceAttributes attributes, const CudaGpuOptions& options,
                             ThreadPool* pool)
    : Device(std::move(attributes)), options_(options), pool_(pool) {}

absl::Status CudaGpuDevice::Init() {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(options_.ordinal));
  BfcOptions bfc;
  bfc.name = absl::StrCat("GPU_", options_.tf_id, "_bfc");
  bfc.memory_limit = static_cast<size_t>(options_.memory_limit);
  bfc.allow_growth = options_.allow_growth;
  allocator_ = std::make_unique<BfcAllocator>(std::make_unique<CudaSubAllocator>(options_.ordinal),
                                              std::move(bfc));
  DFLOW_ASSIGN_OR_RETURN(h2d_staging_, PinnedStaging::Create(options_.ordinal));
  DFLOW_ASSIGN_OR_RETURN(d2h_staging_, PinnedStaging::Create(options_.ordinal));
  copier_ = std::make_unique<CudaCopier>(this);
  DFLOW_ASSIGN_OR_RETURN(compute_, CudaStream::Create(options_.ordinal, Stream::Kind::kCompute));
  DFLOW_ASSIGN_OR_RETURN(host_to_device_,
                         CudaStream::Create(options_.ordinal, Stream::Kind::kHostToDevice));
  DFLOW_ASSIGN_OR_RETURN(device_to_host_,
                         CudaStream::Create(options_.ordinal, Stream::Kind::kDeviceToHost));
  DFLOW_ASSIGN_OR_RETURN(device_to_device_,
                         CudaStream::Create(options_.ordinal, Stream::Kind::kDeviceToDevice));
  cublasHandle_t handle = nullptr;
  DFLOW_CUBLAS_RETURN_IF_ERROR(cublasCreate(&handle));
  cublas_ = handle;
  DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSetStream(handle, compute_->handle()));
  // FP32 unless asked: TF 1.x has no TF32, and tensor-core TF32 changes results (10-bit
  // mantissa inputs).
  DFLOW_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(
      handle, options_.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  return absl::OkStatus();
}

CudaGpuDevice::~CudaGpuDevice() {
  // Streams drain in their destructors; queued work may still use the handle and memory.
  compute_.reset();
  host_to_device_.reset();
  device_to_host_.reset();
  device_to_device_.reset();
  // Variables before the memory their values live in.
  variables()->Clear();
  if (cublas_ != nullptr) {
    ScopedActivateDevice device;
    if (device.Activate(options_.ordinal).ok()) cublasDestroy(cublas_);
  }
  copier_.reset();
  h2d_staging_.reset();
  d2h_staging_.reset();
  allocator_.reset();
}

BfcAllocator* CudaGpuDevice::host_allocator() { return ProcessPinnedHostAllocator(); }

absl::Status CudaGpuDevice::Activate() const {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.ordinal));
  ScopedActivateDevice::CurrentOnThread() = options_.ordinal;
  return absl::OkStatus();
}

absl::Status CudaGpuDevice::WithCublas(const std::function<absl::Status(cublasContext*)>& fn) {
  DFLOW_RETURN_IF_ERROR(Activate());
  absl::MutexLock lock(&cublas_mu_);
  return fn(cublas_);
}

absl::Status CudaGpuDevice::Sync() {
  absl::Status first;
  for (CudaStream* stream : {compute_.get(), host_to_device_.get(), device_to_host_.get(),
                             device_to_device_.get()}) {
    absl::Status status = stream->BlockHostUntilDone();
    if (!status.ok() && first.ok()) first = status;
  }
  if (first.ok()) return first;
  return absl::InternalError(absl::StrCat("GPU sync failed: ", first.message()));
}

}  // namespace dflow::cuda
