// Const, Identity, Reshape, Shape, ExpandDims and Squeeze on CUDA GPUs.
//
// Const uploads its value once, at construction (through the device's copier), never per Run.
// Small int32/int64 Consts (at most kPinnedConstElements) go to the device's pinned host
// memory instead: they are usually shapes and axes, which kernels read on the host
// (ReadIndexTensor, no GPU round trip), and GPU kernels can still read them through
// unified addressing. A pinned Const is never rewritten, so that sharing is race-free.
// The shape-only kernels alias their input's buffer; Shape's output is host memory (below).
#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"

#include "graph/status_macros.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/register_cuda_kernels.h"
#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {
namespace {

constexpr int64_t kPinnedConstElements = 1024;

absl::StatusOr<Tensor> UploadConst(CudaGpuDevice* gpu, const Tensor& host) {
  const bool pinned = (host.dtype() == DT_INT32 || host.dtype() == DT_INT64) &&
                      host.NumElements() <= kPinnedConstElements;
  Allocator* allocator = pinned ? static_cast<Allocator*>(gpu->host_allocator()) : gpu->allocator();
  DFLOW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(allocator, host.dtype(), host.shape()));
  if (host.TotalBytes() == 0) return out;
  if (pinned) {
    std::memcpy(out.raw_data(), host.raw_data(), host.TotalBytes());
    return out;
  }
  // Through the copier, not a plain cudaMemcpy: the fresh device buffer may be one that
  // work still queued on the compute stream uses (the executor may be built while other
  // steps run), and the copier's host_to_device stream first waits for that work. On
  // this thread, which returns once the compute stream is ordered after the upload.
  DFLOW_RETURN_IF_ERROR(gpu->cuda_copier()->CopyHostToDeviceNow(host, out));
  return out;
}

class ConstOpKernel final : public CudaOpKernel {
 public:
  explicit ConstOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    if (!c->status().ok()) return;
    TensorProto proto;
    OP_REQUIRES_OK(c, c->GetAttr("value", &proto));
    OP_ASSIGN_OR_RETURN(c, Tensor host, Tensor::FromProto(ProcessCpuAllocator(), proto));
    OP_ASSIGN_OR_RETURN(c, value_, UploadConst(gpu(), host));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;
};

class IdentityOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// The shape `requested` (at most one -1) for `input`'s elements.
absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& input, std::vector<int64_t> dims) {
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Only one input size may be -1, not both ", unknown, " and ", i));
      }
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Size ", i, " must be non-negative, not ", dims[i]));
    } else {
      known *= dims[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || input.num_elements() % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input to reshape is a tensor with ", input.num_elements(),
          " values, but the requested shape requires a multiple of ", known));
    }
    dims[unknown] = input.num_elements() / known;
  }
  DFLOW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(absl::MakeConstSpan(dims)));
  if (shape.num_elements() != input.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("Input to reshape is a tensor with ",
                                                   input.num_elements(),
                                                   " values, but the requested shape has ",
                                                   shape.num_elements()));
  }
  return shape;
}

class ReshapeOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, ctx->input(1).shape().dims() <= 1,
                OpError(*ctx, "sizes input must be 1-D, not ", ctx->input(1).shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dims, ReadIndexTensor(gpu(), ctx->input(1)));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, ResolveReshape(input.shape(), std::move(dims)));
    ctx->set_output(0, input.Reshaped(shape));
  }
};

