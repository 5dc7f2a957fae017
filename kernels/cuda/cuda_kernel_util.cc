#include "kernels/cuda/cuda_kernel_util.h"

#include <algorithm>

#include "graph/status_macros.h"

namespace dflow::cuda {

KernelDef GpuKernel(absl::string_view op) {
  const GpuKernelSpec* spec = FindGpuKernelSpec(op);
  if (spec != nullptr) return GpuKernelDef(*spec);
  KernelDef def;
  def.op = std::string(op);
  def.device_type = "GPU";
  return def;
}

absl::Status LaunchStatus(absl::string_view op, absl::string_view device, cudaError_t error) {
  if (error == cudaSuccess) return absl::OkStatus();
  // The code (RESOURCE_EXHAUSTED or INTERNAL) and the CUDA error's name and text come
  // from the one conversion (runtime/cuda/cuda_status.h); the op and device are added.
  const absl::Status status = CudaErrorToStatus(error, "CUDA kernel launch", __FILE__, __LINE__);
  return absl::Status(status.code(), absl::StrCat(op, " on ", device, ": ", status.message()));
}

absl::Status LaunchStatus(const OpKernelContext& ctx, cudaError_t error) {
  if (error == cudaSuccess) return absl::OkStatus();
  return LaunchStatus(ctx.kernel().type_string(), ctx.device()->name(), error);
}

CudaOpKernel::CudaOpKernel(OpKernelConstruction* c) : OpKernel(c) {
  gpu_ = dynamic_cast<CudaGpuDevice*>(c->device());
  OP_REQUIRES(c, gpu_ != nullptr,
              absl::InternalError(absl::StrCat("CUDA kernel for '", c->name(),
                                               "' built for a device that is not a CUDA GPU: ",
                                               c->device()->name())));
}

void CudaOpKernel::Compute(OpKernelContext* ctx) {
  OP_REQUIRES_OK(ctx, gpu_->Activate());
  // Traced: the launches are timed on the compute stream (runtime/stream_trace.h).
  OP_REQUIRES_OK(ctx, gpu_->compute_stream()->Traced("kernel", 0, [&] {
    ComputeOnGpu(ctx);
    return absl::OkStatus();
  }));
}

absl::StatusOr<std::vector<int64_t>> ReadIndexTensor(CudaGpuDevice* gpu, const Tensor& t) {
  if (t.dtype() != DT_INT32 && t.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat("index tensor must be int32 or int64, got ", DataTypeString(t.dtype())));
  }
  const int64_t n = t.NumElements();
  std::vector<int64_t> values(n);
  if (n == 0) return values;
  std::vector<char> host;
  const void* data = t.raw_data();
  cudaPointerAttributes attributes;
  const bool on_device = cudaPointerGetAttributes(&attributes, data) == cudaSuccess &&
                         attributes.type == cudaMemoryTypeDevice;
  cudaGetLastError();
  if (on_device) {
    host.resize(t.TotalBytes());
    DFLOW_RETURN_IF_ERROR(gpu->Activate());
    cudaStream_t stream = gpu->compute_stream()->handle();
    DFLOW_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(host.data(), data, host.size(), cudaMemcpyDefault, stream));
    DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    data = host.data();
  }
  for (int64_t i = 0; i < n; ++i) {
    values[i] = t.dtype() == DT_INT32 ? static_cast<const int32_t*>(data)[i]
                                      : static_cast<const int64_t*>(data)[i];
  }
  return values;
}

absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.dims(), y.dims());
  std::vector<int64_t> out_dims(rank);
  // Collapsed runs: size and whether x / y is broadcast along it.
  struct Run {
    int64_t size;
    bool x_bcast, y_bcast;
  };
  std::vector<Run> runs;
  for (int i = 0; i < rank; ++i) {
    const int xi = i - (rank - x.dims()), yi = i - (rank - y.dims());
    const int64_t xs = xi >= 0 ? x.dim_size(xi) : 1, ys = yi >= 0 ? y.dim_size(yi) : 1;
    if (xs != ys && xs != 1 && ys != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Incompatible shapes: ", x.DebugString(), " vs. ", y.DebugString()));
    }
    out_dims[i] = xs == 1 ? ys : xs;
    if (out_dims[i] == 1) continue;
    const bool xb = xs == 1, yb = ys == 1;
    if (!runs.empty() && runs.back().x_bcast == xb && runs.back().y_bcast == yb) {
      runs.back().size *= out_dims[i];
    } else {
      runs.push_back({out_dims[i], xb, yb});
    }
  }
  if (runs.empty()) runs.push_back({1, false, false});
  if (runs.size() > static_cast<size_t>(kMaxBroadcastRank)) {
    return absl::UnimplementedError(absl::StrCat("broadcasting ", x.DebugString(), " with ",
                                                 y.DebugString(), " needs more than ",
                                                 kMaxBroadcastRank, " collapsed dims"));
  }
  BroadcastPlan plan;
  plan.output = TensorShape(absl::MakeConstSpan(out_dims));
  plan.index.rank = static_cast<int>(runs.size());
  int64_t xs = 1, ys = 1;
  for (int d = plan.index.rank - 1; d >= 0; --d) {
    plan.index.dims[d] = runs[d].size;
    plan.index.x_strides[d] = runs[d].x_bcast ? 0 : xs;
    plan.index.y_strides[d] = runs[d].y_bcast ? 0 : ys;
    if (!runs[d].x_bcast) xs *= runs[d].size;
    if (!runs[d].y_bcast) ys *= runs[d].size;
  }
  return plan;
}

std::vector<ReducePass> PlanReduction(const std::vector<int64_t>& dims,
                                      const std::vector<bool>& reduced) {
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!groups.empty() && groups.back().reduced == reduced[d]) {
      groups.back().size *= dims[d];
    } else {
      groups.push_back({dims[d], static_cast<bool>(reduced[d])});
    }
  }
  std::vector<ReducePass> passes;
  for (int g = static_cast<int>(groups.size()) - 1; g >= 0; --g) {
    if (!groups[g].reduced) continue;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < g; ++i) outer *= groups[i].size;
    // Groups after g: the reduced ones are gone already.
    for (size_t i = g + 1; i < groups.size(); ++i) inner *= groups[i].reduced ? 1 : groups[i].size;
    passes.push_back({outer, groups[g].size, inner});
  }
  return passes;
}

}  // namespace dflow::cuda
