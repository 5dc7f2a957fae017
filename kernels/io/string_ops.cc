// The string kernels Saver graphs use to build checkpoint paths: ShardedFilename and
// StringJoin.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/register_io_kernels.h"

namespace dflow {
namespace {

// "basename-00001-of-00004" (TF's sharded file name).
class ShardedFilenameOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& basename = ctx->input(0);
    const Tensor& shard = ctx->input(1);
    const Tensor& num_shards = ctx->input(2);
    OP_REQUIRES(ctx,
                basename.NumElements() == 1 && basename.shape().dims() == 0 &&
                    shard.shape().dims() == 0 && num_shards.shape().dims() == 0,
                KernelError(*ctx, "basename, shard and num_shards must be scalars, got ",
                            basename.shape().DebugString(), ", ", shard.shape().DebugString(),
                            " and ", num_shards.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, TensorShape({})));
    out->scalar<std::string>() =
        absl::StrFormat("%s-%05d-of-%05d", basename.scalar<std::string>(),
                        shard.scalar<int32_t>(), num_shards.scalar<int32_t>());
  }
};

// Element-wise concatenation with `separator`; scalar inputs broadcast.
class StringJoinOp : public CheapOpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;  // of the non-scalar inputs; scalar when all are scalars
    bool have_shape = false;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& in = ctx->input(i);
      if (in.shape().dims() == 0) continue;
      OP_REQUIRES(ctx, !have_shape || in.shape() == shape,
                  KernelError(*ctx, "input shapes do not match: ", shape.DebugString(),
                              " vs. ", in.shape().DebugString()));
      shape = in.shape();
      have_shape = true;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor* out, ctx->allocate_output(0, shape));
    absl::Span<std::string> result = out->flat<std::string>();
    for (int64_t e = 0; e < out->NumElements(); ++e) {
      std::string& joined = result[e];
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& in = ctx->input(i);
        if (i > 0) joined += separator_;
        joined += in.flat<std::string>()[in.shape().dims() == 0 ? 0 : e];
      }
    }
  }

 private:
  std::string separator_;
};

}  // namespace

absl::Status RegisterStringKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<ShardedFilenameOp>(
      KernelDefBuilder("ShardedFilename").Device("CPU")));
  return registry->Register<StringJoinOp>(KernelDefBuilder("StringJoin").Device("CPU"));
}

}  // namespace dflow