// Shape's output is a HostMemory arg (as for simulated GPUs; graph/memory_types.h): the
// partitioner hands it to host-memory consumers and to other devices with no device
// copy. It lives in the GPU's pinned host memory, so a GPU kernel on the same device that
// reads it as device memory (a same-device memory-type mismatch, which dflow does not
// insert copies for) still works through unified addressing. The tensor for a shape is
// built once and cached for the kernel's life (every distinct shape: a few bytes each),
// never rewritten or freed while the kernel lives, so such a reader can never see a
// recycled buffer's new contents.
class ShapeOpKernel final : public CudaOpKernel {
 public:
  explicit ShapeOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    out_type_ = DT_INT32;
    if (c->HasAttr("out_type")) OP_REQUIRES_OK(c, c->GetAttr("out_type", &out_type_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const TensorShape& shape = ctx->input(0).shape();
    std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(dims);
    if (it != cache_.end()) {
      ctx->set_output(0, it->second);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor out,
                        Tensor::Allocate(gpu()->host_allocator(), out_type_,
                                         TensorShape({static_cast<int64_t>(dims.size())})));
    for (size_t i = 0; i < dims.size(); ++i) {
      if (out_type_ == DT_INT32) {
        out.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
      } else {
        out.data<int64_t>()[i] = dims[i];
      }
    }
    cache_.emplace(std::move(dims), out);
    ctx->set_output(0, std::move(out));
  }

 private:
  DataType out_type_;
  absl::Mutex mu_;
  std::map<std::vector<int64_t>, Tensor> cache_ ABSL_GUARDED_BY(mu_);
};

class ExpandDimsOpKernel final : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, std::vector<int64_t> dim, ReadIndexTensor(gpu(), ctx->input(1)));
    OP_REQUIRES(ctx, dim.size() == 1,
                OpError(*ctx, "'dim' must be a tensor with a single value, got ", dim.size()));
    const int rank = input.shape().dims();
    int64_t at = dim[0];
    OP_REQUIRES(ctx, at >= -1 - rank && at <= rank,
                OpError(*ctx, "Tried to expand dim index ", at, " for tensor with ", rank,
                        " dimensions."));
    if (at < 0) at += rank + 1;
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims.insert(dims.begin() + at, 1);
    ctx->set_output(0, input.Reshaped(TensorShape(absl::MakeConstSpan(dims))));
  }
};

class SqueezeOpKernel final : public CudaOpKernel {
 public:
  explicit SqueezeOpKernel(OpKernelConstruction* c) : CudaOpKernel(c) {
    if (c->HasAttr("squeeze_dims")) OP_REQUIRES_OK(c, c->GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.shape().dims();
    std::vector<bool> drop(rank, squeeze_dims_.empty());
    if (squeeze_dims_.empty()) {
      for (int d = 0; d < rank; ++d) drop[d] = input.shape().dim_size(d) == 1;
    }
    for (int64_t requested : squeeze_dims_) {
      OP_REQUIRES(ctx, requested >= -rank && requested < rank,
                  OpError(*ctx, "Tried to squeeze dim index ", requested, " for tensor with ",
                          rank, " dimensions."));
      const int d = static_cast<int>(requested < 0 ? requested + rank : requested);
      OP_REQUIRES(ctx, input.shape().dim_size(d) == 1,
                  OpError(*ctx, "Can not squeeze dim[", d, "], expected a dimension of 1, got ",
                          input.shape().dim_size(d)));
      drop[d] = true;
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d) {
      if (!drop[d]) dims.push_back(input.shape().dim_size(d));
    }
    ctx->set_output(0, input.Reshaped(TensorShape(absl::MakeConstSpan(dims))));
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

}  // namespace

absl::Status RegisterCudaArrayKernels(KernelRegistry* registry) {
  // Dtypes (every dtype these kernels move without arithmetic) and host-memory args:
  // kernels/sim/gpu_kernel_list.h (GpuKernel(op)).
  DFLOW_RETURN_IF_ERROR(registry->Register<ConstOpKernel>(GpuKernel("Const")));
  DFLOW_RETURN_IF_ERROR(registry->Register<IdentityOpKernel>(GpuKernel("Identity")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ReshapeOpKernel>(GpuKernel("Reshape")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ShapeOpKernel>(GpuKernel("Shape")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ExpandDimsOpKernel>(GpuKernel("ExpandDims")));
  return registry->Register<SqueezeOpKernel>(GpuKernel("Squeeze"));
}

}  // namespace dflow::cuda
