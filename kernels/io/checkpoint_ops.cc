// Checkpoint kernels: RestoreV2, SaveV2 and MergeV2Checkpoints, over TensorFlow's tensor
// bundle format (tensor_bundle_reader.h / tensor_bundle_writer.h).
//
// Only whole tensors are saved and restored: a non-empty shape_and_slices entry (a
// partitioned variable) is UNIMPLEMENTED, naming the tensor.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/file_io.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/tensor_bundle_reader.h"
#include "kernels/io/tensor_bundle_writer.h"

namespace dflow {
namespace {

KernelDefBuilder CpuKernel(std::string op) {
  return KernelDefBuilder(std::move(op)).Device("CPU");
}

absl::StatusOr<std::string> ScalarString(const OpKernelContext& ctx, int index,
                                         absl::string_view what) {
  const Tensor& t = ctx.input(index);
  if (t.dtype() != DT_STRING || t.NumElements() != 1) {
    return KernelError(ctx, what, " must be a string scalar, got shape ",
                       t.shape().DebugString());
  }
  return t.flat<std::string>()[0];
}

// tensor_names and shape_and_slices: string vectors of `n` entries, whole-tensor slices.
absl::StatusOr<std::vector<std::string>> TensorNames(const OpKernelContext& ctx, size_t n) {
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  if (static_cast<size_t>(names.NumElements()) != n ||
      static_cast<size_t>(slices.NumElements()) != n || names.shape().dims() != 1) {
    return KernelError(ctx, "tensor_names ", names.shape().DebugString(),
                       " and shape_and_slices ", slices.shape().DebugString(),
                       " must both be vectors of ", n, " entries, one per tensor");
  }
  for (size_t i = 0; i < n; ++i) {
    if (!slices.flat<std::string>()[i].empty()) {
      return absl::UnimplementedError(absl::StrCat(
          ctx.kernel().type_string(), ": tensor ", names.flat<std::string>()[i],
          " has shape_and_slices '", slices.flat<std::string>()[i],
          "'; dflow saves and restores only whole tensors (empty slice specs)"));
    }
  }
  const auto flat = names.flat<std::string>();
  return std::vector<std::string>(flat.begin(), flat.end());
}

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtypes", &dtypes_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const std::string prefix, ScalarString(*ctx, 0, "prefix"));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<std::string> names,
                        TensorNames(*ctx, dtypes_.size()));
    OP_ASSIGN_OR_RETURN(ctx, std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
    for (size_t i = 0; i < names.size(); ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Tensor value, reader->Lookup(names[i], ctx->allocator()));
      // TF's wording (save_restore_tensor.cc).
      OP_REQUIRES(ctx, value.dtype() == dtypes_[i],
                  absl::InvalidArgumentError(absl::StrCat(
                      "tensor_name = ", names[i], "; expected dtype ",
                      DataTypeString(dtypes_[i]), " does not equal restored dtype ",
                      DataTypeString(value.dtype()))));
      ctx->set_output(static_cast<int>(i), std::move(value));
    }
  }

 private:
  std::vector<DataType> dtypes_;
};

class SaveV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const size_t n = static_cast<size_t>(ctx->num_inputs() - 3);
    OP_ASSIGN_OR_RETURN(ctx, const std::string prefix, ScalarString(*ctx, 0, "prefix"));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<std::string> names, TensorNames(*ctx, n));
    OP_ASSIGN_OR_RETURN(ctx, std::unique_ptr<BundleWriter> writer,
                        BundleWriter::Create(prefix));
    for (size_t i = 0; i < n; ++i) {
      OP_REQUIRES_OK(ctx, writer->Add(names[i], ctx->input(static_cast<int>(3 + i))));
    }
    OP_REQUIRES_OK(ctx, writer->Finish());
  }
};

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("delete_old_dirs", &delete_old_dirs_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sources = ctx->input(0);
    OP_REQUIRES(ctx, sources.shape().dims() <= 1,
                KernelError(*ctx, "checkpoint_prefixes must be a vector, got shape ",
                            sources.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, const std::string destination,
                        ScalarString(*ctx, 1, "destination_prefix"));
    const auto flat = sources.flat<std::string>();
    const std::vector<std::string> prefixes(flat.begin(), flat.end());
    OP_REQUIRES_OK(ctx, MergeBundles(prefixes, destination));
    if (!delete_old_dirs_) return;
    // Best effort, like TF: Saver's temporary shard directories are empty by now.
    for (const std::string& prefix : prefixes) {
      const std::string dir = Dirname(prefix);
      if (dir != Dirname(destination)) DeleteDir(dir).IgnoreError();
    }
  }

 private:
  bool delete_old_dirs_ = true;
};

}  // namespace

absl::Status RegisterCheckpointKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<RestoreV2Op>(CpuKernel("RestoreV2")));
  DFLOW_RETURN_IF_ERROR(registry->Register<SaveV2Op>(CpuKernel("SaveV2")));
  return registry->Register<MergeV2CheckpointsOp>(CpuKernel("MergeV2Checkpoints"));
}

}  // namespace dflow
